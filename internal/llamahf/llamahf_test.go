package llamahf

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Listings of GGUF repositories, as the Hub sorts them, with the file
// names the catalog records for them (internal/model/catalog.json, each
// checkpoint citing the repository's tree or model card). Written out here
// so the test does not move with catalog edits.
var (
	// unsloth/Qwen3-4B-Instruct-2507-GGUF: "-" before the type.
	qwen3_4B = []string{
		"Qwen3-4B-Instruct-2507-BF16.gguf", "Qwen3-4B-Instruct-2507-IQ4_XS.gguf",
		"Qwen3-4B-Instruct-2507-Q2_K.gguf", "Qwen3-4B-Instruct-2507-Q3_K_M.gguf",
		"Qwen3-4B-Instruct-2507-Q4_K_M.gguf", "Qwen3-4B-Instruct-2507-Q5_K_M.gguf",
		"Qwen3-4B-Instruct-2507-Q6_K.gguf", "Qwen3-4B-Instruct-2507-Q8_0.gguf",
	}
	// bartowski/google_gemma-3-12b-it-GGUF: lower-case bf16, IQ3_XS beside IQ3_XXS.
	gemma3_12B = []string{
		"google_gemma-3-12b-it-IQ2_M.gguf", "google_gemma-3-12b-it-IQ3_M.gguf",
		"google_gemma-3-12b-it-IQ3_XS.gguf", "google_gemma-3-12b-it-IQ3_XXS.gguf",
		"google_gemma-3-12b-it-IQ4_XS.gguf", "google_gemma-3-12b-it-Q2_K.gguf",
		"google_gemma-3-12b-it-Q3_K_M.gguf", "google_gemma-3-12b-it-Q4_K_M.gguf",
		"google_gemma-3-12b-it-Q5_K_M.gguf", "google_gemma-3-12b-it-Q6_K.gguf",
		"google_gemma-3-12b-it-Q8_0.gguf", "google_gemma-3-12b-it-bf16.gguf",
	}
	// legraphista/DeepSeek-V2-Lite-IMat-GGUF: "." before the type.
	deepSeekV2Lite = []string{
		"DeepSeek-V2-Lite.BF16.gguf", "DeepSeek-V2-Lite.IQ1_M.gguf", "DeepSeek-V2-Lite.IQ1_S.gguf",
		"DeepSeek-V2-Lite.IQ2_M.gguf", "DeepSeek-V2-Lite.IQ2_S.gguf", "DeepSeek-V2-Lite.IQ2_XS.gguf",
		"DeepSeek-V2-Lite.IQ2_XXS.gguf", "DeepSeek-V2-Lite.Q2_K.gguf", "DeepSeek-V2-Lite.Q8_0.gguf",
	}
	// LiquidAI/LFM2-1.2B-GGUF: F16 beside Q4_0 and Q4_K_M.
	lfm2 = []string{"LFM2-1.2B-F16.gguf", "LFM2-1.2B-Q4_0.gguf", "LFM2-1.2B-Q4_K_M.gguf", "LFM2-1.2B-Q8_0.gguf"}
)

