//go:build cgo

package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"
)

// FuzzRequestMembers puts one value at one member of a valid planning
// request and sends it to hwaccel_suggest_quant, hwaccel_plan_sharding or
// hwaccel_estimate_training through the C ABI. The byte-level targets
// (FuzzPlanSharding, ...) rarely keep a request valid around a mutation, so
// most of their inputs stop at the JSON decoder; here the request stays
// valid except at the member fuzzed, so each member's value reaches the
// planner. Every member of schema/request.schema.json has seeds: its own
// values at and past the limits docs/requests.md gives, and the hostile ones
// every member gets (NaN-like strings, huge strings, deep nesting, numbers
// past int64 and float64). raw false sends the value as a JSON string.
//
// Every answer must be an envelope with a stable code (checkEnvelope), keep
// the invariants every answer keeps (checkAnswer), come within
// memberAnswerBound, and, sent again, have the same error code (the same
// bytes when the request carries its own registry).
func FuzzRequestMembers(f *testing.F) {
	odd := oddTree(f)
	fixtures, err := filepath.Abs(filepath.Join("..", "testdata", "machines"))
	require.NoError(f, err)
	config, err := os.ReadFile(filepath.Join("..", "testdata", "hub", "ibm-granite--granite-3.1-1b-a400m-instruct", "config.json"))
	require.NoError(f, err)
	placeholders := strings.NewReplacer("$ODD", odd, "$FIX", fixtures)
	for mi, m := range requestMembers {
		for _, v := range m.values {
			f.Add(m.export, uint8(mi), true, v)
		}
	}
	for _, mi := range hostileMembers() {
		m := requestMembers[mi]
		for _, v := range hostileValues {
			f.Add(m.export, uint8(mi), true, v)
		}
		for _, v := range hostileStrings {
			f.Add(m.export, uint8(mi), false, v)
		}
	}
	fuzzing := flag.Lookup("test.fuzz").Value.String() != ""
	f.Fuzz(func(t *testing.T, export uint8, member uint8, raw bool, value string) {
		m := requestMembers[int(member)%len(requestMembers)]
		value = expandValue(placeholders.Replace(value))
		if !raw {
			b, err := json.Marshal(value)
			require.NoError(t, err)
			value = string(b)
		}
		in := m.request(string(config), value)
		if writesFiles(in) {
			t.Skip("snapshot_out writes a file wherever it names")
		}
		i := 1 + int(export)%3
		bound := memberAnswerBound
		if fuzzing {
			bound = fuzzAnswerBound
		}
		start := time.Now()
		answer := boundedCall(t, i, in, bound)
		code := checkEnvelope(t, answer)
		if code == "" {
			checkAnswer(t, i, answer, requestUsable(in))
		}
		if !fuzzing || time.Since(start) > bound/4 {
			return // the seeds run in every go test: once is enough there
		}
		again := boundedCall(t, i, in, bound)
		require.Equal(t, code, checkEnvelope(t, again), "the same request answered two codes: %.300s\n%.300s", answer, again)
		if hasOwnRegistry(in) {
			require.Equal(t, answer, again, "the same request on its own registry answered twice differently")
		}
	})
}

// memberAnswerBound is how long one planning call may take on a seed: the
// largest seeds (1000 devices, 1 Mi sequences, 4096 MoE layers) answer in
// about a second; a detection is bounded by its timeout_ms (5 s unless a
// value sets it). TestEnormousRequestsAnswerInBoundedTime sends the
// requests at the limits.
const memberAnswerBound = 90 * time.Second

// fuzzAnswerBound is the bound while fuzzing: the fuzzing worker kills
// itself, saying nothing of why, when one input takes 10 s (RunFuzzWorker
// in the Go toolchain's src/internal/fuzz), so a slow input fails here
// first, named.
// A second call is made only when the first took under a quarter of it.
const fuzzAnswerBound = 8 * time.Second

// boundedCall calls export i with in and fails, naming the input, when no
// answer comes within bound.
func boundedCall(t *testing.T, i int, in []byte, bound time.Duration) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		answer, ok := callExport(i, in)
		if !ok {
			answer = "NULL"
		}
		done <- answer
	}()
	select {
	case answer := <-done:
		require.NotEqual(t, "NULL", answer, "NULL answer")
		return answer
	case <-time.After(bound):
		t.Fatalf("%s: no answer after %v to %.500s", exportNames[i], bound, in)
		return ""
	}
}

