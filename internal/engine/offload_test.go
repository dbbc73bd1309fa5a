package engine

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// offloadArgs is e's arguments for Qwen2.5-14B at bf16 on one GPU with
// bytes of its weights offloaded to host memory (stages as the streamed
// offload plan lays them out), with the value of --cpu-offload-gb.
func offloadArgs(t *testing.T, e Engine, bytes int64, stages func(gpu, host PlacedDevice, layers int) []Stage) (args []string, flag string) {
	t.Helper()
	m := model.Lookup("Qwen2.5-14B")
	require.NotNil(t, m)
	gpu := PlacedDevice{ID: "cuda:0", Dev: &registry.Device{Kind: registry.KindCUDA}}
	host := PlacedDevice{ID: "cpu:0", Dev: &registry.Device{Kind: registry.KindCPU}}
	p := &Placement{Model: m, Level: "bf16", Kind: registry.KindCUDA, Layers: m.Layers, Context: 4096, Batch: 1, TP: 1,
		Memory: Memory{Fraction: 0.9}, Offloaded: true, OffloadedWeightBytes: bytes, Stages: stages(gpu, host, m.Layers)}
	a, _, ok := e.Args(p)
	require.True(t, ok)
	i := slices.Index(a, "--cpu-offload-gb")
	require.GreaterOrEqual(t, i, 0, "%v", a)
	return a, a[i+1]
}

// vLLM reads --cpu-offload-gb as a float number of GiB and offloads
// int(cpu_offload_gb * 1024**3) bytes (create_offloader,
// vllm/model_executor/offloader/base.py): the flag is written in tenths of
// a GiB, rounded up, so that what the plan keeps in host memory
// (Parallelism.OffloadBytes) is what vLLM offloads.
func TestVLLMCPUOffloadFlagIsThePlansHostBytes(t *testing.T) {
	par := vllm{}.Parallelism()
	gib := float64(1 << 30)
	for _, c := range []struct {
		bytes int64
		flag  string
	}{
		{par.OffloadBytes(int64(8.3 * gib)), "8.3"},
		{int64(8.3*gib) + 1, "8.4"},
		{par.OffloadBytes(5 << 30), "5.0"},
		{par.OffloadBytes(1), "0.1"},
	} {
		a, flag := offloadArgs(t, vllm{}, c.bytes, func(gpu, host PlacedDevice, layers int) []Stage {
			return []Stage{{Start: 0, End: 40, Devices: []PlacedDevice{gpu}}, {Start: 40, End: layers, Devices: []PlacedDevice{host}}}
		})
		assert.Equal(t, c.flag, flag, "%d bytes", c.bytes)
		assert.NotContains(t, a, "--pipeline-parallel-size", "one GPU stage: no pipeline")
	}
	assert.Equal(t, int64(5<<30), par.OffloadBytes(5<<30), "whole tenths stay as they are")
	assert.Equal(t, int64(8.4*gib), par.OffloadBytes(int64(8.3*gib)+1), "rounded up to the next tenth")
	assert.Equal(t, int64(8.1*gib), par.OffloadBytes(8<<30+1), "a byte past a tenth takes the next")
	assert.True(t, par.StreamsOffloadedWeights, "vLLM keeps offloaded weights in pinned host memory and reads them from the GPU")
	assert.False(t, par.OffloadCopiedPerPass, "vLLM's UVA offloader reads them in place")
	assert.False(t, llamaCPP{}.Parallelism().StreamsOffloadedWeights, "llama.cpp runs the layers it keeps in host memory on the CPU")
}

// SGLang's --cpu-offload-gb is an integer number of GiB ("cpu_offload_gb:
// A[int, ...]" in python/sglang/srt/server_args.py at sgl-project/sglang
// 001067ff; create_offloader offloads int(cpu_offload_gb * 1024**3) bytes,
// python/sglang/srt/utils/offloader.py at 046a9e40): the flag is the plan's
// host bytes rounded up to whole GiB, and what the plan keeps in host memory
// (Parallelism.OffloadBytes) is what SGLang offloads.
func TestSGLangCPUOffloadFlagIsWholeGiB(t *testing.T) {
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
		a, flag := offloadArgs(t, sglang{}, c.bytes, func(gpu, host PlacedDevice, layers int) []Stage {
			return []Stage{{Start: 0, End: layers, Devices: []PlacedDevice{gpu}}, {Start: 0, End: 16, Devices: []PlacedDevice{host}}}
		})
		assert.Equal(t, c.flag, flag, "%d bytes", c.bytes)
		assert.NotContains(t, a, "--pp-size", "one GPU stage: no pipeline")
	}
	assert.Equal(t, 9*gib, par.OffloadBytes(8*gib+1), "rounded up to the next GiB")
	assert.Equal(t, 8*gib, par.OffloadBytes(8*gib), "whole GiB stay as they are")
	assert.True(t, par.StreamsOffloadedWeights, "SGLang keeps offloaded weights in host memory and runs every layer on the GPU")
	assert.True(t, par.OffloadCopiedPerPass, "SGLang copies an offloaded layer's weights to the GPU in its forward pass")
}
