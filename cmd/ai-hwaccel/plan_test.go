package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/schema"
)

// --replicas reaches the engine as "replicas": the DGX H100 fixture (8 H100
// on NVSwitch) holds four TP-2 copies of a 70B bf16 model, and the answer
// has the shape schema/plan.schema.json describes.
func TestPlanReplicasOnDGX(t *testing.T) {
	plan, r := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "llama-3.1-70b", "--quant", "bf16", "--replicas", "4", "--json")...)
	assert.Equal(t, true, plan["fits"])
	assert.Equal(t, "data_parallel", plan["strategy"])
	assert.Equal(t, 4.0, plan["dp_size"])
	assert.Equal(t, 2.0, plan["tp_size"])
	shards := plan["shards"].([]any)
	require.Len(t, shards, 8)
	seen := map[any]int{}
	for _, s := range shards {
		seen[s.(map[string]any)["replica"]]++
	}
	assert.Equal(t, map[any]int{0.0: 2, 1.0: 2, 2.0: 2, 3.0: 2}, seen)
	tp := plan["throughput"].(map[string]any)
	assert.Greater(t, tp["decode_tokens_per_s_total"], tp["decode_tokens_per_s"])
	args := strings.Join(toStrings(plan["engine_args"].(map[string]any)["vllm"]), " ")
	assert.Contains(t, args, "--data-parallel-size 4")

	b, err := os.ReadFile(filepath.Join("..", "..", "schema", "plan.schema.json"))
	require.NoError(t, err)
	s, err := schema.Compile(b)
	require.NoError(t, err)
	assert.NoError(t, s.Validate([]byte(r.stdout)))

	// "max" is sent as the string; text output shows the replica column.
	max, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "8b", "--replicas", "max", "--json")...)
	assert.Equal(t, 8.0, max["dp_size"])
	text := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--replicas", "2")...)
	require.Equal(t, 0, text.code, text.stderr)
	assert.Contains(t, text.stdout, ": 2 replicas, ")
	assert.Contains(t, text.stdout, "REPLICA")

	// More replicas than devices: an answer that does not fit, and why.
	no, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--replicas", "9", "--json")...)
	assert.Equal(t, false, no["fits"])
	assert.Contains(t, strings.Join(toStrings(no["explanation"]), "\n"), "9 replicas need at least 9 devices")
}

func TestPlanReplicasUsage(t *testing.T) {
	for _, bad := range []string{"0", "-2", "two", "1.5", ""} {
		r := runCLI(t, "plan", "--model", "70b", "--replicas", bad)
		assert.Equal(t, 2, r.code, bad)
		assert.Contains(t, r.stderr, "--replicas", bad)
		assert.Contains(t, r.stderr, "want a whole number >= 1 or max", bad)
	}
	r := runCLI(t, "train", "--model", "70b", "--method", "lora", "--replicas", "2")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "unknown flag --replicas")
	h := runCLI(t, "plan", "--help")
	assert.Contains(t, h.stdout, "--replicas N")
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// Batch is concurrency for vLLM (issue 21 item 3): 64 sequences of 128k
// tokens of Llama-3.1-70B on the DGX H100 fixture plan, because vLLM serves
// them from one paged KV pool and needs one full-length sequence to fit; the
// answer says how many fit at once and caps the batch with --max-num-seqs.
func TestPlanBatchIsConcurrencyOnDGX(t *testing.T) {
	plan, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-70B", "--context", "128k", "--batch", "64", "--json")...)
	require.Equal(t, true, plan["fits"], plan["explanation"])
	args := strings.Join(toStrings(plan["engine_args"].(map[string]any)["vllm"]), " ")
	assert.Contains(t, args, "--max-num-seqs 64")
	assert.Contains(t, args, "--max-model-len 131072")
	maxBatch := plan["max_batch_size"].(float64)
	assert.GreaterOrEqual(t, maxBatch, 1.0)
	assert.Less(t, maxBatch, 64.0, "64 sequences of 128k do not all fit at once")
	assert.Contains(t, strings.Join(toStrings(plan["explanation"]), "\n"), "vLLM serves the batch from one paged KV cache")
}

