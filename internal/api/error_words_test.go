package api

import (
	"context"
	"regexp"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goWords are spellings that only the Go side knows: decoder prefixes, Go
// type and package names, Go's slice, map and pointer type syntax. None may
// reach a host (issue 24 item 3): error messages are in the contract's
// words (docs/requests.md).
var goWords = regexp.MustCompile(`Go struct|Go value|json: |main\.|wire\.|api\.|model\.Spec|registry\.|planreq\.|\[\][a-z]|map\[|interface \{|\*[a-zA-Z]|float64|int64|RawMessage|wireRequest|wireOptions|wireTraining`)

// TestErrorMessagesSpeakTheContract sends bad requests of every shape to
// every entry point and checks that no message names a Go type.
func TestErrorMessagesSpeakTheContract(t *testing.T) {
	reg := `{"schema_version":1,"devices":[{"id":"cpu:0","kind":"cpu","family":"cpu","available":true,"memory_bytes":1000000000}]}`
	requests := []string{
		`{"model":{"name":5}}`, `{"model":{"params_b":"7"}}`, `{"model":{"config":[1]}}`,
		`{"model":5}`, `{"model":[]}`, `{"model":true}`,
		`{"model":{"name":"llama-3-8b"},"contxt_length":5}`,
		`{"model":{"name":"llama-3-8b"},"devices":"cuda:0"}`, `{"model":{"name":"llama-3-8b"},"devices":[1]}`,
		`{"model":{"name":"llama-3-8b"},"cpu_offload":"yes"}`, `{"model":{"name":"llama-3-8b"},"memory_fraction":"x"}`,
		`{"model":{"name":"llama-3-8b"},"quant":5}`, `{"model":{"name":"llama-3-8b"},"engine":[1]}`,
		`{"model":{"name":"llama-3-8b"},"context_length":"4096"}`, `{"model":{"name":"llama-3-8b"},"context_length":1.5}`,
		`{"model":{"name":"llama-3-8b"},"training":{"method":5}}`, `{"model":{"name":"llama-3-8b"},"training":{"lora_targets":"q"}}`,
		`{"model":{"name":"llama-3-8b"},"training":{"seq_len":1.5}}`, `{"model":{"name":"llama-3-8b"},"training":{"metod":"lora"}}`,
		`{"model":{"name":"llama-3-8b"},"training":{"teacher":5}}`, `{"model":{"name":"llama-3-8b"},"training":{"teacher":{"nam":"x"}}}`,
		`{"model":{"name":"llama-3-8b"},"registry":{"devices":5}}`, `{"model":{"name":"llama-3-8b"},"registry":[]}`,
		`{"model":{"name":"llama-3-8b"},"registry":{"devices":[{"memory_bytes":"x"}]}}`,
		`{"model":{"name":"llama-3-8b"},"cluster":{}}`, `{"model":{"name":"llama-3-8b"},"cluster":[{"devices":{}}]}`,
		`{"model":{"name":"llama-3-8b"},"detect":{"timeout_ms":"x"}}`, `{"model":{"name":"llama-3-8b"},"detect":{"env":{"A":1}}}`,
		`{"model":{"name":"llama-3-8b"},"detect":{"sysrot":"/"}}`, `{"model":{"name":"llama-3-8b"},"detect":[]}`,
		`{"model":{"name":"llama-3-8b"},"replicas":[]}`, `{"model":{"name":"llama-3-8b"},"tensor_parallel_size":"2"}`,
		`{"model":{"name":"llama-3-8b"}`, `{"model":{"name":"llama-3-8b"}} x`, `[1]`, `"x"`, `7`, `{"a":}`,
		`{"model":{"path":"/nonexistent/x.gguf"}}`, `{"model":{"name":"no-such-model-xyz"}}`,
		`{"model":{"name":"llama-3-8b"},"registry":` + reg + `,"devices":["cuda:9"]}`,
	}
	entries := map[string]func(context.Context, []byte, Env) []byte{
		"suggest": SuggestQuant, "plan": PlanSharding, "train": EstimateTraining,
	}
	for _, in := range requests {
		for name, call := range entries {
			assertContractWords(t, name+" "+in, call(context.Background(), []byte(in), NoEnv))
		}
	}
	for _, in := range []string{`{"sysrot":"/"}`, `{"timeout_ms":"x"}`, `{"env":{"A":1}}`, `[1]`, `{"backends":"cuda"}`, `{"no_exec":1}`} {
		assertContractWords(t, "detect "+in, Detect(context.Background(), []byte(in), NoEnv))
	}
}

func assertContractWords(t *testing.T, what string, out []byte) {
	t.Helper()
	var e struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(out, &e), what)
	if e.Error == nil {
		return // a planning refusal or an answer: not what this test is about
	}
	assert.NotRegexp(t, goWords, e.Error.Message, what)
	assert.NotEmpty(t, e.Error.Message, what)
}