// TestPickFollowsLlamaCPP: the type followed by "." or "-", in any case,
// unanchored, the first in the listing; a type that is only the start of
// a longer one picks nothing (llama.cpp stops: "no GGUF files found").
func TestPickFollowsLlamaCPP(t *testing.T) {
	for _, c := range []struct {
		tag   string
		files []string
		want  string
	}{
		{"Q4_K_M", qwen3_4B, "Qwen3-4B-Instruct-2507-Q4_K_M.gguf"},
		{"q4_k_m", qwen3_4B, "Qwen3-4B-Instruct-2507-Q4_K_M.gguf"},
		{"Q2_K", qwen3_4B, "Qwen3-4B-Instruct-2507-Q2_K.gguf"},
		{"Q4_K", qwen3_4B, ""}, // a substring match took Q4_K_M
		{"Q3_K", gemma3_12B, ""},
		{"Q8", qwen3_4B, ""},
		{"IQ3_XS", gemma3_12B, "google_gemma-3-12b-it-IQ3_XS.gguf"},
		{"IQ3_XXS", gemma3_12B, "google_gemma-3-12b-it-IQ3_XXS.gguf"},
		{"BF16", gemma3_12B, "google_gemma-3-12b-it-bf16.gguf"},
		// Unanchored: F16 names the BF16 file where no F16 file is listed.
		{"F16", gemma3_12B, "google_gemma-3-12b-it-bf16.gguf"},
		{"F16", lfm2, "LFM2-1.2B-F16.gguf"},
		{"Q4_0", lfm2, "LFM2-1.2B-Q4_0.gguf"},
		{"IQ2_S", deepSeekV2Lite, "DeepSeek-V2-Lite.IQ2_S.gguf"},
		{"Q2_K", deepSeekV2Lite, "DeepSeek-V2-Lite.Q2_K.gguf"},
	} {
		assert.Equal(t, c.want, Pick(c.tag, c.files), "%s", c.tag)
	}
	// F16 before BF16 in a listing sorted so: the first match is taken.
	assert.Equal(t, "LFM2-1.2B-F16.gguf", Pick("F16", append([]string{"LFM2-1.2B-F16.gguf"}, gemma3_12B...)))
	assert.Equal(t, "google_gemma-3-12b-it-bf16.gguf", Pick("F16", append(gemma3_12B, "LFM2-1.2B-F16.gguf")))
}

// TestPickSkipsProjectorsAndLaterParts: a vision projector is no model
// file, and a split file is picked by its first part (llama.cpp fetches
// the rest beside it), whatever order the parts are listed in.
func TestPickSkipsProjectorsAndLaterParts(t *testing.T) {
	// unsloth/Qwen3-VL-4B-Instruct-GGUF's model and projector files.
	vl := []string{"Qwen3-VL-4B-Instruct-Q4_K_M.gguf", "mmproj-F16.gguf"}
	assert.Equal(t, "", Pick("F16", vl))
	assert.Equal(t, vl[0], Pick("Q4_K_M", vl))
	parts := []string{"Q2_K/Model-Q2_K-00002-of-00002.gguf", "Q2_K/Model-Q2_K-00001-of-00002.gguf"}
	assert.Equal(t, parts[1], Pick("Q2_K", parts))
	assert.True(t, IsLaterPart(parts[0]))
	assert.False(t, IsLaterPart(parts[1]))
	assert.False(t, IsLaterPart("Qwen3-4B-Instruct-2507-Q2_K.gguf"))
	assert.False(t, IsModel("Q2_K"), "a folder is no model file")
}

// Listings with vision projectors, in the Hub's order, each file named by a
// cited source (the catalog's checkpoints, internal/model/catalog.json):
// Qwen/Qwen3-VL-8B-Instruct-GGUF's model files Q4_K_M, Q8_0 and F16 with
// mmproj-...-F16 (gguf_models.json of 1038lab/ComfyUI-QwenVL at 73abb8bb)
// and mmproj-...-Q8_0 (LlamaBarn/Catalog/Catalog.swift of
// shaneholloman/llama-barn at 4531c8f8); Qwen/Qwen3-VL-32B-Instruct-GGUF's
// F16 in two parts named "-split-0000N-of-00002" (the catalog's fp16 entry).
// Other files the repositories may hold (README, other projectors) are not
// known here.
var (
	qwen3VL8B = []string{
		"Qwen3VL-8B-Instruct-F16.gguf", "Qwen3VL-8B-Instruct-Q4_K_M.gguf", "Qwen3VL-8B-Instruct-Q8_0.gguf",
		"mmproj-Qwen3VL-8B-Instruct-F16.gguf", "mmproj-Qwen3VL-8B-Instruct-Q8_0.gguf",
	}
	qwen3VL32B = []string{
		"Qwen3VL-32B-Instruct-F16-split-00001-of-00002.gguf", "Qwen3VL-32B-Instruct-F16-split-00002-of-00002.gguf",
		"Qwen3VL-32B-Instruct-Q8_0.gguf",
		"mmproj-Qwen3VL-32B-Instruct-F16.gguf", "mmproj-Qwen3VL-32B-Instruct-Q8_0.gguf",
	}
)

