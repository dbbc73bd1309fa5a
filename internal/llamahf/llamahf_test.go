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
