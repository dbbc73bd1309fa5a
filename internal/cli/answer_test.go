package cli

import (
	"bytes"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// A plan answer shaped like the DGX H100 fixture's answer for
// Llama-3.3-70B (cmd/ai-hwaccel tests check the real one): the headline
// comes first, sizes are in GiB, parameters in B, no raw key is printed
// (a key the answer type lacks is not read).
const planFits = `{"fits":true,"strategy":"tensor_parallel","quant":"bf16",
"model":{"name":"Llama-3.3-70B-Instruct","params":70553706496,"active_params":70553706496,"layers":80,"source":"catalog: x"},
"memory":{"weights_bytes":141107412992,"kv_cache_bytes":1342177280,"activations_bytes":858993459,"overhead_bytes":1610612736,"total_bytes":144959196467},
"shards":[{"device_id":"cuda:0","layer_start":0,"layer_end":80,"memory_bytes":72479598233,"memory_available_bytes":85045805056,"stage":0,"tp_rank":0},
          {"device_id":"cuda:1","layer_start":0,"layer_end":80,"memory_bytes":72479598233,"memory_available_bytes":85045805056,"stage":0,"tp_rank":1}],
"tp_size":2,"pp_size":1,
"throughput":{"decode_tokens_per_s":28.49,"prefill_tokens_per_s":2791.2,"bound":"memory_bandwidth","validated_on":"not validated: the speed model is fitted on llama.cpp; no vllm measurement checks it","prefill_validated_on":"not validated: tensor parallelism, which no prompt row measures","assumptions":["the KV cache of 4096 token(s) x 1 sequence(s)"]},
"engine_args":{"vllm":["--tensor-parallel-size","2","--max-model-len","4096"]},
"engine_expect":{"vllm":{"model_loading_gib":65.71,"kv_cache_gib":12.34,"kv_cache_tokens":80880,"max_concurrency":19.75,"source":"x"}},
"max_context_length":80884,"max_batch_size":19,
"levels":[{"quant":"bf16","total_bytes":143666585600,"fits":true,"strategy":"tensor_parallel"},
          {"quant":"fp32","total_bytes":287333171200,"fits":false,"reason":"doesn't fit: fp32 needs 267.6 GiB"}],
"explanation":["fp32 rejected: doesn't fit: fp32 needs 267.6 GiB","bf16 fits"],"warnings":[],"future_field":"kept"}`

func TestWritePlanHeadlineFirst(t *testing.T) {
	var b bytes.Buffer
	info := AnswerInfo{Model: "llama-3.3-70b", ServeModel: "meta-llama/Llama-3.3-70B-Instruct",
		DeviceNames: map[string]string{"cuda:0": "NVIDIA H100 80GB HBM3", "cuda:1": "NVIDIA H100 80GB HBM3"}}
	require.NoError(t, WritePlan(&b, []byte(planFits), info))
	assert.Equal(t, `Llama-3.3-70B-Instruct fits 2x NVIDIA H100 80GB HBM3 (cuda:0-1): tensor parallel 2, bf16, KV room about 79k tokens (19 sequences of 4096); run: vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 2 --max-model-len 4096

Model: Llama-3.3-70B-Instruct, 70.6B parameters, 80 layers
  source: catalog: x
Memory (bf16, 2 devices): 135.0 GiB = weights 131.4 GiB + KV cache 1.2 GiB + activations 0.8 GiB + runtime overhead 1.5 GiB
Room: context up to 80884 tokens; up to 19 sequences at once
Shards:
  DEVICE  NAME                   LAYERS  STAGE  TP RANK  MEMORY    AVAILABLE
  cuda:0  NVIDIA H100 80GB HBM3  0-79    0      0        67.5 GiB  79.2 GiB
  cuda:1  NVIDIA H100 80GB HBM3  0-79    0      1        67.5 GiB  79.2 GiB
Throughput: decode 28.5 tokens/s per sequence (bound by memory bandwidth), prefill 2791 tokens/s
  Validated on: not validated: the speed model is fitted on llama.cpp; no vllm measurement checks it
  Prefill validated on: not validated: tensor parallelism, which no prompt row measures
  - the KV cache of 4096 tokens x 1 sequence
Engine commands:
  vllm: vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 2 --max-model-len 4096
Levels:
  QUANT  ON ONE DEVICE  FITS  STRATEGY         REASON
  bf16   133.8 GiB      yes   tensor parallel
  fp32   267.6 GiB      no    —                fp32 needs 267.6 GiB
Explanation:
  - bf16 fits
Warnings: none
`, b.String())
}

// TestWritePlanHeadlineSpeedOnlyWhenValidated: the headline states a speed
// only when the throughput names a measured set (validated_on), not when it
// says "not validated" (planFits, a vLLM plan) or says nothing.
func TestWritePlanHeadlineSpeedOnlyWhenValidated(t *testing.T) {
	info := AnswerInfo{Model: "llama-3.3-70b", DeviceNames: map[string]string{"cuda:0": "H100", "cuda:1": "H100"}}
	headline := func(ans string) string {
		var b bytes.Buffer
		require.NoError(t, WritePlan(&b, []byte(ans), info))
		return strings.SplitN(b.String(), "\n", 2)[0]
	}
	measured := strings.Replace(planFits, `"validated_on":"not validated: the speed model is fitted on llama.cpp; no vllm measurement checks it"`,
		`"validated_on":"llama.cpp rows of internal/calibration/data (docs/accuracy.md): NVIDIA HBM GPUs (A100, H100 PCIe, H200), float weights"`, 1)
	require.NotEqual(t, planFits, measured)
	assert.Contains(t, headline(measured), "about 28.5 tokens/s")
	assert.NotContains(t, headline(planFits), "tokens/s")
	silent := strings.Replace(planFits, `"validated_on":"not validated: the speed model is fitted on llama.cpp; no vllm measurement checks it",`, "", 1)
	require.NotEqual(t, planFits, silent)
	assert.NotContains(t, headline(silent), "tokens/s")
}

func TestWritePlanThatDoesNotFit(t *testing.T) {
	ans := `{"fits":false,"strategy":"none","quant":"int4","model":{"params":700000000000,"layers":130,"source":"params only"},
	"memory":{"weights_bytes":360000000000,"kv_cache_bytes":2147483648,"activations_bytes":1000000000,"overhead_bytes":1278852608,"total_bytes":364426336256},"shards":[],"tp_size":0,"pp_size":0,"engine_args":{},
	"levels":[{"quant":"int4","total_bytes":364426336256,"fits":false,"reason":"doesn't fit: int4 needs 339.4 GiB over the 1 cuda_gpu (nvidia) device(s)"},
	          {"quant":"int8","total_bytes":764426336256,"fits":false,"reason":"doesn't fit: int8 needs 711.9 GiB"},
	          {"quant":"fp8","total_bytes":764426336256,"fits":false,"reason":"doesn't fit: int8 needs 711.9 GiB"}],
	"refusal":{"code":"insufficient_memory","text":"int4 needs 339.4 GiB over the 1 cuda_gpu (nvidia) device(s)"},
	"explanation":["int4 rejected: doesn't fit: int4 needs 339.4 GiB over the 1 cuda_gpu (nvidia) device(s)",
	"does not fit: int4 needs 339.4 GiB over the 1 cuda_gpu (nvidia) device(s)"],"warnings":["w"]}`
	var b bytes.Buffer
	require.NoError(t, WritePlan(&b, []byte(ans), AnswerInfo{Model: "700b"}))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "700b does not fit: int4 needs 339.4 GiB over the 1 cuda_gpu (nvidia) device\n"), out)
	// No fake quant, strategy or memory of a plan that does not exist;
	// the memory the answer states is what the refused level needs.
	for _, fake := range []string{"Memory (", "Shards", "tensor parallel", "strategy", "Engine"} {
		assert.NotContains(t, out, fake)
	}
	assert.Contains(t, out, "\nMemory needed (int4, as on one device): 339.4 GiB = weights 335.3 GiB + KV cache 2.0 GiB + activations 0.9 GiB + runtime overhead 1.2 GiB\nLevels:\n")
	// Each reason once: the headline's is "see above" in the table, a
	// repeated one is "same as", the explanation drops both.
	assert.Contains(t, out, "  int4   339.4 GiB      no    —         see above\n")
	assert.Contains(t, out, "  int8   711.9 GiB      no    —         int8 needs 711.9 GiB\n")
	assert.Contains(t, out, "  fp8    711.9 GiB      no    —         same as int8\n")
	assert.Contains(t, out, "\nExplanation: none\n")
	assert.Equal(t, 1, strings.Count(out, "339.4 GiB over"), out)
	assert.NotContains(t, out, "(s)")
}

