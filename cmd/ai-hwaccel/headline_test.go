package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
)

// planBoth runs one plan twice on a fixture machine, as JSON and as text,
// and returns the answer and the text's first line.
func planBoth(t *testing.T, fixture string, args ...string) (map[string]any, string) {
	t.Helper()
	all := append([]string{"plan"}, args...)
	ans, _ := runJSON(t, withFixture(t, fixture, append(all, "--json")...)...)
	require.Equal(t, true, ans["fits"], ans["explanation"])
	text := runCLI(t, withFixture(t, fixture, all...)...)
	require.Equal(t, 0, text.code, text.stderr)
	return ans, strings.SplitN(text.stdout, "\n", 2)[0]
}

// An offloaded llama.cpp plan keeps llama.cpp --fit's 4096 floor (-c 4096)
// (issue 27): the headline states the context the printed command runs,
// never a "KV room" the command does not have, and a longer one only as far
// as the printed placement holds it (max_context_length keeps the layers and
// experts where the command puts them, each layer's KV cache on its device:
// plan.printedSplitHolds), not the re-split with more of the model in host
// RAM it was (40960 for Qwen3-235B-A22B, 73793 for Llama-3.1-405B).
// Qwen3-235B-A22B Q8_0 (MoE: experts in host RAM) and Llama-3.1-405B Q4_K_M
// (dense: layers in host RAM) on the H200 fixture.
func TestPlanHeadlineOffloadedLlamaCppStatesItsContext(t *testing.T) {
	for _, c := range []struct{ model, quant string }{{"Qwen3-235B-A22B", "q8_0"}, {"Llama-3.1-405B", "q4_k_m"}} {
		ans, headline := planBoth(t, "h200-vm", "--model", c.model, "--quant", c.quant, "--engine", "llama.cpp", "--cpu-offload")
		require.Equal(t, "cpu_offload", ans["strategy"], c.model)
		ctx := flagValue(toStrings(ans["engine_args"].(map[string]any)["llama.cpp"]), "-c")
		require.Equal(t, "4096", ctx, c.model)
		room := ans["max_context_length"].(float64)
		require.Greater(t, room, 4096.0, "%s: the placement has slack beyond -c", c.model)
		require.Less(t, room, 16384.0, "%s: the GPU is full; only its slack is room", c.model)

		assert.Contains(t, headline, ", "+c.quant+", context 4096 (up to "+cli.TokensAtMost(room)+" fits)", c.model)
		if _, run, ok := strings.Cut(headline, "; run: "); ok {
			assert.Contains(t, run, " -c 4096", c.model)
		} else { // no published GGUF of Llama-3.1-405B: no command (withheldLine)
			assert.Contains(t, headline, "; no command: no published Q4_K_M GGUF", c.model)
		}
		assert.NotContains(t, headline, "KV room", c.model)
	}
}

// A llama.cpp plan with no context asked runs the longest context that
// fits (issue 27 item 2) and its headline says that context and nothing
// more; with --context 4096 the command runs 4096 and the headline says
// how much longer the same devices would hold. Llama-3.1-8B on the H200
// fixture.
func TestPlanHeadlineLlamaCppContextIsItsC(t *testing.T) {
	ans, headline := planBoth(t, "h200-vm", "--model", "Llama-3.1-8B", "--engine", "llama.cpp")
	ctx := flagValue(toStrings(ans["engine_args"].(map[string]any)["llama.cpp"]), "-c")
	require.NotEmpty(t, ctx)
	assert.Regexp(t, ", context "+ctx+"[,;]", headline)
	assert.NotContains(t, headline, "KV room")

	given, headline := planBoth(t, "h200-vm", "--model", "Llama-3.1-8B", "--engine", "llama.cpp", "--context", "4096")
	require.Equal(t, "4096", flagValue(toStrings(given["engine_args"].(map[string]any)["llama.cpp"]), "-c"))
	room := given["max_context_length"].(float64)
	require.Greater(t, room, 8192.0)
	assert.Regexp(t, `, context 4096 \(up to `+cli.TokensAtMost(room)+` fits\)[,;]`, headline)
}

