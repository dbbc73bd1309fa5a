package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// SGLang reads the device's free memory (torch.cuda.mem_get_info after
// torch.cuda.empty_cache) before and after loading the weights, so what
// PyTorch's caching allocator rounds each weight tensor up to counts as
// weights: a tensor of more than 10 MiB takes whole 2 MiB blocks.
// Qwen2.5-32B at TP 4 (the QwQ-32B row of sglang_startup.json): per layer
// the QKV projection is 17.5 MiB (18 taken), the output 12.5 (14), the
// gate-and-up 135 (136), the down 67.5 (68), 3.5 MiB over, and the two
// 371.25 MiB vocabulary shards 0.75 each: 225.5 MiB on 64 layers.
// Qwen2.5-7B at TP 1 (the RTX 3090 row): 3.5 MiB a layer on 28 and 0.5
// each on the two 1039.5 MiB embeddings, 99 MiB. Llama-3.1-8B's tensors
// are whole 2 MiB multiples: nothing.
func TestSGLangAllocatorRounding(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		model string
		tp    int
		want  float64 // MiB
	}{
		{"Qwen2.5-32B", 4, 225.5},
		{"Qwen2.5-7B", 1, 99},
		{"Llama-3.1-8B", 1, 0},
	} {
		m := model.Lookup(c.model)
		require.NotNil(t, m, c.model)
		got := SGLangAllocatorRoundingBytes(m, 16, c.tp, 0, m.Layers)
		assert.InDelta(t, c.want, float64(got)/mib, 0.01, "%s TP %d", c.model, c.tp)
	}
	// A pipeline stage holds its own layers' tensors and, on the first and
	// last stage, the embeddings.
	m := model.Lookup("Qwen2.5-7B")
	first := SGLangAllocatorRoundingBytes(m, 16, 1, 0, 14)
	last := SGLangAllocatorRoundingBytes(m, 16, 1, 14, 28)
	assert.InDelta(t, 99.0, float64(first+last)/mib, 0.01)
	assert.InDelta(t, 14*3.5+0.5, float64(first)/mib, 0.01)
}
