package modelio

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// ggufWithWindow is a GGUF header of architecture arch with layers blocks
// and a sliding window, one tensor.
func ggufWithWindow(arch string, layers, window uint32) []byte {
	var w ggufWriter
	w.header(3, 1, 4)
	w.kvString("general.architecture", arch)
	w.kvU32(arch+".block_count", layers)
	w.kvU32(arch+".embedding_length", 64)
	w.kvU32(arch+".attention.sliding_window", window)
	w.tensor("token_embd.weight", ggml.F16, 64, 100)
	return w.Bytes()
}

// TestGGUFSlidingLayers: a GGUF file names the window but not the layers
// using it; llama.cpp's per-architecture pattern decides (set_swa_pattern in
// src/llama-model.cpp: 6 for gemma3, 2 for gemma2 and gpt-oss), and every
// layer of another architecture uses the window. Gemma-3-1B: 22 of 26
// layers windowed, as llama.cpp allocated for it (1024 cells in each of 22
// layers, testdata/llamacpp/measurements.json). A depth of 2^31-1 costs the
// pattern's length, not the depth.
func TestGGUFSlidingLayers(t *testing.T) {
	for _, tc := range []struct {
		arch           string
		layers, window uint32
		sliding        int
	}{
		{"gemma3", 26, 512, 22},
		{"gemma2", 42, 4096, 21},
		{"gpt-oss", 36, 128, 18},
		{"llama", 32, 4096, 32},
	} {
		m, err := ReadGGUF(bytes.NewReader(ggufWithWindow(tc.arch, tc.layers, tc.window)))
		require.NoError(t, err, tc.arch)
		w, n := m.SlidingLayers()
		assert.Equal(t, int(tc.window), w, tc.arch)
		assert.Equal(t, tc.sliding, n, tc.arch)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := ReadGGUF(bytes.NewReader(ggufWithWindow("gemma3", 1<<31-1, 512)))
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Len(t, m.LayerKinds, 6)
	assert.Equal(t, (1<<31-1)/6, m.CountLayers(model.FullAttention))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))
}
