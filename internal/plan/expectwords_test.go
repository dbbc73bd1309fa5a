package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// h100Expect is one NVIDIA H100 80GB.
func h100Expect(t *testing.T) *registry.Registry {
	d := gpu(registry.KindCUDA, 0, "NVIDIA H100 80GB HBM3", 80*gibBytes, "9.0")
	d.Vendor = "nvidia"
	return reg(t, []registry.Device{d})
}

// engine_expect's source said "vLLM's start-up accounting ..." for every
// engine that charges a start-up profile inside its share
// (engine.Memory.ProfiledStartup), whatever it reports; an engine that does
// not say what its report rests on (engine.StartupReportNamer) now gets the
// planner's neutral words.
func TestEngineExpectSourceIsTheEngines(t *testing.T) {
	engine.Register(profileServer{})
	defer engine.Unregister(profileServer{}.Name())
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"profserve","context_length":8192}`, h100Expect(t)))
	require.True(t, a.Fits.Yes(), dump(t, a))
	x, ok := a.EngineExpect["profserve"]
	require.True(t, ok, dump(t, a))
	assert.Equal(t, "the planner's figures for ProfServe's KV pool, as the plan sizes it (the answer's budget); not replayed against a start-up log of ProfServe", x.Source)
	assert.NotContains(t, x.Warning, "vLLM")
}

// The neutral warning that one sequence does not fit names the engine by
// its title, and no other engine's refusal.
func TestShortPoolWarningWithoutTheEnginesWords(t *testing.T) {
	assert.Equal(t, "by the plan's accounting one sequence of 8192 tokens does not fit the KV cache ProfServe is left (4096 tokens); ask context_length 4096 or less, a larger memory_fraction or more devices",
		shortPoolWarning(profileServer{}, "0.21.0", 8192, 4096))
}

// Asking the engines for their words moved no answer: engine_expect's
// source for a vLLM hybrid model (NVIDIA-Nemotron-3-Nano-30B-A3B, as in
// TestVLLMHybridConcurrencyCap) and for SGLang (Llama-3.1-8B on an RTX
// 4090, as in budget_test.go), and the warnings of a vLLM release before
// the accounting's range (no golden holds one of these), are the planner's
// old words, captured from the code before the change. The goldens hold
// vLLM's GPU, sliding-window, TPU, Gaudi and CPU sources.
func TestEngineExpectWordsUnchangedForVLLMAndSGLang(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"NVIDIA-Nemotron-3-Nano-30B-A3B"},"quant":"bf16","engine":"vllm","engine_version":"0.24.0","context_length":4096}`, h100Expect(t)))
	assert.Equal(t, "vLLM's start-up accounting for the release (engine_version): total x --gpu-memory-utilization less the weights, the activation peak of the profile run at max_num_batched_tokens and of the sampler warm-up at max_num_seqs, the memory allocated outside torch and, from 0.21.0 on NVIDIA and AMD GPUs, the estimated CUDA graphs; tokens count every attention layer at the whole context, as vLLM prints them. Replayed against real start-up logs (internal/calibration/data/vllm_startup.json; errors in docs/accuracy.md); for a model with recurrent (Mamba, gated DeltaNet) layers beside attention, vLLM's hybrid layout (vllm/v1/core/kv_cache_utils.py): the attention block raised to hold one sequence's state, layers in groups of equal size drawing from one block pool, and a request at max_model_len holding its attention blocks and one state block per state group (two in prefix caching's align mode, seen from 0.24.0); max_concurrency is the pool's blocks over a request's, and kv_cache_tokens as the release prints it (the blocks shared over the groups times the block before 0.20.2, max_concurrency x max_model_len since)",
		a.EngineExpect["vllm"].Source)

	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24*gibBytes, "8.9")})
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","kv_cache_dtype":"fp8","context_length":131072,"batch_size":8,"quant":"fp8"}`, r))
	assert.Equal(t, "SGLang's own sizing (profile_max_num_token in python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py): --mem-fraction-static of the memory free once its CUDA context exists, less the weights, over one token's cache (page size 1); replayed against public SGLang start-up logs in docs/accuracy.md; the memory its process groups take at TP > 1 and the weights as SGLang loads them are the plan's estimates",
		a.EngineExpect["sglang"].Source)

	const old = "vLLM 0.2.5 is older than 0.6.4, the oldest release whose start-up accounting this planner models (replayed against real start-up logs, docs/accuracy.md): these figures follow 0.6.4's rules and may be far off (0.2.5 counted every byte in use on the device after its profile run as the model's, vllm issue 2248)"
	for _, body := range []string{
		`{"model":{"name":"Llama-3.1-8B"},"engine_version":"0.2.5","context_length":8192}`,
		`{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","engine_version":"0.2.5","context_length":8192}`,
	} {
		a = shard(t, request(t, body, h100Expect(t)))
		assert.Equal(t, []string{old}, a.Warnings, body)
		assert.Equal(t, old, a.EngineExpect["vllm"].Warning, body)
	}
}

// oldServer is a made-up engine like profileServer that reads
// engine_version (engine.Versioned) and warns of every release
// (engine.ReleaseWarner): its engine_expect carries a warning whether or
// not the request names a release.
type oldServer struct{ profileServer }

func (oldServer) Name() string           { return "oldserve" }
func (oldServer) Title() string          { return "OldServe" }
func (oldServer) DefaultVersion() string { return "0.21.0" }
func (oldServer) ReleaseWarning(v engine.Version) string {
	return "OldServe " + v.String() + " is older than the rules this planner follows"
}

// A warning of engine_expect is a caveat of the plan: the answer's
// warnings carry it, once, whatever the engine, so that the CLI's text
// plan, which prints the warnings and not engine_expect, hides none. Only
// SGLang's was copied there (its budget's WorkspaceOutside); an engine
// warning of its release with no engine_version asked (engineVersionWarnings
// reads only a release asked) had its warning in engine_expect alone.
// vLLM's release warning, already among the warnings, is not repeated, nor
// is SGLang's fraction warning.
func TestEngineExpectWarningsAreTheAnswers(t *testing.T) {
	engine.Register(oldServer{})
	defer engine.Unregister(oldServer{}.Name())
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"oldserve","context_length":8192}`, h100Expect(t)))
	require.True(t, a.Fits.Yes(), dump(t, a))
	x, ok := a.EngineExpect["oldserve"]
	require.True(t, ok, dump(t, a))
	require.Equal(t, "OldServe 0.21.0 is older than the rules this planner follows", x.Warning)
	assert.Equal(t, 1, countOf(a.Warnings, x.Warning), "%q", a.Warnings)

	for _, body := range []string{
		`{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","engine_version":"0.2.5","context_length":8192}`,
		`{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","memory_fraction":0.95,"context_length":8192}`,
	} {
		a := shard(t, request(t, body, h100Expect(t)))
		require.True(t, a.Fits.Yes(), body)
		require.Len(t, a.EngineExpect, 1, body)
		for _, x := range a.EngineExpect {
			require.NotEmpty(t, x.Warning, body)
			assert.Equal(t, 1, countOf(a.Warnings, x.Warning), "%s: %q", body, a.Warnings)
		}
	}
}

// countOf is how many times s occurs in ss.
func countOf(ss []string, s string) int {
	n := 0
	for _, v := range ss {
		if v == s {
			n++
		}
	}
	return n
}
