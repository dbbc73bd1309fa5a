package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/catalogq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// A device id the machine does not have is an error that says which ids
// it has, so the user can retry without running --table first (tried as a
// new user on the cpu-only fixture, which has no GPU: `--devices cuda:0`
// answered only `unknown device "cuda:0"`).
func TestUnknownDeviceNamesTheDevicesThereAre(t *testing.T) {
	r := runCLI(t, withFixture(t, "cpu-only", "plan", "--model", "70b", "--devices", "cuda:0")...)
	require.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, `unknown device "cuda:0"`)
	assert.Contains(t, r.stderr, "this registry has cpu:0)")

	r = runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--devices", "cuda:8")...)
	require.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "this registry has cpu:0, cuda:0, cuda:1, cuda:2, cuda:3, cuda:4, cuda:5, cuda:6, cuda:7)")
}

// --cpu-offload on a machine whose host memory is unknown (the Slimbook
// fixture has no /proc/meminfo: its 8 GB RTX 4060 holds no Qwen3-30B-A3B)
// cannot keep anything in host RAM that it can size; the answer says so and
// why, instead of a refusal that reads as if the flag had been tried and
// failed. Counted, that RAM might hold what the GPU does not, so the answer
// cannot tell, and names cpu:0 (it said "does not fit").
func TestCPUOffloadWithoutHostMemorySaysWhy(t *testing.T) {
	r := runCLI(t, withFixture(t, "slimbook-hero-rtx4060-igpu", "plan", "--model", "qwen3:30b-a3b", "--engine", "llama.cpp", "--cpu-offload")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "cannot tell whether it fits")
	assert.Contains(t, r.stdout, "left out because their memory is unknown (counted, they might hold it): cpu:0 (host RAM: /proc/meminfo was not readable)")
	assert.Contains(t, r.stdout, "cpu_offload: the registry does not report cpu:0's memory")

	r = runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-405B", "--quant", "bf16", "--devices", "cuda:0-3", "--cpu-offload", "--engine", "llama.cpp")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "cpu_offload: devices leaves out cpu:0")
}

// The headline of a vLLM plan of gpt-oss-120b on the H200 fixture says how
// many requests of its --max-model-len fit at once as vLLM counts them
// (engine_expect.vllm.max_concurrency), and the Room line (max_batch_size)
// the same: vLLM's window layers hold their window plus one prompt step,
// in its concurrency and in the plan's fit alike. Counting every layer at
// the whole length, the headline said "6 sequences of 131072" beside "up
// to 13 sequences at once".
func TestVLLMWindowConcurrencyIsTheRoom(t *testing.T) {
	obj, _ := runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "gpt-oss-120b", "--engine", "vllm", "--json")...)
	x := obj["engine_expect"].(map[string]any)["vllm"].(map[string]any)
	concurrency, tokens := x["max_concurrency"].(float64), x["kv_cache_tokens"].(float64)
	room, ctx := obj["max_batch_size"].(float64), obj["max_context_length"].(float64)
	assert.Contains(t, x["source"], "sliding-window layers")
	assert.Equal(t, math.Floor(concurrency), room, "max_concurrency %.2f, max_batch_size %.0f", concurrency, room)
	assert.InDelta(t, concurrency*ctx, tokens, ctx/100, "vLLM 0.21 prints the tokens as the concurrency times the length")

	r := runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "gpt-oss-120b", "--engine", "vllm")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, fmt.Sprintf("(%.0f sequences of 131072)", room))
	assert.Contains(t, r.stdout, fmt.Sprintf("up to %.0f sequences at once", room))
}

// A plan that fits starts in vLLM: on a MIG slice, where Gemma 3 27B's
// context is cut to what one sequence leaves room for, the cut follows
// vLLM's own check of a window layer (its window plus one prompt step),
// so the answer carries no "vLLM refuses to start" warning.
func TestVLLMWindowFitStarts(t *testing.T) {
	obj, _ := runJSON(t, withFixture(t, "nvidia-mig", "plan", "--model", "google/gemma-3-27b-it", "--engine", "vllm", "--json")...)
	require.Equal(t, true, obj["fits"])
	x := obj["engine_expect"].(map[string]any)["vllm"].(map[string]any)
	assert.GreaterOrEqual(t, x["max_concurrency"].(float64), 1.0)
	assert.NotContains(t, x, "warning")
}

// DGX Spark's GB10 shares LPDDR5X with its CPU; the llama.cpp rows behind
// the GDDR cell ran on RTX and workstation boards. Its plan's speed was
// headlined as validated on "NVIDIA GDDR GPUs": a figure of one device
// class shown for another. It says it is not validated, and the headline
// shows no speed.
func TestUnifiedNVIDIASpeedIsNotGDDRValidated(t *testing.T) {
	obj, _ := runJSON(t, withFixture(t, "dgx-spark-gb10", "plan", "--model", "gpt-oss-120b", "--engine", "llama.cpp", "--json")...)
	tp := obj["throughput"].(map[string]any)
	v, _ := tp["validated_on"].(string)
	assert.False(t, strings.HasPrefix(v, "llama.cpp rows"), "validated on another class: %s", v)
	assert.Contains(t, v, "not validated")
	assert.Contains(t, v, "LPDDR5X")

	r := runCLI(t, withFixture(t, "dgx-spark-gb10", "plan", "--model", "gpt-oss-120b", "--engine", "llama.cpp")...)
	require.Equal(t, 0, r.code, r.stderr)
	headline, _, _ := strings.Cut(r.stdout, "\n")
	assert.NotContains(t, headline, "tokens/s")
}

// A unified-memory GPU whose memory the machine does not show (Jetson AGX
// Orin without /proc/meminfo in view, an AMD APU and an Intel laptop GPU
// whose carve-out is not reported) has unknown memory, not none: the
// table's total said "0.0 GiB accelerator memory" and --summary
// "accelerator_memory_bytes": 0 where docs/cli.md promises "—" and an
// absent field for memory not reported.
func TestUnknownSharedMemoryIsNotZero(t *testing.T) {
	for _, m := range []string{"jetson-agx-orin", "asus-g14-cezanne-apu", "intel-core-ultra-laptop"} {
		r := runCLI(t, withFixture(t, m, "--table")...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.NotContains(t, r.stdout, "0.0 GiB accelerator memory", m)
		assert.Contains(t, r.stdout, "accelerator memory unknown", m)

		obj, _ := runJSON(t, withFixture(t, m, "--summary")...)
		_, has := obj["accelerator_memory_bytes"]
		assert.False(t, has, "%s: accelerator_memory_bytes %v", m, obj["accelerator_memory_bytes"])
		assert.Positive(t, obj["accelerators_memory_unknown"], m)
	}
	// An Apple SoC's Neural Engine, of no size of its own, shares the
	// GPU's reported pool: nothing unknown there.
	r := runCLI(t, withFixture(t, "macbook-m3-pro", "--table")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Total: 3 devices, 2 accelerators, 24.0 GiB accelerator memory (24.0 GiB of it shared with the host), 36.0 GiB host memory\n")
}

// decode_tokens_per_s is the rate of all the sequences decoding at once
// (schema/plan.schema.json); the text printed it as "per sequence", so a
// batch of 64 Qwen3-30B-A3B requests on the H200 fixture read as 942
// tokens/s for each of them, six times its batch-1 rate. The answer says
// how many sequences the figure is of, and the text divides it.
func TestBatchDecodeRateIsNotPerSequence(t *testing.T) {
	args := withFixture(t, "h200-vm", "plan", "--model", "qwen3:30b-a3b", "--batch", "64", "--context", "32k")
	obj, _ := runJSON(t, append(args, "--json")...)
	tp := obj["throughput"].(map[string]any)
	total := tp["decode_tokens_per_s"].(float64)
	n, ok := tp["sequences"].(float64)
	require.True(t, ok, "throughput.sequences")
	assert.Equal(t, obj["max_batch_size"], n, "the pool holds fewer than 64 at full context: the figures are of those")

	r := runCLI(t, args...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, rateText(total)+" tokens/s per sequence")
	assert.Contains(t, r.stdout, fmt.Sprintf("Throughput: decode %s tokens/s over %.0f sequences (%s per sequence)", rateText(total), n, rateText(total/n)))

	// One sequence: the rate is that sequence's, as before.
	obj, _ = runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "qwen3:30b-a3b", "--json")...)
	_, has := obj["throughput"].(map[string]any)["sequences"]
	assert.False(t, has)
}

