// The package is cgo glue: without cgo there is nothing to test.

//go:build cgo

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry/regjson"
)

var stableCodes = map[string]bool{
	"invalid_json": true, "invalid_argument": true, "unknown_model": true, "model_file": true,
	"too_large": true, "detection_failed": true, "forked_child": true, "internal": true,
}

// envelope is every answer's top level: either an answer or an error object.
type envelope struct {
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// checkEnvelope asserts answer is one JSON object: an answer, or an error
// object with a stable code and a message. It returns the code ("" for an answer).
func checkEnvelope(t testing.TB, answer string) string {
	t.Helper()
	require.True(t, json.Valid([]byte(answer)), "not JSON: %.300q", answer)
	require.True(t, strings.HasPrefix(answer, "{"), "not an object: %.300q", answer)
	var e envelope
	require.NoError(t, json.Unmarshal([]byte(answer), &e))
	if e.Error == nil {
		return ""
	}
	require.True(t, stableCodes[e.Error.Code], "unstable code %q", e.Error.Code)
	require.NotEmpty(t, e.Error.Message)
	return e.Error.Code
}

func fixtureOptions(t testing.TB, machine string) string {
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "machines", machine))
	require.NoError(t, err)
	b, err := json.Marshal(map[string]any{"sysroot": filepath.Join(dir, "root"), "path": filepath.Join(dir, "bin"), "timeout_ms": 2000})
	require.NoError(t, err)
	return string(b)
}

func TestExportsAnswerNullAndHostileInput(t *testing.T) {
	tests := []struct {
		name       string
		in         []byte
		detectCode string // "" = an answer
		planCode   string
	}{
		{"NULL", nil, "", "invalid_argument"},
		{"empty", []byte{}, "", "invalid_argument"},
		{"truncated", []byte("{"), "invalid_json", "invalid_json"},
		{"array", []byte("[]"), "invalid_argument", "invalid_argument"},
		{"invalid UTF-8", []byte{0xff, 0xfe}, "invalid_json", "invalid_json"},
		{"too deep", []byte(strings.Repeat("[", 100000) + strings.Repeat("]", 100000)), "invalid_json", "invalid_json"},
		{"too large", []byte(strings.Repeat(" ", 16<<20+1)), "too_large", "too_large"},
	}
	for _, tc := range tests {
		for i, name := range exportNames {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				answer, ok := callExport(i, tc.in)
				require.True(t, ok, "NULL answer")
				want := tc.planCode
				if i == 0 {
					want = tc.detectCode
				}
				assert.Equal(t, want, checkEnvelope(t, answer), "%.300s", answer)
			})
		}
	}
}

func TestDetectFixture(t *testing.T) {
	answer, ok := callExport(0, []byte(fixtureOptions(t, "dgx-h100")))
	require.True(t, ok)
	require.Equal(t, "", checkEnvelope(t, answer))
	var reg struct {
		Devices []struct {
			ID       string `json:"id"`
			PCIBusID string `json:"pci_bus_id"`
		} `json:"devices"`
	}
	require.NoError(t, json.Unmarshal([]byte(answer), &reg))
	require.Len(t, reg.Devices, 9)
	assert.Equal(t, "cuda:0", reg.Devices[1].ID)
	assert.Equal(t, "0000:18:00.0", reg.Devices[1].PCIBusID)
}

// The environment is read with C getenv at call time, so a setenv after the
// runtime started is seen (os.Setenv also calls C setenv in cgo programs).
func TestGetenvAtCallTime(t *testing.T) {
	const name = "AI_HWACCEL_CAPI_TEST_VAR"
	_, set := cGetenv(name)
	require.False(t, set)
	require.NoError(t, os.Setenv(name, "x1"))
	defer os.Unsetenv(name)
	v, set := cGetenv(name)
	assert.True(t, set)
	assert.Equal(t, "x1", v)
	// Set but empty is not unset: CUDA_VISIBLE_DEVICES="" hides every GPU.
	require.NoError(t, os.Setenv(name, ""))
	v, set = cGetenv(name)
	assert.True(t, set)
	assert.Equal(t, "", v)
}