func TestWriteSuggestionAndTraining(t *testing.T) {
	names := map[string]string{"cuda:0": "NVIDIA H100 80GB HBM3"}
	sug := `{"quant":"fp8","fits":true,"devices":["cuda:0"],"memory":{"weights_bytes":1,"total_bytes":75268195123},
	"levels":[{"quant":"bf16","total_bytes":150000000000,"fits":false,"reason":"doesn't fit: too big"},
	          {"quant":"fp8","total_bytes":75268195123,"fits":true,"strategy":"none"}],
	"explanation":["bf16 rejected: doesn't fit: too big"],"warnings":[]}`
	var b bytes.Buffer
	require.NoError(t, WriteSuggestion(&b, []byte(sug), AnswerInfo{Model: "70b", DeviceNames: names, PlanCommand: "ai-hwaccel plan --model 70b"}))
	assert.True(t, strings.HasPrefix(b.String(),
		"70b fits NVIDIA H100 80GB HBM3 (cuda:0) at fp8: 70.1 GiB, one device; plan it: ai-hwaccel plan --model 70b --quant fp8\n\n"), b.String())
	assert.Equal(t, 1, strings.Count(b.String(), "too big"))

	// A refusal names the levels it tried, not "any precision": on a DGX
	// Spark Qwen3-235B-A22B refused bf16 to int4 while llama.cpp's lower
	// GGUF types (q3_k_m) fit, which the explanation's last line names.
	noFit := `{"fits":false,"devices":[],"memory":{"total_bytes":1},
	"levels":[{"quant":"bf16","total_bytes":150000000000,"fits":false,"reason":"doesn't fit: too big"},
	          {"quant":"int4","total_bytes":75268195123,"fits":false,"reason":"doesn't fit: still too big"}],
	"refusal":{"code":"insufficient_memory","text":"still too big"},
	"explanation":["does not fit: still too big"],"warnings":[]}`
	b.Reset()
	require.NoError(t, WriteSuggestion(&b, []byte(noFit), AnswerInfo{Model: "70b", DeviceNames: names}))
	assert.True(t, strings.HasPrefix(b.String(), "70b does not fit at bf16 to int4: still too big\n"), b.String())

	train := `{"fits":true,"method":"lora","optimizer":"adamw","precision":"bf16","seq_len":4096,"micro_batch":1,
	"gradient_checkpointing":true,"zero_stage":2,"num_devices":1,"tensor_parallel":1,"params":8030261248,"trainable_params":3407872,
	"per_device":{"weights_bytes":16060522496,"gradients_bytes":6815744,"optimizer_bytes":27262976,"activations_bytes":1073741824,
	"frozen_models_bytes":0,"overhead_bytes":858993459,"total_bytes":18027336499},
	"devices":[{"device_id":"cuda:0","memory_available_bytes":85045805056}],"max_micro_batch":12,"explanation":[],"warnings":[]}`
	b.Reset()
	require.NoError(t, WriteTraining(&b, []byte(train), AnswerInfo{Model: "Llama-3.1-8B", DeviceNames: names}))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "Llama-3.1-8B lora training fits NVIDIA H100 80GB HBM3 (cuda:0): 16.8 GiB per device, micro-batch up to 12\n\n"), out)
	assert.Contains(t, out, "\nParallelism: 1 device, ZeRO stage 2, gradient checkpointing\n")
	assert.Contains(t, out, "\nParameters: 8B, 3.4M trained\n")
	assert.NotContains(t, out, "8030261248")

	// A setup that fits with other options names the flags that set them.
	notFit := `{"fits":false,"method":"full","optimizer":"adamw","precision":"bf16","seq_len":4096,"micro_batch":1,
	"gradient_checkpointing":false,"zero_stage":0,"num_devices":8,"tensor_parallel":1,"params":8030261248,"trainable_params":8030261248,
	"per_device":{"total_bytes":156547891200},"devices":[{"device_id":"cuda:0","memory_available_bytes":85045805056}],"max_micro_batch":0,
	"fits_with":{"gradient_checkpointing":false,"zero_stage":3,"per_device_bytes":44129894400},
	"refusal":{"code":"insufficient_memory","text":"145.8 GiB per device, the smallest of 8 devices has 79.2 GiB"},
	"explanation":["does not fit: 145.8 GiB per device, the smallest of 8 devices has 79.2 GiB"],"warnings":[]}`
	b.Reset()
	require.NoError(t, WriteTraining(&b, []byte(notFit), AnswerInfo{Model: "Llama-3.1-8B", DeviceNames: names}))
	assert.Contains(t, b.String(), "\nFits with: --zero 3, 41.1 GiB per device\n")
	assert.NotContains(t, b.String(), "fits_with")
}