// rateText is a rate as the text prints it: one decimal below 100, none
// above (internal/cli round1).
func rateText(f float64) string {
	if f >= 100 {
		return strconv.FormatFloat(math.Round(f), 'f', -1, 64)
	}
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// A GGUF type written without its underscores, as ollama tags and file
// names often spell it ("q4km"), or one letter off, gets the closest
// known name, as a mistyped flag or engine does.
func TestQuantNearMissSuggests(t *testing.T) {
	for typed, want := range map[string]string{"q4km": "q4_k_m", "Q5_K_S": "", "q8": "q8_0", "bf61": "bf16"} {
		r := runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "8b", "--quant", typed)...)
		if want == "" {
			assert.Equal(t, 0, r.code, "%s is a known type in any case: %s", typed, r.stderr)
			continue
		}
		require.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, fmt.Sprintf(`unknown quantization %q; did you mean %s?`, typed, want))
	}
}

// --context's default is said as each command has it: plan chooses the
// context as the engine would (auto), suggest and train plan 4096 tokens
// (the model's maximum when shorter). suggest --help claimed plan's auto,
// and docs/cli.md "default 4096" for all three.
func TestContextDefaultIsEachCommands(t *testing.T) {
	plan := runCLI(t, "plan", "--help")
	assert.Contains(t, plan.stdout, "(default: auto for llama.cpp, vLLM and SGLang plans, 4096 for --engine none)")
	for _, c := range []string{"suggest", "train"} {
		r := runCLI(t, c, "--help")
		require.Equal(t, 0, r.code)
		assert.NotContains(t, r.stdout, "default: auto", c)
		assert.Contains(t, r.stdout, "(default 4096, or the model's maximum when shorter)", c)
	}
	r := runCLI(t, withFixture(t, "h200-vm", "suggest", "--model", "gpt-oss-120b", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	r2 := runCLI(t, withFixture(t, "h200-vm", "suggest", "--model", "gpt-oss-120b", "--context", "4096", "--json")...)
	assert.Equal(t, r2.stdout, r.stdout, "suggest's default is 4096")
}

// Ranked by cost per million output tokens, machines whose cost is the
// same to the cent (data-parallel copies of one GPU type: 1, 2, 4 or 8
// RTX PRO 6000 for gpt-oss-120b, $7.05 each) are ranked cheapest per hour
// first: the first line recommended the 4-GPU type at $18/h over the
// 1-GPU one at $4.50/h for a difference in the sixth digit, rounding.
func TestRentEqualCostPrefersTheCheaperMachine(t *testing.T) {
	r := runCLI(t, "rent", "--model", "gpt-oss-120b", "--provider", "gcp")
	require.Equal(t, 0, r.code, r.stderr)
	first, _, _ := strings.Cut(r.stdout, "\n")
	assert.Contains(t, first, "(1 x NVIDIA RTX PRO 6000 Blackwell)", first)
	i1 := strings.Index(r.stdout, "g4-standard-48 (1 x")
	i2 := strings.Index(r.stdout, "g4-standard-96 (2 x")
	i4 := strings.Index(r.stdout, "g4-standard-192 (4 x")
	require.True(t, i1 >= 0 && i2 >= 0 && i4 >= 0, r.stdout)
	assert.Less(t, i1, i2)
	assert.Less(t, i2, i4)
}

// The model's note on its vision tower says which engines load it: an
// SGLang plan of Llama 4, which counts no tower (SGLang serves Llama 4
// text-only by default and builds none), said beside that "vLLM and SGLang
// load them beside it".
func TestVisionNoteAgreesWithSGLangTextOnly(t *testing.T) {
	r := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "llama4:scout", "--engine", "sglang")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "this plan counts no vision tower")
	assert.NotContains(t, r.stdout, "vLLM and SGLang load them beside it")
	assert.Contains(t, r.stdout, "vLLM loads them beside it")
}

// train, suggest and rent name the model as plan does, by the catalog's name for
// the alias typed: their headlines said "qwen3:30b-a3b" where plan's said
// "Qwen3-30B-A3B". A name the catalog does not resolve (a size) stays as
// typed.
func TestTrainAndSuggestNameTheModelAsPlanDoes(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "--model", "qwen3:30b-a3b"},
		{"suggest", "--model", "qwen3:30b-a3b"},
		{"train", "--model", "qwen3:30b-a3b", "--method", "lora"},
	} {
		r := runCLI(t, withFixture(t, "h200-vm", args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		headline, _, _ := strings.Cut(r.stdout, "\n")
		assert.True(t, strings.HasPrefix(headline, "Qwen3-30B-A3B "), "%s: %s", args[0], headline)
	}
	r := runCLI(t, "rent", "--model", "qwen3:30b-a3b")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, strings.SplitN(r.stdout, "\n", 2)[0], " for Qwen3-30B-A3B: ")
	r = runCLI(t, withFixture(t, "h200-vm", "train", "--model", "8b", "--method", "lora")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "8b lora training"), r.stdout)
}

// A data-parallel plan's headline says what its figures are of: the KV
// room and the speed of one replica, and the whole machine's as the Room
// line and decode_tokens_per_s_total state it. It said "KV room about 430k
// tokens per replica (3 sequences of 131072)" above "up to 24 sequences at
// once", and "about 161 tokens/s" for 8 replicas serving 1286. Then it
// said "about 8 replicas x 161 tokens/s = 1286 tokens/s" for a batch of
// one, whose one request one replica serves at 161: the total is the rate
// when every replica has a request (decode_tokens_per_s_total's
// assumption), and the headline and the Throughput line say so, with the
// requests it takes.
func TestDataParallelHeadlineSaysPerReplicaAndTotal(t *testing.T) {
	args := withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-8B", "--replicas", "8", "--engine", "llama.cpp")
	obj, _ := runJSON(t, append(args, "--json")...)
	tp := obj["throughput"].(map[string]any)
	one, total := tp["decode_tokens_per_s"].(float64), tp["decode_tokens_per_s_total"].(float64)
	r := runCLI(t, args...)
	require.Equal(t, 0, r.code, r.stderr)
	headline, _, _ := strings.Cut(r.stdout, "\n")
	// The per-replica figure's digits: TestDataParallelHeadlineFiguresMultiply.
	per := regexp.QuoteMeta(strconv.FormatFloat(math.Floor(one), 'f', 0, 64)) + `(\.[0-9]+)?`
	assert.Regexp(t, fmt.Sprintf(`about %s tokens/s per replica \(8 x %s = %s tokens/s when all 8 replicas are busy, 8 requests at once\)`, per, per, rateText(total)), headline)
	assert.NotContains(t, headline, "about 8 replicas x", "not the machine's rate for a batch of one")
	assert.Contains(t, r.stdout, "(8 in flight in all); the batch of 1 keeps 1 of the 8 replicas busy")
	assert.Regexp(t, fmt.Sprintf(`(?m)^Throughput: decode %s tokens/s per sequence \(bound by [a-z ]+\) on each replica, %s tokens/s in all when all 8 replicas are busy \(8 sequences at once\), prefill [0-9.]+ tokens/s on each replica$`,
		regexp.QuoteMeta(rateText(one)), regexp.QuoteMeta(rateText(total))), r.stdout)

	// 8 sequences a replica (--batch 64): 64 keep them busy (the headline
	// states no rate: llama.cpp's decode of a batch is not validated).
	r = runCLI(t, append(args, "--batch", "64")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "replicas busy\n", "a batch of 64 keeps all 8 busy")
	assert.Regexp(t, `(?m)^Throughput: decode [0-9.]+ tokens/s over 8 sequences \([0-9.]+ per sequence\) \(bound by [a-z ]+\) on each replica, [0-9.]+ tokens/s in all when all 8 replicas are busy \(64 sequences at once\)`, r.stdout)

	args = withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-8B", "--replicas", "8", "--engine", "vllm")
	obj, _ = runJSON(t, append(args, "--json")...)
	n := obj["engine_expect"].(map[string]any)["vllm"].(map[string]any)["max_concurrency"].(float64)
	all := obj["max_batch_size"].(float64)
	require.Equal(t, 8*math.Floor(n), all)
	r = runCLI(t, args...)
	require.Equal(t, 0, r.code, r.stderr)
	headline, _, _ = strings.Cut(r.stdout, "\n")
	assert.Contains(t, headline, fmt.Sprintf("tokens per replica (%.0f sequences of 131072 each, %.0f in all)", math.Floor(n), all))
	assert.Contains(t, r.stdout, fmt.Sprintf("up to %.0f sequences at once", all))
}

