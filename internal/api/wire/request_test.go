package wire_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
)

// decode is a request as the api layer hands it to the planner: decoded,
// then checked by plan.Validate.
func decode(body []byte) (*planreq.Request, []byte, error) {
	req, detect, err := wire.DecodeRequest(body)
	if err != nil {
		return nil, nil, err
	}
	return req, detect, plan.Validate(req)
}

func TestDecodeRequestDefaults(t *testing.T) {
	r, detect, err := decode([]byte(`{"model":{"params_b":7}}`))
	require.NoError(t, err)
	assert.Nil(t, detect)
	assert.Equal(t, "auto", r.Quant)
	assert.Equal(t, planreq.DefaultContextLength, r.ContextLength)
	assert.Equal(t, planreq.DefaultBatchSize, r.BatchSize)
	assert.Equal(t, "", r.Engine)
	assert.Equal(t, planreq.PlacementServing, r.Placement)
	assert.Nil(t, r.Registry, "absent registry: the api layer detects")
	require.NotNil(t, r.Model)
	assert.Equal(t, int64(7e9), r.Model.Params)
}

func TestDecodeRequestFields(t *testing.T) {
	body := `{"model":{"name":"llama-3.1-8b"},"quant":"FP8","context_length":8192,"batch_size":4,
	  "kv_cache_dtype":"fp8","devices":["cuda:0"],"engine":"vllm","cpu_offload":true,"include_cpu":true,
	  "registry":{"devices":[{"id":"cuda:0","kind":"cuda_gpu","index":0,"available":true,"memory_bytes":1000,"new_field":1}]},
	  "detect":{"no_exec":true}}`
	r, detect, err := decode([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, "fp8", r.Quant)
	assert.Equal(t, 8192, r.ContextLength)
	assert.Equal(t, 4, r.BatchSize)
	assert.Equal(t, "fp8", r.KVCacheDType)
	assert.Equal(t, []string{"cuda:0"}, r.Devices)
	assert.Equal(t, "vllm", r.Engine)
	assert.True(t, r.CPUOffload)
	assert.True(t, r.IncludeCPU)
	require.NotNil(t, r.Registry, "unknown registry fields are ignored (a newer writer)")
	assert.Len(t, r.Registry.Devices, 1)
	assert.True(t, r.RegistryShared, "a registry decoded from the request is shared and never changed")
	assert.JSONEq(t, `{"no_exec":true}`, string(detect))
	for body, want := range map[string]string{`"fewest"`: planreq.PlacementFewest, `" Fewest "`: planreq.PlacementFewest,
		`"serving"`: planreq.PlacementServing, `"auto"`: planreq.PlacementServing} {
		r, _, err = decode([]byte(`{"model":{"params_b":7},"placement":` + body + `}`))
		require.NoError(t, err, body)
		assert.Equal(t, want, r.Placement, body)
	}
	// GGUF types are levels too.
	r, _, err = decode([]byte(`{"model":{"params_b":7},"quant":"Q4_K_M"}`))
	require.NoError(t, err)
	assert.Equal(t, "q4_k_m", r.Quant)
	// engine_version as vLLM's banner or pip writes it.
	r, _, err = decode([]byte(`{"model":{"params_b":7},"engine":"vllm","engine_version":" V0.6.4.post1 "}`))
	require.NoError(t, err)
	assert.Equal(t, "0.6.4.post1", r.EngineVersion)
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
		{"model wrong type", `{"model":7}`, errs.InvalidArgument},
		{"model string unknown", `{"model":"llama"}`, errs.UnknownModel},
		{"model string bare number", `{"model":"70"}`, errs.InvalidArgument},
		{"model string empty", `{"model":" "}`, errs.InvalidArgument},
		{"model string missing file", `{"model":"/nonexistent/x.gguf"}`, errs.ModelFile},
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
		{"engine version form", `{"model":{"params_b":7},"engine_version":"newest"}`, errs.InvalidArgument},
		{"engine version type", `{"model":{"params_b":7},"engine_version":11}`, errs.InvalidArgument},
		{"engine version other engine", `{"model":{"params_b":7},"engine":"llama.cpp","engine_version":"0.11.0"}`, errs.InvalidArgument},
		{"devices empty", `{"model":{"params_b":7},"devices":[]}`, errs.InvalidArgument},
		{"devices repeated", `{"model":{"params_b":7},"devices":["cuda:0","cuda:0"]}`, errs.InvalidArgument},
		{"devices type", `{"model":{"params_b":7},"devices":"cuda:0"}`, errs.InvalidArgument},
		{"offload type", `{"model":{"params_b":7},"cpu_offload":"yes"}`, errs.InvalidArgument},
		{"placement unknown", `{"model":{"params_b":7},"placement":"spread"}`, errs.InvalidArgument},
		{"placement type", `{"model":{"params_b":7},"placement":1}`, errs.InvalidArgument},
		{"flash attention type", `{"model":{"params_b":7},"flash_attention":"off"}`, errs.InvalidArgument},
		{"registry bad", `{"model":{"params_b":7},"registry":{"devices":[{"kind":"warp_drive"}]}}`, errs.InvalidArgument},
		{"registry and cluster", `{"model":{"params_b":7},"registry":{"devices":[]},"cluster":[{"devices":[]}]}`, errs.InvalidArgument},
		{"cluster empty", `{"model":{"params_b":7},"cluster":[]}`, errs.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := decode([]byte(c.body))
			require.Error(t, err)
			if c.code != "" {
				assert.Equal(t, c.code, errs.CodeOf(err), err.Error())
			} else {
				assert.Contains(t, []string{errs.InvalidArgument, errs.InvalidJSON}, errs.CodeOf(err), err.Error())
			}
		})
	}
}