func TestEngineLineQuotesForTheShell(t *testing.T) {
	assert.Equal(t, "llama-server -m '/models/my model.gguf' -ngl 81 --tensor-split 40,41",
		engineLine("llama.cpp", []string{"-ngl", "81", "--tensor-split", "40,41"}, facts{}, AnswerInfo{ModelFile: "/models/my model.gguf"}))
	assert.Equal(t, "vllm serve '/models/my model'", engineLine("vllm", nil, facts{}, AnswerInfo{ServeModel: "/models/my model"}))
	assert.Equal(t, `'it'\''s'`, ShellWord("it's"))
	assert.Equal(t, "''", ShellWord(""))
}

// The engine command names what the answer loads and the environment it
// needs, so it can be pasted as is (issue 12 item 3).
func TestEngineLineLoadsTheCheckpoint(t *testing.T) {
	env := map[string]string{"CUDA_VISIBLE_DEVICES": "2,3", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
	assert.Equal(t, "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,3 vllm serve openai/gpt-oss-120b --max-model-len 4096",
		engineLine("vllm", []string{"--max-model-len", "4096"}, facts{load: plan.Load{Repo: "openai/gpt-oss-120b"}, env: env}, AnswerInfo{}))
	assert.Equal(t, "llama-server -hf bartowski/Llama-3.3-70B-Instruct-GGUF:Q4_K_M -ngl 81",
		engineLine("llama.cpp", []string{"-ngl", "81"}, facts{load: plan.Load{Repo: "bartowski/Llama-3.3-70B-Instruct-GGUF",
			File: "Llama-3.3-70B-Instruct-Q4_K_M.gguf", GGUFType: "Q4_K_M"}}, AnswerInfo{}))
}

// With nothing to name (no file or folder given, no published checkpoint
// for the engine) no command is printed: a placeholder such as MODEL or
// MODEL-Q8_0.gguf reads as a command that does not run; the line that
// stands instead says what to give.
func TestEngineLineWithNothingToServeIsWithheld(t *testing.T) {
	gguf := facts{load: plan.Load{GGUFType: "Q8_0"}}
	assert.Equal(t, "", engineLine("llama.cpp", []string{"-ngl", "33"}, gguf, AnswerInfo{}))
	assert.Equal(t, "no command: no published Q8_0 GGUF of this model is known; give its file (--model FILE.gguf; llama-quantize writes one from a 16-bit GGUF) to get the command", withheldLine(gguf))
	assert.Contains(t, withheldLine(facts{load: plan.Load{GGUFType: "BF16"}}), "no published BF16 GGUF of this model is known; give its file (--model FILE.gguf; convert_hf_to_gguf.py writes one from the Hugging Face checkpoint)")
	for _, e := range []string{"vllm", "sglang"} {
		assert.Equal(t, "", engineLine(e, []string{"--max-model-len", "4096"}, facts{}, AnswerInfo{}), e)
	}
	assert.Equal(t, "no command: no published checkpoint of this model is known; name one (--model with a Hugging Face id or a folder) to get the command", withheldLine(facts{}))
}

func TestHumanUnits(t *testing.T) {
	assert.Equal(t, "70.6B", Params(70553706496))
	assert.Equal(t, "8.3M", Params(8306688))
	assert.Equal(t, "1.2T", Params(1.2e12))
	assert.Equal(t, "512", Params(512))
	// Tokens prints what --context reads back: 128k is 131072.
	assert.Equal(t, "128k", Tokens(131072))
	assert.Equal(t, "79k", Tokens(80884))
	assert.Equal(t, "512", Tokens(512))
	// A maximum rounds down: 6667 tokens hold "6k", not "7k" (7168).
	assert.Equal(t, "6k", TokensAtMost(6667))
	assert.Equal(t, "128k", TokensAtMost(131072))
	assert.Equal(t, "39k", TokensAtMost(40624))
	assert.Equal(t, "512", TokensAtMost(512))
	assert.Equal(t, "1 device", plural(1, "device"))
	assert.Equal(t, "0 devices", plural(0, "device"))
	assert.Equal(t, "4096 tokens x 1 sequence", Plurals("4096 token(s) x 1 sequence(s)"))
	assert.Equal(t, "the 1 cuda_gpu (nvidia) device (79 GiB)", Plurals("the 1 cuda_gpu (nvidia) device(s) (79 GiB)"))
	assert.Equal(t, "the 8 cuda_gpu (nvidia) devices", Plurals("the 8 cuda_gpu (nvidia) device(s)"))
	assert.Equal(t, "some device(s)", Plurals("some device(s)"))
	// The count is the nearest number before the noun: snapshot's summary
	// read "8672 bytes, 1 devices detected", the 8672 taken for the count.
	assert.Equal(t, "8672 bytes, 1 device detected, 0 tool runs", Plurals("8672 bytes, 1 device(s) detected, 0 tool run(s)"))
}

// Issue 14 item 16: what a directory name or a tool prints must not reach
// a terminal raw.
func TestTextEscapesControlsAndBidi(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA H100":         "NVIDIA H100",
		"Radeon™ Pro — é 中文":  "Radeon™ Pro — é 中文",
		"red\x1b[31mtext":     `red\x1b[31mtext`,
		"two\nlines\r":        `two\nlines\r`,
		"tab\there":           `tab\there`,
		"c1\u009bcsi":         `c1\x9bcsi`,
		"del\x7f":             `del\x7f`,
		"abc\u202edcba":       `abc\u202edcba`,
		"iso\u2066late\u2069": `iso\u2066late\u2069`,
		"mark\u200f":          `mark\u200f`,
		"sep\u2028x":          `sep\u2028x`,
		"bad\xffutf8":         `bad\xffutf8`,
	} {
		assert.Equal(t, want, Text(in), "%q", in)
	}
}