func TestForkedChildFlag(t *testing.T) {
	setForked(true)
	defer setForked(false)
	for i, name := range exportNames {
		answer, ok := callExport(i, []byte("{}"))
		require.True(t, ok)
		assert.Equal(t, "forked_child", checkEnvelope(t, answer), name)
		assert.Contains(t, answer, name)
	}
	// guard's own check (behind shim.c's) answers the same.
	answer := callGoDetect("{}")
	assert.Equal(t, "forked_child", checkEnvelope(t, answer))
}

// A forked child's answer whose allocation fails is NULL, as the header
// promises for any answer, and the host is not aborted: guard's own check
// and shim.c's both allocate with aihw_answer_alloc, never C.CString, whose
// malloc failure aborts the process.
func TestForkedChildAnswerAllocFails(t *testing.T) {
	setForked(true)
	defer setForked(false)
	defer failAllocs(0)
	failAllocs(1)
	_, ok := callGoDetectRaw("{}")
	assert.False(t, ok, "guard's forked answer with its allocation failing is NULL")
	failAllocs(1)
	_, ok = callExport(0, []byte("{}"))
	assert.False(t, ok, "shim.c's forked answer with its allocation failing is NULL")
	failAllocs(0)
	// The next allocations succeed again.
	answer, ok := callGoDetectRaw("{}")
	require.True(t, ok)
	assert.Equal(t, "forked_child", checkEnvelope(t, answer))
}

func TestGuardRecoversPanics(t *testing.T) {
	answer := fmt.Sprint(goString(guard("hwaccel_test", nil, func(context.Context, []byte, api.Env) []byte {
		panic("boom")
	})))
	assert.Equal(t, "internal", checkEnvelope(t, answer))
	assert.Contains(t, answer, "panic in hwaccel_test: boom")
}

// fuzzExport feeds arbitrary bytes to export i: every answer must be an
// envelope, never NULL, never a crash.
func fuzzExport(f *testing.F, i int, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		answer, ok := callExport(i, in)
		require.True(t, ok, "NULL answer")
		if checkEnvelope(t, answer) == "" {
			checkAnswer(t, i, answer, requestUsable(in))
		}
	})
}

var planSeeds = []string{
	"", "{", "[]", `{"model":{"params_b":70}}`, `{"model":{"name":"llama-3-70b"},"quant":"int4"}`,
	`{"model":{"params":1e999}}`, `{"model":{"params_b":7},"registry":{"schema_version":1,"devices":[{"id":"cpu:0","kind":"cpu","family":"cpu","index":0,"available":true,"memory_bytes":68719476736}]}}`,
	`{"model":{"config":{"num_hidden_layers":80,"hidden_size":8192}},"detect":{"no_exec":true}}`,
	// Several accelerators: tensor parallel over a link, pipeline over unequal
	// cards, host offload; the answer invariants see real shards.
	`{"model":{"name":"llama-3.1-70b"},"engine":"vllm","registry":{"devices":[` + gpuSeed(0, 80) + `,` + gpuSeed(1, 80) + `,` + gpuSeed(2, 80) + `,` + gpuSeed(3, 80) +
		`],"system_io":{"interconnects":[{"kind":"nvswitch","devices":["cuda:0","cuda:1","cuda:2","cuda:3"],"bandwidth_gb_s":900}]}}}`,
	`{"model":{"params_b":45},"quant":"fp16","registry":{"devices":[` + gpuSeed(0, 80) + `,` + gpuSeed(1, 24) + `]}}`,
	`{"model":{"params_b":120},"cpu_offload":true,"registry":{"devices":[{"kind":"cpu","index":0,"available":true,"memory_bytes":549755813888},` + gpuSeed(0, 24) + `]}}`,
	`{"model":{"name":"llama-3.1-8b"},"training":{"method":"lora","lora_rank":16},"registry":{"devices":[` + gpuSeed(0, 80) + `,` + gpuSeed(1, 80) + `]}}`,
}