// TestUnknownFieldNamesTheClosest: a misspelt key is refused with the name
// it was probably meant to be, at any depth of the request.
func TestUnknownFieldNamesTheClosest(t *testing.T) {
	for in, want := range map[string]string{
		`{"model":{"name":"llama-3-8b"},"contxt_length":5}`:                `request: unknown field "contxt_length"; did you mean "context_length"?`,
		`{"model":{"nme":"llama-3-8b"}}`:                                   `request: model: unknown field "nme"; did you mean "name"?`,
		`{"model":{"name":"llama-3-8b"},"training":{"optimiser":"adamw"}}`: `request: training: unknown field "optimiser"; did you mean "optimizer"?`,
		`{"model":{"name":"llama-3-8b"},"detect":{"sysrot":"/"}}`:          `options: unknown field "sysrot"; did you mean "sysroot"?`,
	} {
		assert.JSONEq(t, `{"error":{"code":"invalid_argument","message":`+quote(want)+`}}`,
			string(PlanSharding(context.Background(), []byte(in), NoEnv)), in)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A member whose own decoder refuses its value (an integer, context_length's
// integer or "auto") is named, as a wrong JSON type is: context_length
// "8k" answered "request: expected an integer, got "8k"".
func TestIntegerMembersNameThemselves(t *testing.T) {
	for in, want := range map[string]string{
		`{"model":"8b","context_length":"8k"}`:                      `request: context_length: expected an integer or "auto", got "8k"`,
		`{"model":"8b","batch_size":1.5}`:                           `request: batch_size: expected an integer, got the number 1.5`,
		`{"model":"8b","mmproj":{"size_bytes":"1G"}}`:               `request: mmproj.size_bytes: expected an integer, got a string`,
		`{"model":"8b","training":{"method":"lora","seq_len":"x"}}`: `request: training.seq_len: expected an integer`,
	} {
		var e struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(PlanSharding(context.Background(), []byte(in), NoEnv), &e), in)
		assert.Equal(t, "invalid_argument", e.Error.Code, in)
		assert.Contains(t, e.Error.Message, want, in)
	}
}

// TestTrainingMembersNameThemselves: a training member of the wrong JSON
// type is named by its path, training.seq_len, as mmproj.size_bytes and
// every other member is, not "training: seq_len" (the two-prefix form the
// training object's own decoding gave). An unknown training key keeps the
// object's name, as an unknown key of model does.
func TestTrainingMembersNameThemselves(t *testing.T) {
	for in, want := range map[string]string{
		`{"model":"8b","training":{"method":"lora","seq_len":"x"}}`:                `request: training.seq_len: expected an integer, got a string`,
		`{"model":"8b","training":{"method":"lora","micro_batch":1.5}}`:            `request: training.micro_batch: expected an integer, got the number 1.5`,
		`{"model":"8b","training":{"method":5}}`:                                   `request: training.method: expected a string, got the number 5`,
		`{"model":"8b","training":{"method":"lora","lora_targets":"q"}}`:           `request: training.lora_targets: expected an array of strings, got a string`,
		`{"model":"8b","training":{"method":"lora","gradient_checkpointing":"y"}}`: `request: training.gradient_checkpointing: expected true or false, got a string`,
		`{"model":"8b","training":"lora"}`:                                         `request: training: expected an object, got a string`,
		`{"model":"8b","training":{"metod":"lora"}}`:                               `request: training: unknown field "metod"; did you mean "method"?`,
	} {
		assert.JSONEq(t, `{"error":{"code":"invalid_argument","message":`+quote(want)+`}}`,
			string(EstimateTraining(context.Background(), []byte(in), NoEnv)), in)
	}
}

// TestTrainingModelsAreNamedOnce: an extra model of a training request
// (teacher, reference, reward, critic) that is refused is named once,
// whether its JSON was refused ("expected an object") or the model it
// names ("not in the catalog"); the JSON errors read "request:
// training.teacher: request: training.teacher: ..." before.
func TestTrainingModelsAreNamedOnce(t *testing.T) {
	for in, want := range map[string]string{
		`{"model":"8b","training":{"method":"lora","teacher":5}}`:                  `request: training.teacher: expected an object, got the number 5`,
		`{"model":"8b","training":{"method":"lora","critic":{"nam":"x"}}}`:         `request: training.critic: unknown field "nam"; did you mean "name"?`,
		`{"model":"8b","training":{"method":"lora","reward":"70"}}`:                `request: training.reward: model "70": a bare number is ambiguous; give a unit (70b for billions, 70m for millions)`,
		`{"model":"8b","training":{"method":"lora","reference":{"params_b":"x"}}}`: `request: training.reference: params_b: expected a number, got a string`,
	} {
		assert.JSONEq(t, `{"error":{"code":"invalid_argument","message":`+quote(want)+`}}`,
			string(EstimateTraining(context.Background(), []byte(in), NoEnv)), in)
	}
}

// TestTrainingCountsBelowOneAreRefused: the training counts are 1 or more
// (schema/request.schema.json, "minimum": 1). Given below that they were
// read as the default (0), passed as 1 (lora_rank -3: trainable_params
// -1557504, negative gradient and optimizer bytes) or reached a slice
// bound (num_devices -2: a panic, "internal" through the C ABI). Each is
// refused with its name and range, as seq_len -1 was.
func TestTrainingCountsBelowOneAreRefused(t *testing.T) {
	for in, want := range map[string]string{
		`{"model":"8b","training":{"method":"lora","lora_rank":-3}}`:      `request: training.lora_rank -3 is outside [1, 65536]`,
		`{"model":"8b","training":{"method":"lora","lora_rank":0}}`:       `request: training.lora_rank 0 is outside [1, 65536]`,
		`{"model":"8b","training":{"method":"full","num_devices":-2}}`:    `request: training.num_devices -2 is outside [1, 65536]`,
		`{"model":"8b","training":{"method":"full","num_devices":0}}`:     `request: training.num_devices 0 is outside [1, 65536]`,
		`{"model":"8b","training":{"method":"full","tensor_parallel":0}}`: `request: training.tensor_parallel 0 is outside [1, 65536]`,
		`{"model":"8b","training":{"method":"full","micro_batch":0}}`:     `request: training.micro_batch 0 is outside [1, 65536]`,
		`{"model":"8b","training":{"method":"full","seq_len":0}}`:         `request: training.seq_len 0 is outside [1, 16777216]`,
		`{"model":"8b","training":{"method":"full","seq_len":-1}}`:        `request: training.seq_len -1 is outside [1, 16777216]`,
	} {
		assert.JSONEq(t, `{"error":{"code":"invalid_argument","message":`+quote(want)+`}}`,
			string(EstimateTraining(context.Background(), []byte(in), NoEnv)), in)
	}
}

// TestNullRequestIsWordedAlike: "null" is refused by every entry point
// that takes a planning request in the same words; rent's lacked the
// ", got null" the others say.
func TestNullRequestIsWordedAlike(t *testing.T) {
	for name, call := range map[string]func(context.Context, []byte, Env) []byte{
		"suggest": SuggestQuant, "plan": PlanSharding, "train": EstimateTraining, "rent": Rent,
	} {
		assert.JSONEq(t, `{"error":{"code":"invalid_argument","message":"request: must be a JSON object, got null"}}`,
			string(call(context.Background(), []byte(`null`), NoEnv)), name)
	}
}

// TestFitTakesTheSGLangEngine: fit's "engine" takes sglang as the
// planning request's does (include/ai_hwaccel.h and
// schema/fit-request.schema.json listed vllm, llama.cpp and none only).
func TestFitTakesTheSGLangEngine(t *testing.T) {
	in := `{"engine":"sglang","filter":"qwen3-8b","registry":{"devices":[{"kind":"cuda_gpu","available":true,"memory_bytes":85899345920,"compute_capability":"9.0"}]}}`
	var a struct {
		Models []struct {
			Model string `json:"model"`
			Fits  *bool  `json:"fits"`
		} `json:"models"`
	}
	out := Fit(context.Background(), []byte(in), NoEnv)
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	require.NotEmpty(t, a.Models, "%s", out)
	require.NotNil(t, a.Models[0].Fits)
	assert.True(t, *a.Models[0].Fits, "%s", out)
}

// TestDetectionRangesEchoTheNumberAsWritten: an out-of-range timeout_ms or
// cache_ttl_ms is echoed as the request wrote it; Go's %v printed
// 86400001 as 8.6400001e+07 and 1000000 as 1e+06.
func TestDetectionRangesEchoTheNumberAsWritten(t *testing.T) {
	for in, want := range map[string]string{
		`{"cache_ttl_ms":86400001}`: "cache_ttl_ms 86400001 is outside",
		`{"timeout_ms":1000000}`:    "timeout_ms 1000000 is outside",
		`{"timeout_ms":-0.5}`:       "timeout_ms -0.5 is outside",
	} {
		out := string(Detect(context.Background(), []byte(in), NoEnv))
		assert.Contains(t, out, want, in)
		assert.NotContains(t, out, "e+", in)
	}
}
