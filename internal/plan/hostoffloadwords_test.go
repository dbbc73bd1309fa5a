package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// hostServer is a made-up engine with llama.cpp's rules (the engine.Engine
// methods of the registered llama.cpp, promoted) but none of its optional
// answers: it runs what it offloads on the CPU (Parallelism.OffloadOnHost)
// and names no settings of its own for it.
type hostServer struct{ engine.Engine }

func (hostServer) Name() string  { return "hostserve" }
func (hostServer) Title() string { return "HostServe" }

// registerHostServer registers hostServer until the test ends.
func registerHostServer(t *testing.T) {
	t.Helper()
	l, ok := engine.Lookup("llama.cpp")
	require.True(t, ok)
	engine.Register(hostServer{l})
	t.Cleanup(func() { engine.Unregister(hostServer{}.Name()) })
}

// hostOffloadLines are the sentences of answer a that say where its host
// placement runs: the cpu_offload placement line, the host stage's
// assumption and the context line.
func hostOffloadLines(a *ShardingAnswer) []string {
	var out []string
	for _, l := range append(append([]string{}, a.Explanation...), a.Throughput.Assumptions...) {
		if strings.HasPrefix(l, "cpu_offload: ") || strings.HasPrefix(l, "context: ") || strings.Contains(l, "run on the CPU") {
			out = append(out, l)
		}
	}
	return out
}

// The sentences of a plan that runs its offload on the CPU wrote
// "(llama.cpp --n-cpu-moe 24 ...)", "(llama.cpp -ngl)" and "(llama.cpp -ngl
// 60 --cpu-moe; builds without --cpu-moe take -ot "exps=CPU")" whatever the
// engine: an engine that names no settings for its host placement
// (engine.HostOffloadNamer) is now named by its title alone.
func TestHostOffloadSentencesAreTheEngines(t *testing.T) {
	registerHostServer(t)
	for _, c := range []struct {
		body string
		host int64
		want string
	}{
		{`{"model":{"name":"gpt-oss-120b"},"engine":"hostserve","cpu_offload":true,"quant":"q4_k_m","context_length":4096}`, 128 << 30, "run on the CPU (HostServe)"},
		{`{"model":{"name":"Llama-3.1-70B"},"engine":"hostserve","cpu_offload":true,"quant":"q8_0","context_length":4096}`, 128 << 30, "offloaded layers run on the CPU (HostServe): "},
		{`{"model":{"name":"DeepSeek-V3"},"engine":"hostserve","cpu_offload":true,"quant":"q2_k","context_length":4096}`, 512 << 30, "run on the CPU (HostServe)"},
	} {
		a := shard(t, request(t, c.body, reg(t, []registry.Device{rtx3090(), host(c.host)})))
		require.True(t, a.Fits.Yes(), dump(t, a))
		require.Equal(t, StrategyOffload, a.Strategy, c.body)
		require.NotNil(t, a.Throughput, c.body)
		lines := strings.Join(hostOffloadLines(a), "\n")
		assert.Contains(t, lines, c.want, c.body)
		for _, foreign := range []string{"(llama.cpp", "--n-cpu-moe", "--cpu-moe", "-ngl", "-ot ", "exps=CPU"} {
			assert.NotContains(t, lines, foreign, c.body)
		}
	}
}