// gpuSeed is one CUDA device of gib GiB as a registry entry.
func gpuSeed(index, gib int) string {
	return fmt.Sprintf(`{"kind":"cuda_gpu","index":%d,"name":"NVIDIA H100 80GB HBM3","available":true,"memory_bytes":%d,"compute_capability":"9.0"}`, index, int64(gib)<<30)
}

func FuzzDetect(f *testing.F) {
	seeds := []string{"", "{", "[]", `{"timeout_ms":1e999}`, `{"sysroot":"/nonexistent"}`, `{"backends":["nope"]}`, "\xff"}
	for _, m := range []string{"dgx-h100", "cpu-only", "mi300x-8", "gaudi2-8", "nvidia-mig", "tpu-v4", "trn1-2xlarge", "intel-max-1100-x2"} {
		seeds = append(seeds, fixtureOptions(f, m))
	}
	// hostile's tools hang until the timeout: 2 s an input is too slow to fuzz.
	seeds = append(seeds, strings.Replace(fixtureOptions(f, "hostile"), `"timeout_ms":2000`, `"timeout_ms":50`, 1))
	// Visibility variables and backend selection on a fixture.
	seeds = append(seeds, strings.TrimSuffix(fixtureOptions(f, "dgx-h100"), "}")+`,"env":{"CUDA_VISIBLE_DEVICES":"1,0,GPU-x,7"},"exclude":["vulkan"]}`)
	fuzzExport(f, 0, seeds...)
}

// fixtureSeeds plan on a fixture machine detected through the request's
// "detect" options: the whole engine, detection included.
func fixtureSeeds(f *testing.F) []string {
	return append(planSeeds[:len(planSeeds):len(planSeeds)],
		`{"model":{"name":"llama-3.1-70b"},"detect":`+fixtureOptions(f, "dgx-h100")+`}`,
		`{"model":{"params_b":180},"quant":"auto","detect":`+fixtureOptions(f, "mi300x-8")+`}`,
		`{"model":{"name":"llama-3.1-8b"},"training":{"method":"qlora"},"detect":`+fixtureOptions(f, "two-nvidia")+`}`)
}

func FuzzSuggestQuant(f *testing.F)     { fuzzExport(f, 1, fixtureSeeds(f)...) }
func FuzzPlanSharding(f *testing.F)     { fuzzExport(f, 2, fixtureSeeds(f)...) }
func FuzzEstimateTraining(f *testing.F) { fuzzExport(f, 3, fixtureSeeds(f)...) }

// answerKeys are the top-level keys every answer of export i has.
var answerKeys = [][]string{
	{"schema_version", "devices", "system_io", "warnings"},
	{"fits", "devices", "memory", "levels", "explanation", "warnings"},
	{"fits", "model", "memory", "shards", "tp_size", "pp_size", "engine_args", "levels", "explanation", "warnings"},
	{"fits", "method", "per_device", "devices", "num_devices", "explanation", "warnings"},
}

// knownLevel reports whether q names a level as an answer spells it: the
// contract levels, and, where the request names llama.cpp, a GGUF type or a
// checkpoint's own format (mxfp4), the names docs/requests.md gives under
// "quant", in the lowercase quant.Parse keeps.
func knownLevel(q string) bool {
	l, err := quant.Parse(q)
	return err == nil && string(l) == q
}

func checkMemory(t testing.TB, m plan.Memory, what string) {
	t.Helper()
	for name, v := range map[string]int64{"weights": m.WeightsBytes, "kv_cache": m.KVCacheBytes,
		"activations": m.ActivationsBytes, "overhead": m.OverheadBytes, "total": m.TotalBytes} {
		require.GreaterOrEqual(t, v, int64(0), "%s: negative %s bytes", what, name)
	}
	require.Equal(t, m.WeightsBytes+m.KVCacheBytes+m.ActivationsBytes+m.OverheadBytes, m.TotalBytes, "%s: total is not the sum of its parts", what)
}

func checkLevels(t testing.TB, levels []plan.LevelRow) {
	t.Helper()
	for _, row := range levels {
		require.True(t, knownLevel(row.Quant), "level %q", row.Quant)
		require.GreaterOrEqual(t, row.TotalBytes, int64(0), "level %s: negative total", row.Quant)
	}
}

