package plan

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// streamServer is a made-up engine that keeps the layer weights it
// offloads in host memory, every layer running on the GPU, with flags of
// its own: --stream-gib (whole GiB) and --share. copies says whether it
// copies an offloaded layer to the GPU in its forward pass.
type streamServer struct {
	engine.Base
	copies bool
}

func (streamServer) Name() string  { return "streamserve" }
func (streamServer) Title() string { return "StreamServe" }

func (streamServer) RunsOn(k registry.Kind) bool { return k == registry.KindCUDA }

func (streamServer) Memory(asked float64) engine.Memory {
	if asked == 0 {
		asked = 0.9
	}
	return engine.Memory{Fraction: asked}
}

func (s streamServer) Parallelism() engine.Parallelism {
	return engine.Parallelism{Tensor: true, StreamsOffloadedWeights: true, OffloadStep: 1 << 30, OffloadCopiedPerPass: s.copies}
}

func (streamServer) OffloadSetting() string { return "--stream-gib" }
func (streamServer) PoolSetting() string    { return "--share" }

func (streamServer) Args(p *engine.Placement) ([]string, []string, bool) {
	a := []string{"--share", strconv.FormatFloat(p.Memory.Fraction, 'f', -1, 64)}
	if p.Offloaded {
		a = append(a, "--stream-gib", strconv.FormatInt(p.OffloadedWeightBytes>>30, 10))
	}
	return a, nil, true
}

// The sentences of a streamed offload plan spelled SGLang's and vLLM's
// words whatever the engine: "SGLang copies each offloaded layer's",
// "--cpu-offload-gb", "--mem-fraction-static", "vLLM's start-up charge".
// An engine the planner does not know, streaming its offload as each of
// them does, is now named with its own title and flags (engine.OffloadNamer),
// and no start-up charge is claimed for an engine that profiles none.
func TestStreamedOffloadSentencesAreTheEngines(t *testing.T) {
	for _, copies := range []bool{true, false} {
		e := streamServer{copies: copies}
		engine.Register(e)
		r := rtx4090Offload(t, true)
		const body = `{"model":{"name":"Qwen2.5-14B"},"engine":"streamserve","quant":"bf16","cpu_offload":true}`
		a := shard(t, request(t, body, r))
		// validated_on of a streamed plan of an engine with a speed model
		// of its own (validated.go), asked of the plan directly.
		ch, err := choose(planningOf(t, request(t, body, r)))
		engine.Unregister(e.Name())
		require.NoError(t, err)
		require.True(t, ch.Plan.streamed())
		require.True(t, a.Fits.Yes(), dump(t, a))
		require.Equal(t, StrategyOffload, a.Strategy)
		require.NotNil(t, a.Throughput)
		text := strings.Join(append(append(a.Explanation, a.Throughput.Assumptions...), streamedValidatedOn(&ch.Plan, "its decode")), "\n")
		assert.Contains(t, text, "cpu_offload: StreamServe's --stream-gib keeps ", copies)
		assert.Contains(t, text, "the weights StreamServe's --stream-gib keeps in host memory", copies)
		assert.Contains(t, text, "host memory, the fewest whole GiB (the flag is an integer) with which cuda:0 holds the rest", copies)
		assert.Contains(t, text, "StreamServe --stream-gib: ", copies)
		for _, foreign := range []string{"SGLang copies", "--cpu-offload-gb", "--mem-fraction-static", "vLLM's start-up charge"} {
			assert.NotContains(t, text, foreign, copies)
		}
		if !copies {
			assert.Contains(t, text, "the embeddings and every layer's KV cache; the GPU runs every layer", "no start-up charge: the engine profiles none")
		}
		if copies {
			assert.Contains(t, text, "StreamServe copies each offloaded layer's to the GPU")
			assert.Contains(t, text, "a KV pool of at least one sequence within --share")
		}
	}
}

// profileServer is a made-up engine that charges a start-up profile inside
// its share of each GPU, as vLLM does (engine.Memory.ProfiledStartup), and
// names no parts of it.
type profileServer struct{ engine.Base }

func (profileServer) Name() string  { return "profserve" }
func (profileServer) Title() string { return "ProfServe" }