// vLLM's CPU backend is built for AVX-512 or AVX2 on x86 and refuses to
// build on a CPU with neither (cmake/cpu_extension.cmake of
// vllm-project/vllm); the cpu-only fixture's Xeon L5640 (Westmere-EP)
// lists sse4_2 and no avx in its /proc/cpuinfo flags. A vLLM plan there
// said it fits with a `vllm serve` line; it says why vLLM cannot run,
// while llama.cpp, which has no such floor, still plans. A CPU whose
// family is not known keeps its vLLM plan.
func TestVLLMNeedsAVX2OnX86CPU(t *testing.T) {
	r := runCLI(t, withFixture(t, "cpu-only", "plan", "--model", "8b", "--engine", "vllm")...)
	require.Equal(t, 0, r.code, r.stderr)
	headline, _, _ := strings.Cut(r.stdout, "\n")
	assert.Contains(t, headline, "does not fit")
	assert.Contains(t, headline, "vLLM's CPU backend needs AVX-512 or AVX2")
	assert.NotContains(t, r.stdout, "vllm serve")

	r = runCLI(t, withFixture(t, "cpu-only", "plan", "--model", "8b", "--engine", "llama.cpp")...)
	require.Equal(t, 0, r.code, r.stderr)
	headline, _, _ = strings.Cut(r.stdout, "\n")
	assert.Contains(t, headline, "8b fits ")
	assert.Contains(t, r.stdout, "\nEngine commands:\n  llama.cpp: ")

	r = runCLI(t, withFixture(t, "qemu-q35-vm", "plan", "--model", "1b", "--engine", "vllm", "--devices", "cpu:0")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "AVX-512 or AVX2")
}

// rent's best choice whose level no published checkpoint stores (Gemma 3
// 27B at int4 on one RTX 4090: the catalog knows no AWQ/GPTQ release) says
// so under the headline, as plan's headline does ("no command: needs
// ..."), where it printed nothing: the recommendation stood without a way
// to run it. Under quant auto rent now ranks only choices a command runs
// (internal/rent TestEveryChoiceHasACommand: llama.cpp's Q4_K_M there), so
// the level and engine are named here, as a user asking for them would.
func TestRentSaysWhyTheBestChoiceHasNoCommand(t *testing.T) {
	obj, _ := runJSON(t, "rent", "--model", "Gemma-3-27B", "--quant", "int4", "--engine", "vllm", "--json")
	best := obj["choices"].([]any)[0].(map[string]any)
	needs, _ := best["load"].(map[string]any)["needs"].(string)
	require.NotEmpty(t, needs, "the fixture's premise: the best choice needs an unpublished checkpoint")

	r := runCLI(t, "rent", "--model", "Gemma-3-27B", "--quant", "int4", "--engine", "vllm")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(r.stdout, "\n")
	require.Greater(t, len(lines), 3)
	assert.Equal(t, "  no command: needs "+needs, lines[2])
}

// A level that fits nowhere shows in the Levels table what its refusal
// says it needs: on the Slimbook's 8 GB RTX 4060, suggest for DeepSeek-V3
// showed int4 as 326.3 GiB in the table (the estimate's activations and
// overhead) and 327.2 GiB in the headline (vLLM's start-up charge, what the
// fit was checked on). The row's total_bytes is the refusal's figure.
func TestRefusedLevelRowIsTheRefusalsFigure(t *testing.T) {
	args := withFixture(t, "slimbook-hero-rtx4060-igpu", "suggest", "--model", "DeepSeek-V3")
	obj, _ := runJSON(t, append(args, "--json")...)
	levels := obj["levels"].([]any)
	require.NotEmpty(t, levels)
	for _, l := range levels {
		row := l.(map[string]any)
		need := regexp.MustCompile(`needs ([0-9.]+ GiB) on one device`).FindStringSubmatch(row["reason"].(string))
		require.NotNil(t, need, row["reason"])
		assert.Equal(t, need[1], fmt.Sprintf("%.1f GiB", row["total_bytes"].(float64)/(1<<30)), row["quant"])
	}
	r := runCLI(t, args...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "int4 needs 327.2 GiB on one device")
	assert.Regexp(t, `(?m)^  int4 +327\.2 GiB +no`, r.stdout)
}

// A data-parallel headline's figures multiply: "4 replicas x 161 tokens/s
// = 643 tokens/s" (now "161 tokens/s per replica (4 x 161 = 643 tokens/s
// when all 4 replicas are busy, ...)") rounded the per-replica rate (160.8) and the total
// (643.2) each on its own, so 4 x 161 read 643. The per-replica figure is
// shown with the digits that make n times it round to the total shown,
// and both are decode_tokens_per_s and decode_tokens_per_s_total rounded.
func TestDataParallelHeadlineFiguresMultiply(t *testing.T) {
	headline := regexp.MustCompile(`about ([0-9.]+) tokens/s per replica \((\d+) x ([0-9.]+) = ([0-9.]+) tokens/s when all (\d+) replicas are busy`)
	// Qwen3-30B-A3B is asked at bf16: auto takes Q8_0 there, the best
	// level a published GGUF runs, whose decode on an H100 is not
	// validated, so its headline states no rate.
	for _, c := range []struct{ model, replicas, quant string }{
		{"Llama-3.1-8B", "2", "auto"}, {"Llama-3.1-8B", "4", "auto"}, {"Llama-3.1-8B", "8", "auto"},
		{"Qwen3-30B-A3B", "4", "bf16"}, {"Qwen3-30B-A3B", "8", "bf16"}, {"gpt-oss-20b", "8", "auto"},
	} {
		args := withFixture(t, "dgx-h100", "plan", "--model", c.model, "--replicas", c.replicas, "--engine", "llama.cpp", "--quant", c.quant)
		obj, _ := runJSON(t, append(args, "--json")...)
		tp := obj["throughput"].(map[string]any)
		one, total := tp["decode_tokens_per_s"].(float64), tp["decode_tokens_per_s_total"].(float64)
		r := runCLI(t, args...)
		require.Equal(t, 0, r.code, r.stderr)
		m := headline.FindStringSubmatch(r.stdout)
		require.NotNil(t, m, r.stdout)
		n, _ := strconv.Atoi(m[2])
		shown, _ := strconv.ParseFloat(m[3], 64)
		assert.Equal(t, m[1], m[3], "one per-replica figure")
		assert.Equal(t, c.replicas, m[2])
		assert.Equal(t, c.replicas, m[5])
		assert.Equal(t, rateText(total), m[4], "%s x%s: the total is decode_tokens_per_s_total", c.model, c.replicas)
		assert.Equal(t, m[4], rateText(float64(n)*shown), "%s: %s", c.model, m[0])
		decimals := 0
		if _, frac, ok := strings.Cut(m[3], "."); ok {
			decimals = len(frac)
		}
		assert.Equal(t, m[3], strconv.FormatFloat(one, 'f', decimals, 64), "%s x%s: the per-replica figure is decode_tokens_per_s", c.model, c.replicas)
	}
}

// A training plan on one device says so: the refusal on the Slimbook's one
// RTX 4060 read "17.6 GiB per device, the smallest of 1 devices has
// 7.5 GiB", and the fit on the H200 "available on the smallest of 1
// devices". Several devices keep "the smallest of n devices".
func TestTrainOnOneDeviceSaysTheDevice(t *testing.T) {
	r := runCLI(t, withFixture(t, "slimbook-hero-rtx4060-igpu", "train", "--model", "8b", "--method", "lora")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "of 1 devices")
	assert.Contains(t, r.stdout, "8b lora training does not fit: 17.6 GiB on its one device, which has 7.5 GiB")

	obj, _ := runJSON(t, withFixture(t, "h200-vm", "train", "--model", "8b", "--method", "lora", "--json")...)
	assert.Contains(t, obj["explanation"], "fits: 17.6 GiB of the 139.8 GiB available on its one device")

	obj, _ = runJSON(t, withFixture(t, "dgx-h100", "train", "--model", "405b", "--method", "full", "--devices", "cuda:0-7", "--json")...)
	assert.Contains(t, obj["refusal"].(map[string]any)["text"], "per device, the smallest of 8 devices has")
}

// train's Memory per device line and its explanation print one figure
// alike: a LoRA's 8.3M trained parameters' gradients read "gradients
// <0.1 GiB" on the first and "gradients 0.0 GiB" on the second. The
// engine's explanations write a figure too small for one decimal as the
// CLI does, "<0.1 GiB", so a known non-zero figure never reads as zero.
func TestTrainMemoryLineAndExplanationAgree(t *testing.T) {
	r := runCLI(t, withFixture(t, "h200-vm", "train", "--model", "8b", "--method", "lora")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "+ gradients <0.1 GiB +")
	assert.Contains(t, r.stdout, "per device: weights 14.9 GiB, gradients <0.1 GiB,")
	assert.Contains(t, r.stdout, "frozen models 0.0 GiB", "a zero figure stays 0.0")
}

