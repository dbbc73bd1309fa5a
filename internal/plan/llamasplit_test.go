package plan

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// llamaLayerDevices is which device llama.cpp puts each of n_layer+1
// slots on (the repeating layers, then the output layer as slot n_layer)
// for -ngl ngl and --tensor-split split: the rule of load_tensors'
// get_layer_buft_list in src/llama-model.cpp of ggml-org/llama.cpp
// (i_gpu_start = max(n_layer - ngl, 0), act_gpu_layers = min(ngl,
// n_layer + 1), a slot il goes to the first device whose cumulative split
// share exceeds (il - i_gpu_start) / act_gpu_layers; -1 is the CPU).
func llamaLayerDevices(nLayer, ngl int, split []float64) []int {
	var sum float64
	for _, s := range split {
		sum += s
	}
	cum := make([]float64, len(split))
	var acc float64
	for i, s := range split {
		acc += s
		cum[i] = acc / sum
	}
	start := max(nLayer-ngl, 0)
	act := min(ngl, nLayer+1)
	out := make([]int, nLayer+1)
	for il := range out {
		if il < start || il-start >= act {
			out[il] = -1
			continue
		}
		x := float32(il-start) / float32(act)
		out[il] = min(sort.Search(len(cum), func(i int) bool { return float32(cum[i]) > x }), len(cum)-1)
	}
	return out
}

// A dense model on four GPUs with every layer on them: the flags must give
// each GPU exactly the layers of its shard when llama.cpp applies its own
// rule. Before, --tensor-split listed the shards' layer counts (summing
// to n_layer) while -ngl counted the output layer too, so the first GPU
// took one layer more than planned.
func TestLlamaCPPTensorSplitGivesEachGPUItsLayers(t *testing.T) {
	var devs []registry.Device
	for i := 0; i < 4; i++ {
		devs = append(devs, gpu(registry.KindCUDA, i, "NVIDIA GeForce RTX 3090", 24*gibBytes, "8.6"))
	}
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"quant":"q4_k_m","engine":"llama.cpp","context_length":8192}`, reg(t, devs)))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assertLlamaCPPSplit(t, a)
}

// The same with the last layers on the GPUs and the first on the CPU
// (-ngl below n_layer): the split's slots are the GPU layers only.
func TestLlamaCPPTensorSplitWithCPULayers(t *testing.T) {
	second := rtx3090()
	second.ID, second.Index = "cuda:1", 1
	r := reg(t, []registry.Device{rtx3090(), second, host(256 << 30)})
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"quant":"q8_0","engine":"llama.cpp","cpu_offload":true,"context_length":8192}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	args := a.EngineArgs["llama.cpp"]
	ngl, err := strconv.Atoi(argValue(args, "-ngl"))
	require.NoError(t, err, "%v", args)
	require.Less(t, ngl, a.Model.Layers, "%v", args)
	assertLlamaCPPSplit(t, a)
}

// assertLlamaCPPSplit checks that llama.cpp's own rule, applied to a's
// -ngl and --tensor-split, puts each GPU shard's layers on its GPU.
func assertLlamaCPPSplit(t *testing.T, a *ShardingAnswer) {
	t.Helper()
	args := a.EngineArgs["llama.cpp"]
	ngl, err := strconv.Atoi(argValue(args, "-ngl"))
	require.NoError(t, err, "%v", args)
	var split []float64
	for _, f := range strings.Split(argValue(args, "--tensor-split"), ",") {
		v, err := strconv.ParseFloat(f, 64)
		require.NoError(t, err, "%v", args)
		split = append(split, v)
	}
	var gpus []Shard
	for _, s := range a.Shards {
		if !strings.HasPrefix(s.DeviceID, "cpu") {
			gpus = append(gpus, s)
		}
	}
	require.Len(t, split, len(gpus), "%v", args)
	placed := llamaLayerDevices(a.Model.Layers, ngl, split)
	for i, s := range gpus {
		var got []int
		for il := 0; il < a.Model.Layers; il++ {
			if placed[il] == i {
				got = append(got, il)
			}
		}
		require.NotEmpty(t, got, "%s gets no layer from %v", s.DeviceID, args)
		assert.Equal(t, []int{s.LayerStart, s.LayerEnd}, []int{got[0], got[len(got)-1] + 1}, "%s from %v", s.DeviceID, args)
	}
	if ngl > a.Model.Layers {
		assert.Equal(t, len(split)-1, placed[a.Model.Layers], "the output layer goes to the last GPU")
	}
}