func TestHostileStringsInTheAnswerAreEscaped(t *testing.T) {
	ans := `{"fits":false,"model":{"name":"evil\u001b]0;pwned\u0007\u202e"},"levels":[],"refusal":{"code":"insufficient_memory","text":"x\ny"},"explanation":["does not fit: x\ny"],"warnings":["w\u009b2J"]}`
	var b bytes.Buffer
	require.NoError(t, WritePlan(&b, []byte(ans), AnswerInfo{}))
	out := b.String()
	for _, raw := range []string{"\x1b", "\x07", "\u202e", "\u009b", "x\ny"} {
		assert.NotContains(t, out, raw)
	}
	assert.Contains(t, out, `evil\x1b]0;pwned\x07\u202e does not fit: x\ny`)
}

func TestUnescapeHTML(t *testing.T) {
	in := []byte(`{"a":"bf16 \u003e fp16 \u0026 \u003C","b":"keep \\u003e and \u00e9 and \"q\"","\u003e":1}`)
	out := UnescapeHTML(in)
	assert.Equal(t, `{"a":"bf16 > fp16 & <","b":"keep \\u003e and \u00e9 and \"q\"",">":1}`, string(out))
	var x, y any
	require.NoError(t, json.Unmarshal(in, &x))
	require.NoError(t, json.Unmarshal(out, &y))
	assert.Equal(t, x, y, "the same JSON value")
	plain := []byte(`{"a":1}`)
	assert.Equal(t, plain, UnescapeHTML(plain))
}