// A data-parallel vLLM headline whose replica holds one sequence of the
// model's context says "1 sequence": Llama-3.1-8B on the two L40S of the
// two-nvidia fixture read "(1 sequences of 131072 each, 2 in all)".
func TestDataParallelHeadlineOneSequenceIsSingular(t *testing.T) {
	args := withFixture(t, "two-nvidia", "plan", "--model", "Llama-3.1-8B")
	obj, _ := runJSON(t, append(args, "--json")...)
	require.Equal(t, 1.0, math.Floor(obj["engine_expect"].(map[string]any)["vllm"].(map[string]any)["max_concurrency"].(float64)), "the fixture's premise: one sequence per replica")
	r := runCLI(t, args...)
	require.Equal(t, 0, r.code, r.stderr)
	headline, _, _ := strings.Cut(r.stdout, "\n")
	assert.NotContains(t, headline, "1 sequences")
	assert.Contains(t, headline, "tokens per replica (1 sequence of 131072 each, 2 in all)")
}

// throughput.bound says what limits decode (schema/plan.schema.json), and
// the Throughput line says it beside the decode rate: after the prefill
// rate ("prefill 25748 tokens/s (bound by memory bandwidth)" for
// Llama-3.1-8B on the H200) it read as if the prompt, a compute-bound pass,
// were limited by memory bandwidth.
func TestBoundIsSaidOfDecode(t *testing.T) {
	args := withFixture(t, "h200-vm", "plan", "--model", "Llama-3.1-8B")
	obj, _ := runJSON(t, append(args, "--json")...)
	tp := obj["throughput"].(map[string]any)
	require.Equal(t, "memory_bandwidth", tp["bound"])
	require.NotEmpty(t, tp["prefill_validated_on"], "the fixture's premise: the prefill rate is printed")
	r := runCLI(t, args...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, fmt.Sprintf("Throughput: decode %s tokens/s per sequence (bound by memory bandwidth), prefill %s tokens/s\n",
		rateText(tp["decode_tokens_per_s"].(float64)), rateText(tp["prefill_tokens_per_s"].(float64))))
}

// A model refused on every level by the engine's compute-capability floor
// says so in its headline: on the K80 of the nvidia-driver-no-tool fixture
// (compute capability 3.7) the headline read "does not fit: no available
// device supports int4", as if int4 were the trouble, while every row of
// the Levels table named llama.cpp's floor (or vLLM's, SGLang's, when named).
func TestFloorRefusalHeadlineNamesTheFloor(t *testing.T) {
	for e, floor := range map[string]string{
		"":       "llama.cpp's CUDA builds have no kernels below compute capability 5.0",
		"vllm":   "vLLM needs compute capability 7.0 or higher",
		"sglang": "SGLang needs compute capability 7.5 or higher",
	} {
		args := withFixture(t, "nvidia-driver-no-tool", "plan", "--model", "Llama-3.1-8B")
		if e != "" {
			args = append(args, "--engine", e)
		}
		obj, _ := runJSON(t, append(args, "--json")...)
		text := obj["refusal"].(map[string]any)["text"].(string)
		assert.Contains(t, text, floor, e)
		assert.Contains(t, text, "Tesla K80 has 3.7", e)
		r := runCLI(t, args...)
		require.Equal(t, 0, r.code, r.stderr)
		headline, _, _ := strings.Cut(r.stdout, "\n")
		assert.Equal(t, "Llama-3.1-8B does not fit: "+text, headline, e)
		assert.NotContains(t, headline, "no available device supports", e)
	}
}

// A training run whose precision no accelerator runs, on a machine whose
// host memory is unknown, says which precision and which devices: on the
// K80 (no bf16) the headline read only "no available device with known
// memory", though the K80's 11.2 GiB is known, and fp16 plans there.
func TestTrainRefusalNamesThePrecisionNoDeviceRuns(t *testing.T) {
	r := runCLI(t, withFixture(t, "nvidia-driver-no-tool", "train", "--model", "8b", "--method", "lora")...)
	require.Equal(t, 0, r.code, r.stderr)
	headline, _, _ := strings.Cut(r.stdout, "\n")
	assert.Equal(t, "8b lora training: cannot tell whether it fits: no available device with known memory runs bf16 (cuda_gpu (nvidia) devices do not run bf16); available but their memory is unknown: cpu:0 (host RAM: /proc/meminfo was not readable); a registry with their memory_bytes plans on them", headline)

	r = runCLI(t, withFixture(t, "nvidia-driver-no-tool", "train", "--model", "8b", "--method", "lora", "--precision", "fp16")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "on its one device, which has 11.2 GiB")
}

// The explanation of a training run moved to host RAM reads as two
// statements: "metal_gpu (apple) devices do not run bf16: skipped no
// accelerator runs bf16: estimating on host RAM" ran them together. A Mac
// now trains bf16 on its GPU (precision.MetalTraining), so no fixture
// falls back that way any more; internal/plan's
// TestTrainOnHostRAMExplanationReadsAsTwoStatements keeps the wording, and
// this one the Mac's answer.
func TestTrainOnHostRAMExplanationReads(t *testing.T) {
	obj, _ := runJSON(t, withFixture(t, "macbook-m3-pro", "train", "--model", "1b", "--method", "lora", "--json")...)
	why := fmt.Sprint(obj["explanation"])
	assert.NotContains(t, why, "host RAM")
	assert.Contains(t, fmt.Sprint(obj["devices"]), "metal:0")
}

// fit's TOKENS/S is plan's figure written as plan writes it: Llama-3.1-8B
// at q4_k_m on the H200 read 261.7 in the fit table and "about 262
// tokens/s" in plan's headline (one decimal below 100, none above).
func TestFitRateIsWrittenAsPlanWritesIt(t *testing.T) {
	obj, _ := runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "Llama-3.1-8B", "--engine", "llama.cpp", "--quant", "q4_k_m", "--json")...)
	want := rateText(obj["throughput"].(map[string]any)["decode_tokens_per_s"].(float64))
	r := runCLI(t, withFixture(t, "h200-vm", "fit", "--engine", "llama.cpp", "--quant", "q4_k_m", "--filter", "Llama-3.1-8B")...)
	require.Equal(t, 0, r.code, r.stderr)
	var row []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "Llama-3.1-8B" {
			row = f
		}
	}
	require.NotNil(t, row, r.stdout)
	assert.Equal(t, want, row[len(row)-1])
	p := runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "Llama-3.1-8B", "--engine", "llama.cpp", "--quant", "q4_k_m")...)
	assert.Contains(t, p.stdout, "about "+want+" tokens/s")
}

