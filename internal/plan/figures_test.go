package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestWeightsAtIsWeightsBytesPerLevel(t *testing.T) {
	m := model.Lookup("Llama-3.1-70B")
	require.NotNil(t, m)
	w := weightsAt(m, autoLevels)
	for _, l := range autoLevels {
		assert.Equal(t, quant.WeightsBytes(m, l), w.at(m, l), l)
	}
	assert.Equal(t, quant.WeightsBytes(m, quant.FP32), w.at(m, quant.FP32), "a level outside the request's is sized on demand")
	assert.Greater(t, w.at(m, quant.BF16), w.at(m, quant.INT4))
}

// The weights are sized once, for the levels the request plans, before the
// search; every estimate of the search reads them.
func TestChooseSizesTheRequestsLevelsOnce(t *testing.T) {
	r := reg(t, []registry.Device{h100(0), h100(1)}, link(registry.LinkNVSwitch, 900, "cuda:0", "cuda:1"))
	for body, want := range map[string][]quant.Level{
		`{"model":{"name":"Llama-3.1-70B"}}`:                autoLevels,
		`{"model":{"name":"Llama-3.1-70B"},"quant":"int8"}`: {quant.INT8},
	} {
		req := planningOf(t, request(t, body, r))
		ch, err := choose(req)
		require.NoError(t, err)
		require.True(t, ch.Plan.Fits, body)
		assert.Equal(t, want, req.weights.levels, body)
		for i, l := range want {
			assert.Equal(t, quant.WeightsBytes(req.Model, l), req.weights.bytes[i], body)
		}
	}
}

// A plan on the CPU charges no GPU runtime context: llama.cpp's CPU backend
// allocates only the model, KV, output and compute buffers
// (internal/calibration/data/llamacpp_measurements.json; docs/accuracy.md "Against
// llama.cpp's allocation"), while a CUDA GPU keeps llama.cpp's measured
// context (calibration.LlamaCPPCUDAOverheadBytes), and the token embedding
// stays in host memory (Budget.HostBytes), outside the GPU's figures.
func TestOverheadIsChargedOnAcceleratorsOnly(t *testing.T) {
	body := `{"model":{"name":"Llama-3.2-1B"},"quant":"f16","context_length":4096,"engine":"llama.cpp"}`
	cpu := shard(t, request(t, body, reg(t, []registry.Device{host(64 << 30)})))
	require.True(t, cpu.Fits.Yes(), dump(t, cpu))
	assert.Equal(t, int64(0), cpu.Memory.OverheadBytes, "CPU plan")
	gpuPlan := shard(t, request(t, body, reg(t, []registry.Device{h100(0)})))
	require.True(t, gpuPlan.Fits.Yes(), dump(t, gpuPlan))
	assert.Equal(t, int64(calibration.LlamaCPPCUDAOverheadBytes), gpuPlan.Memory.OverheadBytes, "GPU plan")
	assert.Equal(t, cpu.Memory.KVCacheBytes, gpuPlan.Memory.KVCacheBytes)
	require.NotNil(t, gpuPlan.Budget)
	assert.Positive(t, gpuPlan.Budget.HostBytes, "token_embd in host memory")
	// Llama-3.2-1B ties its embeddings: the GPU holds the output layer's
	// copy of token_embd, the host the input's (costs.TiedOut).
	assert.InDelta(t, cpu.Memory.WeightsBytes, gpuPlan.Memory.WeightsBytes, 1)
	assert.Less(t, gpuPlan.Memory.ActivationsBytes, cpu.Memory.ActivationsBytes, "the CUDA compute buffer is the allocator's peak")
}