// Issue 14 item 16 in --table: a device name or warning from a hostile tool
// or directory cannot drive the terminal.
func TestTableEscapesHostileText(t *testing.T) {
	reg := dgxLike()
	reg.Devices[1].Name = "H100\x1b[2J\x1b]0;owned\x07"
	reg.Warnings[0].Message = "read /sys/\u202eevil\u202c/x: 1 file(s)\x9b"
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, reg, nil))
	out := b.String()
	for _, raw := range []string{"\x1b", "\x07", "\u202e", "\u202c", "\x9b"} {
		assert.NotContains(t, out, raw)
	}
	assert.Contains(t, out, `H100\x1b[2J\x1b]0;owned\x07`)
	assert.Contains(t, out, `read /sys/\u202eevil\u202c/x: 1 file\x9b`)
}

// A plan with no rate says so on the Throughput line and prints why, not
// how a rate it does not give would have been computed (issue 24 item 5).
func TestThroughputWithoutRatesSaysNotEstimated(t *testing.T) {
	var b strings.Builder
	writeThroughput(&b, &plan.Throughput{Assumptions: []string{
		"decode streams weights at a fraction of host memory bandwidth (unknown for this CPU)",
		"prefill matmuls run at 77% of the dense bf16 peak",
		"decode omitted: memory bandwidth unknown for cpu:0",
		"prefill omitted: no peak tensor throughput known",
	}}, 1)
	assert.Equal(t, "Throughput: not estimated\n  - decode omitted: memory bandwidth unknown for cpu:0\n  - prefill omitted: no peak tensor throughput known\n", b.String())

	b.Reset()
	writeThroughput(&b, &plan.Throughput{DecodeTokensPerS: 12.5, Bound: "memory_bandwidth", Assumptions: []string{
		"decode streams weights at 61% of memory bandwidth", "prefill matmuls run at 77% of the dense bf16 peak",
		"prefill omitted: part of the model runs from host memory",
	}}, 1)
	assert.Equal(t, "Throughput: decode 12.5 tokens/s per sequence (bound by memory bandwidth)\n"+
		"  - decode streams weights at 61% of memory bandwidth\n  - prefill omitted: part of the model runs from host memory\n", b.String())
}

// TestThroughputPrefillOnlyWithItsStatement: a prefill rate is printed
// with the statement of what vouches for it (prefill_validated_on, issue
// 22), on its own line under decode's; a throughput that carries a prefill
// rate without one (an answer of an older engine) prints neither the rate
// nor how it was computed.
func TestThroughputPrefillOnlyWithItsStatement(t *testing.T) {
	var b strings.Builder
	writeThroughput(&b, &plan.Throughput{DecodeTokensPerS: 150, PrefillTokensPerS: 14084, Bound: "memory_bandwidth",
		ValidatedOn: "llama.cpp CUDA scoreboard rows", PrefillValidatedOn: "llama.cpp CUDA scoreboard pp512 rows; 3 held-out rows, median |error| 7.7% (within 20%)",
		Assumptions: []string{"prefill matmuls run MMQ"}}, 1)
	assert.Equal(t, "Throughput: decode 150 tokens/s per sequence (bound by memory bandwidth), prefill 14084 tokens/s\n"+
		"  Validated on: llama.cpp CUDA scoreboard rows\n"+
		"  Prefill validated on: llama.cpp CUDA scoreboard pp512 rows; 3 held-out rows, median |error| 7.7% (within 20%)\n"+
		"  - prefill matmuls run MMQ\n", b.String())

	b.Reset()
	writeThroughput(&b, &plan.Throughput{DecodeTokensPerS: 150, PrefillTokensPerS: 14084, Bound: "memory_bandwidth",
		ValidatedOn: "llama.cpp CUDA scoreboard rows", Assumptions: []string{"prefill matmuls run MMQ"}}, 1)
	assert.Equal(t, "Throughput: decode 150 tokens/s per sequence (bound by memory bandwidth)\n"+
		"  Validated on: llama.cpp CUDA scoreboard rows\n", b.String())
}

