package plan

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestDecodeRequestDefaults(t *testing.T) {
	r, err := DecodeRequest([]byte(`{"model":{"params_b":7}}`))
	require.NoError(t, err)
	assert.Equal(t, "auto", r.Quant)
	assert.Equal(t, DefaultContextLength, r.ContextLength)
	assert.Equal(t, DefaultBatchSize, r.BatchSize)
	assert.Equal(t, "", r.Engine)
	assert.Nil(t, r.Registry, "absent registry: the api layer detects")
	require.NotNil(t, r.Model)
	assert.Equal(t, int64(7e9), r.Model.Params)
}

func TestDecodeRequestFields(t *testing.T) {
	body := `{"model":{"name":"llama-3.1-8b"},"quant":"FP8","context_length":8192,"batch_size":4,
	  "kv_cache_dtype":"fp8","devices":["cuda:0"],"engine":"vllm","cpu_offload":true,"include_cpu":true,
	  "registry":{"devices":[{"id":"cuda:0","kind":"cuda_gpu","index":0,"available":true,"memory_bytes":1000,"new_field":1}]},
	  "detect":{"no_exec":true}}`
	r, err := DecodeRequest([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, "fp8", r.Quant)
	assert.Equal(t, 8192, r.ContextLength)
	assert.Equal(t, 4, r.BatchSize)
	assert.Equal(t, "fp8", r.KVCacheDType)
	assert.Equal(t, []string{"cuda:0"}, r.Devices)
	assert.Equal(t, engineVLLM, r.Engine)
	assert.True(t, r.CPUOffload)
	assert.True(t, r.IncludeCPU)
	require.NotNil(t, r.Registry, "unknown registry fields are ignored (a newer writer)")
	assert.Len(t, r.Registry.Devices, 1)
	assert.JSONEq(t, `{"no_exec":true}`, string(r.Detect))
	// GGUF types are levels too.
	r, err = DecodeRequest([]byte(`{"model":{"params_b":7},"quant":"Q4_K_M"}`))
	require.NoError(t, err)
	assert.Equal(t, "q4_k_m", r.Quant)
}

func TestDecodeRequestErrors(t *testing.T) {
	cases := []struct {
		name, body, code string
	}{
		{"syntax", `{"model":`, errs.InvalidJSON},
		{"garbage", `not json`, errs.InvalidJSON},
		{"trailing", `{"model":{"params_b":7}} {}`, errs.InvalidJSON},
		{"null", `null`, errs.InvalidArgument},
		{"array", `[1,2]`, errs.InvalidArgument},
		{"unknown key", `{"model":{"params_b":7},"contextlength":5}`, errs.InvalidArgument},
		{"unknown model key", `{"model":{"params_b":7,"size":1}}`, errs.InvalidArgument},
		{"no model", `{"quant":"auto"}`, errs.InvalidArgument},
		{"model null", `{"model":null}`, errs.InvalidArgument},
		{"model wrong type", `{"model":"llama"}`, errs.InvalidArgument},
		{"unknown model", `{"model":{"name":"no-such-model-xyz"}}`, errs.UnknownModel},
		{"negative params", `{"model":{"params_b":-1}}`, errs.InvalidArgument},
		{"huge params", `{"model":{"params":1e400}}`, ""},
		{"quant unknown", `{"model":{"params_b":7},"quant":"fp5"}`, errs.InvalidArgument},
		{"quant number", `{"model":{"params_b":7},"quant":16}`, errs.InvalidArgument},
		{"context string", `{"model":{"params_b":7},"context_length":"4096"}`, errs.InvalidArgument},
		{"context negative", `{"model":{"params_b":7},"context_length":-1}`, errs.InvalidArgument},
		{"context zero", `{"model":{"params_b":7},"context_length":0}`, errs.InvalidArgument},
		{"context 1e400", `{"model":{"params_b":7},"context_length":1e400}`, errs.InvalidArgument},
		{"context 2^70", `{"model":{"params_b":7},"context_length":1180591620717411303424}`, errs.InvalidArgument},
		{"context fraction", `{"model":{"params_b":7},"context_length":4096.5}`, errs.InvalidArgument},
		{"context too long", `{"model":{"params_b":7},"context_length":1e9}`, errs.InvalidArgument},
		{"batch 2^70", `{"model":{"params_b":7},"batch_size":1180591620717411303424}`, errs.InvalidArgument},
		{"batch bool", `{"model":{"params_b":7},"batch_size":true}`, errs.InvalidArgument},
		{"engine", `{"model":{"params_b":7},"engine":"tgi"}`, errs.InvalidArgument},
		{"kv dtype", `{"model":{"params_b":7},"kv_cache_dtype":"fp4"}`, errs.InvalidArgument},
		{"devices empty", `{"model":{"params_b":7},"devices":[]}`, errs.InvalidArgument},
		{"devices repeated", `{"model":{"params_b":7},"devices":["cuda:0","cuda:0"]}`, errs.InvalidArgument},
		{"devices type", `{"model":{"params_b":7},"devices":"cuda:0"}`, errs.InvalidArgument},
		{"offload type", `{"model":{"params_b":7},"cpu_offload":"yes"}`, errs.InvalidArgument},
		{"flash attention type", `{"model":{"params_b":7},"flash_attention":"off"}`, errs.InvalidArgument},
		{"registry bad", `{"model":{"params_b":7},"registry":{"devices":[{"kind":"warp_drive"}]}}`, errs.InvalidArgument},
		{"registry and cluster", `{"model":{"params_b":7},"registry":{"devices":[]},"cluster":[{"devices":[]}]}`, errs.InvalidArgument},
		{"cluster empty", `{"model":{"params_b":7},"cluster":[]}`, errs.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRequest([]byte(c.body))
			require.Error(t, err)
			if c.code != "" {
				assert.Equal(t, c.code, errs.CodeOf(err), err.Error())
			} else {
				assert.Contains(t, []string{errs.InvalidArgument, errs.InvalidJSON}, errs.CodeOf(err), err.Error())
			}
		})
	}
}

