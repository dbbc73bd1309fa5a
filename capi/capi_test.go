package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
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

func TestGuardRecoversPanics(t *testing.T) {
	answer := fmt.Sprint(goString(guard("hwaccel_test", nil, func([]byte, api.Env) []byte {
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
		checkEnvelope(t, answer)
	})
}

var planSeeds = []string{
	"", "{", "[]", `{"model":{"params_b":70}}`, `{"model":{"name":"llama-3-70b"},"quant":"int4"}`,
	`{"model":{"params":1e999}}`, `{"model":{"params_b":7},"registry":{"schema_version":1,"devices":[{"id":"cpu:0","kind":"cpu","family":"cpu","index":0,"available":true,"memory_bytes":68719476736}]}}`,
	`{"model":{"config":{"num_hidden_layers":80,"hidden_size":8192}},"detect":{"no_exec":true}}`,
}

func FuzzDetect(f *testing.F) {
	fuzzExport(f, 0, fixtureOptions(f, "dgx-h100"), fixtureOptions(f, "cpu-only"), "", "{", "[]",
		`{"timeout_ms":1e999}`, `{"sysroot":"/nonexistent"}`, `{"backends":["nope"]}`, "\xff")
}

func FuzzSuggestQuant(f *testing.F)     { fuzzExport(f, 1, planSeeds...) }
func FuzzPlanSharding(f *testing.F)     { fuzzExport(f, 2, planSeeds...) }
func FuzzEstimateTraining(f *testing.F) { fuzzExport(f, 3, planSeeds...) }