// requestMember is one member of a planning request: its path from the top
// level (an array index as its decimal), the export it is seeded for, the
// request it is set in when not baseRequest, and its seed values (JSON text).
type requestMember struct {
	path   string
	export uint8 // 0 suggest_quant, 1 plan_sharding, 2 estimate_training
	base   string
	values []string
}

const (
	exSuggest = 0
	exPlan    = 1
	exTrain   = 2
)

// baseRequest is a valid request on its own registry (two H100s over
// NVLink and a CPU): no detection, so its answers do not depend on this host.
var baseRequest = `{"model":"llama-3.1-8b","registry":{"devices":[` + gpuSeed(0, 80) + `,` + gpuSeed(1, 80) +
	`,{"kind":"cpu","index":0,"available":true,"memory_bytes":549755813888}],` +
	`"system_io":{"interconnects":[{"kind":"nvlink","devices":["cuda:0","cuda:1"],"bandwidth_gb_s":900}]}}}`

// configBase plans the model of a config.json ($CONFIG: ibm-granite's
// granite-3.1-1b-a400m-instruct, testdata/hub) on baseRequest's devices.
var configBase = strings.Replace(baseRequest, `"model":"llama-3.1-8b"`, `"model":{"config":$CONFIG}`, 1)

// trainBase is baseRequest with a training setup.
var trainBase = strings.Replace(baseRequest, `{"model"`, `{"training":{"method":"lora","lora_rank":16},"model"`, 1)

// detectBase detects the fixture DGX H100 (its sysroot and its tools).
const detectBase = `{"model":"llama-3.1-70b","detect":{"sysroot":"$FIX/dgx-h100/root","path":"$FIX/dgx-h100/bin","timeout_ms":2000}}`

// Limits and values a member's seeds come from: docs/requests.md (its
// tables), schema/request.schema.json, internal/planreq.
var (
	intEdges     = []string{"0", "1", "-1", "2147483648", "9007199254740993", "9223372036854775807", "9223372036854775808", "1e9", "1.5", "1e400"}
	boolValues   = []string{"true", "false", "1", `"true"`, "null"}
	modelValues  = []string{`"llama-3.1-8b"`, `"70b"`, `"70"`, `"1.2t"`, `"500m"`, `"llama3.1"`, `"llama3.1:latest"`, `"ggml-org/gemma-3-27b-it-GGUF"`, `"gemma-3-27b-it"`, `"Qwen/Qwen3-32B-AWQ"`, `"meta-llama/Llama-3.1-405B-Instruct-FP8"`, `"deepseek-r1"`, `"gpt-oss-120b"`, `"Qwen3-VL-8B-Instruct"`, `"no-such-model-xyz"`, `"$ODD/fifo.gguf"`, `"$ODD/zero.gguf"`, `"$ODD/dir"`, `"$ODD/loop"`, `"./x.gguf"`, `"/"`, `"$FIX"`, `{"params_b":70}`, `{"params":1e14}`, `{"params":1e15}`, `{"params_b":-1}`, `{"name":"llama-3.1-70b","params_b":70}`, `{}`, `{"path":"$ODD/fifo.gguf"}`, `{"path":"/proc/self/mem"}`}
	quantValues  = []string{`"auto"`, `"AUTO"`, `"fp32"`, `"fp16"`, `"bf16"`, `"fp8"`, `"int8"`, `"int4"`, `"mxfp4"`, `"q4_k_m"`, `"Q8_0"`, `"iq1_s"`, `"q2_k_s"`, `"iq4_xs"`, `"q9_k"`, `"fp4"`, `""`}
	engineValues = []string{`"vllm"`, `"llama.cpp"`, `"sglang"`, `"none"`, `"VLLM"`, `"tensorrt-llm"`, `""`}
	kvValues     = []string{`"auto"`, `"fp16"`, `"bf16"`, `"fp8"`, `"int8"`, `"f32"`, `"q8_0"`, `"q4_0"`, `"q4_1"`, `"q5_0"`, `"q5_1"`, `"iq4_nl"`, `"q4_k"`, `""`}
	ctxValues    = []string{"1", "4096", "16777216", "16777217", "1000000000", `"auto"`, `"AUTO"`, `"max"`, "0", "-1", "4096.5"}
	batchValues  = []string{"1", "64", "1048576", "1048577", "1000000", "0"}
)