// llama.cpp keeps token_embd in host memory; a model with tied embeddings
// has its output layer's weight created as a second copy of it
// (TENSOR_DUPLICATED, src/models/llama.cpp of ggml-org/llama.cpp @
// 34af94cd), on the GPU with the output
// layer. Measured on the H200 (data/llamacpp-cuda-h200-memory, 34af94cd):
// Llama-3.2-1B F16 CUDA0 model 2357 MiB (the whole file) and Host 501 MiB
// (token_embd); Phi-3-mini F16, untied, CUDA0 7100 and Host 187 (7288 in
// all). Fails without TiedOut: the tied model's GPU weights were the file
// less the embedding (1856 MiB).
func TestTiedEmbeddingsAreOnTheGPUAndTheHost(t *testing.T) {
	for model, tied := range map[string]bool{"Llama-3.2-1B": true, "Phi-3-mini-4k-instruct": false} {
		body := `{"model":{"name":"` + model + `"},"quant":"f16","context_length":4096,"engine":"llama.cpp"}`
		cpu := shard(t, request(t, body, reg(t, []registry.Device{host(64 << 30)})))
		gpu := shard(t, request(t, body, reg(t, []registry.Device{h100(0)})))
		require.True(t, cpu.Fits.Yes() && gpu.Fits.Yes(), model)
		require.NotNil(t, gpu.Budget, model)
		embed := gpu.Budget.HostBytes
		assert.Positive(t, embed, model)
		if tied {
			assert.InDelta(t, cpu.Memory.WeightsBytes, gpu.Memory.WeightsBytes, 1, model)
		} else {
			assert.InDelta(t, cpu.Memory.WeightsBytes, gpu.Memory.WeightsBytes+embed, 1, model)
		}
	}
}

// llama.cpp's quantized cache types (--cache-type-k/-v) are sized by their
// ggml blocks: q8_0 is 34 bytes per 32 values (block_q8_0, internal/ggml),
// q4_0 18 per 32. fp8/int8 are one byte per value, but llama.cpp runs them
// as q8_0 (--cache-type-k q8_0), so its plans size them so.
func TestKVCacheDTypeGGMLTypesAreSizedByBlock(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	base := `{"model":{"name":"Llama-3.2-1B"},"context_length":4096,"engine":"llama.cpp","kv_cache_dtype":`
	kvOf := func(dt string) int64 {
		return planningOf(t, request(t, base+`"`+dt+`"}`, r)).estimate(quant.FP16, 4096, 1).KVCacheBytes
	}
	f16 := kvOf("fp16")
	assert.Equal(t, f16*34/64, kvOf("q8_0"))
	assert.Equal(t, f16*34/64, kvOf("Q8_0"))
	assert.Equal(t, f16*18/64, kvOf("q4_0"))
	assert.Equal(t, f16*34/64, kvOf("int8"))
	assert.Equal(t, f16*34/64, kvOf("fp8"))
	noEngine := `{"model":{"name":"Llama-3.2-1B"},"context_length":4096,"engine":"none","kv_cache_dtype":"int8"}`
	assert.Equal(t, f16/2, planningOf(t, request(t, noEngine, r)).estimate(quant.FP16, 4096, 1).KVCacheBytes)
	_, err := decode([]byte(base + `"q4_k"}`))
	require.Error(t, err, "k-quants are not cache types in llama.cpp")
}

// llama.cpp's sliding-window cache holds window + one micro-batch (512)
// cells rounded up to 256, at most the context (src/llama-kv-cache-iswa.cpp),
// and it disables Phi-3's window (llama.cpp PR 13676); other engines keep the
// window rule. Measured: Gemma-3-1B at 4096 holds 1024 cells in each of its
// 22 sliding layers, Phi-3-mini 4096 cells in all 32
// (internal/calibration/data/llamacpp_measurements.json).
func TestKVCacheFollowsLlamaCPPSlidingWindowRules(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	kvOf := func(name, engine string) int64 {
		req := planningOf(t, request(t, `{"model":{"name":"`+name+`"},"context_length":4096,"engine":"`+engine+`"}`, r))
		return req.estimate(quant.FP16, 4096, 1).KVCacheBytes
	}
	perCell := func(name string) int64 {
		m := model.Lookup(name)
		return 2 * int64(m.EffectiveKVHeads()) * int64(m.EffectiveHeadDim()) * 2
	}
	g := perCell("Gemma-3-1B")
	assert.Equal(t, g*(4*4096+22*1024), kvOf("Gemma-3-1B", "llama.cpp"))
	assert.Equal(t, g*(4*4096+22*512), kvOf("Gemma-3-1B", "vllm"))
	p := perCell("Phi-3-mini-4k-instruct")
	assert.Equal(t, p*32*4096, kvOf("Phi-3-mini-4k-instruct", "llama.cpp"))
	assert.Equal(t, p*32*2047, kvOf("Phi-3-mini-4k-instruct", "vllm"))
}