func (profileServer) RunsOn(k registry.Kind) bool { return k == registry.KindCUDA }

func (profileServer) Memory(asked float64) engine.Memory {
	if asked == 0 {
		asked = 0.9
	}
	return engine.Memory{Fraction: asked, PagedKV: true, ProfiledStartup: true}
}

// A refusal for memory named the start-up charge as "vLLM 0.21.0's
// start-up charge" whatever engine charged it (vllmChargeLine): the engine
// now names it (engine.StartupChargeNamer), and one that does not is named
// by its title.
func TestStartupChargeIsNamedByTheEngine(t *testing.T) {
	engine.Register(profileServer{})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-405B"},"engine":"profserve","quant":"int4"}`, reg(t, []registry.Device{h100(0)})))
	engine.Unregister(profileServer{}.Name())
	require.NotNil(t, a.Refusal, dump(t, a))
	assert.Regexp(t, `^int4 needs [0-9.]+ GiB on one device \(weights [0-9.]+ GiB, KV cache [0-9.]+ GiB, ProfServe's start-up charge [0-9.]+ GiB\) and `, a.Refusal.Text)
	assert.NotContains(t, a.Refusal.Text, "vLLM")

	v := shard(t, request(t, `{"model":{"name":"Llama-3.1-405B"},"engine":"vllm","quant":"int4"}`, reg(t, []registry.Device{h100(0)})))
	require.NotNil(t, v.Refusal, dump(t, v))
	assert.Regexp(t, `, vLLM 0\.21\.0's start-up charge [0-9.]+ GiB \(peak activation [0-9.]+ GiB, non-torch memory [0-9.]+ GiB, CUDA graphs [0-9.]+ GiB\)\) and `, v.Refusal.Text)
}

// Asking the engine for its words moved no answer: the sentences of vLLM's
// and SGLang's streamed offload plans (Qwen2.5-14B at bf16 on a 24 GiB RTX
// 4090, the fixture of TestSGLangOffloadKeepsTheKVCacheOnTheGPU) are those
// the planner wrote when it spelled them itself, captured from that code;
// SGLang's offload then moved from 10 GiB to 9 when its fit became
// SGLang's own division of the GPU (the activations and CUDA context
// outside --mem-fraction-static: TestSGLangContextAndBatchAreItsPool), and
// its cpu_offload line now says the copy of one offloaded layer is outside
// that share, where the plan counts it (TestSGLangOffloadCopyIsOutsideThePool).
func TestStreamedOffloadSentencesUnchangedForVLLMAndSGLang(t *testing.T) {
	want := map[string][]string{
		"vllm": {
			"cpu_offload: vLLM's --cpu-offload-gb keeps 8.3 GiB of layer weights, layers 0-16's (the last maybe in part: vLLM offloads parameter by parameter from the first layer), in pinned host memory, the fewest tenths of a GiB with which cuda:0 holds the rest, the embeddings, every layer's KV cache and vLLM's start-up charge; the GPU runs every layer and reads the offloaded weights across PCIe in every forward pass",
			"vLLM --cpu-offload-gb: 8.3 GiB of layer weights stay in pinned host memory and the GPU reads them across PCIe at 32 GB/s, the link's bandwidth, every step (282.8 ms), beside its own part; every layer runs on the GPU and its KV cache stays there. The link's bandwidth is an upper bound: the one published run of this offload decodes about half as fast (docs/accuracy.md, \"vLLM weight offload\")",
			"not validated: the weights vLLM's --cpu-offload-gb keeps in host memory cross PCIe at the link's bandwidth every step, which the one published run of this offload does not reach (it decodes about half as fast: docs/accuracy.md, \"vLLM weight offload\"); the GPU's part is vLLM's batch-1 fit (internal/calibration/data/serving_decode.json)",
		},
		"sglang": {
			"cpu_offload: SGLang's --cpu-offload-gb keeps 9.0 GiB of layer weights, layers 0-17's (the last maybe in part: SGLang offloads parameter by parameter from the first layer), in host memory, the fewest whole GiB (the flag is an integer) with which cuda:0 holds the rest and the embeddings with a KV pool of at least one sequence within --mem-fraction-static, and a copy of one offloaded layer beside the activations outside it; the GPU runs every layer, SGLang copying each offloaded layer's weights to it across PCIe in that layer's forward pass",
			"SGLang --cpu-offload-gb: 9.0 GiB of layer weights stay in host memory and SGLang copies each offloaded layer's to the GPU in its forward pass, all of it whatever experts a token uses, across PCIe at 32 GB/s, the link's bandwidth, every step (306.7 ms), beside the GPU's own part; every layer runs on the GPU and its KV cache stays there. The link's bandwidth is an upper bound: the one published run of a per-pass copy of this kind decodes about half as fast (docs/accuracy.md, \"vLLM weight offload\")",
			"not validated: the weights SGLang's --cpu-offload-gb keeps in host memory are copied across PCIe at the link's bandwidth every step, which the one published run of such per-pass copies does not reach (Aphrodite's port of vLLM's former copying offload decodes about half as fast: docs/accuracy.md, \"vLLM weight offload\"); the GPU's part is vLLM's batch-1 fit, which SGLang pays off HBM GPUs (internal/calibration/data/serving_decode.json)",
		},
	}
	for e, lines := range want {
		a := shard(t, request(t, `{"model":{"name":"Qwen2.5-14B"},"engine":"`+e+`","quant":"bf16","cpu_offload":true}`, rtx4090Offload(t, true)))
		require.NotNil(t, a.Throughput, e)
		got := append(append(append([]string{}, a.Explanation...), a.Throughput.Assumptions...), a.Throughput.ValidatedOn)
		for _, l := range lines {
			assert.Contains(t, got, l, e)
		}
	}
}

