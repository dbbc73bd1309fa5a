package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCount(t *testing.T) {
	for in, want := range map[string]int{"4096": 4096, "32k": 32768, "128K": 131072, "1m": 1 << 20, " 8k ": 8192, "1.5k": 1536} {
		n, err := parseCount(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, n, in)
	}
	for _, bad := range []string{"", "0", "-1", "k", "4q", "0.3k", "1e9", "99999999999"} {
		_, err := parseCount(bad)
		assert.Error(t, err, bad)
	}
}

func TestDeviceListRanges(t *testing.T) {
	ids, err := deviceList("plan", "cuda:0-3,rocm:7,node1/cuda:2-3")
	require.NoError(t, err)
	assert.Equal(t, []string{"cuda:0", "cuda:1", "cuda:2", "cuda:3", "rocm:7", "node1/cuda:2", "node1/cuda:3"}, ids)
	for _, bad := range []string{"cuda", "cuda:3-1", "cuda:0-99999", "CUDA:0", "cuda:0,,cuda:1", "cuda:-1", "cuda:0,cuda:0", "cuda:0-3,cuda:2"} {
		_, err := deviceList("plan", bad)
		assert.Error(t, err, bad)
	}
}

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		bare time.Duration
		want time.Duration
	}{{"500", time.Millisecond, 500 * time.Millisecond}, {"2s", time.Millisecond, 2 * time.Second},
		{"2", time.Second, 2 * time.Second}, {"500ms", time.Second, 500 * time.Millisecond},
		{"1.5", time.Second, 1500 * time.Millisecond}, {"2h", time.Second, 2 * time.Hour}} {
		d, err := parseDuration(c.in, c.bare)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, d, c.in)
	}
	for _, bad := range []string{"", "0", "-1", "-1h", "soon", "NaN", "1e300"} {
		_, err := parseDuration(bad, time.Second)
		assert.Error(t, err, bad)
	}
}

func TestDidYouMean(t *testing.T) {
	flags := []string{"model", "quant", "context", "devices", "kv-cache", "cpu-offload"}
	assert.Equal(t, " (did you mean --model?)", didYouMean("modle", flags, "--"))
	assert.Equal(t, " (did you mean --context?)", didYouMean("contex", flags, "--"))
	assert.Equal(t, " (did you mean --kv-cache?)", didYouMean("kv-c", flags, "--"), "a prefix")
	assert.Equal(t, " (did you mean --cpu-offload?)", didYouMean("cpu-ofload", flags, "--"))
	assert.Equal(t, "", didYouMean("frobnicate", flags, "--"))
	assert.Equal(t, " (did you mean plan?)", didYouMean("plna", commandNames(), ""))
	assert.Equal(t, " (did you mean models?)", didYouMean("model", commandNames(), ""))
}

// requestOf parses a command's flags and returns the request they build.
func requestOf(t *testing.T, cmd string, args ...string) map[string]any {
	t.Helper()
	f, p, _ := newPlanFlags(cmd, "", "")
	require.NoError(t, f.Parse(args))
	req, err := p.request(f)
	require.NoError(t, err)
	return req
}