// checkRefusal asserts an answer says why it does not fit, by a known code,
// exactly when it does not fit.
func checkRefusal(t testing.TB, fits bool, r *plan.Refusal, answer string) {
	t.Helper()
	if fits {
		require.Nil(t, r, "a fitting answer has a refusal: %.300s", answer)
		return
	}
	require.NotNil(t, r, "an answer that does not fit has no refusal: %.300s", answer)
	require.Contains(t, plan.RefusalCodes, r.Code, "%.300s", answer)
}

// checkAnswer asserts what holds for every answer (not error) of export i
// whatever the input: the expected top-level keys; a detected registry that
// the registry decoder accepts (no negative memory, known kinds, unique ids);
// no negative memory figure; a fitting plan whose shards fit their devices
// and cover every layer exactly once per tensor-parallel rank. usable (nil
// when unknown) maps the request's devices to the memory a plan may use on
// each: no answer names another device or claims more.
func checkAnswer(t testing.TB, i int, answer string, usable map[string]int64) {
	t.Helper()
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(answer), &top))
	for _, k := range answerKeys[i] {
		require.Contains(t, top, k, "%s answer lacks %q: %.300s", exportNames[i], k, answer)
	}
	switch i {
	case 0:
		_, err := regjson.Decode([]byte(answer))
		require.NoError(t, err, "detected registry is not a valid registry: %.300s", answer)
	case 1:
		checkSuggestAnswer(t, answer, usable)
	case 2:
		checkShardingAnswer(t, answer, usable)
	case 3:
		checkTrainingAnswer(t, answer, usable)
	}
}

// requestUsable reads the registry a planning request carries: device id ->
// usable memory (free when known, else total). nil when the request has no
// valid registry, or a cluster (whose ids are prefixed by node).
func requestUsable(in []byte) map[string]int64 {
	var req struct {
		Registry json.RawMessage `json:"registry"`
		Cluster  json.RawMessage `json:"cluster"`
	}
	if json.Unmarshal(in, &req) != nil || len(req.Registry) == 0 || len(req.Cluster) > 0 {
		return nil
	}
	r, err := regjson.Decode(req.Registry)
	if err != nil {
		return nil
	}
	usable := make(map[string]int64, len(r.Devices))
	for _, d := range r.Devices {
		usable[d.ID] = d.UsableMemory()
	}
	return usable
}

// checkDevice asserts id is one of the request's devices and avail no more
// than its usable memory (when the request gave a registry).
func checkDevice(t testing.TB, usable map[string]int64, id string, avail int64, answer string) {
	t.Helper()
	if usable == nil {
		return
	}
	u, ok := usable[id]
	require.True(t, ok, "device %s is not in the request's registry: %.300s", id, answer)
	require.LessOrEqual(t, avail, u, "device %s: %d bytes available claimed, the registry gives %d: %.300s", id, avail, u, answer)
}

func checkSuggestAnswer(t testing.TB, answer string, usable map[string]int64) {
	t.Helper()
	var a plan.SuggestAnswer
	require.NoError(t, json.Unmarshal([]byte(answer), &a))
	checkMemory(t, a.Memory, "memory")
	checkLevels(t, a.Levels)
	checkRefusal(t, a.Fits.Yes(), a.Refusal, answer)
	if a.Fits.Yes() {
		require.True(t, knownLevel(a.Quant), "quant %q", a.Quant)
		require.NotEmpty(t, a.Devices, "fits on no device: %.300s", answer)
	}
	for _, id := range a.Devices {
		checkDevice(t, usable, id, 0, answer)
	}
}