func TestClusterRequestDoesNotDetect(t *testing.T) {
	r, _, err := decode([]byte(`{"model":{"params_b":7},"cluster":[{"devices":[{"kind":"cuda_gpu","index":0,"available":true,"memory_bytes":85520809984}]}]}`))
	require.NoError(t, err)
	require.NotNil(t, r.Registry, "a placeholder registry keeps the api layer from detecting")
	assert.Empty(t, r.Registry.Devices)
	require.Len(t, r.Cluster, 1)
}

// The extra models of a training request are resolved when it is decoded,
// so the planner never reads a model file or the catalog for them; a model
// that cannot be resolved is refused whichever method is asked.
func TestTrainingModelsAreResolvedWhenDecoded(t *testing.T) {
	r, _, err := decode([]byte(`{"model":{"params_b":7},"training":{"method":"distillation","teacher":{"name":"Llama-3.1-70B"}}}`))
	require.NoError(t, err)
	require.NotNil(t, r.Training.Teacher)
	assert.Equal(t, "Llama-3.1-70B", r.Training.Teacher.Name)
	assert.Nil(t, r.Training.Reference, "absent: the planner uses the trained model")

	for _, method := range []string{"distillation", "full"} {
		_, _, err = decode([]byte(`{"model":{"params_b":7},"training":{"method":"` + method + `","teacher":{"name":"no-such-model-xyz"}}}`))
		require.Error(t, err, method)
		assert.Equal(t, errs.UnknownModel, errs.CodeOf(err), method)
		assert.Contains(t, errs.MessageOf(err), "training.teacher", method)
	}
}

// draft_model is a model like "model" (speculative decoding, llama.cpp
// -md); mmproj is a vision projector given by file or by size, kept on the
// GPU unless "offload" is false (llama.cpp --no-mmproj-offload).
func TestDecodeRequestDraftAndProjector(t *testing.T) {
	r, _, err := decode([]byte(`{"model":{"name":"Qwen3-32B"},"draft_model":{"name":"Qwen3-0.6B"},
	  "mmproj":{"size_bytes":1300000000,"offload":false}}`))
	require.NoError(t, err)
	require.NotNil(t, r.Draft)
	assert.Equal(t, "Qwen3-0.6B", r.Draft.Model.Name)
	require.NotNil(t, r.Projector)
	assert.Equal(t, int64(1300000000), r.Projector.Bytes)
	assert.True(t, r.Projector.OnHost)

	r, _, err = decode([]byte(`{"model":{"name":"Qwen3-32B"},"draft_model":"Qwen3-0.6B"}`))
	require.NoError(t, err)
	require.NotNil(t, r.Draft)
	assert.Nil(t, r.Projector)

	for _, body := range []string{
		`{"model":{"name":"Qwen3-32B"},"mmproj":{}}`,
		`{"model":{"name":"Qwen3-32B"},"mmproj":{"size_bytes":-1}}`,
		`{"model":{"name":"Qwen3-32B"},"mmproj":{"path":"/no/such/mmproj.gguf"}}`,
		`{"model":{"name":"Qwen3-32B"},"mmproj":{"size_bytes":1,"bogus":1}}`,
	} {
		_, _, err := decode([]byte(body))
		require.Error(t, err, body)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), body)
	}
	_, _, err = decode([]byte(`{"model":{"name":"Qwen3-32B"},"draft_model":{"name":"no-such-model-x"}}`))
	assert.Equal(t, errs.UnknownModel, errs.CodeOf(err))
}

// An mmproj given by path is read for its vision encoder (a Gemma 3
// projector's header: clip.projector_type gemma3 and its clip.vision.*
// shape), which sizes the projector's compute buffer; a file that is not a
// projector GGUF is counted by its size alone.
func TestDecodeProjectorFileHeader(t *testing.T) {
	var b bytes.Buffer
	le := func(v any) { require.NoError(t, binary.Write(&b, binary.LittleEndian, v)) }
	str := func(s string) { le(uint64(len(s))); b.WriteString(s) }
	le(uint32(0x46554747)) // "GGUF"
	le(uint32(3))
	le(uint64(0))
	le(uint64(8))
	for _, kv := range [][2]string{{"general.architecture", "clip"}, {"clip.projector_type", "gemma3"}} {
		str(kv[0])
		le(uint32(8)) // string
		str(kv[1])
	}
	for _, kv := range []struct {
		k string
		v uint32
	}{{"image_size", 896}, {"patch_size", 14}, {"embedding_length", 1152}, {"feed_forward_length", 4304},
		{"attention.head_count", 16}, {"block_count", 27}} {
		str("clip.vision." + kv.k)
		le(uint32(4)) // uint32
		le(kv.v)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mmproj-model-f16.gguf")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o600))

	r, _, err := decode([]byte(`{"model":{"name":"Qwen3-32B"},"mmproj":{"path":` + strconv.Quote(path) + `}}`))
	require.NoError(t, err)
	require.NotNil(t, r.Projector)
	assert.Equal(t, int64(b.Len()), r.Projector.Bytes)
	require.NotNil(t, r.Projector.Encoder)
	assert.Equal(t, 4096, r.Projector.Encoder.Patches())

	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("not a projector"), 0o600))
	r, _, err = decode([]byte(`{"model":{"name":"Qwen3-32B"},"mmproj":{"path":` + strconv.Quote(text) + `}}`))
	require.NoError(t, err)
	require.NotNil(t, r.Projector)
	assert.Equal(t, int64(len("not a projector")), r.Projector.Bytes)
	assert.Nil(t, r.Projector.Encoder)
}
