package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// rtx3090Of is an RTX 3090 of the given memory beside a host of hostBytes.
func rtx3090Of(t *testing.T, mem, hostBytes int64) *registry.Registry {
	d := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 3090", mem, "8.6")
	d.Vendor = "nvidia"
	return reg(t, []registry.Device{d, host(hostBytes)})
}

// linesWith are the lines of answer a's explanation that begin with one of
// prefixes.
func linesWith(a *ShardingAnswer, prefixes ...string) string {
	var out []string
	for _, l := range a.Explanation {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}

// The sentences that tell how an engine that chooses its own context at
// launch (engine.Memory.ContextFloor) chose a plan's context and devices
// told llama.cpp's --fit whatever the engine: "chosen as llama.cpp's --fit
// chooses with no -c", "llama.cpp --fit's floor (--fit-ctx 4096): with no -c
// --fit reduces ... (its step 2)", "as llama.cpp's --fit does (its step 3)",
// "llama.cpp shown every GPU splits the layers over all of them
// (--split-mode layer)". An engine with those rules that does not tell its
// own fit (engine.FitNamer) now gets the planner's neutral words.
func TestFitSentencesAreTheEngines(t *testing.T) {
	registerHostServer(t)
	for _, c := range []struct {
		body string
		reg  *registry.Registry
		want string
	}{
		{`{"model":{"name":"Llama-3.1-8B"},"engine":"hostserve","quant":"q8_0"}`, rtx3090Of(t, 24<<30, 64<<30), "chosen as HostServe chooses it with none asked: "},
		{`{"model":{"name":"Qwen3-30B-A3B"},"engine":"hostserve","cpu_offload":true,"quant":"q8_0","batch_size":4}`, rtx3090Of(t, 24<<30, 64<<30), "context: 4096 tokens per sequence, the floor of the context HostServe chooses itself"},
		{`{"model":{"name":"Falcon-40B"},"engine":"hostserve","cpu_offload":true,"quant":"q8_0"}`, rtx3090Of(t, 24<<30, 128<<30), "context: 2048 tokens per sequence, the model's trained context, which is not above the floor of the context HostServe chooses itself"},
		{`{"model":{"name":"Qwen3-235B-A22B"},"engine":"hostserve","cpu_offload":true,"quant":"q8_0"}`, rtx3090Of(t, 8<<30, 512<<30), "context: 4096 tokens per sequence, the floor of the context HostServe chooses itself"},
		{`{"model":{"name":"llama-3.1-8b"},"engine":"hostserve","quant":"q8_0"}`, rtx3060s(t, 4), "HostServe shown every GPU uses all of them and keeps the model's trained context when they hold it"},
	} {
		a := shard(t, request(t, c.body, c.reg))
		require.True(t, a.Fits.Yes(), dump(t, a))
		lines := linesWith(a, "context: ", "cpu_offload: ", "placement: ")
		assert.Contains(t, lines, c.want, c.body)
		for _, foreign := range []string{"llama.cpp", "--fit", "-c ", "-np", "-ngl", "--split-mode", "its step"} {
			assert.NotContains(t, lines, foreign, c.body)
		}
	}
}

// Asking the engine for its words moved no answer of llama.cpp's: the
// context and placement lines of its fit (the floor over -np slots, a
// trained context below the floor, every expert in host RAM; no golden
// holds one, testdata/golden/two-nvidia.json holds the placement line and
// most llama.cpp goldens the chosen context) are those the planner wrote
// when it spelled them itself, captured from that code.
func TestFitSentencesUnchangedForLlamaCPP(t *testing.T) {
	for _, c := range []struct {
		body  string
		reg   *registry.Registry
		lines []string
	}{
		{`{"model":{"name":"Qwen3-30B-A3B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0","batch_size":4}`, rtx3090Of(t, 24<<30, 64<<30), []string{
			"context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 16384 over -np 4): with no -c --fit reduces the model's trained context (10240 per sequence) toward the floor (its step 2), but at 4096 the model still needs 32.4 GiB with every tensor on the GPU against 23.1 GiB usable, so --fit keeps this context and moves weights to the CPU instead: every layer's dense weights on the GPU with all routed experts in host RAM, then whole layers' experts back onto the GPU until it is full, and part of one more layer (its steps 3 and 4), which leaves the experts of this plan's llama.cpp --n-cpu-moe 15 -ot blk\\.15\\.ffn_(gate|down)_exps=CPU in host RAM; --fit names the last layers in -ot patterns where --n-cpu-moe names the first, the same memory for layers of one size; a longer -c than the room's (this placement, each layer's KV cache on its layer's device) fits only with more of the model in host RAM",
		}},
		{`{"model":{"name":"Falcon-40B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0"}`, rtx3090Of(t, 24<<30, 128<<30), []string{
			"context: 2048 tokens per sequence, the model's trained context, which is not above llama.cpp --fit's floor (--fit-ctx 4096), so --fit keeps it (its step 2 changes nothing), but at 2048 the model still needs 42.0 GiB with every tensor on the GPU against 23.1 GiB usable, so --fit keeps this context and moves weights to the CPU instead: it fills the GPU with whole layers from the back (its step 3), the last 32 here (-ngl 32), the first ones staying in host RAM; a longer -c than the room's (this placement, each layer's KV cache on its layer's device) fits only with more of the model in host RAM",
		}},
		{`{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0"}`, rtx3090Of(t, 8<<30, 512<<30), []string{
			"context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 4096): with no -c --fit reduces the model's trained context (40960 per sequence) toward the floor (its step 2), but at 4096 the model still needs 233.8 GiB with every tensor on the GPU against 7.1 GiB usable, so --fit keeps this context and moves weights to the CPU instead: not every layer's dense weights fit the GPU with all routed experts in host RAM, so it fills the GPU from the back with the dense weights and KV cache of as many layers as fit, the last 77 here, keeps the first ones whole and every routed expert in host RAM, and stops there (its step 3; llama.cpp -ngl 77 --cpu-moe); a longer -c than the room's (this placement, each layer's KV cache on its layer's device) fits only with more of the model in host RAM",
			"cpu_offload: not every layer's dense weights fit the GPU with all routed experts in host RAM, so, as llama.cpp's --fit does (its step 3), layers 0-16 stay whole in host RAM, the attention, shared weights and KV cache of layers 17-93 are on the GPU, and every layer's routed experts (226.6 GiB in all in host RAM) run on the CPU (llama.cpp -ngl 77 --cpu-moe; builds without --cpu-moe take -ot \"exps=CPU\")",
		}},
	} {
		a := shard(t, request(t, c.body, c.reg))
		for _, l := range c.lines {
			assert.Contains(t, a.Explanation, l, c.body)
		}
	}
}
