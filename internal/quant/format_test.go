package quant

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// The gpt-oss checkpoints as OpenAI publishes them: MoE expert weights in
// MXFP4, every other tensor in BF16. The model card (arXiv 2508.10925,
// Table 1, https://arxiv.org/abs/2508.10925) gives the checkpoint sizes:
// 60.8 GiB for gpt-oss-120b, 12.8 GiB for gpt-oss-20b.
func TestMXFP4CheckpointSize(t *testing.T) {
	for _, c := range []struct {
		model string
		gib   float64
	}{{"gpt-oss-120b", 60.8}, {"gpt-oss-20b", 12.8}} {
		m := model.Lookup(c.model)
		require.NotNil(t, m, c.model)
		l, err := Parse("mxfp4")
		require.NoError(t, err)
		got := float64(WeightsBytes(m, l)) / (1 << 30)
		assert.InDelta(t, c.gib, got, c.gib*0.02, "%s mxfp4 checkpoint: %.2f GiB", c.model, got)
		// Not a pure MXFP4 file: attention, embeddings and head stay 16-bit.
		assert.Greater(t, got, float64(m.Params)*4.25/8/(1<<30), c.model)
	}
}

func TestMXFP4Level(t *testing.T) {
	l, err := Parse("MXFP4")
	require.NoError(t, err)
	assert.Equal(t, MXFP4, l)
	assert.False(t, l.IsContract())
	assert.True(t, l.IsCheckpointFormat())
	// Weight-only 4-bit, dequantized in the kernels like GGUF 4-bit types:
	// a Mac runs it (llama.cpp Metal), which has no bf16.
	assert.Equal(t, "int4", l.Native())
	assert.InDelta(t, 4.25, l.BitsPerWeight(), 1e-9)
}

// GGUFType names the GGUF file type that realises a level for llama.cpp.
func TestGGUFTypeOfLevels(t *testing.T) {
	for l, want := range map[Level]string{
		INT4: "Q4_K_M", INT8: "Q8_0", "q4_k_m": "Q4_K_M", "iq4_xs": "IQ4_XS", "q8_0": "Q8_0",
		MXFP4: "MXFP4_MOE", BF16: "BF16", FP16: "F16", FP32: "F32", FP8: "",
	} {
		assert.Equal(t, want, l.GGUFType(), string(l))
	}
}

// Every published checkpoint whose size the catalog records (with its
// source) is sized within 2 % by its level's tensor rules: the MXFP4 gpt-oss
// checkpoints and bartowski's Llama-3.3-70B-Instruct Q4_K_M GGUF (42.5 GB,
// 7 % above a flat 4.5 bits per weight). A file made by other rules
// (size_mix) is checked by checkOtherMix instead.
func TestPublishedCheckpointSizes(t *testing.T) {
	n := 0
	for _, e := range model.Catalog() {
		m := model.Lookup(e.Name)
		require.NotNil(t, m)
		for _, ck := range e.Checkpoints {
			if ck.SizeBytes == 0 {
				continue
			}
			assert.NotEmpty(t, ck.SizeSource, ck.Repo)
			if ck.SizeMix != "" {
				continue
			}
			n++
			l, err := Parse(ck.Quant)
			require.NoError(t, err, ck.Repo)
			got := GGUFFileBytes(m, l, ck)
			assert.InEpsilon(t, float64(ck.SizeBytes), float64(got), 0.02, "%s %s: %d bytes, published %d", ck.Repo, ck.Quant, got, ck.SizeBytes)
		}
	}
	assert.GreaterOrEqual(t, n, 3)
	// The Q4_K_M file is about 7 % larger than 4.5 bits per weight.
	m := model.Lookup("Llama-3.3-70B-Instruct")
	flat := float64(m.Params) * 4.5 / 8
	assert.InDelta(t, 1.07, float64(WeightsBytes(m, "q4_k_m"))/flat, 0.01)
}