// requestMembers: every member of schema/request.schema.json, with the
// registry's and the detection options' members a request carries.
var requestMembers = []requestMember{
	{path: "model", export: exPlan, values: modelValues},
	{path: "model", export: exTrain, base: trainBase, values: []string{`"llama-3.1-8b"`, `"deepseek-r1"`, `{"params_b":405}`, `"$ODD/dir"`}},
	{path: "model.params", export: exPlan, base: `{"model":{"params":7e9},"registry":{"devices":[` + gpuSeed(0, 80) + `]}}`, values: []string{"1e14", "100000000000000.01", "5e-324", "0", "-7e9", `"7e9"`}},
	{path: "model.params_b", export: exSuggest, base: `{"model":{"params_b":7},"registry":{"devices":[` + gpuSeed(0, 80) + `]}}`, values: []string{"100000", "100001", "1e-9", "-0"}},
	{path: "model.name", export: exPlan, base: `{"model":{"name":"x"},"registry":{"devices":[` + gpuSeed(0, 80) + `]}}`, values: []string{`"Llama-3.1-8B-Instruct"`, `"llama-3.1-8b-instruct-fp8-bf16-it-hf-chat"`, `"mistral"`, `"a/b/c/d"`}},
	{path: "model.path", export: exPlan, base: `{"model":{"path":"/"},"registry":{"devices":[` + gpuSeed(0, 80) + `]}}`, values: []string{`"$ODD/fifo.gguf"`, `"$ODD/zero.gguf"`, `"$ODD/big.gguf"`, `"$ODD/dir"`, `"$ODD/zdir"`, `"$ODD/loop"`, `"$ODD/loop.gguf"`, `"relative.gguf"`, `"/dev/stdin"`, `"$FIX"`}},
	{path: "model.config", export: exPlan, base: configBase, values: []string{`{}`, `{"num_hidden_layers":65537,"hidden_size":64}`, `{"num_hidden_layers":80,"hidden_size":8192}`, `$CONFIG`}},
	{path: "model.config.num_hidden_layers", export: exPlan, base: configBase, values: []string{"4096", "65537", "0", "-24"}},
	{path: "model.config.hidden_size", export: exPlan, base: configBase, values: []string{"1073741824", "3", "0"}},
	{path: "model.config.num_attention_heads", export: exPlan, base: configBase, values: []string{"0", "7", "1048576"}},
	{path: "model.config.num_key_value_heads", export: exPlan, base: configBase, values: []string{"0", "3", "16", "17"}},
	{path: "model.config.vocab_size", export: exPlan, base: configBase, values: []string{"0", "4294967296"}},
	{path: "model.config.max_position_embeddings", export: exPlan, base: configBase, values: []string{"1", "16777217", "0"}},
	{path: "model.config.num_local_experts", export: exPlan, base: configBase, values: []string{"0", "1", "1000000"}},
	{path: "model.config.num_experts_per_tok", export: exPlan, base: configBase, values: []string{"0", "33", "1000000"}},
	{path: "model.config.rope_scaling", export: exPlan, base: configBase, values: []string{`{"type":"yarn","factor":4.0,"original_max_position_embeddings":32768}`, `{"rope_type":"llama3","factor":1e308}`, `{"factor":-1}`}},
	{path: "model.config.torch_dtype", export: exPlan, base: configBase, values: []string{`"float8_e4m3fn"`, `"int4"`, `""`}},
	{path: "model.safetensors_index", export: exPlan, base: configBase, values: []string{`{"metadata":{"total_size":2000000000}}`, `{"metadata":{"total_size":-1}}`, `{"metadata":{"total_size":1e30}}`, `{"weight_map":{}}`}},
	{path: "model.safetensors_header_base64", export: exPlan, base: configBase, values: []string{`"AAAAAAAAAAA="`, `"CAAAAAAAAAB7fQ=="`, `"!!!"`, `""`}},
	{path: "model.gguf_header_base64", export: exPlan, base: `{"model":{"gguf_header_base64":""},"registry":{"devices":[` + gpuSeed(0, 80) + `]}}`, values: []string{`"R0dVRgMAAAAAAAAAAAAAAAAAAAAAAAAA"`, `"R0dVRgMAAAD/////////f/////////9/"`, `"R0dVRg=="`, `"x"`}},
	{path: "quant", export: exPlan, values: quantValues},
	{path: "quant", export: exSuggest, values: []string{`"q4_k_m"`, `"mxfp4"`, `"bf16"`}},
	{path: "context_length", export: exPlan, values: ctxValues},
	{path: "context_length", export: exTrain, base: trainBase, values: []string{"4096", "16777216"}},
	{path: "batch_size", export: exPlan, values: batchValues},
	{path: "batch_size", export: exSuggest, values: []string{"1048576", "1000000"}},
	{path: "kv_cache_dtype", export: exPlan, values: kvValues},
	{path: "registry", export: exPlan, values: []string{`{}`, `{"devices":[]}`, `{"devices":[{}]}`, `$REG(1000)`,
		`{"devices":[{"kind":"cuda_gpu","index":0,"available":true}]}`,
		`{"devices":[{"kind":"cuda_gpu","index":0,"available":true,"memory_free_bytes":85899345920}]}`,
		`{"devices":[{"kind":"cuda_gpu","index":0,"available":true,"memory_bytes":-1}]}`,
		`{"devices":[{"kind":"cuda_gpu","index":0,"available":true,"memory_bytes":9223372036854775807}]}`,
		`{"devices":[{"kind":"cuda_gpu","index":0,"available":true,"memory_bytes":85899345920},{"kind":"cuda_gpu","index":0,"available":true,"memory_bytes":85899345920}]}`,
		`{"devices":[{"kind":"warp_drive","index":0,"available":true,"memory_bytes":1}]}`,
		`{"devices":[{"kind":"cpu","index":0,"available":true,"memory_bytes":1}]}`,
		`{"schema_version":999,"devices":[]}`}},
	{path: "registry", export: exTrain, base: trainBase, values: []string{`$REG(1000)`, `{"devices":[]}`}},
	{path: "registry.devices.0", export: exPlan, values: []string{gpuSeed(5, 80), `{"kind":"cuda_gpu","index":-1,"available":true,"memory_bytes":1}`, `{"kind":"tpu","index":0,"available":true,"memory_bytes":17179869184}`, `{"kind":"metal","index":0,"available":true,"memory_bytes":34359738368}`, `null`}},
	{path: "registry.devices.0.memory_bytes", export: exPlan, values: []string{"0", "1", "-1", "85899345920", "1152921504606846976", "9223372036854775807"}},
	{path: "registry.devices.0.memory_free_bytes", export: exPlan, values: []string{"0", "85899345921", "-5"}},
	{path: "registry.devices.0.memory_usable_bytes", export: exPlan, values: []string{"0", "1", "85899345921"}},
	{path: "registry.devices.0.compute_capability", export: exPlan, values: []string{`"6.1"`, `"7.0"`, `"99.9"`, `"x.y"`, `""`}},
	{path: "registry.devices.0.available", export: exPlan, values: []string{"false", "null"}},
	{path: "registry.devices.0.id", export: exPlan, values: []string{`"cuda:1"`, `"node0/cuda:0"`, `""`}},
	{path: "registry.system_io", export: exPlan, values: []string{`{"interconnects":[{"kind":"nvswitch","devices":["cuda:0","cuda:9"],"bandwidth_gb_s":900}]}`, `{"interconnects":[{"kind":"nvlink","devices":["cuda:0","cuda:1"],"bandwidth_gb_s":-1}]}`, `{"interconnects":[{"kind":"nvlink","devices":["cuda:0","cuda:0"],"bandwidth_gb_s":1e308}]}`, `{"interconnects":[{"kind":"carrier_pigeon","devices":[],"bandwidth_gb_s":0}]}`}},
	{path: "devices", export: exPlan, values: []string{`["cuda:0"]`, `["cuda:1","cuda:0"]`, `["cuda:9"]`, `["cuda:0","cuda:0"]`, `[]`, `["cpu:0"]`, `["node0/cuda:0"]`, `[1]`, `"cuda:0"`, `$IDS(1000)`}},
	{path: "devices", export: exTrain, base: trainBase, values: []string{`["cuda:1"]`, `["cuda:7"]`, `$IDS(1000)`}},
	{path: "engine", export: exPlan, values: engineValues},
	{path: "engine", export: exSuggest, values: []string{`"sglang"`, `"llama.cpp"`}},
	{path: "flash_attention", export: exPlan, values: boolValues},
	{path: "draft_model", export: exPlan, values: []string{`"llama-3.2-1b"`, `{"params_b":1}`, `"llama-3.1-405b"`, `"$ODD/fifo.gguf"`, `{"params":1e14}`, `{"config":{"num_hidden_layers":65537}}`}},
	{path: "mmproj", export: exPlan, values: []string{`{"size_bytes":1}`, `{"size_bytes":1152921504606846977}`, `{"path":"$ODD/fifo.gguf"}`, `{"path":"$ODD/zero.gguf"}`, `{"path":"$ODD/dir"}`, `{}`, `{"size_bytes":1,"path":"x"}`}},
	{path: "mmproj.size_bytes", export: exPlan, base: strings.Replace(baseRequest, `{"model"`, `{"engine":"llama.cpp","mmproj":{"size_bytes":1},"model"`, 1), values: []string{"0", "1152921504606846976", "1152921504606846977", "-1"}},
	{path: "mmproj.offload", export: exPlan, base: strings.Replace(baseRequest, `{"model"`, `{"mmproj":{"size_bytes":900000000},"model"`, 1), values: boolValues},
	{path: "cpu_offload", export: exPlan, base: strings.Replace(baseRequest, `"llama-3.1-8b"`, `"deepseek-r1"`, 1), values: boolValues},
	{path: "include_cpu", export: exSuggest, values: boolValues},
	{path: "cluster", export: exPlan, base: `{"model":"llama-3.1-405b"}`, values: []string{`[]`, `[{}]`, `[{"devices":[` + gpuSeed(0, 80) + `]},{"devices":[` + gpuSeed(0, 80) + `]}]`, `$CLUSTER(64)`, `$CLUSTER(1025)`, `[null]`}},
	{path: "replicas", export: exPlan, values: []string{"1", "2", "3", `"max"`, `"MAX"`, `" max "`, "0", "65536", "65537", "2.5"}},
	{path: "tensor_parallel_size", export: exPlan, values: []string{"1", "2", "3", "8", "512", "513", "0"}},
	{path: "placement", export: exPlan, values: []string{`"serving"`, `"auto"`, `"FEWEST"`, `"spread"`}},
	{path: "memory_fraction", export: exPlan, values: []string{"0", "1", "1.0000001", "0.9", "-0.5", "1e-300", "5e-324", "1e400"}},
	{path: "engine_version", export: exPlan, base: strings.Replace(baseRequest, `{"model"`, `{"engine":"vllm","model"`, 1), values: []string{`"0.21.0"`, `"0.11.0"`, `"v0.21"`, `"0.6.4.post1"`, `"99999999999999999999.0"`, `"v"`, `""`}},
	{path: "training", export: exTrain, values: []string{`{}`, `{"method":"full","num_devices":65536}`, `{"method":"qlora","base_quant":"int4"}`, `{"method":"distillation","teacher":"llama-3.1-70b"}`, `{"method":"ppo","reference":"llama-3.1-8b","reward":"llama-3.1-8b","critic":"llama-3.1-8b"}`}},
	{path: "training.method", export: exTrain, base: trainBase, values: []string{`"full"`, `"lora"`, `"qlora"`, `"prefix"`, `"dpo"`, `"rlhf"`, `"ppo"`, `"distillation"`, `"sft"`}},
	{path: "training.optimizer", export: exTrain, base: trainBase, values: []string{`"adamw"`, `"adamw_8bit"`, `"paged_adamw_8bit"`, `"sgd"`, `"adafactor"`, `"lion"`}},
	{path: "training.precision", export: exTrain, base: trainBase, values: []string{`"bf16"`, `"fp16"`, `"fp32"`, `"fp8"`}},
	{path: "training.seq_len", export: exTrain, base: trainBase, values: []string{"1", "16777216", "16777217"}},
	{path: "training.micro_batch", export: exTrain, base: trainBase, values: []string{"1", "65536", "65537"}},
	{path: "training.gradient_checkpointing", export: exTrain, base: trainBase, values: boolValues},
	{path: "training.flash_attention", export: exTrain, base: trainBase, values: boolValues},
	{path: "training.zero_stage", export: exTrain, base: trainBase, values: []string{"0", "1", "2", "3", "4", "-1"}},
	{path: "training.fsdp", export: exTrain, base: trainBase, values: boolValues},
	{path: "training.num_devices", export: exTrain, base: trainBase, values: []string{"1", "2", "3", "65536", "65537"}},
	{path: "training.tensor_parallel", export: exTrain, base: trainBase, values: []string{"1", "2", "3", "65536", "65537"}},
	{path: "training.lora_rank", export: exTrain, base: trainBase, values: []string{"1", "65536", "65537"}},
	{path: "training.base_quant", export: exTrain, base: trainBase, values: []string{`"int4"`, `"int8"`, `"q4_k_m"`, `"nf4"`, `""`}},
	{path: "training.lora_targets", export: exTrain, base: trainBase, values: []string{`["q_proj","v_proj"]`, `["all-linear"]`, `[""]`, `[]`, `["nope"]`, `"q_proj"`}},
	{path: "training.teacher", export: exTrain, base: trainBase, values: []string{`"llama-3.1-70b"`, `{"params_b":1e5}`, `"$ODD/fifo.gguf"`, `""`}},
	{path: "training.reference", export: exTrain, base: trainBase, values: []string{`"llama-3.1-8b"`, `{"params":1}`}},
	{path: "training.reward", export: exTrain, base: trainBase, values: []string{`"llama-3.1-8b"`, `{"params_b":405}`}},
	{path: "training.critic", export: exTrain, base: trainBase, values: []string{`"llama-3.1-8b"`, `"no-such-model"`}},
	{path: "detect", export: exPlan, base: detectBase, values: []string{`{}`, `{"sysroot":"$ODD/root","no_exec":true,"timeout_ms":2000}`, `{"sysroot":"$ODD/fifo.gguf"}`, `{"snapshot":"$ODD/fifo.gguf"}`, `{"snapshot":"/dev/zero"}`, `{"snapshot":"$ODD/zero.gguf"}`, `{"snapshot":"relative.tar.gz"}`, `{"sysroot":"/proc","no_exec":true}`, `{"sysroot":"relative"}`, `{"backends":["nope"]}`, `{"timeout_ms":0}`, `{"sysroot":"$FIX/hostile/root","path":"$FIX/hostile/bin","timeout_ms":50}`}},
	{path: "detect.sysroot", export: exPlan, base: detectBase, values: []string{`"$FIX/mi300x-8/root"`, `"$FIX/nvidia-mig/root"`, `"$ODD/root"`, `"$ODD/loop"`, `"$ODD"`, `"/"`, `"/dev"`, `""`}},
	{path: "detect.path", export: exPlan, base: detectBase, values: []string{`""`, `"relative/bin"`, `"$ODD"`, `"$FIX/gaudi2-8/bin"`, `"/nonexistent"`}},
	{path: "detect.timeout_ms", export: exSuggest, base: detectBase, values: []string{"1", "600000", "600001", "0", "1e400"}},
	{path: "detect.backends", export: exPlan, base: detectBase, values: []string{`["nvidia"]`, `[]`, `["nope"]`, `["nvidia","nvidia"]`}},
	{path: "detect.env", export: exPlan, base: detectBase, values: []string{`{"CUDA_VISIBLE_DEVICES":""}`, `{"CUDA_VISIBLE_DEVICES":"7,6,GPU-x,-1"}`, `{"CUDA_VISIBLE_DEVICES":"MIG-xyz"}`, `{"HIP_VISIBLE_DEVICES":"0"}`}},
	{path: "detect.snapshot", export: exPlan, base: `{"model":"llama-3.1-8b","detect":{}}`, values: []string{`"$ODD/fifo.gguf"`, `"/dev/zero"`, `"$ODD/dir"`, `"$ODD/zero.gguf"`}},
}

