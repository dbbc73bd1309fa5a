package engine

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// vLLM reads --cpu-offload-gb as a float number of GiB and offloads
// int(cpu_offload_gb * 1024**3) bytes (create_offloader,
// vllm/model_executor/offloader/base.py): the flag is written in tenths of
// a GiB, rounded up, so that what the plan keeps in host memory
// (CPUOffloadBytes) is what vLLM offloads.
func TestVLLMCPUOffloadFlagIsThePlansHostBytes(t *testing.T) {
	m := model.Lookup("Qwen2.5-14B")
	require.NotNil(t, m)
	gpu := PlacedDevice{ID: "cuda:0", Dev: &registry.Device{Kind: registry.KindCUDA}}
	host := PlacedDevice{ID: "cpu:0", Dev: &registry.Device{Kind: registry.KindCPU}}
	gib := float64(1 << 30)
	for _, c := range []struct {
		bytes int64
		flag  string
	}{
		{CPUOffloadBytes(int64(8.3 * gib)), "8.3"},
		{int64(8.3*gib) + 1, "8.4"},
		{CPUOffloadBytes(5 << 30), "5.0"},
		{CPUOffloadBytes(1), "0.1"},
	} {
		p := &Placement{Model: m, Level: "bf16", Kind: registry.KindCUDA, Layers: m.Layers, Context: 4096, Batch: 1, TP: 1,
			Memory: Memory{Fraction: 0.9}, Offloaded: true, OffloadedWeightBytes: c.bytes,
			Stages: []Stage{{Start: 0, End: 40, Devices: []PlacedDevice{gpu}}, {Start: 40, End: m.Layers, Devices: []PlacedDevice{host}}}}
		a, _, ok := vllm{}.Args(p)
		require.True(t, ok)
		i := slices.Index(a, "--cpu-offload-gb")
		require.GreaterOrEqual(t, i, 0, "%v", a)
		assert.Equal(t, c.flag, a[i+1], "%d bytes", c.bytes)
		assert.NotContains(t, a, "--pipeline-parallel-size", "one GPU stage: no pipeline")
	}
	assert.Equal(t, int64(5<<30), CPUOffloadBytes(5<<30), "whole tenths stay as they are")
	assert.Equal(t, int64(8.4*gib), CPUOffloadBytes(int64(8.3*gib)+1), "rounded up to the next tenth")
	assert.True(t, vllm{}.Parallelism().StreamsOffloadedWeights, "vLLM keeps offloaded weights in pinned host memory and reads them from the GPU")
	assert.False(t, llamaCPP{}.Parallelism().StreamsOffloadedWeights, "llama.cpp runs the layers it keeps in host memory on the CPU")
}