// TestQuantBitsFollowsLlamaCPP: the first number of the name's last field
// after "-" or ".", the split suffix removed (extract_quant_bits); 0 where
// that field holds none, as "split" of Qwen's split F16 names.
func TestQuantBitsFollowsLlamaCPP(t *testing.T) {
	for path, want := range map[string]int{
		"Qwen3VL-8B-Instruct-Q4_K_M.gguf":                    4,
		"mmproj-Qwen3VL-8B-Instruct-Q8_0.gguf":               8,
		"mmproj-F16.gguf":                                    16,
		"mmproj-gemma-4-26B-A4B-it-bf16.gguf":                16,
		"mmproj-F32.gguf":                                    32,
		"DeepSeek-V2-Lite.IQ2_XS.gguf":                       2,
		"Q2_K/Model-Q2_K-00001-of-00002.gguf":                2,
		"Qwen3VL-32B-Instruct-F16-split-00001-of-00002.gguf": 0,
		"README.md": 0,
	} {
		assert.Equal(t, want, QuantBits(path), path)
	}
	assert.Equal(t, "BF16", Tag("mmproj-gemma-4-26B-A4B-it-bf16.gguf"))
	assert.Equal(t, "Q8_0", Tag("mmproj-Qwen3VL-8B-Instruct-Q8_0.gguf"))
	assert.Equal(t, "SPLIT", Tag("Qwen3VL-32B-Instruct-F16-split-00001-of-00002.gguf"))
	assert.Equal(t, "", Tag("README.md"))
}

// TestPickProjectorNearestType: the projector whose type's bits are
// nearest the weights' (find_best_mmproj), not the first listed nor F16:
// Q4_K_M weights (4) take the Q8_0 projector (8), not the F16 one (16);
// Q8_0 and F16 weights their own type's. Qwen's split F16 names read as 0
// bits, so they take the Q8_0 projector too.
func TestPickProjectorNearestType(t *testing.T) {
	for model, want := range map[string]string{
		"Qwen3VL-8B-Instruct-Q4_K_M.gguf": "mmproj-Qwen3VL-8B-Instruct-Q8_0.gguf",
		"Qwen3VL-8B-Instruct-Q8_0.gguf":   "mmproj-Qwen3VL-8B-Instruct-Q8_0.gguf",
		"Qwen3VL-8B-Instruct-F16.gguf":    "mmproj-Qwen3VL-8B-Instruct-F16.gguf",
	} {
		assert.Equal(t, want, PickProjector(model, qwen3VL8B), model)
	}
	assert.Equal(t, "mmproj-Qwen3VL-32B-Instruct-Q8_0.gguf", PickProjector(qwen3VL32B[0], qwen3VL32B))
	assert.Equal(t, "mmproj-Qwen3VL-32B-Instruct-Q8_0.gguf", PickProjector(qwen3VL32B[2], qwen3VL32B))
	// A repository of one projector (unsloth/Qwen3-VL-4B-Instruct-GGUF as
	// LocalAI's gallery names it) gives it whatever the weights' type.
	assert.Equal(t, "mmproj-F16.gguf", PickProjector("Qwen3-VL-4B-Instruct-Q4_K_M.gguf", []string{"Qwen3-VL-4B-Instruct-Q4_K_M.gguf", "mmproj-F16.gguf"}))
	// None: a repository without a projector.
	assert.Equal(t, "", PickProjector(qwen3_4B[4], qwen3_4B))
}

// TestPickProjectorUnslothMinistral: unsloth/Ministral-3-3B-Instruct-2512-GGUF
// holds mmproj-BF16.gguf (src/config/curated-models.ts of fogelt/react-llm
// at 624e1dc2 pairs it with the Q4_K_M file) and mmproj-F32.gguf (LocalAI's
// gallery/index.yaml at 82c191af, line 35547, pairs that one with it). The
// BF16 projector, 16 bits, is nearer Q4_K_M (4) and Q8_0 (8) weights than
// F32 (32): -hf loads it, half the F32 one's bytes.
func TestPickProjectorUnslothMinistral(t *testing.T) {
	files := []string{
		"Ministral-3-3B-Instruct-2512-Q4_K_M.gguf", "Ministral-3-3B-Instruct-2512-Q8_0.gguf",
		"mmproj-BF16.gguf", "mmproj-F32.gguf",
	}
	assert.Equal(t, "mmproj-BF16.gguf", PickProjector(files[0], files))
	assert.Equal(t, "mmproj-BF16.gguf", PickProjector(files[1], files))
}

