package model

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// A model given as one string ("model": "Llama-3.1-8B" in a request, the
// CLI's --model, a Python host's plan("70b")) is read by one rule, here, so
// every host and the CLI agree on what it means (docs/requests.md,
// "model"):
//
//  1. a count with a unit (70b, 7.5B, 500m, 1.2t, 350k) is a parameter count;
//  2. a bare number is refused (is 7 seven parameters or seven billion?),
//     unless a file of that name exists;
//  3. a value that looks like a path (a slash, a leading dot, or a .gguf,
//     .safetensors or .json name) and exists is that file or directory;
//  4. anything else is a catalog name or Hugging Face id; when the catalog
//     does not know it and a file of that name exists, it is that file.

// sizePattern is a parameter count with a unit: 70b, 7.5B, 7000m, 1.2t, 500k.
var sizePattern = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([kKmMbBtT])$`)

var sizeUnit = map[byte]float64{'k': 1e3, 'm': 1e6, 'b': 1e9, 't': 1e12}

// SpecOfText is how the string s is first read (rules 1-4 above, before the
// catalog is asked): a Spec with Params, Path (made absolute) or Name set.
func SpecOfText(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, errs.New(errs.InvalidArgument, "model: empty; give a catalog name, a Hugging Face id, a file or a size such as 70b")
	}
	if m := sizePattern.FindStringSubmatch(s); m != nil {
		v, err := strconv.ParseFloat(m[1], 64)
		n := v * sizeUnit[strings.ToLower(m[2])[0]]
		if err != nil || math.IsInf(n, 0) || n < 1 || n > MaxParams {
			return Spec{}, errs.New(errs.InvalidArgument, "model %q: parameter count out of range [1, 1e14]", s)
		}
		n = math.Round(n)
		return Spec{Params: &n}, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && !exists(s) {
		return Spec{}, errs.New(errs.InvalidArgument, "model %q: a bare number is ambiguous; give a unit (%sb for billions, %sm for millions)", s, s, s)
	}
	if (LooksLikePath(s) && exists(s)) || isNumber(s) {
		return Spec{Path: absPath(s)}, nil
	}
	return Spec{Name: s}, nil
}

// LooksLikePath reports whether s reads as a file name rather than a model
// name: it holds a path separator or starts with a dot, or ends in a model
// file's extension.
func LooksLikePath(s string) bool {
	if strings.ContainsRune(s, os.PathSeparator) || strings.HasPrefix(s, ".") {
		return true
	}
	switch strings.ToLower(filepath.Ext(s)) {
	case ".gguf", ".safetensors", ".json":
		return true
	}
	return false
}

func exists(s string) bool {
	_, err := os.Stat(s)
	return err == nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// AbsPath is s made absolute (as given when that fails).
func AbsPath(s string) string { return absPath(s) }

// Exists reports whether a file or directory named s exists.
func Exists(s string) bool { return exists(s) }

func absPath(s string) string {
	if abs, err := filepath.Abs(s); err == nil {
		return abs
	}
	return s
}