// hostileMembers are the members the hostile values are seeded on: one of
// each JSON type the schema gives (the fuzzer moves a value to other
// members by mutating the member byte).
func hostileMembers() []int {
	var out []int
	for i, m := range requestMembers {
		switch m.path {
		case "model", "context_length", "batch_size", "devices", "registry.devices.0.memory_bytes", "memory_fraction",
			"training.seq_len", "training.method", "detect.sysroot", "engine":
			out = append(out, i)
		}
	}
	return out
}

// hostileValues: JSON text every member is fuzzed with; hostileStrings are
// sent as JSON strings.
var hostileValues = []string{"null", "true", "[]", "{}", "-0", "1e400", "-1e400", "1e-400", "9223372036854775808",
	"-9223372036854775809", "123456789012345678901234567890", `"NaN"`, `"Infinity"`, `"-Infinity"`, `"\u0000"`, `"\ud800"`,
	"$DEEP([,10000)", "$DEEP({\"a\":,10000)", "$BIG(1048576)", "[$BIG(1000)]", "\"\xff\"", "NaN", "Infinity", "01", "0x10"}

var hostileStrings = []string{"", " ", "NaN", "nan", "inf", "-inf", "1e999", "0x1p-2", "\x00", "\ufeff", "\u202e", "$ODD/fifo.gguf", "../../../../etc/passwd"}

