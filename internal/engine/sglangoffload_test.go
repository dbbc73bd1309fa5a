package engine

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// SGLang's --cpu-offload-gb is an integer number of GiB ("cpu_offload_gb:
// A[int, ...]" in python/sglang/srt/server_args.py at sgl-project/sglang
// 001067ff; create_offloader offloads int(cpu_offload_gb * 1024**3) bytes,
// python/sglang/srt/utils/offloader.py at 046a9e40): the flag is the plan's
// host bytes rounded up to whole GiB, and what the plan keeps in host memory
// (Parallelism.OffloadBytes) is what SGLang offloads.
func TestSGLangCPUOffloadFlagIsWholeGiB(t *testing.T) {
	m := model.Lookup("Qwen2.5-14B")
	require.NotNil(t, m)
	gpu := PlacedDevice{ID: "cuda:0", Dev: &registry.Device{Kind: registry.KindCUDA}}
	host := PlacedDevice{ID: "cpu:0", Dev: &registry.Device{Kind: registry.KindCPU}}
	par := sglang{}.Parallelism()
	gib := int64(1 << 30)
	for _, c := range []struct {
		bytes int64
		flag  string
	}{
		{par.OffloadBytes(8*gib + gib/3), "9"},
		{8 * gib, "8"},
		{8*gib + 1, "9"},
		{par.OffloadBytes(1), "1"},
	} {
		p := &Placement{Model: m, Level: "bf16", Kind: registry.KindCUDA, Layers: m.Layers, Context: 4096, Batch: 1, TP: 1,
			Memory: Memory{Fraction: 0.83}, Offloaded: true, OffloadedWeightBytes: c.bytes,
			Stages: []Stage{{Start: 0, End: m.Layers, Devices: []PlacedDevice{gpu}}, {Start: 0, End: 16, Devices: []PlacedDevice{host}}}}
		a, _, ok := sglang{}.Args(p)
		require.True(t, ok)
		i := slices.Index(a, "--cpu-offload-gb")
		require.GreaterOrEqual(t, i, 0, "%v", a)
		assert.Equal(t, c.flag, a[i+1], "%d bytes", c.bytes)
		assert.NotContains(t, a, "--pp-size", "one GPU stage: no pipeline")
	}
	assert.Equal(t, 9*gib, par.OffloadBytes(8*gib+1), "rounded up to the next GiB")
	assert.Equal(t, 8*gib, par.OffloadBytes(8*gib), "whole GiB stay as they are")
	assert.True(t, par.StreamsOffloadedWeights, "SGLang keeps offloaded weights in host memory and runs every layer on the GPU")
	assert.True(t, par.OffloadCopiedPerPass, "SGLang copies an offloaded layer's weights to the GPU in its forward pass")
	assert.False(t, vllm{}.Parallelism().OffloadCopiedPerPass, "vLLM's UVA offloader reads them in place")
	assert.Equal(t, CPUOffloadBytes(8*gib+1), vllm{}.Parallelism().OffloadBytes(8*gib+1), "vLLM's step stays a tenth of a GiB")
}
