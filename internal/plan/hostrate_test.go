package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// TestCPUTimeFollowsStoredTypes checks that a CPU plan's decode is charged
// by the types its weights are stored in, not by the type its GGUF is
// named for: Qwen2.5-0.5B's rows (896, 4864) are not multiples of 256, so
// its Q4_K_M file stores most matrices in Q5_0 and the tied embedding in
// Q8_0 (llama-quantize's tensor_type_fallback; the file's census in
// data/host_harness.json of internal/calibration), while Llama-3.2-1B's
// holds Q4_K and Q6_K. On two cores both are compute-bound, and the
// weights multiplied per second, tokens/s x weights per token, are each
// model's mix of the fitted per-type rates.
func TestCPUTimeFollowsStoredTypes(t *testing.T) {
	dev := registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: "AMD EPYC 9354 32-Core Processor",
		Available: true, MemoryBytes: 64 * gibBytes, Cores: 2}
	perSecond := map[string]float64{}
	for _, name := range []string{"Qwen2.5-0.5B", "Llama-3.2-1B"} {
		a := shard(t, request(t, `{"model":{"name":"`+name+`"},"quant":"q4_k_m","engine":"llama.cpp","context_length":512}`, reg(t, []registry.Device{dev})))
		require.NotNil(t, a.Throughput, dump(t, a))
		assert.Equal(t, BoundCompute, a.Throughput.Bound, name)
		m := model.Lookup(name)
		mix, ok := newHostMix(m, "q4_k_m", 1, true)
		require.True(t, ok, name)
		var weights float64
		for _, p := range mix.parts {
			weights += p.Weights
		}
		perSecond[name] = a.Throughput.DecodeTokensPerS * weights
		// The plan's rate is its mix's: 2 cores at the per-type mean (the
		// per-layer time is 0 on a CPU; the KV read of an empty cache is
		// not the bound).
		assert.InEpsilon(t, 2*fitted.hostCoreRate(mix, dev), perSecond[name], 0.05, name)
	}
	q5, q4k := fitted.HostWeightsPerCore[ggml.Q5_0], fitted.HostWeightsPerCore[ggml.Q4_K]
	require.Positive(t, q5)
	require.Greater(t, q4k, q5, "the fitted rates: a Q4_K weight is multiplied faster than a Q5_0 one")
	assert.Less(t, perSecond["Qwen2.5-0.5B"], 0.9*perSecond["Llama-3.2-1B"], "Qwen2.5-0.5B's Q4_K_M (mostly Q5_0 and Q8_0) multiplies fewer weights per second than Llama-3.2-1B's")
}

// TestHostRateType checks the rule for a type without a fitted rate: its
// kernel family's measured type, else Q4_K's.
func TestHostRateType(t *testing.T) {
	rates := map[ggml.Type]float64{ggml.F16: 1, ggml.Q8_0: 1, ggml.Q4_K: 1, ggml.Q5_0: 1, ggml.Q4_0: 1}
	for typ, want := range map[ggml.Type]ggml.Type{
		ggml.Q5_0: ggml.Q5_0, ggml.BF16: ggml.F16, ggml.F32: ggml.F16, ggml.Q5_1: ggml.Q5_0, ggml.Q4_1: ggml.Q4_0,
		ggml.IQ4_NL: ggml.Q4_0, ggml.Q3_K: ggml.Q4_K, ggml.IQ2_XXS: ggml.Q4_K, ggml.MXFP4: ggml.Q4_K,
	} {
		assert.Equal(t, want, hostRateType(rates, typ), typ.String())
	}
	delete(rates, ggml.Q4_0)
	assert.Equal(t, ggml.Q4_K, hostRateType(rates, ggml.Q4_1), "a family without a measured type takes Q4_K's")
}

// TestHostMixSumsTypes checks the per-type sum on a two-type mix: the
// time per weight is the weights' shares over their rates, and the bytes
// per weight their shares of each type's block size.
func TestHostMixSumsTypes(t *testing.T) {
	mix := hostMix{[]quant.TypeWeights{{Type: ggml.Q4_K, Weights: 3}, {Type: ggml.Q8_0, Weights: 1}}}
	rates := map[ggml.Type]float64{ggml.Q4_K: 30e9, ggml.Q8_0: 10e9}
	assert.InDelta(t, (3/30e9+1/10e9)/4, mix.secondsPerWeight(rates), 1e-22)
	assert.InDelta(t, (3*144.0/256+34.0/32)/4, mix.bytesPerWeight(), 1e-12)
	assert.Zero(t, mix.secondsPerWeight(map[ggml.Type]float64{ggml.Q8_0: 10e9}), "no Q4_K rate: unknown")
	assert.Equal(t, "Q4_K 75% at 30.0 G/s, Q8_0 25% at 10.0 G/s", mix.describe(rates))
}
