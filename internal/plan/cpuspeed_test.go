package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// cpuHost is a CPU-only machine: name decides whether its memory bandwidth
// is known (specs.HostMemoryByCPUName), cores the matrix-vector term.
func cpuHost(t *testing.T, name string, cores int) *registry.Registry {
	d := registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: name, Available: true,
		MemoryBytes: 256 * gibBytes, Cores: cores}
	return reg(t, []registry.Device{d})
}

// levelDecode is the empty-cache decode speed of model body at one level
// asked explicitly on r.
func levelDecode(t *testing.T, body, level string, r *registry.Registry) float64 {
	a := shard(t, request(t, `{`+body+`,"quant":"`+level+`"}`, r))
	require.True(t, a.Fits.Yes(), dump(t, a))
	req := planningOf(t, request(t, `{`+body+`,"quant":"`+level+`"}`, r))
	ch, err := choose(req)
	require.NoError(t, err)
	return emptyCacheDecode(&ch.Plan, req)
}

// TestCPUChoosesLevelBySpeed: on a CPU whose memory bandwidth is known, an
// auto plan takes the highest-quality level whose decode is at least
// cpuSpeedFraction of the fastest fitting level's, and says so with the
// ratio; bf16, which fits, is not chosen for an 8B model: with 32 cores
// memory bounds the decode and int4 streams a third of bf16's bytes; with
// 2 cores (a small VM) the cores bound it, and 16-bit weights cost a core
// about twice the time per weight of Q8_0 (calibration.Fitted).
func TestCPUChoosesLevelBySpeed(t *testing.T) {
	for _, cores := range []int{32, 2} {
		t.Run(itoa(cores)+" cores", func(t *testing.T) { checkSpeedRule(t, cpuHost(t, "AMD EPYC 9354 32-Core Processor", cores)) })
	}
}

// checkSpeedRule plans Llama-3.1-8B under auto on r and checks the level
// against the rule recomputed from each level asked on its own.
func checkSpeedRule(t *testing.T, r *registry.Registry) {
	body := `"model":{"name":"llama-3.1-8b"},"context_length":4096`
	a := shard(t, request(t, `{`+body+`}`, r))
	require.True(t, a.Fits.Yes(), dump(t, a))
	require.NotEqual(t, "bf16", a.Quant, "bf16 fits but decodes about half as fast or slower than int8 and int4 on this CPU")

	// The rule, recomputed from each level asked on its own.
	speeds := map[string]float64{}
	fastest := 0.0
	for _, l := range []string{"bf16", "fp16", "int8", "int4"} {
		speeds[l] = levelDecode(t, body, l, r)
		require.Positive(t, speeds[l], l)
		fastest = max(fastest, speeds[l])
	}
	want := ""
	for _, l := range []string{"bf16", "fp16", "int8", "int4"} {
		if speeds[l] >= cpuSpeedFraction*fastest {
			want = l
			break
		}
	}
	assert.Equal(t, want, a.Quant, "speeds %v", speeds)
	why := strings.Join(a.Explanation, "\n")
	assert.Contains(t, why, a.Quant+": ")
	assert.Contains(t, why, "x the decode speed of bf16 on this CPU")
	require.NotNil(t, a.Throughput)
	assert.Positive(t, a.Throughput.DecodeTokensPerS, "a CPU plan with known bandwidth states a speed")
	assert.NotEmpty(t, a.Throughput.ValidatedOn)
}

// TestCPUSpeedRuleNamedLlamaCPP: with llama.cpp named, auto walks the GGUF
// ladder; the speed rule weighs only the rungs down to q4_k_m (those below
// lose much more quality and are chosen only when nothing better fits).
func TestCPUSpeedRuleNamedLlamaCPP(t *testing.T) {
	r := cpuHost(t, "AMD EPYC 9354 32-Core Processor", 32)
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"context_length":4096,"engine":"llama.cpp"}`, r))
	require.True(t, a.Fits.Yes(), dump(t, a))
	assert.NotEqual(t, "bf16", a.Quant)
	ladder := []string{"bf16", "fp16", "q8_0", "q6_k", "q5_k_m", "q4_k_m"}
	assert.Contains(t, ladder, a.Quant, "the rule never goes below q4_k_m when q4_k_m fits")
}

// TestCPUSpeedUnknownKeepsQuality: a CPU whose memory bandwidth is not
// known gets the highest-quality level that fits, and the explanation says
// the speed could not be weighed.
func TestCPUSpeedUnknownKeepsQuality(t *testing.T) {
	r := cpuHost(t, "AMD EPYC", 2)
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"context_length":4096}`, r))
	require.True(t, a.Fits.Yes())
	assert.Equal(t, "bf16", a.Quant)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "speed not weighed")
}

// TestGPUChoiceIgnoresSpeedRule: accelerator plans keep the fit rule.
func TestGPUChoiceIgnoresSpeedRule(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"context_length":4096}`, reg(t, []registry.Device{h100(0)})))
	require.True(t, a.Fits.Yes())
	assert.Equal(t, "bf16", a.Quant)
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), "decode speed of bf16 on this CPU")
}

// TestCPUAskedLevelIsKept: a level asked by name is planned as asked, and
// its speed says what it rests on.
func TestCPUAskedLevelIsKept(t *testing.T) {
	r := cpuHost(t, "AMD EPYC 9354 32-Core Processor", 32)
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"context_length":4096,"quant":"bf16"}`, r))
	require.True(t, a.Fits.Yes())
	assert.Equal(t, "bf16", a.Quant)
	// Its speed rests on the one-core 16-bit runs of host_harness.json.
	require.NotNil(t, a.Throughput)
	assert.Positive(t, a.Throughput.DecodeTokensPerS)
	assert.Contains(t, a.Throughput.ValidatedOn, "host_harness.json")
}
