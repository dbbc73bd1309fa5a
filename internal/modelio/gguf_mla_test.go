package modelio

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
)

// ggufDeepSeek2 is a deepseek2 header with DeepSeek-V3's attention keys as
// llama.cpp's loader printed them for GGUFs of DeepSeek-V3-0324 in
// https://github.com/ggml-org/llama.cpp/issues/13252 (key_length 576) and
// https://github.com/ggml-org/llama.cpp/issues/13461 (value_length 512,
// key_length_mla 192, value_length_mla 128), or, when mla is false, as an
// older conversion has them (issue 11141 there: key_length 192,
// value_length 128, no _mla keys).
func ggufDeepSeek2(mla bool) []byte {
	var w ggufWriter
	kvs := uint64(9)
	if mla {
		kvs += 2
	}
	w.header(3, 1, kvs)
	w.kvString("general.architecture", "deepseek2")
	w.kvU32("deepseek2.block_count", 61)
	w.kvU32("deepseek2.embedding_length", 7168)
	w.kvU32("deepseek2.attention.head_count", 128)
	w.kvU32("deepseek2.attention.q_lora_rank", 1536)
	w.kvU32("deepseek2.attention.kv_lora_rank", 512)
	w.kvU32("deepseek2.rope.dimension_count", 64)
	if mla {
		w.kvU32("deepseek2.attention.key_length", 576)
		w.kvU32("deepseek2.attention.value_length", 512)
		w.kvU32("deepseek2.attention.key_length_mla", 192)
		w.kvU32("deepseek2.attention.value_length_mla", 128)
	} else {
		w.kvU32("deepseek2.attention.key_length", 192)
		w.kvU32("deepseek2.attention.value_length", 128)
	}
	w.tensor("token_embd.weight", ggml.F16, 7168, 100)
	return w.Bytes()
}

// TestGGUFMLAHeadWidths: a head's decompressed widths come from the _mla
// keys where a file has them (not the latent's 576 - 64 = 512 and 512),
// from key_length and value_length in an older file: DeepSeek-V3's 128 +
// 64 and 128 either way.
func TestGGUFMLAHeadWidths(t *testing.T) {
	for _, mla := range []bool{true, false} {
		m, err := ReadGGUF(bytes.NewReader(ggufDeepSeek2(mla)))
		require.NoError(t, err)
		assert.Equal(t, 128, m.QKNopeHeadDim, "mla keys %v", mla)
		assert.Equal(t, 64, m.QKRopeHeadDim, "mla keys %v", mla)
		assert.Equal(t, 128, m.VHeadDim, "mla keys %v", mla)
		assert.Equal(t, 192, m.QKHeadDim(), "mla keys %v", mla)
	}
}