// "Unknown" is not "no" (issue 21 item 7): on the Jetson AGX Orin fixture
// no device reports its memory, so fits is null with the reason, the
// refusal carries no quant or strategy, and the headline says so.
func TestPlanUnknownMemoryIsNotNo(t *testing.T) {
	plan, _ := runJSON(t, withFixture(t, "jetson-agx-orin", "plan", "--model", "Llama-3.1-8B", "--json")...)
	require.Contains(t, plan, "fits")
	assert.Nil(t, plan["fits"])
	assert.NotContains(t, plan, "quant")
	assert.NotContains(t, plan, "strategy")
	assert.Equal(t, "no_device", plan["refusal"].(map[string]any)["code"])
	text := runCLI(t, withFixture(t, "jetson-agx-orin", "plan", "--model", "Llama-3.1-8B")...)
	assert.Contains(t, text.stdout, "cannot tell whether it fits: no available device with known memory")
	// The levels table below that headline said FITS "no" on every row
	// ("no available device"): it says unknown, as fit --all does.
	rows := 0
	for _, line := range strings.Split(text.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && (f[0] == "bf16" || f[0] == "int4") {
			rows++
			assert.Equal(t, "unknown", f[3], line)
		}
	}
	assert.Equal(t, 2, rows, text.stdout)
}

// With no --context, a vLLM or SGLang plan runs the context it chose (issue
// 21 item 3): Llama-3.1-70B on the DGX H100 fixture pins --max-model-len
// (SGLang --context-length) at the chosen context, longer than 4096 and
// within the "KV room" of the headline, and the explanation says it was
// chosen; an explicit --context 4096 stays 4096.
func TestPlanContextChosenOnDGX(t *testing.T) {
	for eng, flag := range map[string]string{"vllm": "--max-model-len", "sglang": "--context-length"} {
		plan, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-70B", "--engine", eng, "--json")...)
		require.Equal(t, true, plan["fits"], plan["explanation"])
		got := flagValue(toStrings(plan["engine_args"].(map[string]any)[eng]), flag)
		ctx, err := strconv.Atoi(got)
		require.NoError(t, err, eng)
		assert.Greater(t, ctx, 4096, eng)
		assert.LessOrEqual(t, float64(ctx), plan["max_context_length"], eng)
		assert.Contains(t, strings.Join(toStrings(plan["explanation"]), "\n"), "context: "+got+" tokens per sequence, chosen: the model's trained context", eng)

		text := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-70B", "--engine", eng)...)
		require.Equal(t, 0, text.code, text.stderr)
		headline := strings.SplitN(text.stdout, "\n", 2)[0]
		assert.Contains(t, headline, flag+" "+got, eng)

		given, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-70B", "--engine", eng, "--context", "4096", "--json")...)
		assert.Equal(t, "4096", flagValue(toStrings(given["engine_args"].(map[string]any)[eng]), flag), eng)
	}
}

// flagValue is the argument after flag in args, "" when absent.
func flagValue(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

// A catalog model planned at a level none of its published checkpoints is
// stored at (DeepSeek-R1 at int4 on the DGX H100 fixture: its FP8 release
// does not fit with the KV cache) prints the checkpoint it needs, not
// `vllm serve MODEL` (issue 21 item 5); one with such a checkpoint
// (DeepSeek-V3: the community AWQ the catalog lists) is served from it; a
// size alone names no model, and gets no command (no MODEL placeholder).
func TestPlanNamesTheCheckpointItNeeds(t *testing.T) {
	text := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "DeepSeek-R1")...)
	require.Equal(t, 0, text.code, text.stderr)
	headline := strings.SplitN(text.stdout, "\n", 2)[0]
	assert.Contains(t, headline, "int4")
	assert.Contains(t, headline, "no command: needs a checkpoint of DeepSeek-R1 stored at int4 (AWQ, GPTQ or compressed-tensors)")
	assert.NotContains(t, text.stdout, "vllm serve MODEL")

	awq := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "DeepSeek-V3")...)
	require.Equal(t, 0, awq.code, awq.stderr)
	assert.Contains(t, strings.SplitN(awq.stdout, "\n", 2)[0], "vllm serve cognitivecomputations/DeepSeek-V3-AWQ --tensor-parallel-size 8")

	size := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--quant", "int4")...)
	require.Equal(t, 0, size.code, size.stderr)
	assert.Contains(t, strings.SplitN(size.stdout, "\n", 2)[0], "; no command: no published checkpoint of this model is known")
	assert.NotContains(t, size.stdout, "vllm serve")
}