// A checkpoint's stored layout keeps the token embedding and, where it
// does not quantize it, the output head in the checkpoint's 16-bit dtype:
// Kimi-K2.5's INT4 release quantizes the routed experts alone (its
// quantization_config ignores lm_head), DeepSeek-V3's FP8 release every
// linear layer but the head (transformers' fp8). The first pipeline stage
// holds the embedding at 2 bytes a weight, not at int4's 4.125 bits, and
// the layers hold the rest. A level the checkpoint does not store keeps the
// level's width.
func TestEmbeddingAndHeadFollowTheStoredLayout(t *testing.T) {
	for _, c := range []struct {
		name string
		l    quant.Level
	}{{"Kimi-K2.5", quant.INT4}, {"DeepSeek-V3", quant.FP8}} {
		m := model.Lookup(c.name)
		require.NotNil(t, m, c.name)
		b := quant.Estimate(m, c.l, 4096, 1, quant.KVOptions{})
		cs := newCosts(m, b, c.l)
		table := float64(m.Vocab) * float64(m.Hidden)
		assert.Equal(t, 2*table, cs.EmbedIn, c.name)
		assert.Equal(t, 2*table, cs.EmbedOut, c.name)
		assert.InDelta(t, (float64(b.WeightsBytes)-4*table)/float64(m.Layers), cs.LayerWeights, 1, c.name)
	}
	// Kimi-K2.5 stores no int8 checkpoint: int8's width.
	m := model.Lookup("Kimi-K2.5")
	cs := newCosts(m, quant.Estimate(m, quant.INT8, 4096, 1, quant.KVOptions{}), quant.INT8)
	assert.Equal(t, float64(m.Vocab)*float64(m.Hidden)*quant.INT8.BitsPerWeight()/8, cs.EmbedIn)
}

// llama.cpp's MoE expert offload (setExperts: --n-cpu-moe) sizes experts
// at the level's bits per weight and at the GGUF types llama-quant gives
// them, not at a stored layout, and needs none: llama.cpp plans size int4
// and int8 as the GGUF files Q4_K_M and Q8_0 (engine.WeightsLevel), which
// no Hugging Face checkpoint's layout applies to, and refuse fp8. So no
// layout reaches the only plans that offload experts (ExpertsOnHost).
func TestLlamaCPPLevelsCarryNoStoredLayout(t *testing.T) {
	e, ok := engine.Lookup("llama.cpp")
	require.True(t, ok)
	require.True(t, e.Parallelism().ExpertsOnHost)
	for _, name := range []string{"Kimi-K2.5", "DeepSeek-V3", "Laguna-S-2.1"} {
		m := model.Lookup(name)
		require.NotNil(t, m, name)
		bare := *m
		bare.Checkpoints, bare.Layout = nil, model.WeightLayout{}
		for _, l := range []quant.Level{quant.INT4, quant.INT8, quant.FP8} {
			if reason := e.CannotLoad(l); reason != "" {
				assert.Equal(t, quant.FP8, l, "%s: %s", name, reason)
				continue
			}
			wl := engine.WeightsLevel(e, l)
			assert.Equal(t, quant.WeightsBytes(&bare, wl), quant.WeightsBytes(m, wl), "%s at %s (%s)", name, l, wl)
			_, layered := quant.ActiveShare(m, wl)
			assert.False(t, layered, "%s at %s", name, wl)
		}
	}
}