func checkShardingAnswer(t testing.TB, answer string, usable map[string]int64) {
	t.Helper()
	var a plan.ShardingAnswer
	require.NoError(t, json.Unmarshal([]byte(answer), &a))
	checkMemory(t, a.Memory, "memory")
	checkLevels(t, a.Levels)
	checkRefusal(t, a.Fits.Yes(), a.Refusal, answer)
	if !a.Fits.Yes() {
		require.Empty(t, a.Shards, "a plan that does not fit has shards: %.300s", answer)
		require.Empty(t, a.Strategy+a.Quant, "a refusal carries no strategy or quant: %.300s", answer)
		return
	}
	require.Contains(t, []string{"none", "tensor_parallel", "pipeline_parallel", "data_parallel", "cpu_offload"}, a.Strategy)
	require.True(t, knownLevel(a.Quant), "quant %q", a.Quant)
	require.NotEmpty(t, a.Shards, "fits without shards: %.300s", answer)
	var total int64
	// (replica, tensor-parallel rank) -> the next layer it must hold: every
	// replica of a data-parallel plan holds every layer (a vLLM plan is
	// data parallel by default where replicas are fastest).
	type unit struct{ replica, rank int }
	next := map[unit]int{}
	ranks := map[int]bool{}
	devices := map[string]bool{}
	stages := map[int]bool{}
	for _, s := range a.Shards {
		require.False(t, devices[s.DeviceID], "device %s holds two shards: %.300s", s.DeviceID, answer)
		devices[s.DeviceID] = true
		require.GreaterOrEqual(t, s.MemoryBytes, int64(0), "shard %s: negative memory", s.DeviceID)
		require.LessOrEqual(t, s.MemoryBytes, s.MemoryAvailableBytes, "shard %s overfilled: %.300s", s.DeviceID, answer)
		checkDevice(t, usable, s.DeviceID, s.MemoryAvailableBytes, answer)
		require.Less(t, s.LayerStart, s.LayerEnd, "shard %s holds no layer", s.DeviceID)
		u := unit{rank: s.TPRank}
		if s.Replica != nil {
			u.replica = *s.Replica
		}
		require.Equal(t, next[u], s.LayerStart, "replica %d rank %d: layers not contiguous: %.300s", u.replica, s.TPRank, answer)
		next[u] = s.LayerEnd
		ranks[s.TPRank] = true
		stages[s.Stage] = true
		total += s.MemoryBytes
	}
	require.Equal(t, total, a.Memory.TotalBytes, "memory.total_bytes is not the shards' sum")
	require.Len(t, ranks, a.TPSize)
	require.Len(t, next, a.TPSize*max(a.DPSize, 1))
	require.Len(t, stages, a.PPSize)
	for u, end := range next {
		require.Less(t, u.rank, a.TPSize)
		if a.Model.Layers > 0 {
			require.Equal(t, a.Model.Layers, end, "replica %d rank %d: layers not all covered: %.300s", u.replica, u.rank, answer)
		}
	}
}

func checkTrainingAnswer(t testing.TB, answer string, usable map[string]int64) {
	t.Helper()
	var a plan.TrainingAnswer
	require.NoError(t, json.Unmarshal([]byte(answer), &a))
	checkRefusal(t, a.Fits.Yes(), a.Refusal, answer)
	p := a.PerDevice
	for name, v := range map[string]int64{"weights": p.WeightsBytes, "gradients": p.GradientsBytes, "optimizer": p.OptimizerBytes,
		"activations": p.ActivationsBytes, "frozen_models": p.FrozenModelsBytes, "overhead": p.OverheadBytes, "total": p.TotalBytes} {
		require.GreaterOrEqual(t, v, int64(0), "per_device: negative %s bytes: %.300s", name, answer)
	}
	require.Equal(t, p.WeightsBytes+p.GradientsBytes+p.OptimizerBytes+p.ActivationsBytes+p.FrozenModelsBytes+p.OverheadBytes,
		p.TotalBytes, "per_device: total is not the sum of its parts")
	require.GreaterOrEqual(t, a.MaxMicroBatch, 0)
	if a.Fits.Yes() {
		require.NotEmpty(t, a.Devices, "fits on no device: %.300s", answer)
		require.Len(t, a.Devices, a.NumDevices)
		for _, d := range a.Devices {
			require.LessOrEqual(t, p.TotalBytes, d.MemoryAvailableBytes, "device %s overfilled: %.300s", d.DeviceID, answer)
		}
	}
	for _, d := range a.Devices {
		checkDevice(t, usable, d.DeviceID, d.MemoryAvailableBytes, answer)
	}
}