// TestWritePlanHeadlineRoomIsTheCommands: the headline's room is what the
// printed command holds (issue 27): the pool of an engine that reports one
// (engine_expect), else the command's context, with what a longer one
// needs; with no command, the plan's longest context.
func TestWritePlanHeadlineRoomIsTheCommands(t *testing.T) {
	info := AnswerInfo{Model: "llama-3.3-70b", DeviceNames: map[string]string{"cuda:0": "H100", "cuda:1": "H100"},
		ServeModel: "/models/llama-3.3-70b", ModelFile: "/models/llama-3.3-70b.gguf"}
	headline := func(ans string) string {
		var b bytes.Buffer
		require.NoError(t, WritePlan(&b, []byte(ans), info))
		return strings.SplitN(b.String(), "\n", 2)[0]
	}
	edit := func(ans, old, new string) string {
		out := strings.Replace(ans, old, new, 1)
		require.NotEqual(t, ans, out, old)
		return out
	}
	assert.Contains(t, headline(planFits), ", bf16, KV room about 79k tokens (19 sequences of 4096); run: ")

	// A maximum rounds down (TokensAtMost): 80884 tokens hold 78k, not
	// 79k (80896).
	noPool := edit(planFits, `"engine_expect":{"vllm":{"model_loading_gib":65.71,"kv_cache_gib":12.34,"kv_cache_tokens":80880,"max_concurrency":19.75,"source":"x"}},`, "")
	assert.Contains(t, headline(noPool), ", bf16, context 4096 (up to 78k fits); run: ")
	offloaded := edit(noPool, `"strategy":"tensor_parallel"`, `"strategy":"cpu_offload"`)
	// An offloaded plan's maxima keep its placement (plan.printedSplitHolds):
	// said as any other plan's.
	assert.Contains(t, headline(offloaded), ", CPU offload, bf16, context 4096 (up to 78k fits); run: ")
	var b bytes.Buffer
	require.NoError(t, WritePlan(&b, []byte(offloaded), info))
	assert.Contains(t, b.String(), "\nRoom: context up to 80884 tokens; up to 19 sequences at once\n")
	// A chosen context is the longest that fits rounded down to --fit's
	// 256-token step: 80884 tokens is no longer context than 80640.
	chosen := edit(noPool, `"--max-model-len","4096"`, `"--max-model-len","80640"`)
	assert.Contains(t, headline(chosen), ", bf16, context 80640; run: ")

	llama := edit(noPool, `"engine_args":{"vllm":["--tensor-parallel-size","2","--max-model-len","4096"]}`,
		`"engine_args":{"llama.cpp":["-ngl","81","-c","16384","-np","4"]}`)
	assert.Contains(t, headline(llama), ", bf16, context 16384 shared by 4 sequences (up to 78k each fits); run: llama-server ")

	none := edit(noPool, `"engine_args":{"vllm":["--tensor-parallel-size","2","--max-model-len","4096"]}`, `"engine_args":{}`)
	assert.Equal(t, "Llama-3.3-70B-Instruct fits 2x H100 (cuda:0-1): tensor parallel 2, bf16, context up to 78k tokens", headline(none))
}