// request is base (baseRequest when empty) with this member set to value,
// raw JSON text: the member's place holds a marker, replaced as text, so a
// value that is not JSON reaches the export as sent.
func (m requestMember) request(config, value string) []byte {
	base := m.base
	if base == "" {
		base = baseRequest
	}
	var doc any
	dec := json.NewDecoder(strings.NewReader(strings.ReplaceAll(base, "$CONFIG", config)))
	dec.UseNumber() // numbers as written: 85899345920, not 8.589934592e+10
	if err := dec.Decode(&doc); err != nil {
		panic(fmt.Sprintf("member %s: base: %v", m.path, err))
	}
	const marker = "\x01member\x01"
	doc = setPath(doc, strings.Split(m.path, "."), marker)
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	quoted, _ := json.Marshal(marker)
	return []byte(strings.Replace(string(b), string(quoted), strings.ReplaceAll(value, "$CONFIG", config), 1))
}

// setPath sets path in doc to v, making the objects on the way.
func setPath(doc any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	if a, ok := doc.([]any); ok {
		i, err := strconv.Atoi(path[0])
		if err != nil || i >= len(a) {
			panic(fmt.Sprintf("no element %s", path[0]))
		}
		a[i] = setPath(a[i], path[1:], v)
		return a
	}
	o, ok := doc.(map[string]any)
	if !ok {
		o = map[string]any{}
	}
	o[path[0]] = setPath(o[path[0]], path[1:], v)
	return o
}

