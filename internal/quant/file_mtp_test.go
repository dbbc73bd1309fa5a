package quant

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// TestFileMTPBytesGLM47AtBF16: at BF16 every tensor of GLM-4.7's MTP layer
// in unsloth's file is two bytes a weight, so the layer's bytes are twice
// the count shape.go gives it (Model.MTPParams: the decoder layer,
// eh_proj and the three norms) plus the layer's own embedding and output
// head (2 x 151,552 x 5,120), counted here from the tensor list of
// weights.go: two independent counts of the same tensors.
func TestFileMTPBytesGLM47AtBF16(t *testing.T) {
	m := model.Lookup("GLM-4.7")
	require.NotNil(t, m)
	require.Equal(t, 1, m.MTPLayers)
	const vocab, h = 151552, 5120
	want := 2 * (m.MTPParams + 2*vocab*h)
	assert.InEpsilon(t, float64(want), float64(FileMTPBytes(m, BF16, true)), 1e-6)
	assert.Equal(t, FileMTPBytes(m, BF16, true)-FileMTPBytes(m, BF16, false), int64(2*2*vocab*h))
}

// TestFileMTPBytesGLM47AtQ4KM: llama-quant types the MTP layer, block 92
// of 93, as the last layer of the stack (src/llama-quant.cpp of
// unslothai/llama.cpp@d32676d, llama_tensor_get_type_impl): attn_v and
// ffn_down (the routed experts' and the shared expert's) at Q6_K
// (use_more_bits(92, 93): the last eighth), the other 2-D tensors at
// Q4_K, among them nextn.eh_proj, nextn.embed_tokens and
// nextn.shared_head_head (category OTHER); the norms and the router
// stay F32.
func TestFileMTPBytesGLM47AtQ4KM(t *testing.T) {
	m := model.Lookup("GLM-4.7")
	require.NotNil(t, m)
	const h, heads, kv, d, experts, inter, vocab = 5120.0, 96.0, 8.0, 128.0, 160.0, 1536.0, 151552.0
	q4, q6 := ggml.Q4_K.BitsPerWeight(), ggml.Q6_K.BitsPerWeight()
	bits := h*heads*d*q4 + h*kv*d*q4 + h*kv*d*q6 + heads*d*h*q4 + // attn_q, attn_k, attn_v, attn_output
		2*experts*h*inter*q4 + experts*inter*h*q6 + // ffn_gate_exps, ffn_up_exps, ffn_down_exps
		2*h*inter*q4 + inter*h*q6 + // the shared expert (n_shared_experts 1)
		2*h*h*q4 + 2*vocab*h*q4 + // eh_proj, embed_tokens, shared_head_head
		32*(2*h+experts*h+3*h) // attn_norm, ffn_norm, router; enorm, hnorm, shared_head_norm
	assert.InEpsilon(t, bits/8, float64(FileMTPBytes(m, "q4_k_m", true)), 1e-9)
}

// TestGGUFFileBytesAddsOnlyWhatTheFileHolds: a checkpoint without
// file_mtp is its weights; one with it adds the MTP layer, and the model's
// WeightsBytes, its device memory, stays the same either way.
func TestGGUFFileBytesAddsOnlyWhatTheFileHolds(t *testing.T) {
	m := model.Lookup("GLM-4.7")
	require.NotNil(t, m)
	w := WeightsBytes(m, "q8_0")
	assert.Equal(t, w, GGUFFileBytes(m, "q8_0", model.Checkpoint{Quant: "q8_0", Method: "gguf"}))
	assert.Equal(t, w+FileMTPBytes(m, "q8_0", false), GGUFFileBytes(m, "q8_0", model.Checkpoint{Quant: "q8_0", Method: "gguf", FileMTP: "layer"}))
	assert.Equal(t, w+FileMTPBytes(m, "q8_0", true), GGUFFileBytes(m, "q8_0", model.Checkpoint{Quant: "q8_0", Method: "gguf", FileMTP: FileMTPWithEmbedHead}))
	assert.Equal(t, w, WeightsBytes(m, "q8_0"))
	// A model without MTP layers has none to add.
	llama := model.Lookup("Llama-3.1-8B")
	require.NotNil(t, llama)
	assert.Zero(t, FileMTPBytes(llama, "q8_0", true))
}

// TestFileExtraBytes: a file made by other rules than mainline llama.cpp's
// (size_mix) holds its size less the derived weights beyond them, and its
// MTP layers, which llama.cpp skips, are not part of that extra; a file of
// mainline's rules, or one not larger than derived, holds nothing extra.
func TestFileExtraBytes(t *testing.T) {
	m := model.Lookup("MiniMax-M2.7")
	require.NotNil(t, m)
	derived := WeightsBytes(m, "q6_k")
	ck := model.Checkpoint{Quant: "q6_k", Method: "gguf", SizeBytes: 197_050_000_000, SizeMix: "bartowski's quant_types rules"}
	assert.Equal(t, ck.SizeBytes-derived, FileExtraBytes(m, "q6_k", ck))
	assert.InDelta(t, 9.3e9, float64(FileExtraBytes(m, "q6_k", ck)), 0.05e9, "197.05 GB against mainline's 187.75 GB")

	mainline := ck
	mainline.SizeMix = ""
	assert.Zero(t, FileExtraBytes(m, "q6_k", mainline), "a file of mainline's rules is charged as derived")
	smaller := ck
	smaller.SizeBytes = derived - 1e9
	assert.Zero(t, FileExtraBytes(m, "q6_k", smaller), "a file smaller than derived: the derived figure stays")

	glm := model.Lookup("GLM-4.7")
	require.NotNil(t, glm)
	withMTP := model.Checkpoint{Quant: "q4_k_m", Method: "gguf", FileMTP: FileMTPWithEmbedHead, SizeMix: "other rules"}
	withMTP.SizeBytes = GGUFFileBytes(glm, "q4_k_m", withMTP) + 2e9
	assert.Equal(t, int64(2e9), FileExtraBytes(glm, "q4_k_m", withMTP), "the MTP layers the file holds are no extra")
}