// The level an offload plan is made at does not fit on the accelerators
// alone, so its row's fits is false; the table printed "no" for the very
// level the headline said fits (gpt-oss-20b on a 12 GiB RTX 3060 with
// --cpu-offload: "mxfp4 ... no —"). That row now reads "offload", with the
// plan's strategy; its reason still says why the accelerators alone do not
// hold it. Other levels keep their "no". The mark is the row's strategy
// cpu_offload, which the planner gives every level that fits offloaded
// (the explanation's published: line may name another one that "also
// fits"), so such a level's row reads "offload" too.
func TestWritePlanLevelsMarkTheOffloadedLevel(t *testing.T) {
	ans := strings.Replace(planFits, `"strategy":"tensor_parallel","quant":"bf16"`, `"strategy":"cpu_offload","quant":"bf16"`, 1)
	ans = strings.Replace(ans, `{"quant":"bf16","total_bytes":143666585600,"fits":true,"strategy":"tensor_parallel"}`,
		`{"quant":"bf16","total_bytes":143666585600,"fits":false,"strategy":"cpu_offload","reason":"doesn't fit: bf16 needs 133.8 GiB on one device"}`, 1)
	require.NotEqual(t, planFits, ans)
	var b bytes.Buffer
	require.NoError(t, WritePlan(&b, []byte(ans), AnswerInfo{Model: "llama-3.3-70b"}))
	out := b.String()
	assert.Regexp(t, `\n  bf16 +133\.8 GiB +offload +CPU offload +bf16 needs 133\.8 GiB on one device\n`, out)
	assert.Regexp(t, `\n  fp32 +267\.6 GiB +no +— +`, out)

	another := strings.Replace(ans, `{"quant":"fp32","total_bytes":287333171200,"fits":false,`,
		`{"quant":"fp32","total_bytes":287333171200,"fits":false,"strategy":"cpu_offload",`, 1)
	require.NotEqual(t, ans, another)
	b.Reset()
	require.NoError(t, WritePlan(&b, []byte(another), AnswerInfo{Model: "llama-3.3-70b"}))
	assert.Regexp(t, `\n  fp32 +267\.6 GiB +offload +CPU offload +fp32 needs 267\.6 GiB\n`, b.String(), "a level that fits offloaded but was not chosen")
}

// An offload plan's host RAM is the answer's last pipeline stage (pp_size
// counts it), and the headline printed it as one: "fits NVIDIA H200
// (cuda:0) + Intel(R) Xeon(R) Processor (cpu:0): pipeline parallel 2, CPU
// offload" for Qwen3-30B-A3B with --n-cpu-moe on one GPU, where nothing is
// pipelined over two accelerators. Only accelerator stages count as
// pipeline parallelism; "CPU offload" says the rest.
func TestWritePlanHeadlineOffloadIsNotAPipelineStage(t *testing.T) {
	shards := `"shards":[{"device_id":"cuda:0","layer_start":0,"layer_end":80,"memory_bytes":72479598233,"memory_available_bytes":85045805056,"stage":0,"tp_rank":0},
          {"device_id":"cuda:1","layer_start":0,"layer_end":80,"memory_bytes":72479598233,"memory_available_bytes":85045805056,"stage":0,"tp_rank":1}],
"tp_size":2,"pp_size":1,`
	require.Contains(t, planFits, shards)
	headline := func(sh string) string {
		ans := strings.Replace(planFits, shards, sh, 1)
		ans = strings.Replace(ans, `"strategy":"tensor_parallel","quant":"bf16"`, `"strategy":"cpu_offload","quant":"bf16"`, 1)
		var b bytes.Buffer
		require.NoError(t, WritePlan(&b, []byte(ans), AnswerInfo{Model: "llama-3.3-70b"}))
		return strings.SplitN(b.String(), "\n", 2)[0]
	}
	oneGPU := `"shards":[{"device_id":"cuda:0","layer_start":0,"layer_end":60,"memory_bytes":72479598233,"memory_available_bytes":85045805056,"stage":0,"tp_rank":0},
          {"device_id":"cpu:0","layer_start":60,"layer_end":80,"memory_bytes":72479598233,"memory_available_bytes":185045805056,"stage":1,"tp_rank":0}],
"tp_size":1,"pp_size":2,`
	h := headline(oneGPU)
	assert.Contains(t, h, ": CPU offload, bf16, ")
	assert.NotContains(t, h, "pipeline parallel")

	twoGPUs := `"shards":[{"device_id":"cuda:0","layer_start":0,"layer_end":30,"memory_bytes":72479598233,"memory_available_bytes":85045805056,"stage":0,"tp_rank":0},
          {"device_id":"cuda:1","layer_start":30,"layer_end":60,"memory_bytes":72479598233,"memory_available_bytes":85045805056,"stage":1,"tp_rank":0},
          {"device_id":"cpu:0","layer_start":60,"layer_end":80,"memory_bytes":72479598233,"memory_available_bytes":185045805056,"stage":2,"tp_rank":0}],
"tp_size":1,"pp_size":3,`
	assert.Contains(t, headline(twoGPUs), ": pipeline parallel 2, CPU offload, bf16, ")
}