// llama.cpp's -c is shared by its -np sequences (src/llama-context.cpp:
// n_ctx_seq = n_ctx / n_seq): a batch of 4 says so.
func TestPlanHeadlineLlamaCppSequencesShareC(t *testing.T) {
	ans, headline := planBoth(t, "h200-vm", "--model", "Llama-3.1-8B", "--engine", "llama.cpp", "--batch", "4")
	args := toStrings(ans["engine_args"].(map[string]any)["llama.cpp"])
	require.Equal(t, "4", flagValue(args, "-np"), "%v", args)
	assert.Contains(t, headline, ", context "+flagValue(args, "-c")+" shared by 4 sequences", headline)
}

// A vLLM or SGLang plan's "KV room" is the paged pool the engine will
// allocate (engine_expect: vLLM's "GPU KV cache size: N tokens", SGLang's
// max_total_num_tokens), not the plan's max_context_length, and the
// headline says how many sequences of the command's context it holds.
// Llama-3.3-70B on the DGX H100 fixture at --context 4096.
func TestPlanHeadlinePagedRoomIsThePool(t *testing.T) {
	for eng, flag := range map[string]string{"vllm": "--max-model-len", "sglang": "--context-length"} {
		ans, headline := planBoth(t, "dgx-h100", "--model", "Llama-3.3-70B", "--engine", eng, "--context", "4096")
		require.Equal(t, "4096", flagValue(toStrings(ans["engine_args"].(map[string]any)[eng]), flag), eng)
		expect := ans["engine_expect"].(map[string]any)[eng].(map[string]any)
		pool := expect["kv_cache_tokens"].(float64)
		seqs := int(math.Floor(expect["max_concurrency"].(float64)))
		require.Greater(t, seqs, 1, eng)
		require.NotEqual(t, cli.Tokens(pool), cli.Tokens(ans["max_context_length"].(float64)), "%s: pool and room differ here", eng)
		assert.Contains(t, headline, fmt.Sprintf(", KV room about %s tokens (%d sequences of 4096)", cli.Tokens(pool), seqs), eng)
		assert.Contains(t, headline, flag+" 4096", eng)
	}
}

// With no context asked, vLLM runs the chosen context and its pool is
// still the headline's room (Llama-3.1-70B on the DGX H100 fixture:
// --max-model-len 131072 and a pool of about ten such sequences).
func TestPlanHeadlinePagedRoomWithChosenContext(t *testing.T) {
	ans, headline := planBoth(t, "dgx-h100", "--model", "Llama-3.1-70B", "--engine", "vllm")
	ctx := flagValue(toStrings(ans["engine_args"].(map[string]any)["vllm"]), "--max-model-len")
	n, err := strconv.Atoi(ctx)
	require.NoError(t, err)
	expect := ans["engine_expect"].(map[string]any)["vllm"].(map[string]any)
	pool := expect["kv_cache_tokens"].(float64)
	require.GreaterOrEqual(t, pool, float64(n))
	assert.Contains(t, headline, ", KV room about "+cli.Tokens(pool)+" tokens", headline)
}

// vLLM's and SGLang's offload plans list host RAM as their first shard
// (the weights streamed from it), so the headline read "fits Intel(R)
// Xeon(R) Processor (cpu:0) + NVIDIA H200 (cuda:0)"; it names the
// accelerator first, as llama.cpp's offloaded headline does.
func TestPlanHeadlineOffloadNamesTheAcceleratorFirst(t *testing.T) {
	for _, args := range [][]string{
		{"--model", "Llama-3.1-405B", "--engine", "vllm"},
		{"--model", "Llama-3.1-405B", "--engine", "sglang"},
		{"--model", "DeepSeek-R1", "--engine", "llama.cpp"},
	} {
		ans, headline := planBoth(t, "h200-vm", append(args, "--cpu-offload")...)
		require.Equal(t, "cpu_offload", ans["strategy"], args)
		assert.Contains(t, headline, "fits NVIDIA H200 (cuda:0) + Intel(R) Xeon(R) Processor (cpu:0): CPU offload", args)
	}
}