// fit --all says why a model does not fit, not only the refusal's code:
// on the cpu-only fixture vLLM refuses every model for the CPU's vector
// width, and on nvidia-driver-no-tool llama.cpp for the K80's compute
// capability. The table shortens the reason (its sources in parentheses
// marked "(…)", the note under it says so); the JSON keeps the plan's
// whole refusal text.
func TestFitAllSaysWhy(t *testing.T) {
	r := runCLI(t, withFixture(t, "cpu-only", "fit", "--all", "--engine", "vllm", "--filter", "Llama-3.1-8B")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "WHY")
	assert.Regexp(t, `(?m)^Llama-3\.1-8B .* unsupported .*vLLM's CPU backend needs AVX-512 or AVX2 on x86 \(…\); .* has SSE4\.2 at most$`, r.stdout)
	assert.NotContains(t, r.stdout, "cmake/cpu_extension.cmake", "the table drops the source")

	r = runCLI(t, withFixture(t, "nvidia-driver-no-tool", "fit", "--all", "--filter", "Llama-3.1-8B", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	require.NotEmpty(t, rows)
	assert.Equal(t, "unsupported", rows[0]["refusal"])
	assert.Contains(t, rows[0]["refusal_text"], "no kernels below compute capability 5.0 (default CMAKE_CUDA_ARCHITECTURES")
	assert.Contains(t, rows[0]["refusal_text"], "Tesla K80 has 3.7")

	r = runCLI(t, withFixture(t, "nvidia-driver-no-tool", "fit", "--all", "--filter", "Llama-3.1-8B")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "llama.cpp's CUDA builds have no kernels below compute capability 5.0 (…); Tesla K80 has 3.7")
	assert.Contains(t, r.stdout, "\n"+elidedNote+"\n")
}

// gpt-oss's mxfp4 on a TPU or Trainium is refused for the kernels it needs,
// int4's; the refusal, its Levels row and its "rejected:" line name the
// level the plan asked for, mxfp4, and why int4 is meant ("devices do not
// support int4" read as if the plan had tried int4).
func TestMXFP4RefusalNamesTheLevel(t *testing.T) {
	for _, name := range []string{"tpu-v4", "trn1-2xlarge"} {
		obj, _ := runJSON(t, withFixture(t, name, "plan", "--model", "gpt-oss-120b", "--json")...)
		require.Equal(t, false, obj["fits"], name)
		want := "devices do not support mxfp4, which needs int4 kernels"
		assert.Contains(t, obj["refusal"].(map[string]any)["text"], want, name)
		levels := obj["levels"].([]any)
		require.NotEmpty(t, levels)
		row := levels[0].(map[string]any)
		require.Equal(t, "mxfp4", row["quant"])
		assert.Contains(t, row["reason"], want, name)
		assert.Contains(t, fmt.Sprint(obj["explanation"]), "mxfp4 rejected: ", name)
		assert.NotContains(t, fmt.Sprint(obj["explanation"]), "support int4", name)
	}
}

// The training explanation writes its two parameter counts alike, each in
// its own unit: "8.03B parameters, 0.00682B trained" (LoRA) and "70.55B
// parameters, 70.6B trained" (full) mixed two precisions in one unit.
func TestTrainingExplanationCountsParametersAlike(t *testing.T) {
	obj, _ := runJSON(t, withFixture(t, "h200-vm", "train", "--model", "Llama-3.1-8B", "--method", "lora", "--json")...)
	assert.Contains(t, obj["explanation"].([]any)[0], "(8.03B parameters, 6.82M trained)")
	obj, _ = runJSON(t, withFixture(t, "dgx-h100", "train", "--model", "Llama-3.1-70B", "--method", "full", "--json")...)
	assert.Contains(t, obj["explanation"].([]any)[0], "(70.6B parameters, 70.6B trained)")
}

// A hint names the option as the user types it where they read it: the CLI
// prints --cpu-offload, --include-cpu, --engine X, --placement fewest,
// --gradient-checkpointing and --zero 3, where the library's answer (and
// --json) keeps the request's spelling. The CLI printed "cpu_offload:
// true would keep ..." to a user who has no such thing to type.
func TestHintsNameTheFlagsInTheCLI(t *testing.T) {
	for _, c := range []struct {
		fixture string
		args    []string
		want    []string
		wire    []string
	}{
		{"h200-vm", []string{"plan", "--model", "Llama-3.1-405B"},
			[]string{"--cpu-offload would keep the layers"},
			[]string{"cpu_offload: true"}},
		{"macbook-m2-max-32gb", []string{"plan", "--model", "Qwen3-30B-A3B", "--quant", "q8_0"},
			[]string{"--include-cpu would plan on host RAM"},
			[]string{"include_cpu: true"}},
		{"slimbook-hero-rtx4060-igpu", []string{"plan", "--model", "qwen2.5-7b"},
			[]string{"engine llama.cpp fits it: q5_k_m on cuda:0; plan it with --engine llama.cpp\n"},
			[]string{`"engine": "llama.cpp"`}},
		{"dgx-h100", []string{"plan", "--model", "qwen2.5-7b"},
			[]string{"; --placement fewest plans the fewest devices instead"},
			[]string{`"placement": "fewest"`}},
		{"h200-vm", []string{"train", "--model", "Llama-3.1-70B", "--method", "full"},
			[]string{"with --gradient-checkpointing and --zero 3 (ZeRO-3/FSDP)"},
			[]string{"gradient_checkpointing and zero_stage 3"}},
		{"h200-vm", []string{"train", "--model", "Llama-3.1-405B", "--method", "full"},
			[]string{"even with --gradient-checkpointing and --zero 3 it needs more than 16 devices", "only a smaller model fits it: even --method qlora and --gradient-checkpointing needs"},
			[]string{"gradient_checkpointing and zero_stage 3"}},
		{"macbook-m3-pro", []string{"train", "--model", "Qwen2.5-7B", "--method", "full", "--micro-batch", "8", "--seq-len", "32k"},
			[]string{"it fits with --method qlora, --gradient-checkpointing, --micro-batch 1 and --seq-len "},
			[]string{`"method": "qlora"`, `"micro_batch": 1`, `"seq_len": `}},
		{"dgx-spark-gb10", []string{"train", "--model", "Llama-3.1-70B", "--method", "full"},
			[]string{"it fits with --method qlora and --gradient-checkpointing ("},
			[]string{`"method": "qlora"`}},
		{"gaudi2-8", []string{"train", "--model", "Llama-3.1-8B", "--method", "full", "--num-devices", "1"},
			[]string{"on this one device it fits with --optimizer adamw_8bit and --gradient-checkpointing ("},
			[]string{`"optimizer": "adamw_8bit"`}},
		{"dgx-spark-gb10", []string{"plan", "--model", "Qwen3-235B-A22B"},
			[]string{"plan it with --engine llama.cpp and --quant q2_k"},
			[]string{`"quant": "q2_k"`}},
	} {
		r := runCLI(t, withFixture(t, c.fixture, c.args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		for _, w := range c.want {
			assert.Contains(t, r.stdout, w, c.args)
		}
		for _, w := range c.wire {
			assert.NotContains(t, r.stdout, w, c.args)
		}
		j := runCLI(t, withFixture(t, c.fixture, append(c.args, "--json")...)...)
		require.Equal(t, 0, j.code, j.stderr)
		for _, w := range c.wire {
			assert.Contains(t, strings.ReplaceAll(j.stdout, `\"`, `"`), w, "the library's answer keeps the request's spelling")
		}
	}
}

// rent's ranked lines name a plan's strategy as plan does: "one device",
// not the answer's "none" (read as "no strategy", or "no engine"), and
// "CPU offload" for cpu_offload.
func TestRentSaysOneDeviceNotNone(t *testing.T) {
	r := runCLI(t, "rent", "--model", "Llama-3.1-8B", "--provider", "lambda")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, " per million output tokens; bf16, one device\n")
	assert.NotContains(t, r.stdout, ", none\n")
}

// An engine error about a request field names the flag the user typed:
// "--context 1048576 is more than ...", not "request: context_length ...";
// --json and the library keep the field's name.
func TestEngineErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--model", "llama3.1:8b", "--context", "1m"}, "ai-hwaccel: invalid_argument: --context 1048576 is more than Llama-3.1-8B's maximum context"},
		{[]string{"plan", "--model", "llama3.1:8b", "--kv-cache", "q8_0", "--engine", "vllm"}, `ai-hwaccel: invalid_argument: --kv-cache "q8_0" is a cache type of llama.cpp, not of engine vllm`},
		{[]string{"plan", "--model", "llama3.1:8b", "--devices", "cuda:5"}, `ai-hwaccel: invalid_argument: --devices: unknown device "cuda:5"`},
	} {
		r := runCLI(t, withFixture(t, "h200-vm", c.args...)...)
		assert.Equal(t, 1, r.code, c.args)
		assert.Contains(t, r.stderr, c.want, c.args)
		assert.NotContains(t, r.stderr, "request: ", c.args)
	}
}

// An engine error names the flags of the fields it mentions anywhere in
// its text, not only the field it starts with: "--fsdp shards like ZeRO
// stage 3; --zero 2 contradicts it" read "...; zero_stage 2 contradicts
// it", "--teacher: model ... is not in the catalog" read "request:
// training.teacher: ...", and a fix it names is the flag to type
// ("use 1 or --engine vllm"). The library's message keeps the request's
// field paths (wire), which a program sending JSON reads.
func TestEngineErrorsNameEveryFlagTheyMention(t *testing.T) {
	for _, c := range []struct {
		args       []string
		want, wire string
	}{
		{[]string{"train", "--model", "8b", "--method", "full", "--fsdp", "--zero", "2"},
			"invalid_argument: --fsdp shards like ZeRO stage 3; --zero 2 contradicts it",
			"request: training.fsdp shards like ZeRO stage 3; training.zero_stage 2 contradicts it"},
		{[]string{"train", "--model", "8b", "--method", "full", "--num-devices", "3", "--tensor-parallel", "2"},
			"invalid_argument: --num-devices 3 is not a multiple of --tensor-parallel 2",
			"request: training.num_devices 3 is not a multiple of training.tensor_parallel 2"},
		{[]string{"train", "--model", "8b", "--method", "full", "--base-quant", "q4_k_m"},
			"invalid_argument: --base-quant applies to --method qlora, not full",
			`request: training.base_quant applies to "method": "qlora", not full`},
		{[]string{"train", "--model", "8b", "--method", "distillation", "--teacher", "no-such-model-1"},
			`unknown_model: --teacher: model "no-such-model-1" is not in the catalog`,
			`request: training.teacher: model "no-such-model-1" is not in the catalog`},
		{[]string{"plan", "--model", "8b", "--context", "16m", "--batch", "1000000"},
			"invalid_argument: --context 16777216 x --batch 1000000 needs about",
			"request: context_length 16777216 x batch_size 1000000 needs about"},
		{[]string{"plan", "--model", "llama-3.1-8b", "--engine", "llama.cpp", "--tensor-parallel-size", "2"},
			`llama.cpp splits layers, not tensors, across devices; use 1 or --engine vllm`,
			`llama.cpp splits layers, not tensors, across devices; use 1 or "engine": "vllm"`},
	} {
		r := runCLI(t, withFixture(t, "h200-vm", c.args...)...)
		assert.Equal(t, 1, r.code, c.args)
		assert.Contains(t, r.stderr, c.want, c.args)
		for _, wire := range []string{"request: ", "training.", "zero_stage", "_size", "batch_size", `"engine"`, `"method"`} {
			assert.NotContains(t, r.stderr, wire, c.args)
		}
		j := runCLI(t, withFixture(t, "h200-vm", append(c.args, "--json")...)...)
		assert.Equal(t, 1, j.code, c.args)
		assert.Contains(t, libraryMessage(t, c.args), c.wire, "the library's message keeps the request's field paths")
	}
}

// libraryMessage is the error message the library answers to the request
// the command sends for args (on the h200-vm fixture).
func libraryMessage(t *testing.T, args []string) string {
	t.Helper()
	var body []byte
	var out, errOut bytes.Buffer
	a := testApp(&out, &errOut)
	a.sent = func(kind string, b []byte) {
		if kind == "planning" {
			body = b
		}
	}
	a.run(withFixture(t, "h200-vm", args...))
	require.NotNil(t, body, "%v sent no planning request: %s", args, errOut.String())
	entry := map[string]func(context.Context, []byte, api.Env) []byte{"plan": api.PlanSharding, "train": api.EstimateTraining}[args[0]]
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(entry(context.Background(), body, api.NoEnv), &e))
	return e.Error.Message
}