// The Memory line's note on a paged pool's KV cache (pagedKVNote): none
// without memory.kv_cache_sequences (llama.cpp, batch 1), the pool's room
// where all fit, "all ... holds" where the pool holds fewer than the batch,
// replicas' pools in the plural, and no context or room where the answer
// has none (suggest).
func TestPagedKVNote(t *testing.T) {
	vllm := &plan.Budget{Engine: "vllm"}
	m := plan.Memory{KVCacheSequences: 8}
	assert.Empty(t, pagedKVNote(plan.Memory{}, vllm, 32768, 27, false))
	assert.Equal(t, "8 sequences of 32768; vLLM's pool takes the rest of its budget: up to 27", pagedKVNote(m, vllm, 32768, 27, false))
	assert.Equal(t, "8 sequences of 32768, all vLLM's pool holds at once", pagedKVNote(m, vllm, 32768, 8, false))
	assert.Equal(t, "8 sequences of 32768; vLLM's pools take the rest of their budgets: up to 39", pagedKVNote(m, vllm, 32768, 39, true))
	assert.Equal(t, "8 sequences; SGLang's pool takes the rest of its budget", pagedKVNote(m, &plan.Budget{Engine: "sglang"}, 0, 0, false))
	assert.Equal(t, "1 sequence of 8192, all vLLM's pool holds at once", pagedKVNote(plan.Memory{KVCacheSequences: 1}, vllm, 8192, 1, false))
}

// The Budget line of a pool whose devices default to different engines
// (an H200 beside a Tesla P40 under a GGUF quant) says whose default was
// overridden, not "these devices' default" for all.
func TestWriteBudgetNamesTheDevicesWhoseDefaultWasOverridden(t *testing.T) {
	var b bytes.Buffer
	writeBudget(&b, &plan.Budget{Engine: "llama.cpp", EngineDefault: true, EngineChosenFor: "the GGUF quant q2_k", EngineChosenOn: []string{"cuda:0"}, MemoryFraction: 1, MarginBytes: 1 << 30})
	assert.Equal(t, "Budget: llama.cpp (chosen for the GGUF quant q2_k over the default of cuda:0; the other devices' default); 1.0 GiB kept free per device\n", b.String())
	b.Reset()
	writeBudget(&b, &plan.Budget{Engine: "llama.cpp", EngineDefault: true, EngineChosenFor: "the GGUF quant q2_k", MemoryFraction: 1, MarginBytes: 1 << 30})
	assert.Equal(t, "Budget: llama.cpp (chosen for the GGUF quant q2_k over these devices' default); 1.0 GiB kept free per device\n", b.String())
}

// SGLang's fraction is not a share of each device's total memory that
// holds what the engine keeps itself: --mem-fraction-static of the memory
// free once its CUDA context exists holds the weights and its KV pool, the
// activations and the context beside it (plan's budget for SGLang). The
// Budget line said "0.5 of each device's total memory; the engine holds
// 1.2 GiB per device of it".
func TestWriteBudgetSaysWhatSGLangsFractionHolds(t *testing.T) {
	var b bytes.Buffer
	writeBudget(&b, &plan.Budget{Engine: "sglang", MemoryFraction: 0.5, EngineReservedBytes: 1263271936})
	assert.Equal(t, "Budget: sglang; 0.5 of each device's memory free once its CUDA context exists, for the weights and its KV pool; the engine holds 1.2 GiB per device beside it\n", b.String())
}

// A llama.cpp plan of replicas prints one replica's command (llama.cpp has
// no data-parallel mode: engine.Parallelism's ProcessPerReplica), and the
// headline says so; before it said "run: llama-server ...", which run as
// printed serves one replica's GPU. vLLM's one command serves them all.
func TestWritePlanHeadlineSaysOneProcessPerReplica(t *testing.T) {
	info := AnswerInfo{Model: "llama-3.3-70b", DeviceNames: map[string]string{"cuda:0": "H100", "cuda:1": "H100"}, ModelFile: "/m.gguf", ServeModel: "/models/m"}
	headline := func(ans string) string {
		var b bytes.Buffer
		require.NoError(t, WritePlan(&b, []byte(ans), info))
		return strings.SplitN(b.String(), "\n", 2)[0]
	}
	dp := strings.Replace(planFits, `"tp_size":2,`, `"tp_size":1,"dp_size":2,`, 1)
	require.NotEqual(t, planFits, dp)
	llama := strings.Replace(dp, `"engine_args":{"vllm":["--tensor-parallel-size","2","--max-model-len","4096"]}`,
		`"engine_args":{"llama.cpp":["-ngl","81","--split-mode","none","--main-gpu","0","-c","4096","-np","1"]}`, 1)
	require.NotEqual(t, dp, llama)
	assert.Contains(t, headline(llama), "; run one process per replica (2, each seeing only its replica's devices; the explanation lists them), replica 0's: llama-server -m /m.gguf -ngl 81")
	vllm := strings.Replace(dp, `"--tensor-parallel-size","2"`, `"--data-parallel-size","2"`, 1)
	assert.Contains(t, headline(vllm), "; run: vllm serve")
	assert.Contains(t, headline(strings.Replace(llama, `"dp_size":2,`, ``, 1)), "; run: llama-server")
}