// TestPickProjectorTiesAndFolders: of projectors equally near, the first
// listed (BF16 before F16, both 16 bits); one in the weights' folder before
// one higher up; one in another folder never.
func TestPickProjectorTiesAndFolders(t *testing.T) {
	tied := []string{"Model-Q4_K_M.gguf", "mmproj-BF16.gguf", "mmproj-F16.gguf", "mmproj-F32.gguf"}
	assert.Equal(t, "mmproj-BF16.gguf", PickProjector("Model-Q4_K_M.gguf", tied))
	assert.Equal(t, "mmproj-F32.gguf", PickProjector("Model-F32.gguf", append(tied, "Model-F32.gguf")))
	nested := []string{"Q4_K_M/Model-Q4_K_M.gguf", "Q4_K_M/mmproj-F16.gguf", "mmproj-Q4_K_M.gguf", "Q8_0/mmproj-Q4_K_M.gguf"}
	assert.Equal(t, "Q4_K_M/mmproj-F16.gguf", PickProjector(nested[0], nested))
	assert.Equal(t, "mmproj-Q4_K_M.gguf", PickProjector(nested[0], nested[2:]))
	assert.Equal(t, "", PickProjector("Model-Q4_K_M.gguf", []string{"Q8_0/mmproj-Q4_K_M.gguf", "mmproj-F16.md"}))
}

// -hf skips the speculative-decoding sidecars a repository publishes beside
// the weights (gguf_filename_is_model, common/download.cpp of llama.cpp as
// synced at unslothai/llama.cpp d32676d7). The listings are those of that
// commit's llama.cpp tests/test-model-resolution.cpp: "subdir", in the style of
// stepfun-ai/Step-3.7-Flash-GGUF (MTP files at the top, the weights in
// per-type folders of split files), and "flat", in the style of
// ggml-org/gemma-4-31B-it-GGUF. Before, Pick("Q8_0") answered the MTP head
// model-mtp-Q8_0.gguf, which comes first in the listing.
func TestPickSkipsSpeculativeSidecars(t *testing.T) {
	subdir := []string{
		"mmproj-model-f16.gguf", "model-mtp-BF16.gguf", "model-mtp-Q8_0.gguf",
		"Q3_K_M/model-Q3_K_M-00001-of-00003.gguf", "Q3_K_M/model-Q3_K_M-00002-of-00003.gguf", "Q3_K_M/model-Q3_K_M-00003-of-00003.gguf",
		"Q8_0/model-Q8_0-00001-of-00002.gguf", "Q8_0/model-Q8_0-00002-of-00002.gguf",
	}
	assert.Equal(t, "Q8_0/model-Q8_0-00001-of-00002.gguf", Pick("Q8_0", subdir))
	assert.Equal(t, "", Pick("BF16", subdir), "the only BF16 file is the MTP head")
	flat := []string{
		"README.md", "model-BF16.gguf", "model-Q4_K_M.gguf", "model-Q8_0.gguf",
		"mmproj-model-BF16.gguf", "mmproj-model-Q8_0.gguf",
		"mtp-model-BF16.gguf", "mtp-model-Q4_0.gguf", "mtp-model-Q8_0.gguf",
		"dflash-model-BF16.gguf", "dflash-model-Q8_0.gguf",
	}
	assert.Equal(t, "", Pick("Q4_0", flat), "only the MTP head is Q4_0")
	for _, p := range []string{"eagle3-model-Q8_0.gguf", "dspark-model-Q8_0.gguf", "dflash-model-Q8_0.gguf", "mtp-model-Q8_0.gguf"} {
		assert.False(t, IsModel(p), p)
	}
	assert.True(t, IsModel("model-MTP-BF16.gguf"), "llama.cpp's match is case-sensitive: unsloth's suffix MTP file is not skipped")
}