// A count above what the request contract allows (schema/request.schema.json
// maxima: training.micro_batch, lora_rank, num_devices and tensor_parallel
// 65536, seq_len and context_length 16 Mi, batch_size 1 Mi) is a usage
// error naming the flag and its largest value, like --zero 4; the command
// sent such requests, which the library answered "request:
// training.micro_batch 100000000 is outside [1, 65536]".
func TestCountFlagsAboveTheContractAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--model", "8b", "--method", "full", "--micro-batch", "100000000"}, "--micro-batch must be 1-65536, got 100000000"},
		{[]string{"train", "--model", "8b", "--method", "lora", "--lora-rank", "100000"}, "--lora-rank must be 1-65536, got 100000"},
		{[]string{"train", "--model", "8b", "--method", "full", "--num-devices", "100000"}, "--num-devices must be 1-65536, got 100000"},
		{[]string{"train", "--model", "8b", "--method", "full", "--tensor-parallel", "100000"}, "--tensor-parallel must be 1-65536, got 100000"},
		{[]string{"train", "--model", "8b", "--method", "full", "--seq-len", "32m"}, "--seq-len must be 1-16777216, got 33554432"},
		{[]string{"plan", "--model", "8b", "--context", "32m"}, "--context must be 1-16777216, got 33554432"},
		{[]string{"plan", "--model", "8b", "--batch", "2m"}, "--batch must be 1-1048576, got 2097152"},
		// Above 2^31 the count read "must be a whole number >= 1", which it is.
		{[]string{"plan", "--model", "8b", "--context", "99999999999"}, "--context must be 1-16777216, got 99999999999"},
		{[]string{"suggest", "--model", "8b", "--batch", "99999999999"}, "--batch must be 1-1048576, got 99999999999"},
		{[]string{"train", "--model", "8b", "--method", "full", "--seq-len", "99999999999"}, "--seq-len must be 1-16777216, got 99999999999"},
		{[]string{"fit", "--context", "99999999999"}, "--context must be 1-16777216, got 99999999999"},
		{[]string{"fit", "--context", "32m"}, "--context must be 1-16777216, got 33554432"},
	} {
		r := runCLI(t, withFixture(t, "h200-vm", c.args...)...)
		assert.Equal(t, 2, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, "ai-hwaccel: usage: "+c.want, c.args)
	}
}

// A whole-number flag given something else said "parse error" (the flag
// package's words), naming neither the value nor what was wanted.
func TestWholeNumberFlagsSayWhatTheyWant(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--model", "8b", "--method", "lora", "--lora-rank", "abc"}, `--lora-rank: "abc" is not a whole number`},
		{[]string{"train", "--model", "8b", "--method", "full", "--num-devices", "1.5"}, `--num-devices: "1.5" is not a whole number`},
		{[]string{"train", "--model", "8b", "--method", "full", "--zero", "two"}, `--zero: "two" is not a whole number`},
		{[]string{"train", "--model", "8b", "--method", "full", "--tensor-parallel", "99999999999999999999"}, `--tensor-parallel: "99999999999999999999" is out of range`},
	} {
		r := runCLI(t, withFixture(t, "h200-vm", c.args...)...)
		assert.Equal(t, 2, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, "ai-hwaccel: usage: "+c.want, c.args)
	}
}

// The Room line gives the exact longest context the devices hold
// (max_context_length, kept exact in --json), and where the command runs a
// chosen context below it, says why the two numbers differ: a chosen
// context is that maximum rounded down to a multiple of 256 (llama.cpp's
// --fit step, internal/plan/fitcontext.go). A user saw "context up to
// 57671 tokens" beside "-c 57600" with nothing joining them.
func TestRoomSaysWhyTheCommandsContextIsShorter(t *testing.T) {
	for _, c := range []struct {
		fixture string
		args    []string
		room    string
		max     float64
	}{
		// --quant fp16: the level these figures were read at (quant auto
		// now takes the published Q8_0 file).
		{"macbook-m3-pro", []string{"plan", "--model", "Llama-3.1-8B", "--quant", "fp16"},
			"Room: context up to 57671 tokens (the command's -c 57600 is that rounded down to a multiple of 256, as llama.cpp's --fit rounds); up to 1 sequence at once\n", 57671},
		{"macbook-m3-pro", []string{"plan", "--model", "Llama-3.1-8B", "--quant", "fp16", "--batch", "4"},
			"Room: context up to 14417 tokens (the command's -c 57344 gives each of its 4 sequences 14336: that rounded down to a multiple of 256, as llama.cpp's --fit rounds); up to 4 sequences at once\n", 14417},
		{"nvidia-mig", []string{"plan", "--model", "google/gemma-3-27b-it", "--engine", "vllm"},
			"Room: context up to 59280 tokens (the command's --max-model-len 59136 is that rounded down to a multiple of 256); up to 1 sequence at once\n", 59280},
		// A context the user gave is theirs: the maximum is room beyond it.
		{"macbook-m3-pro", []string{"plan", "--model", "Llama-3.1-8B", "--quant", "fp16", "--context", "8k"},
			"Room: context up to 57671 tokens; up to 7 sequences at once\n", 57671},
	} {
		r := runCLI(t, withFixture(t, c.fixture, c.args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, c.room, c.args)
		obj, _ := runJSON(t, withFixture(t, c.fixture, append(c.args, "--json")...)...)
		assert.Equal(t, c.max, obj["max_context_length"], c.args)
	}
}

// A --draft-model the catalog does not know is that flag's error: the
// command blamed the plan's own model ("--model "llama-3.1-8b" is not a
// size like 70b, not a model the catalog knows ... (model "llama-3.2-1x"
// is not in the catalog; did you mean Llama-3.2-1B ...)"), a catalog name
// it had just resolved, because the library's message did not say which
// member it was about; it now reads "request: draft_model: model ...", as
// training.teacher's does.
func TestUnknownDraftModelIsTheDraftsError(t *testing.T) {
	args := []string{"plan", "--model", "llama-3.1-8b", "--draft-model", "llama-3.2-1x"}
	r := runCLI(t, withFixture(t, "h200-vm", args...)...)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, `ai-hwaccel: unknown_model: --draft-model: model "llama-3.2-1x" is not in the catalog; did you mean Llama-3.2-1B`)
	assert.NotContains(t, r.stderr, `--model "llama-3.1-8b"`)
	assert.Contains(t, libraryMessage(t, args), `request: draft_model: model "llama-3.2-1x" is not in the catalog`)

	// The plan's own unknown model is still --model's usage error.
	r = runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "llama-3.1-8x", "--draft-model", "llama-3.2-1b")...)
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, `ai-hwaccel: usage: --model "llama-3.1-8x" is not a size like 70b`)
}