// expandValue expands the generators a seed names, so that large inputs
// cost a few bytes in the corpus: $BIG(n) a string of n letters, $DEEP(open,n)
// n nested openings, $REG(n) a registry of n GPUs, $IDS(n) n device ids of
// which none exists, $CLUSTER(n) n one-GPU nodes. The fuzzer may mutate
// the count; it is capped just past what the input limit (16 MiB) and the
// device and node limits (65536, 1024) let through.
func expandValue(v string) string {
	for _, g := range []struct {
		name string
		max  int
		gen  func(arg string, n int) string
	}{
		{"$BIG(", 17 << 20, func(_ string, n int) string { return `"` + strings.Repeat("a", n) + `"` }},
		{"$DEEP(", 1 << 20, func(open string, n int) string {
			closing := map[string]string{"[": "]", "{\"a\":": "}"}[open]
			return strings.Repeat(open, n) + "1" + strings.Repeat(closing, n)
		}},
		{"$REG(", 100000, func(_ string, n int) string { return manyGPUs(n) }},
		{"$IDS(", 100000, func(_ string, n int) string {
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf(`"cuda:%d"`, 100+i)
			}
			return "[" + strings.Join(ids, ",") + "]"
		}},
		{"$CLUSTER(", 100000, func(_ string, n int) string {
			nodes := make([]string, n)
			for i := range nodes {
				nodes[i] = `{"devices":[` + gpuSeed(0, 80) + `]}`
			}
			return "[" + strings.Join(nodes, ",") + "]"
		}},
	} {
		for {
			at := strings.Index(v, g.name)
			if at < 0 {
				break
			}
			end := strings.IndexByte(v[at:], ')')
			if end < 0 {
				break
			}
			args := v[at+len(g.name) : at+end]
			arg, count, _ := strings.Cut(args, ",")
			if count == "" {
				arg, count = "", args
			}
			n, err := strconv.Atoi(count)
			if err != nil || n < 0 {
				n = 1
			}
			v = v[:at] + g.gen(arg, min(n, g.max)) + v[at+end+1:]
		}
	}
	return v
}