func TestEveryPlanningFlagReachesTheRequest(t *testing.T) {
	req := requestOf(t, "plan", "--quant", "Q4_K_M", "--context", "128k", "--batch", "4", "--devices", "cuda:0-1",
		"--kv-cache", "FP8", "--cpu-offload", "--include-cpu", "--engine", "llama.cpp", "--replicas", "max")
	assert.Equal(t, map[string]any{"quant": "q4_k_m", "context_length": 131072, "batch_size": 4,
		"devices": []string{"cuda:0", "cuda:1"}, "kv_cache_dtype": "fp8", "cpu_offload": true, "include_cpu": true,
		"engine": "llama.cpp", "replicas": "max"}, req)

	req = requestOf(t, "suggest", "--kv-cache", "int8", "--engine", "vllm", "--replicas", "2")
	assert.Equal(t, map[string]any{"kv_cache_dtype": "int8", "engine": "vllm", "replicas": 2}, req)

	req = requestOf(t, "plan", "--tensor-parallel-size", "4", "--memory-fraction", "0.95")
	assert.Equal(t, map[string]any{"quant": "auto", "tensor_parallel_size": 4, "memory_fraction": 0.95}, req)
	assert.Equal(t, 0.85, requestOf(t, "suggest", "--memory-fraction", "85%")["memory_fraction"])
	assert.Equal(t, "0.11.0", requestOf(t, "plan", "--engine", "vllm", "--engine-version", "0.11.0")["engine_version"])

	req = requestOf(t, "train", "--method", "qlora", "--precision", "fp16", "--optimizer", "adamw_8bit",
		"--seq-len", "8k", "--micro-batch", "2", "--gradient-checkpointing", "--flash-attention=false", "--zero", "2",
		"--num-devices", "4", "--tensor-parallel", "2", "--lora-rank", "64", "--lora-targets", "q, k,v,o",
		"--teacher", "70b", "--reference", "Llama-3.1-8B")
	assert.Equal(t, map[string]any{"method": "qlora", "precision": "fp16", "optimizer": "adamw_8bit", "seq_len": 8192,
		"micro_batch": 2, "gradient_checkpointing": true, "flash_attention": false, "zero_stage": 2, "num_devices": 4,
		"tensor_parallel": 2, "lora_rank": 64, "lora_targets": []string{"q", "k", "v", "o"},
		"teacher": map[string]any{"params": int64(70e9)}, "reference": map[string]any{"name": "Llama-3.1-8B"}},
		req["training"])
	assert.Equal(t, map[string]any{"method": "full", "fsdp": true}, requestOf(t, "train", "--method", "full", "--fsdp")["training"])
	// Checkpointing defaults on for lora and qlora, so an explicit off must reach the engine.
	assert.Equal(t, map[string]any{"method": "qlora", "gradient_checkpointing": false},
		requestOf(t, "train", "--method", "qlora", "--gradient-checkpointing=false")["training"])
	assert.Equal(t, map[string]any{"method": "qlora"}, requestOf(t, "train", "--method", "qlora")["training"])
	// The QLoRA base's precision by name, GGUF types included (issue 12 item 5).
	assert.Equal(t, map[string]any{"method": "qlora", "base_quant": "q4_k_m"},
		requestOf(t, "train", "--method", "qlora", "--base-quant", "q4_k_m")["training"])
	r := runCLI(t, withFixture(t, "two-nvidia", "train", "--model", "Llama-3.1-8B", "--method", "qlora", "--base-quant", "iq4_xs", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"base_quant":"iq4_xs"`)
}

// --tensor-parallel-size and --memory-fraction reach the engine, come back
// in vLLM's flags and the answer's budget, and are refused when malformed
// (issue 16 item 3, issue 12 items 1 and 6).
func TestBudgetFlagsReachTheEngine(t *testing.T) {
	plan, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "llama-3.3-70b-instruct",
		"--tensor-parallel-size", "4", "--memory-fraction", "0.95", "--json")...)
	assert.Equal(t, 4.0, plan["tp_size"])
	args := strings.Join(toStrings(plan["engine_args"].(map[string]any)["vllm"]), " ")
	assert.Contains(t, args, "--tensor-parallel-size 4")
	assert.Contains(t, args, "--gpu-memory-utilization 0.95")
	assert.Equal(t, 0.95, plan["budget"].(map[string]any)["memory_fraction"])

	text := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "llama-3.3-70b-instruct", "--devices", "cuda:0-3")...)
	require.Equal(t, 0, text.code, text.stderr)
	assert.Contains(t, text.stdout, "Budget: vllm (default for these devices); 0.9 of each device's total memory")
	assert.Contains(t, text.stdout, "Idle: cuda:2, cuda:3")

	// A GGUF request chose llama.cpp over the H200's default, vLLM: the
	// summary said "llama.cpp (default for these devices)".
	gguf := runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "Llama-3.1-8B", "--quant", "q4_k_m")...)
	require.Equal(t, 0, gguf.code, gguf.stderr)
	assert.Contains(t, gguf.stdout, "Budget: llama.cpp (chosen for the GGUF quant q4_k_m over these devices' default); 1.0 GiB kept free per device")

	for _, bad := range [][]string{{"--tensor-parallel-size", "two"}, {"--tensor-parallel-size", "0"},
		{"--memory-fraction", "1.5"}, {"--memory-fraction", "0"}, {"--memory-fraction", "x"}} {
		r := runCLI(t, append([]string{"plan", "--model", "70b"}, bad...)...)
		assert.Equal(t, 2, r.code, "%v", bad)
		assert.Contains(t, r.stderr, bad[0], "%v", bad)
	}
	// A size the model cannot be split into is the engine's invalid_argument,
	// naming the flag (TestEngineErrorsNameTheFlag).
	r := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "llama-3.3-70b-instruct", "--tensor-parallel-size", "3")...)
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "invalid_argument: --tensor-parallel-size 3 does not divide")
}

func TestPlanFlagsReachTheEngine(t *testing.T) {
	// --context 128k is 131072 tokens, the figure vLLM gets.
	plan, r := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-8B", "--context", "128k",
		"--devices", "cuda:2-3", "--engine", "vllm", "--json")...)
	assert.Contains(t, strings.Join(toStrings(plan["engine_args"].(map[string]any)["vllm"]), " "), "--max-model-len 131072")
	for _, s := range plan["shards"].([]any) {
		assert.Contains(t, []any{"cuda:2", "cuda:3"}, s.(map[string]any)["device_id"])
	}
	// JSON keeps > as itself (the library's encoder writes \u003e).
	assert.Contains(t, r.stdout, "bf16 > fp16")
	assert.NotContains(t, r.stdout, `\u003e`)

	// An fp8 KV cache halves the KV memory.
	kv := func(args ...string) float64 {
		p, _ := runJSON(t, withFixture(t, "dgx-h100", append([]string{"plan", "--model", "Llama-3.1-8B", "--quant", "bf16", "--json"}, args...)...)...)
		return p["memory"].(map[string]any)["kv_cache_bytes"].(float64)
	}
	assert.InDelta(t, kv()/2, kv("--kv-cache", "fp8"), 1)
	// llama.cpp's q8_0 cache type: 34 bytes per 32 values (ggml block_q8_0).
	assert.InDelta(t, kv()*34/64, kv("--kv-cache", "q8_0"), 1)

	// A GGUF quantization type is passed through to the engine.
	q, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "8b", "--quant", "q4_k_m", "--json")...)
	assert.Equal(t, "q4_k_m", q["quant"])
	bad := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "8b", "--quant", "int3")...)
	assert.Equal(t, 1, bad.code)
	assert.True(t, strings.HasPrefix(bad.stderr, "ai-hwaccel: invalid_argument: unknown quantization \"int3\""), bad.stderr)

	// Training options reach estimate_training and come back in its answer.
	tr, _ := runJSON(t, withFixture(t, "dgx-h100", "train", "--model", "Llama-3.1-8B", "--method", "full",
		"--zero", "3", "--gradient-checkpointing", "--seq-len", "2k", "--micro-batch", "2", "--json")...)
	assert.Equal(t, 3.0, tr["zero_stage"])
	assert.Equal(t, true, tr["gradient_checkpointing"])
	assert.Equal(t, 2048.0, tr["seq_len"])
	assert.Equal(t, 2.0, tr["micro_batch"])
}

func TestRegistryAndClusterFiles(t *testing.T) {
	reg := runCLI(t, withFixture(t, "dgx-h100")...)
	require.Equal(t, 0, reg.code)
	dir := t.TempDir()
	regFile := dir + "/dgx.json"
	require.NoError(t, writeText(regFile, reg.stdout))
	fromFile, _ := runJSON(t, "plan", "--model", "70b", "--registry", regFile, "--json")
	detected, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--json")...)
	assert.Equal(t, detected, fromFile)

	clusterFile := dir + "/cluster.json"
	require.NoError(t, writeText(clusterFile, "["+strings.TrimSpace(reg.stdout)+","+strings.TrimSpace(reg.stdout)+"]"))
	c, _ := runJSON(t, "plan", "--model", "Llama-3.1-405B", "--quant", "bf16", "--cluster", clusterFile, "--json")
	assert.Equal(t, true, c["fits"])
	nodes := map[string]bool{}
	for _, s := range c["shards"].([]any) {
		id := s.(map[string]any)["device_id"].(string)
		nodes[strings.SplitN(id, "/", 2)[0]] = true
	}
	assert.Equal(t, map[string]bool{"node0": true, "node1": true}, nodes, "405B in bf16 needs both nodes")
	text := runCLI(t, "plan", "--model", "Llama-3.1-405B", "--quant", "bf16", "--cluster", clusterFile)
	assert.Contains(t, text.stdout, "16x NVIDIA H100 80GB HBM3 (node0/cuda:0-7,node1/cuda:0-7)")

	notArray := dir + "/one.json"
	require.NoError(t, writeText(notArray, `{"a":1}`))
	r := runCLI(t, "plan", "--model", "70b", "--cluster", notArray)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "want a JSON array of registries")
}

func writeText(path, s string) error {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return err
	}
	return writeFileString(path, s)
}

// The request schemas reject what the engine rejects for shape, so the
// check in runCLI can fail: a request with an unknown member, a wrong type
// a replicas of 0 or a device id twice does not validate.
func TestRequestSchemasCanFail(t *testing.T) {
	schemas, err := requestSchemas()
	require.NoError(t, err)
	before := sentRequests.Load()
	runCLI(t, withFixture(t, "dgx-h100", "train", "--model", "8b", "--method", "lora", "--zero", "2", "--lora-targets", "all-linear", "--json")...)
	assert.Greater(t, sentRequests.Load(), before, "runCLI validates what the command sends")
	for _, bad := range []string{`{}`, `{"model":{"params_b":7},"bogus":1}`, `{"model":{"params_b":"7"}}`,
		`{"model":{"params_b":7},"replicas":0}`, `{"model":{"params_b":7},"training":{"zero_stage":4}}`,
		`{"model":{"params_b":7},"kv_cache_dtype":"fp4"}`, `{"model":{"nam":"x"}}`,
		`{"model":{"params_b":7},"devices":["cuda:0","cuda:1","cuda:0"]}`} {
		assert.Error(t, schemas["planning"].Validate([]byte(bad)), bad)
	}
	for _, bad := range []string{`{"timeout_ms":0}`, `{"sysroot":""}`, `{"no_exec":"yes"}`, `{"colour":1}`} {
		assert.Error(t, schemas["detect"].Validate([]byte(bad)), bad)
	}
	// A JSON Schema integer is any number with no fractional part.
	assert.NoError(t, schemas["planning"].Validate([]byte(`{"model":{"params_b":7},"batch_size":4.0,"training":{"seq_len":4.096e3}}`)))
	assert.NoError(t, schemas["planning"].Validate([]byte(`{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m","replicas":"max",
		"cluster":[{}],"training":{"method":"dpo","reference":{"params_b":7},"lora_targets":["q_proj","v"]}}`)))
}

// On a terminal a slow vendor tool is named on stderr. The slow-tools
// fixture's nvidia-smi takes 50 ms a run; with a 10 ms delay the wait is
// reported, once, and the answer is the one the engine gives without it.
func TestSlowToolIsReported(t *testing.T) {
	var out, errOut bytes.Buffer
	a := testApp(&out, &errOut)
	var progress bytes.Buffer
	a.progress, a.progressDelay = &progress, 10*time.Millisecond
	require.Equal(t, 0, a.run(withFixture(t, "slow-tools", "--table")), errOut.String())
	assert.Equal(t, 1, strings.Count(progress.String(), "ai-hwaccel: waiting for nvidia-smi "), progress.String())
	assert.Equal(t, runCLI(t, withFixture(t, "slow-tools", "--table")...).stdout, out.String())

	// Planning detects first with the watcher; the engine reuses it.
	progress.Reset()
	out.Reset()
	require.Equal(t, 0, a.run(withFixture(t, "slow-tools", "plan", "--model", "8b", "--timeout", "4s")), errOut.String())
	assert.Contains(t, progress.String(), "waiting for nvidia-smi")
	assert.Contains(t, out.String(), "8b fits ")

	// No progress without a terminal, and none for a fast tool.
	progress.Reset()
	a.progressDelay = time.Minute
	require.Equal(t, 0, a.run(withFixture(t, "slow-tools", "--summary")))
	assert.Empty(t, progress.String())
}

// Issue 14 item 16 on stderr: a directory name with terminal controls is
// escaped in the error line.
func TestErrorLinesEscapeHostileText(t *testing.T) {
	r := runCLI(t, "--table", "--sysroot", t.TempDir()+"/evil\x1b]0;owned\x07\u202e")
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "ai-hwaccel: detection_failed: "), r.stderr)
	for _, raw := range []string{"\x1b", "\x07", "\u202e"} {
		assert.NotContains(t, r.stderr, raw)
	}
}
