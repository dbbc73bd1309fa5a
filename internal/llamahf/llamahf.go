// Package llamahf is llama.cpp's rule for which file of a Hugging Face
// repository `llama-server -hf REPO:TYPE` downloads. The engine's
// commands (internal/engine) and the CLI's fetch of a GGUF header
// (internal/hub) both follow it, so the header planning reads is the file
// the printed command loads.
//
// The rule is find_best_model and gguf_filename_is_model in
// common/download.cpp of llama.cpp
// (https://github.com/unslothai/llama.cpp/blob/d32676d77426540327835040d5d3279728f0b4c8/common/download.cpp,
// synced from ggml-org/llama.cpp 82bb48500; the same at ggml-org/llama.cpp@ec026579):
// the first model file of the repository's listing whose path matches
// TYPE followed by "." or "-", case-insensitive and unanchored, skipping
// the later parts of a split file. Beside the model file -hf also downloads
// a vision projector (PickProjector: find_best_mmproj, the same file).
package llamahf

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Matches reports whether path matches llama.cpp's pattern for tag: tag
// followed by "." or "-", anywhere in the path, in any case. It is not
// anchored at the start, so "F16" also matches "...-BF16.gguf" and "Q2_0"
// "...-TQ2_0.gguf"; the "." or "-" after it keeps "Q4_K" from matching
// "...-Q4_K_M.gguf".
func Matches(tag, path string) bool {
	return regexp.MustCompile(`(?i)` + regexp.QuoteMeta(tag) + `[.-]`).MatchString(path)
}

// notModel are the parts of a file name that make a .gguf file no model
// file to llama.cpp's -hf (gguf_filename_is_model in common/download.cpp
// of ggml-org/llama.cpp as synced at unslothai/llama.cpp d32676d7): a
// vision projector, an importance matrix, and the speculative-decoding
// sidecars published beside the weights (MTP heads, EAGLE-3, DFlash and
// DSpark drafters: stepfun-ai/Step-3.7-Flash-GGUF keeps model-mtp-Q8_0.gguf
// at the top of the repository beside Q8_0/model-Q8_0-00001-of-00002.gguf).
// The match is case-sensitive, as llama.cpp's std::string::find is.
var notModel = []string{"mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-"}

// IsModel reports whether path is a model file to llama.cpp: a .gguf
// file whose name holds none of notModel.
func IsModel(path string) bool {
	if !strings.HasSuffix(path, ".gguf") {
		return false
	}
	name := path[strings.LastIndex(path, "/")+1:]
	for _, s := range notModel {
		if strings.Contains(name, s) {
			return false
		}
	}
	return true
}

// splitPart matches the name of one part of a split file, as llama.cpp's
// gguf-split writes it: PREFIX-00002-of-00005.gguf.
var splitPart = regexp.MustCompile(`(?i)-([0-9]{5})-of-([0-9]{5})\.gguf$`)

// IsLaterPart reports whether path is a part of a split file other than
// its first, which -hf never picks (it fetches the others beside the
// first): get_gguf_split_info's count above 1 and index not 1.
func IsLaterPart(path string) bool {
	m := splitPart.FindStringSubmatch(path)
	if m == nil {
		return false
	}
	index, _ := strconv.Atoi(m[1])
	count, _ := strconv.Atoi(m[2])
	return count > 1 && index != 1
}

// Pick is the file `-hf REPO:tag` downloads from a repository whose files
// are paths, in the order the Hub lists them; "" when none matches (llama.cpp
// then stops with "no GGUF files found").
func Pick(tag string, paths []string) string {
	for _, p := range paths {
		if IsModel(p) && !IsLaterPart(p) && Matches(tag, p) {
			return p
		}
	}
	return ""
}

// splitSuffix is get_gguf_split_info's split pattern on a name without
// ".gguf": PREFIX-00001-of-00002 (any prefix, so "...-F16-split-00001-of-00002"
// too).
var splitSuffix = regexp.MustCompile(`(?i)^(.+)-([0-9]{5})-of-([0-9]{5})$`)

// lastField is get_gguf_split_info's tag: the name's last field after "-"
// or ".", of letters, digits and "_" (the leftmost such run to the end).
var lastField = regexp.MustCompile(`(?i)[-.]([A-Z0-9_]+)$`)

// leadingDigits is what std::stoi reads from the tag's first digit on.
var leadingDigits = regexp.MustCompile(`^[0-9]+`)

// Tag is get_gguf_split_info's type tag of path, upper-cased: the last
// field of the name without ".gguf" and a split suffix ("Q8_0" of
// mmproj-Qwen3VL-8B-Instruct-Q8_0.gguf, "BF16" of mmproj-...-bf16.gguf,
// "SPLIT" of ...-F16-split-00001-of-00002.gguf); "" for no .gguf file.
func Tag(path string) string {
	prefix, ok := strings.CutSuffix(path, ".gguf")
	if !ok {
		return ""
	}
	if m := splitSuffix.FindStringSubmatch(prefix); m != nil {
		prefix = m[1]
	}
	m := lastField.FindStringSubmatch(prefix)
	if m == nil {
		return ""
	}
	return strings.ToUpper(m[1])
}

// QuantBits is llama.cpp's extract_quant_bits: the number that begins at
// the first digit of path's type tag (get_gguf_split_info: the last field
// of the name without ".gguf" and a split suffix): Q4_K_M 4, Q8_0 8,
// F16 and BF16 16, F32 32; 0 when path is no .gguf file or its tag holds
// no digit, as "split" of "...-F16-split-00001-of-00002.gguf".
func QuantBits(path string) int {
	tag := Tag(path)
	i := strings.IndexAny(tag, "0123456789")
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(leadingDigits.FindString(tag[i:]))
	return n
}

// PickProjector is the vision projector `-hf` downloads beside the model
// file model from a repository whose files are paths, in the order the Hub
// lists them; "" when there is none. It is find_best_mmproj (find_best_sibling
// with keyword "mmproj" and no tag) in common/download.cpp of llama.cpp
// (https://github.com/unslothai/llama.cpp/blob/d32676d77426540327835040d5d3279728f0b4c8/common/download.cpp,
// the same rule since ggml-org/llama.cpp#20775, 8c7957ca3 of 2026-03-24,
// which moved the choice from the Hub's manifest into llama.cpp): of the
// .gguf files whose path holds "mmproj" and whose folder is the model's
// folder or one above it, the deepest folder first, then the type nearest
// the weights' (the smallest difference of QuantBits), then the first
// listed. Neither a matching type nor F16 is preferred as such: Q4_K_M
// weights take a Q8_0 projector before an F16 one.
func PickProjector(model string, paths []string) string {
	modelDir := strings.Split(model, "/")
	modelDir = modelDir[:len(modelDir)-1]
	bits := QuantBits(model)
	best, bestDepth, bestDiff := "", 0, 0
	for _, p := range paths {
		if !strings.HasSuffix(p, ".gguf") || !strings.Contains(p, "mmproj") {
			continue
		}
		dir := strings.Split(p, "/")
		dir = dir[:len(dir)-1]
		if len(dir) > len(modelDir) || !slices.Equal(dir, modelDir[:len(dir)]) {
			continue
		}
		diff := QuantBits(p) - bits
		if diff < 0 {
			diff = -diff
		}
		if best == "" || len(dir) > bestDepth || (len(dir) == bestDepth && diff < bestDiff) {
			best, bestDepth, bestDiff = p, len(dir), diff
		}
	}
	return best
}