// manyGPUs is a registry of n H100s of 80 to 82 GiB, one NVSwitch domain
// per 8.
func manyGPUs(n int) string {
	var b strings.Builder
	b.WriteString(`{"devices":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"kind":"cuda_gpu","index":%d,"name":"NVIDIA H100 80GB HBM3","available":true,"memory_bytes":%d,"compute_capability":"9.0"}`, i, int64(80+i%3)<<30)
	}
	b.WriteString(`],"system_io":{"interconnects":[`)
	for d := 0; d*8 < n; d++ {
		if d > 0 {
			b.WriteByte(',')
		}
		ids := make([]string, 0, 8)
		for i := d * 8; i < min(n, d*8+8); i++ {
			ids = append(ids, fmt.Sprintf(`"cuda:%d"`, i))
		}
		fmt.Fprintf(&b, `{"kind":"nvswitch","devices":[%s],"bandwidth_gb_s":900}`, strings.Join(ids, ","))
	}
	b.WriteString(`]}}`)
	return b.String()
}

// oddTree makes the files and trees the path members are fuzzed with: a
// FIFO with no writer (its blocking open waits for good), links to
// /dev/zero (endless reads), a symlink loop, a sparse 2 GiB model file, a
// model directory whose config.json is a FIFO or /dev/zero, and a sysroot
// whose /proc and /sys files are all of those.
func oddTree(f *testing.F) string {
	dir := f.TempDir()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		require.NoError(f, os.MkdirAll(filepath.Dir(p), 0o755))
		return p
	}
	fifo := func(name string) { require.NoError(f, syscall.Mkfifo(mk(name), 0o600)) }
	link := func(target, name string) { require.NoError(f, os.Symlink(target, mk(name))) }
	fifo("fifo.gguf")
	link("/dev/zero", "zero.gguf")
	link("loop", "loop")
	link("loop.gguf", "loop.gguf")
	big, err := os.Create(mk("big.gguf"))
	require.NoError(f, err)
	require.NoError(f, big.Truncate(2<<30))
	require.NoError(f, big.Close())
	fifo("dir/config.json")
	fifo("dir/model.safetensors")
	link("/dev/zero", "zdir/config.json")
	link("/dev/zero", "zdir/model.safetensors")
	fifo("root/proc/meminfo")
	link("/dev/zero", "root/proc/cpuinfo")
	link("../../../../../../../proc/self", "root/proc/self")
	link("/sys", "root/sys")
	fifo("root/dev/nvidia0")
	link("nvidia-smi", "nvidia-smi")
	return dir
}

// writesFiles reports whether a request may name a snapshot_out (which
// writes an archive wherever it names): any key that matches it ignoring
// case, or, where this decoder cannot read the request, any "out" at all.
func writesFiles(in []byte) bool {
	var doc any
	if json.Unmarshal(in, &doc) != nil {
		return strings.Contains(strings.ToLower(string(in)), "out")
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if strings.EqualFold(k, "snapshot_out") || walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(doc)
}

// hasOwnRegistry reports whether the request plans on a registry or
// cluster it carries (no detection of this host, whose free memory moves).
func hasOwnRegistry(in []byte) bool {
	var req map[string]json.RawMessage
	if json.Unmarshal(in, &req) != nil {
		return false
	}
	_, reg := req["registry"]
	_, cluster := req["cluster"]
	return reg || cluster
}