func TestUnknownDeviceIsInvalidArgument(t *testing.T) {
	r := reg(t, nil)
	r.Devices = append(r.Devices, h100(0))
	require.NoError(t, r.Validate())
	req := request(t, `{"model":{"params_b":7},"devices":["cuda:7"]}`, r)
	_, err := PlanSharding(req)
	require.Error(t, err)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	_, err = SuggestQuant(req)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
}

func TestClusterRequestDoesNotDetect(t *testing.T) {
	r, err := DecodeRequest([]byte(`{"model":{"params_b":7},"cluster":[{"devices":[{"kind":"cuda_gpu","index":0,"available":true,"memory_bytes":85520809984}]}]}`))
	require.NoError(t, err)
	require.NotNil(t, r.Registry, "a placeholder registry keeps the api layer from detecting")
	assert.Empty(t, r.Registry.Devices)
	require.Len(t, r.Cluster, 1)
}

// Issue 12 item 2: a context beyond the model's maximum is refused when
// asked for, and the default is lowered to the model's maximum and said;
// --max-model-len is never above the model's limit.
func TestContextBeyondTheModel(t *testing.T) {
	_, err := DecodeRequest([]byte(`{"model":{"name":"llama-3.1-70b"},"context_length":200000}`))
	require.Error(t, err)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	assert.Contains(t, errs.MessageOf(err), "131072")

	r := reg(t, []registry.Device{h100(0)})
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"context_length":131072,"engine":"vllm"}`, r))
	require.True(t, a.Fits)
	assert.Contains(t, strings.Join(a.EngineArgs[engineVLLM], " "), "--max-model-len 131072")

	small := request(t, `{"model":{"name":"Llama-2-7B"},"engine":"vllm"}`, r)
	require.Positive(t, small.Model.MaxContext)
	require.Less(t, small.Model.MaxContext, DefaultContextLength, "the catalog's Llama-2-7B is shorter than the default context")
	assert.Equal(t, small.Model.MaxContext, small.ContextLength)
	a = shard(t, small)
	require.True(t, a.Fits)
	args := a.EngineArgs[engineVLLM]
	i := slices.Index(args, "--max-model-len")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, strconv.Itoa(small.Model.MaxContext), args[i+1])
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "defaults to the model's maximum context")
	assert.LessOrEqual(t, a.MaxContextLength, small.Model.MaxContext)
}

// TestFlashAttentionOff: "flash_attention": false (llama.cpp -fa off) sizes
// the working buffer for the fp32 attention scores of a micro-batch over the
// whole context; absent or true, the buffer does not grow with the context.
func TestFlashAttentionOff(t *testing.T) {
	act := func(body string) int64 {
		r, err := DecodeRequest([]byte(body))
		require.NoError(t, err)
		return r.estimate("fp16", r.ContextLength, r.BatchSize).ActivationsBytes
	}
	on := act(`{"model":{"name":"Llama-3.2-1B"},"context_length":32768,"engine":"llama.cpp"}`)
	assert.Equal(t, on, act(`{"model":{"name":"Llama-3.2-1B"},"context_length":32768,"engine":"llama.cpp","flash_attention":true}`))
	off := act(`{"model":{"name":"Llama-3.2-1B"},"context_length":32768,"engine":"llama.cpp","flash_attention":false}`)
	// llama.cpp 34af94cd allocated 2134 MiB for this (internal/calibration/data/llamacpp_measurements.json).
	assert.InEpsilon(t, 2134.0, float64(off)/(1<<20), 0.02)
	assert.Greater(t, off, 7*on)
}