// The cpu_offload hint of a refused plan said how "llama.cpp" and "vLLM and
// SGLang" offload in the planner's own words; it now asks each registered
// engine how it offloads (engine.Parallelism OffloadOnHost,
// StreamsOffloadedWeights) and names it by its title: the built-in
// engines' sentence is the one the answers had, and an engine registered
// beside them joins its group.
func TestCPUOffloadHintAsksTheEngines(t *testing.T) {
	assert.Equal(t, "llama.cpp runs them on the CPU; vLLM and SGLang read their weights across PCIe every step", offloadHintWhy())
	engine.Register(streamServer{})
	defer engine.Unregister(streamServer{}.Name())
	assert.Equal(t, "llama.cpp runs them on the CPU; vLLM, SGLang and StreamServe read their weights across PCIe every step", offloadHintWhy())
}

// The serving prefill note fell back to vLLM's words for an engine that
// states no prompt chunk or request time of its own ("vLLM",
// "--max-num-batched-tokens", "passes of up to 0 tokens", "0 ms per
// request ... on vLLM's own rows"); such an engine runs the prompt in one
// pass (servingPromptSeconds) and pays no request time, and the note now
// says so in its title. vLLM's note is unchanged.
func TestServingPrefillNoteWithoutTheEnginesChunk(t *testing.T) {
	note := servingPrefillNote(streamServer{}, 0, 0.62, "bf16", 4e-6, 0)
	assert.Equal(t, "prefill: StreamServe runs the prompt in one pass, as long as its matmuls at 62% of the dense bf16 peak or one read of the weights, whichever is longer, plus attention at the same rate and 4 us per all-reduce of the prompt's activations under tensor parallelism (the efficiency fitted on SGLang cookbook time-to-first-token rows, internal/calibration/data/serving_prefill.json); FP8 and int4 (Marlin) weights are not dequantized to a copy", note)

	vllm, ok := engine.Lookup("vllm")
	require.True(t, ok)
	assert.Equal(t, "prefill: vLLM runs the prompt in passes of up to 8192 tokens (its default --max-num-batched-tokens for this GPU), each as long as its matmuls at 62% of the dense fp8 peak or one read of the weights, whichever is longer, plus attention at the same rate and 4 us per all-reduce of the chunk's activations under tensor parallelism, and 50 ms per request (the efficiency fitted on SGLang cookbook time-to-first-token rows, the request time on vLLM's own rows, internal/calibration/data/serving_prefill.json); FP8 and int4 (Marlin) weights are not dequantized to a copy",
		servingPrefillNote(vllm, 8192, 0.62, "fp8", 4e-6, 0.05), "the note of docs/cli.md's vLLM plan")
}