// --table marks a device that cannot be used "(unavailable)" and says why
// (the registry's unavailable_reason), devices with one reason together:
// the MIG fixture's parent H100 and the ZimaOS Arc Pro B70 with no driver
// bound printed "(unavailable)" above "Warnings: none", with no reason
// anywhere in the text.
func TestTableSaysWhyADeviceIsUnavailable(t *testing.T) {
	for _, c := range []struct{ fixture, want string }{
		{"nvidia-mig", "\nUnavailable:\n  cuda:0: MIG mode enabled: work runs on its MIG instances, listed as devices\n"},
		{"zimaos-arc-pro-b70-unbound", "\nUnavailable:\n  intel_gpu:0: no kernel driver bound\n"},
		{"mi300x-8-cpx", "\nUnavailable:\n  rocm:0-6: compute partition mode CPX: work runs on its 8 partitions, listed as devices\n" +
			"  rocm:7: compute partition mode CPX: work runs on its 7 partitions, listed as devices\n"},
	} {
		r := runCLI(t, withFixture(t, c.fixture, "--table")...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, c.want, c.fixture)
	}
	r := runCLI(t, withFixture(t, "h200-vm", "--table")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "Unavailable", "no section when every device is available")
}

// fit --all's WHY column printed "device(s)", then "does not fit split
// over the 1 metal_gpu (apple) device"; on one device the engine's refusal
// now says what that device has and what the engine may use of it.
func TestFitWhySaysOneDevice(t *testing.T) {
	r := runCLI(t, withFixture(t, "macbook-m3-pro", "fit", "--all", "--filter", "falcon-40b")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `int4 needs [0-9.]+ GiB on one device \(…\) and the one metal_gpu \(apple\) device has [0-9.]+ GiB usable, of which llama.cpp may use [0-9.]+ GiB under --fit-target 1024\n`, r.stdout)
	assert.NotContains(t, r.stdout, "(s)")
	assert.NotContains(t, r.stdout, "split over the 1 ")
}

// fit with a --filter no catalog model matches says so, as models does,
// instead of "No catalog model fits (ai-hwaccel fit --all lists them ...)",
// which even --all printed, listing nothing.
func TestFitFilterMatchingNothingSaysSo(t *testing.T) {
	for _, args := range [][]string{{"fit", "--filter", "zzz"}, {"fit", "--all", "--filter", "zzz"}} {
		r := runCLI(t, withFixture(t, "h200-vm", args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "No catalog model matches \"zzz\" (ai-hwaccel models lists the catalog).\n", r.stdout, args)
	}
	// A filter that matches only models too large still points at --all.
	r := runCLI(t, withFixture(t, "cpu-only", "fit", "--filter", "Kimi-K2-Instruct")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "No catalog model fits (ai-hwaccel fit --all lists them")
}

// --engine takes its name in any case (the engine's rule), and the text
// then prints that engine's command: "--engine LLAMA.CPP" planned for
// llama.cpp but printed no "run:" and no Engine commands, looking its
// arguments up under "LLAMA.CPP".
func TestEngineNameInAnyCasePrintsItsCommand(t *testing.T) {
	r := runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "Qwen3-235B-A22B", "--engine", "LLAMA.CPP")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "; run: CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0 llama-server ")
	assert.Contains(t, r.stdout, "\nEngine commands:\n  llama.cpp: ")
	r = runCLI(t, "rent", "--model", "Llama-3.1-8B", "--provider", "lambda", "--engine", "VLLM")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "vllm serve ")
}

// A flag given without its value takes the next flag as its value; the
// command then said "unexpected argument "8k"" of 'plan --model --context
// 8k', pointing at the wrong word. It now names the flag that has no value.
func TestFlagWithoutValueSaysSo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--model", "--context", "8k"}, `--model has no value: it took the flag "--context" as its value`},
		{[]string{"train", "--model", "8b", "--method", "--zero", "3"}, `--method has no value: it took the flag "--zero" as its value`},
		{[]string{"plan", "--model", "8b", "--devices", "--json"}, `--devices has no value: it took the flag "--json" as its value`},
	} {
		r := runCLI(t, withFixture(t, "h200-vm", c.args...)...)
		assert.Equal(t, 2, r.code, c.args)
		assert.Contains(t, r.stderr, "ai-hwaccel: usage: "+c.want, c.args)
	}
	// A value that only starts with a dash is a value.
	r := runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "8b", "--context", "-5")...)
	assert.Contains(t, r.stderr, `--context: "-5" is not a count`)
}

// A registry written by hand for a machine the user does not have, with
// "available": false on an 80 GiB GPU, was planned as "cannot tell whether
// it fits: no available device with known memory"; the refusal now names
// the devices with memory it left out as unavailable and why. Without the
// member, which the schema requires, the registry is refused with the
// member named (it was read as false).
func TestNoDeviceRefusalNamesTheUnavailableDevices(t *testing.T) {
	file := filepath.Join(t.TempDir(), "registry.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"schema_version":1,"devices":[{"id":"cuda:0","kind":"cuda_gpu","name":"H100","available":false,"memory_bytes":85899345920}]}`), 0o600))
	r := runCLI(t, "plan", "--model", "8b", "--registry", file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `no available device with known memory; left out as unavailable: cuda:0 (the registry's "available" is false, and it gives no unavailable_reason)`)
	r = runCLI(t, "train", "--model", "8b", "--method", "lora", "--registry", file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `no available device with known memory; left out as unavailable: cuda:0 (the registry's "available" is false`)

	missing := filepath.Join(t.TempDir(), "registry.json")
	require.NoError(t, os.WriteFile(missing, []byte(`{"schema_version":1,"devices":[{"id":"cuda:0","kind":"cuda_gpu","name":"H100","memory_bytes":85899345920}]}`), 0o600))
	for _, cmd := range []string{"plan", "suggest", "fit"} {
		args := []string{cmd, "--registry", missing}
		if cmd != "fit" {
			args = append(args, "--model", "8b")
		}
		r = runCLI(t, args...)
		assert.Equal(t, 1, r.code, cmd)
		assert.Contains(t, r.stderr, `invalid_argument: registry: devices[0].available is missing`, cmd)
	}

	// A detected machine's reason is the detection's.
	r = runCLI(t, withFixture(t, "v100-pcie-nouveau-era-no-driver", "plan", "--model", "8b")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "no available device with known memory; left out as unavailable: cuda:0, cuda:1 (no driver bound)")
}

// An unknown model's message tells a CLI user what to type: the library's
// "give params, config or path instead" names request members, which the
// command has none of; the CLI reads "give a size (70b), a catalog name
// (ai-hwaccel models) or a model file instead", and --model's own usage
// error, which says as much before it, drops it.
func TestUnknownModelHintNamesWhatToType(t *testing.T) {
	r := runCLI(t, withFixture(t, "h200-vm", "train", "--model", "8b", "--method", "distillation", "--teacher", "no-such-1")...)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `--teacher: model "no-such-1" is not in the catalog; give a size (70b), a catalog name (ai-hwaccel models) or a model file instead`)
	r = runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "nosuchmodel")...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `(model "nosuchmodel" is not in the catalog)`)
	for _, r := range []result{r, runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "./nope.gguf")...)} {
		assert.NotContains(t, r.stderr, "params, config or path")
	}
}

