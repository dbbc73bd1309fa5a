package api

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

func emptyEnv(string) (string, bool) { return "", false }

// errorCode returns the code of an error object, or "" when b is an answer.
func errorCode(t *testing.T, b []byte) string {
	t.Helper()
	var v struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(b, &v), "every answer is JSON: %s", b)
	if v.Error == nil {
		return ""
	}
	require.NotEmpty(t, v.Error.Message)
	return v.Error.Code
}

func fixture(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "machines", name))
	return p
}

func TestDecodeOptions(t *testing.T) {
	o, err := DecodeOptions(nil, emptyEnv)
	require.NoError(t, err)
	assert.Equal(t, "", o.Sysroot, "defaults are filled by detection")

	o, err = DecodeOptions([]byte(`{"sysroot":"/x","path":"/bin","no_exec":true,"timeout_ms":250,"cache_ttl_ms":1000,
		"backends":["cuda","cpu"],"exclude":["vulkan"],"env":{"CUDA_VISIBLE_DEVICES":"0"}}`), emptyEnv)
	require.NoError(t, err)
	assert.Equal(t, "/x", o.Sysroot)
	assert.Equal(t, "/bin", o.Path)
	assert.True(t, o.NoExec)
	assert.Equal(t, 250*time.Millisecond, o.Timeout)
	assert.Equal(t, time.Second, o.CacheTTL)
	assert.Equal(t, []string{"cuda", "cpu"}, o.Backends)
	assert.Equal(t, "0", o.Env["CUDA_VISIBLE_DEVICES"])
	assert.False(t, o.InlineKernelReads, "off unless asked: its reads are not bounded by timeout_ms")

	o, err = DecodeOptions([]byte(`{"inline_kernel_reads":true}`), emptyEnv)
	require.NoError(t, err)
	assert.True(t, o.InlineKernelReads)

	o, err = DecodeOptions([]byte(`{"path":""}`), emptyEnv)
	require.NoError(t, err)
	assert.True(t, o.NoExec, "an explicit empty PATH can find no tool")
}

// A tiny positive timeout_ms is honoured (at least 1 ns), never truncated
// to zero, which detection read as "unset" and replaced by the 5 s default.
func TestTinyTimeoutIsHonoured(t *testing.T) {
	for _, ms := range []string{"1e-7", "0.0000001", "1e-300"} {
		o, err := DecodeOptions([]byte(`{"timeout_ms":`+ms+`,"cache_ttl_ms":`+ms+`}`), emptyEnv)
		require.NoError(t, err, ms)
		assert.Equal(t, time.Nanosecond, o.Timeout, ms)
		assert.Equal(t, time.Nanosecond, o.CacheTTL, ms)
	}
	o, err := DecodeOptions([]byte(`{"timeout_ms":0.5}`), emptyEnv)
	require.NoError(t, err)
	assert.Equal(t, 500*time.Microsecond, o.Timeout)
}

func TestDecodeOptionsErrors(t *testing.T) {
	cases := map[string]string{
		`{`:                        errs.InvalidJSON,
		`{"timeout_ms":0}`:         errs.InvalidArgument,
		`{"timeout_ms":-1}`:        errs.InvalidArgument,
		`{"timeout_ms":1e400}`:     errs.InvalidArgument, // well-formed, but no float64 holds it
		`{"timeout_ms":1e300}`:     errs.InvalidArgument,
		`{"cache_ttl_ms":-5}`:      errs.InvalidArgument,
		`{"sysroot":""}`:           errs.InvalidArgument,
		`{"sysroot":5}`:            errs.InvalidArgument,
		`{"path":"/bin:tools"}`:    errs.InvalidArgument,
		`{"backends":["warp"]}`:    errs.InvalidArgument,
		`{"exclude":["x"]}`:        errs.InvalidArgument,
		`{"timeoutms":5}`:          errs.InvalidArgument, // typo: unknown keys are refused
		`[]`:                       errs.InvalidArgument,
		`"x"`:                      errs.InvalidArgument,
		`{"no_exec":true} trailer`: errs.InvalidJSON,
	}
	for in, code := range cases {
		_, err := DecodeOptions([]byte(in), emptyEnv)
		if assert.Error(t, err, in) {
			assert.Equal(t, code, errs.CodeOf(err), "%s: %v", in, err)
		}
	}
}

func TestInputLimits(t *testing.T) {
	deep := bytes.Repeat([]byte("["), 100000)
	assert.Equal(t, errs.InvalidJSON, errorCode(t, Detect(context.Background(), deep, emptyEnv)))
	big := bytes.Repeat([]byte("["), MaxInput+1)
	assert.Equal(t, errs.TooLarge, errorCode(t, Detect(context.Background(), big, emptyEnv)))
	assert.Equal(t, errs.TooLarge, errorCode(t, PlanSharding(context.Background(), big, emptyEnv)))
	// Nesting inside strings does not count.
	assert.Equal(t, 1, depth([]byte(`{"a":"[[[[[[{{{{\"]]"}`)))
	assert.Equal(t, 3, depth([]byte(`[[{}],[[]]]`)))
}

func TestPlanningEntryPointsRejectBadRequests(t *testing.T) {
	for name, f := range map[string]func(context.Context, []byte, Env) []byte{
		"suggest": SuggestQuant, "plan": PlanSharding, "train": EstimateTraining,
	} {
		assert.Equal(t, errs.InvalidArgument, errorCode(t, f(context.Background(), nil, emptyEnv)), name+" NULL")
		assert.Equal(t, errs.InvalidArgument, errorCode(t, f(context.Background(), []byte("  "), emptyEnv)), name+" empty")
		assert.Equal(t, errs.InvalidJSON, errorCode(t, f(context.Background(), []byte("{"), emptyEnv)), name+" {")
		assert.NotEqual(t, "", errorCode(t, f(context.Background(), []byte("[]"), emptyEnv)), name+" []")
		assert.NotEqual(t, "", errorCode(t, f(context.Background(), []byte("\xff\xfe"), emptyEnv)), name+" invalid UTF-8")
	}
}