// Asking the engine for its words moved no answer of llama.cpp's: the
// sentences of its host placements (gpt-oss-120b with part of a layer's
// experts, Llama-3.1-70B in whole layers and DeepSeek-V3 at q2_k with
// every expert in host RAM, on a 24 GiB RTX 3090; no golden holds one) are
// those the planner wrote when it spelled them itself, captured from that
// code.
func TestHostOffloadSentencesUnchangedForLlamaCPP(t *testing.T) {
	for _, c := range []struct {
		body  string
		host  int64
		lines []string
	}{
		{`{"model":{"name":"gpt-oss-120b"},"engine":"llama.cpp","cpu_offload":true,"context_length":4096}`, 128 << 30, []string{
			"cpu_offload: every layer's attention, shared weights and KV cache stay on the GPU; the routed experts of layers 0-23 and the ffn_down_exps and ffn_gate_exps tensors of layer 24 (part of a layer frees the bytes still missing with less CPU work than a whole one) (38.9 GiB) stay in host RAM and run on the CPU (llama.cpp --n-cpu-moe 24 -ot blk\\.24\\.ffn_(gate|down)_exps=CPU)",
			"the routed experts of the first 24 layers and the down and gate expert tensors of layer 24 run on the CPU (llama.cpp --n-cpu-moe 24 -ot blk\\.24\\.ffn_(gate|down)_exps=CPU): a token reads 3.1% of them (experts per token / experts), 1.30 GB, from host memory (307 GB/s) at 68%, or their matrix-vector work bounds them; attention, shared weights, the KV cache and the other experts stream from the GPUs, one after another; each offloaded layer hands the hidden state to the CPU and back (305 us, fitted on llama.cpp offload measurements)",
		}},
		{`{"model":{"name":"gpt-oss-120b"},"engine":"llama.cpp","cpu_offload":true}`, 128 << 30, []string{
			"context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 4096): with no -c --fit reduces the model's trained context (131072 per sequence) toward the floor (its step 2), but at 4096 the model still needs 61.7 GiB with every tensor on the GPU against 23.1 GiB usable, so --fit keeps this context and moves weights to the CPU instead: every layer's dense weights on the GPU with all routed experts in host RAM, then whole layers' experts back onto the GPU until it is full, and part of one more layer (its steps 3 and 4), which leaves the experts of this plan's llama.cpp --n-cpu-moe 24 -ot blk\\.24\\.ffn_(gate|down)_exps=CPU in host RAM; --fit names the last layers in -ot patterns where --n-cpu-moe names the first, the same memory for layers of one size; a longer -c than the room's (this placement, each layer's KV cache on its layer's device) fits only with more of the model in host RAM",
		}},
		{`{"model":{"name":"Llama-3.1-70B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0"}`, 128 << 30, []string{
			"context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 4096): with no -c --fit reduces the model's trained context (131072 per sequence) toward the floor (its step 2), but at 4096 the model still needs 71.0 GiB with every tensor on the GPU against 23.1 GiB usable, so --fit keeps this context and moves weights to the CPU instead: it fills the GPU with whole layers from the back (its step 3), the last 25 here (-ngl 25), the first ones staying in host RAM; a longer -c than the room's (this placement, each layer's KV cache on its layer's device) fits only with more of the model in host RAM",
			"offloaded layers run on the CPU (llama.cpp -ngl): their weights and KV cache stream from host memory (307 GB/s) at 68%, or their matrix-vector work bounds them; the step hands over from the GPU to the CPU once (305 us)",
		}},
		{`{"model":{"name":"DeepSeek-V3"},"engine":"llama.cpp","cpu_offload":true,"quant":"q2_k","context_length":4096}`, 512 << 30, []string{
			"cpu_offload: not every layer's dense weights fit the GPU with all routed experts in host RAM, so, as llama.cpp's --fit does (its step 3), layer 0 stays whole in host RAM, the attention, shared weights and KV cache of layers 1-60 are on the GPU, and every layer's routed experts (208.8 GiB in all in host RAM) run on the CPU (llama.cpp -ngl 60 --cpu-moe; builds without --cpu-moe take -ot \"exps=CPU\")",
			"layer 0 and every layer's routed experts run on the CPU (llama.cpp -ngl 60 --cpu-moe): a token reads their dense weights and 3.1% of the experts (experts per token / experts), 6.87 GB, from host memory (307 GB/s) at 68%, or their matrix-vector work bounds them; the dense weights and KV cache of the last 60 layers stream from the GPU; the step hands the hidden state between the GPU and the CPU 59 times (305 us each, fitted on llama.cpp offload measurements)",
		}},
	} {
		a := shard(t, request(t, c.body, reg(t, []registry.Device{rtx3090(), host(c.host)})))
		require.NotNil(t, a.Throughput, c.body)
		got := append(append([]string{}, a.Explanation...), a.Throughput.Assumptions...)
		for _, l := range c.lines {
			assert.Contains(t, got, l, c.body)
		}
	}
}

// kernelHostServer is hostServer declaring llama.cpp's speed model
// (engine.SpeedKernels), so its plans are checked against the speed rows.
type kernelHostServer struct{ hostServer }

func (kernelHostServer) SpeedModel() engine.SpeedModel { return engine.SpeedKernels }

// validated_on of a plan with every routed expert in host RAM spelled
// "(llama.cpp -ngl with --cpu-moe)" whatever the engine: it now names the
// placement in the engine's words (engine.HostOffloadNamer), as the plan's
// other sentences do, and by the engine's title alone for one that names
// no settings.
func TestAllExpertsValidatedOnIsTheEngines(t *testing.T) {
	l, ok := engine.Lookup("llama.cpp")
	require.True(t, ok)
	engine.Register(kernelHostServer{hostServer{l}})
	t.Cleanup(func() { engine.Unregister(kernelHostServer{}.Name()) })
	const body = `{"model":{"name":"DeepSeek-V3"},"engine":"%s","cpu_offload":true,"quant":"q2_k","context_length":4096}`
	for name, want := range map[string]string{
		"llama.cpp": "(llama.cpp -ngl 60 --cpu-moe); the published -ngl and --n-cpu-moe rows",
		// The rows are named by what they measured: HostServe does not
		// name them as its runs (engine.SpeedRowsNamer;
		// TestValidatedOnOfAKernelsEngineNamesNoOtherEnginesRows).
		"hostserve": "(HostServe); the published rows of layers and of routed experts on the CPU",
	} {
		a := shard(t, request(t, strings.Replace(body, "%s", name, 1), reg(t, []registry.Device{rtx3090(), host(512 << 30)})))
		require.NotNil(t, a.Throughput, dump(t, a))
		assert.Equal(t, NotValidated+": the first layers and every routed expert run from host memory "+want+" (internal/calibration/data/offload_decode.json) replay within 25%, not the 12% a validated figure meets, and no row keeps only the dense weights of some layers on the GPU", a.Throughput.ValidatedOn, name)
	}
}