// rent with a --max-price no machine type meets said "No catalog machine
// runs 8b within the filters (0 types left out; --json lists why)": the
// types dropped by the price and provider filters are not planned, so
// "0 left out" read as if every type had been tried, and --json listed
// nothing. The headline now says that no type is within those filters.
func TestRentWithNoTypeWithinTheFiltersSaysSo(t *testing.T) {
	r := runCLI(t, "rent", "--model", "8b", "--max-price", "0.1")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "No catalog machine type is within --max-price and --provider, so none was planned for 8b.\n\n", r.stdout)
	// Types planned and refused are still counted.
	r = runCLI(t, "rent", "--model", "Kimi-K2-Instruct", "--provider", "lambda", "--max-price", "2")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^No catalog machine runs Kimi-K2-Instruct within the filters \([1-9][0-9]* types? left out; --json lists why\)\.\n`, r.stdout)
}

// --batch said "batch size", which a user reads as tokens, a vLLM
// --max-num-seqs or a training batch alike; its help says what the engine
// plans: sequences served at once, each as long as --context (train: the
// sequences per device per step, the --micro-batch default).
func TestBatchHelpSaysSequences(t *testing.T) {
	for cmd, want := range map[string]string{
		"plan":    "sequences served at once, each up to --context tokens",
		"suggest": "sequences served at once, each up to --context tokens",
		"rent":    "sequences served at once, each up to --context tokens",
		"train":   "sequences per device per step (the --micro-batch default)",
	} {
		r := runCLI(t, cmd, "--help")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, want, cmd)
		assert.NotContains(t, r.stdout, "batch size, N", cmd)
	}
}

// A PATH entry that is not absolute is never searched for vendor tools
// (internal/detect/machine/runner_exec.go: resolution must not depend on
// the working directory), so PATH=testdata/machines/dgx-spark-gb10/bin:$PATH
// detected the GB10 without its nvidia-smi, "nvidia-smi is not installed",
// and no word said why. The command now says so on stderr and names
// --path, which resolves such entries; nothing is said when --path,
// --snapshot or --no-exec decides, when a registry is given instead of a
// detection, for --version, or when every entry is absolute.
func TestRelativePathEntriesAreNamed(t *testing.T) {
	root := filepath.Join(machinesDir(t), "dgx-spark-gb10", "root")
	run := func(path string, args ...string) result {
		var out, errOut bytes.Buffer
		a := testApp(&out, &errOut)
		a.getenv = func(name string) (string, bool) {
			if name == "PATH" {
				return path, true
			}
			return "", false
		}
		code := a.run(args)
		return result{code, out.String(), errOut.String()}
	}
	const note = "ai-hwaccel: note: PATH entries that are not absolute are not searched for vendor tools: testdata/machines/dgx-spark-gb10/bin, bin; give them with --path, which makes them absolute\n"
	r := run("testdata/machines/dgx-spark-gb10/bin:/usr/bin:bin", "--table", "--sysroot", root)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, note, r.stderr)
	r = run("testdata/machines/dgx-spark-gb10/bin:/usr/bin:bin", "plan", "--model", "8b", "--sysroot", root)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, note, r.stderr)

	registry := filepath.Join(t.TempDir(), "registry.json")
	require.NoError(t, os.WriteFile(registry, []byte(`{"devices":[{"kind":"cuda_gpu","available":true,"memory_bytes":85899345920}]}`), 0o600))
	for _, args := range [][]string{
		{"--table", "--sysroot", root, "--path", "/usr/bin"},
		{"--table", "--sysroot", root, "--no-exec"},
		{"plan", "--model", "8b", "--registry", registry},
		{"rent", "--model", "8b", "--provider", "aws"},
		{"--version"},
	} {
		r = run("testdata/machines/dgx-spark-gb10/bin:/usr/bin", args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		assert.Empty(t, r.stderr, args)
	}
	r = run("/usr/local/bin:/usr/bin", "--table", "--sysroot", root)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
}

// suggest plans the fewest devices that hold the model; its "plan it:"
// command asks plan for the same (--placement fewest) where plan's default
// would join idle identical devices, so the command plans what the line
// says. Before, on dgx-h100 'suggest --model Llama-3.1-70B --engine
// llama.cpp' said "fits NVIDIA H100 80GB HBM3 (cuda:0) at q8_0 ..., one
// device; plan it: ai-hwaccel plan ... --quant q8_0", and that command
// planned two H100s at 131072. A machine with one such device (an Apple
// GPU, whose CPU shares its name) and a request naming devices keep the
// command as it was.
func TestSuggestPlanItCommandPlansTheSuggestedDevices(t *testing.T) {
	r := runCLI(t, withFixture(t, "dgx-h100", "suggest", "--model", "Llama-3.1-70B", "--engine", "llama.cpp")...)
	require.Equal(t, 0, r.code, r.stderr)
	head := strings.SplitN(r.stdout, "\n", 2)[0]
	require.Contains(t, head, "fits NVIDIA H100 80GB HBM3 (cuda:0) at q8_0")
	require.Contains(t, head, " --placement fewest --quant q8_0")
	cmd := strings.Fields(head[strings.Index(head, "plan it: ai-hwaccel ")+len("plan it: ai-hwaccel "):])
	p, _ := runJSON(t, append(cmd, "--json")...)
	assert.Equal(t, "q8_0", p["quant"])
	assert.Len(t, p["shards"], 1, "the command plans the one device the line names")

	mac := runCLI(t, withFixture(t, "macbook-m3-pro", "suggest", "--model", "Llama-3.1-8B")...)
	require.Equal(t, 0, mac.code, mac.stderr)
	assert.NotContains(t, mac.stdout, "--placement")
	named := runCLI(t, withFixture(t, "dgx-h100", "suggest", "--model", "70b", "--devices", "cuda:0-3")...)
	require.Equal(t, 0, named.code, named.stderr)
	assert.NotContains(t, named.stdout, "--placement")
}

// fit without --all said "No catalog model fits" where no row could be told
// (every row fits null: no available device's memory is known, as on a GCE
// A100 whose driver is not loaded), which claims a "no" the engine never
// gave. It says now that it cannot tell, and why.
func TestFitWithNoDeviceMemorySaysItCannotTell(t *testing.T) {
	r := runCLI(t, withFixture(t, "gce-a100-sxm4-no-driver", "fit")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "No catalog model fits")
	assert.Contains(t, r.stdout, "Cannot tell which catalog models fit: no available device with known memory")
	assert.Contains(t, r.stdout, "a registry with their memory_bytes plans on them")
	assert.Contains(t, r.stdout, "ai-hwaccel fit --all lists them")
	// --all still lists every row as unknown.
	r = runCLI(t, withFixture(t, "gce-a100-sxm4-no-driver", "fit", "--all")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "unknown")
	assert.NotContains(t, r.stdout, "Cannot tell")
}

// noFitLine says "No catalog model fits" only where some row was told
// no; where some rows were told no and others could not be, it says how many
// could not.
func TestNoFitLineCountsTheRowsItCannotTell(t *testing.T) {
	unknown := catalogq.FitRow{Model: "a", Fits: plan.FitUnknown, RefusalText: "no available device with known memory"}
	refused := catalogq.FitRow{Model: "b", Fits: plan.FitNo, Refusal: "insufficient_memory", RefusalText: "too large"}
	fits := catalogq.FitRow{Model: "c", Fits: plan.FitYes}
	assert.Equal(t, "", noFitLine([]catalogq.FitRow{fits, unknown}))
	assert.Equal(t, "No catalog model fits (ai-hwaccel fit --all lists them with the reason in plan).", noFitLine([]catalogq.FitRow{refused}))
	assert.Equal(t, "Cannot tell which catalog models fit: no available device with known memory (ai-hwaccel fit --all lists them).", noFitLine([]catalogq.FitRow{unknown, unknown}))
	assert.Equal(t, "No catalog model is known to fit: 1 of 2 cannot be told (ai-hwaccel fit --all lists them with the reason in plan).", noFitLine([]catalogq.FitRow{refused, unknown}))
}

// A model given by its size names no checkpoint, so no command runs any
// choice: the headline said "no command: ..." while the JSON choices had no
// no_command and the ranked lines said nothing (schema/rent.schema.json and
// docs/rent.md say a choice whose command cannot run as printed says so).
func TestRentBySizeSaysNoCommandInEveryChoice(t *testing.T) {
	r := runCLI(t, "rent", "--model", "70b", "--provider", "lambda")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "\n  no command: no published checkpoint of this model is known")
	ranked := 0
	for _, line := range strings.Split(r.stdout, "\n") {
		if len(line) > 4 && strings.HasPrefix(strings.TrimSpace(line), fmt.Sprint(ranked+1)+". ") {
			ranked++
			assert.True(t, strings.HasSuffix(line, "; no command: no published checkpoint of this model is known; name one to get the command"), line)
		}
	}
	assert.Positive(t, ranked, r.stdout)
	obj, _ := runJSON(t, "rent", "--model", "70b", "--provider", "lambda", "--json")
	choices, _ := obj["choices"].([]any)
	require.NotEmpty(t, choices)
	for _, c := range choices {
		assert.Equal(t, "no published checkpoint of this model is known; name one to get the command", c.(map[string]any)["no_command"], c)
	}
}
