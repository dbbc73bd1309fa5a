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
// the later parts of a split file.
package llamahf

import (
	"regexp"
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

// IsModel reports whether path is a model file to llama.cpp: a .gguf
// file whose name holds neither "mmproj" (a vision projector) nor
// "imatrix" (an importance matrix).
func IsModel(path string) bool {
	if !strings.HasSuffix(path, ".gguf") {
		return false
	}
	name := path[strings.LastIndex(path, "/")+1:]
	return !strings.Contains(name, "mmproj") && !strings.Contains(name, "imatrix")
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