func TestDetectFixtureThroughAPI(t *testing.T) {
	dir := fixture("cpu-only")
	in := `{"sysroot":"` + dir + `/root","path":"` + dir + `/bin","cache_ttl_ms":0}`
	out := Detect(context.Background(), []byte(in), emptyEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	assert.Contains(t, string(out), `"id":"cpu:0"`)
	assert.Contains(t, string(out), `"schema_version":1`)

	out = Detect(context.Background(), []byte(`{"sysroot":"/nonexistent/root"}`), emptyEnv)
	assert.Equal(t, errs.DetectionFailed, errorCode(t, out))
}

func TestErrorJSON(t *testing.T) {
	b := ErrorJSON(errs.New(errs.UnknownModel, `no model "x\"y"`))
	assert.Equal(t, errs.UnknownModel, errorCode(t, b))
	assert.True(t, strings.HasPrefix(string(b), `{"error":{"code":"unknown_model"`))
}

func TestPlanningCacheTTL(t *testing.T) {
	_, given, err := decodeOptions([]byte(`{"timeout_ms":100}`), emptyEnv)
	require.NoError(t, err)
	assert.False(t, given, "absent: planning applies its own default")
	o, given, err := decodeOptions([]byte(`{"cache_ttl_ms":0}`), emptyEnv)
	require.NoError(t, err)
	assert.True(t, given, "an explicit 0 asks for a fresh detection")
	assert.Zero(t, o.CacheTTL)

	// Through planning: with cache_ttl_ms 0 the registry is detected anew
	// (timing.cached is never set), without it the second request reuses.
	dir := fixture("cpu-only")
	det := `"detect":{"sysroot":"` + dir + `/root","path":"` + dir + `/bin"`
	for i := 0; i < 2; i++ {
		out := SuggestQuant(context.Background(), []byte(`{"model":{"params_b":1},`+det+`,"cache_ttl_ms":0}}`), emptyEnv)
		require.Equal(t, "", errorCode(t, out), string(out))
	}
	req, err := planRequest(context.Background(), []byte(`{"model":{"params_b":1},`+det+`,"cache_ttl_ms":0}}`), emptyEnv)
	require.NoError(t, err)
	assert.False(t, req.Registry.Timing.Cached, "explicit 0: fresh detection")
	_, err = planRequest(context.Background(), []byte(`{"model":{"params_b":1},`+det+`}}`), emptyEnv)
	require.NoError(t, err)
	req, err = planRequest(context.Background(), []byte(`{"model":{"params_b":1},`+det+`}}`), emptyEnv)
	require.NoError(t, err)
	assert.True(t, req.Registry.Timing.Cached, "default: a recent detection is reused")
}

// The ThinkPad P16s's Radeon 860M: the capture gives its 8 GiB carve-out
// but no GTT window, so its usable memory is unknown. An 8B model is never
// planned into the carve-out as if it were VRAM: it goes to host RAM (86 GiB).
func TestPlanKrackanWithoutGTT(t *testing.T) {
	dir := fixture("thinkpad-p16s-krackan")
	det := `"detect":{"sysroot":"` + dir + `/root","path":"` + dir + `/bin"}`
	out := PlanSharding(context.Background(), []byte(`{"model":{"name":"Llama-3.1-8B"},`+det+`}`), emptyEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	var ans struct {
		Fits   bool `json:"fits"`
		Shards []struct {
			DeviceID string `json:"device_id"`
		} `json:"shards"`
	}
	require.NoError(t, json.Unmarshal(out, &ans))
	assert.True(t, ans.Fits)
	require.Len(t, ans.Shards, 1)
	assert.Equal(t, "cpu:0", ans.Shards[0].DeviceID)
}

// A trn1.2xlarge whose one Trainium chip has 28.8 GiB free and no int4: a 32B
// model that does not fit there is not put in host RAM unasked; the plan
// says how to ask, and include_cpu does it. (This was the modelled 780M
// laptop; its real replacement, thinkpad-p16s-krackan, has no GTT figure, so
// its GPU offers no usable memory to plan on: TestPlanKrackanWithoutGTT.)
func TestPlanHintsAtHostRAM(t *testing.T) {
	dir := fixture("trn1-2xlarge")
	det := `"detect":{"sysroot":"` + dir + `/root","path":"` + dir + `/bin"}`
	out := PlanSharding(context.Background(), []byte(`{"model":{"name":"Qwen2.5-32B"},`+det+`}`), emptyEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	var ans struct {
		Fits        bool     `json:"fits"`
		Explanation []string `json:"explanation"`
		Shards      []struct {
			DeviceID string `json:"device_id"`
		} `json:"shards"`
	}
	require.NoError(t, json.Unmarshal(out, &ans))
	assert.False(t, ans.Fits)
	assert.Contains(t, strings.Join(ans.Explanation, "\n"), "include_cpu: true would plan on host RAM")

	out = PlanSharding(context.Background(), []byte(`{"model":{"name":"Qwen2.5-32B"},"include_cpu":true,`+det+`}`), emptyEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	ans.Shards = nil
	require.NoError(t, json.Unmarshal(out, &ans))
	assert.True(t, ans.Fits)
	require.Len(t, ans.Shards, 1)
	assert.Equal(t, "cpu:0", ans.Shards[0].DeviceID)
}
