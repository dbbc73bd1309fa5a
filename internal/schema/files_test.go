package schema

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The schema files under schema/ are the published record of the JSON the
// library answers. These tests keep them honest: every file compiles with
// the validator, the enums match the Go constants, and real answers (every
// fixture machine's registry, planning answers for a spread of requests)
// validate.

func repoPath(t *testing.T, parts ...string) string {
	p, err := filepath.Abs(filepath.Join(append([]string{"..", ".."}, parts...)...))
	require.NoError(t, err)
	return p
}

func load(t *testing.T, name string) *Schema {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "schema", name+".schema.json"))
	require.NoError(t, err)
	s, err := Compile(b)
	require.NoError(t, err, name)
	return s
}

func noEnv(string) (string, bool) { return "", false }

func TestSchemaFilesCompile(t *testing.T) {
	files, err := filepath.Glob(repoPath(t, "schema", "*.schema.json"))
	require.NoError(t, err)
	require.Len(t, files, 13)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = Compile(b)
		assert.NoError(t, err, f)
		var head struct {
			Schema string `json:"$schema"`
			ID     string `json:"$id"`
		}
		require.NoError(t, json.Unmarshal(b, &head))
		assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", head.Schema, f)
		assert.Equal(t, "https://ai-hwaccel.io/schema/"+filepath.Base(f), head.ID, f)
	}
}

// enumAt returns the enum of a schema node reached by a path of keys.
func enumAt(t *testing.T, name string, path ...string) []string {
	b, err := os.ReadFile(repoPath(t, "schema", name+".schema.json"))
	require.NoError(t, err)
	var node any
	require.NoError(t, json.Unmarshal(b, &node))
	for _, k := range path {
		node = node.(map[string]any)[k]
	}
	var out []string
	for _, v := range node.(map[string]any)["enum"].([]any) {
		out = append(out, v.(string))
	}
	sort.Strings(out)
	return out
}

// constants returns the string constants of a Go file whose names start
// with prefix, sorted, so a code added in Go without the schema fails here.
func constants(t *testing.T, file, prefix string) []string {
	var out []string
	for _, v := range namedConstants(t, file, prefix) {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// namedConstants maps each string constant of a Go file whose name starts
// with prefix to its value.
func namedConstants(t *testing.T, file, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), repoPath(t, file), nil, 0)
	require.NoError(t, err)
	out := map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					out[n.Name] = v
				}
			}
		}
	}
	require.NotEmpty(t, out, "%s constants in %s", prefix, file)
	return out
}

func TestRegistrySchemaEnumsMatchGo(t *testing.T) {
	var kinds []string
	for _, k := range registry.Kinds() {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	assert.Equal(t, kinds, enumAt(t, "registry", "$defs", "kind"))
	assert.Equal(t, []string{"ai_asic", "cpu", "gpu", "npu", "tpu"}, enumAt(t, "registry", "$defs", "family"))
	assert.Equal(t, constants(t, "internal/registry/registry.go", "Link"),
		enumAt(t, "registry", "$defs", "interconnect", "properties", "kind"))
	assert.Equal(t, constants(t, "internal/registry/registry.go", "Warn"),
		enumAt(t, "registry", "$defs", "warning", "properties", "code"))
	assert.Equal(t, constants(t, "internal/registry/cpufeature.go", "CPUFeature"),
		enumAt(t, "registry", "$defs", "device", "properties", "cpu_features", "items"))
	assert.Equal(t, constants(t, "internal/errs/errs.go", ""),
		enumAt(t, "error", "properties", "error", "properties", "code"))
	assert.Equal(t, constants(t, "internal/plan/training.go", "Method"),
		enumAt(t, "training", "properties", "method"))
	assert.Equal(t, constants(t, "internal/plan/training.go", "Opt"),
		enumAt(t, "training", "properties", "optimizer"))
	assert.Equal(t, constants(t, "internal/plan/sharding.go", "Strategy"),
		enumAt(t, "plan", "$defs", "strategy"))
}

// fixtureMachines lists every fixture machine present at test time.
func fixtureMachines(t *testing.T) []string {
	entries, err := os.ReadDir(repoPath(t, "testdata", "machines"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	require.NotEmpty(t, names)
	return names
}

func fixtureOptions(t *testing.T, name string, env map[string]string) map[string]any {
	dir := repoPath(t, "testdata", "machines", name)
	timeout := 5000
	if name == "hostile" {
		timeout = 2000 // its tools hang until the timeout by design
	}
	o := map[string]any{"sysroot": filepath.Join(dir, "root"), "path": filepath.Join(dir, "bin"), "timeout_ms": timeout}
	if env != nil {
		o["env"] = env
	}
	return o
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func isError(b []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	_, ok := m["error"]
	return ok && len(m) == 1
}

func TestEveryFixtureRegistryValidates(t *testing.T) {
	s := load(t, "registry")
	for _, name := range fixtureMachines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, env := range []map[string]string{{}, {"CUDA_VISIBLE_DEVICES": "1,0", "HIP_VISIBLE_DEVICES": "1,0"}} {
				out := api.Detect(context.Background(), mustJSON(t, fixtureOptions(t, name, env)), noEnv)
				require.False(t, isError(out), "%s", out)
				assert.NoError(t, s.Validate(out), "%s", out)
			}
		})
	}
}

func TestRegistrySchemaRejects(t *testing.T) {
	s := load(t, "registry")
	ok := `{"schema_version":1,"devices":[{"id":"cpu:0","kind":"cpu","family":"cpu","index":0,"available":true}],
		"system_io":{"interconnects":[],"numa_nodes":[]},"warnings":[],"future_field":1}`
	require.NoError(t, s.Validate([]byte(ok)), "unknown fields are allowed")
	bad := map[string]string{
		"unknown kind":      `"kind":"cpu"` + "|" + `"kind":"fpga"`,
		"negative memory":   `"available":true}` + "|" + `"available":true,"memory_bytes":-1}`,
		"fractional bytes":  `"available":true}` + "|" + `"available":true,"memory_bytes":1.5}`,
		"bad cpu feature":   `"available":true}` + "|" + `"available":true,"cpu_features":["avx2","made_up"]}`,
		"bad id":            `"id":"cpu:0"` + "|" + `"id":"CPU-0"`,
		"missing available": `,"available":true` + "|" + ``,
		"schema version 2":  `"schema_version":1` + "|" + `"schema_version":2`,
		"unknown link kind": `"interconnects":[]` + "|" + `"interconnects":[{"kind":"carrier-pigeon","devices":[]}]`,
		"unknown warning":   `"warnings":[]` + "|" + `"warnings":[{"backend":"x","code":"oops","message":"m"}]`,
		"bad quant":         `"available":true}` + "|" + `"available":true,"quantizations":["fp3"]}`,
		"no system_io":      `"system_io":{"interconnects":[],"numa_nodes":[]},` + "|" + ``,
	}
	for name, edit := range bad {
		from, to, _ := strings.Cut(edit, "|")
		require.Contains(t, ok, from, name)
		assert.Error(t, s.Validate([]byte(strings.Replace(ok, from, to, 1))), name)
	}
}

// planningRequests is a spread of requests over the fixture machines: model
// by params, params_b, catalog name; fixed and automatic precision; a
// device subset; both engines; a model too big for the machine; and an
// inline registry instead of detection.
func planningRequests(t *testing.T) map[string][]byte {
	inline := map[string]any{"schema_version": 1, "devices": []any{
		map[string]any{"id": "cpu:0", "kind": "cpu", "index": 0, "available": true, "memory_bytes": int64(64) << 30},
		map[string]any{"id": "cuda:0", "kind": "cuda_gpu", "index": 0, "available": true, "memory_bytes": int64(24) << 30,
			"memory_bandwidth_gb_s": 1008, "compute_capability": "8.9"},
	}, "system_io": map[string]any{"interconnects": []any{}, "numa_nodes": []any{}}, "warnings": []any{}}
	reqs := map[string][]byte{}
	for _, name := range fixtureMachines(t) {
		det := fixtureOptions(t, name, map[string]string{})
		for label, body := range map[string]map[string]any{
			"70b-auto":      {"model": map[string]any{"params": 70e9}, "quant": "auto"},
			"8b-name":       {"model": map[string]any{"name": "Llama-2-7B"}, "context_length": 2048, "engine": "llama.cpp"},
			"13b-int4-vllm": {"model": map[string]any{"params_b": 13}, "quant": "int4", "engine": "vllm", "batch_size": 4},
			"700b-fp32":     {"model": map[string]any{"params_b": 700}, "quant": "fp32"},
		} {
			body["detect"] = det
			reqs[name+"/"+label] = mustJSON(t, body)
		}
	}
	reqs["dgx-h100/subset"] = mustJSON(t, map[string]any{"model": map[string]any{"params_b": 70},
		"devices": []string{"cuda:0", "cuda:1"}, "detect": fixtureOptions(t, "dgx-h100", map[string]string{})})
	reqs["inline/7b"] = mustJSON(t, map[string]any{"model": map[string]any{"params_b": 7}, "registry": inline})
	reqs["inline/70b"] = mustJSON(t, map[string]any{"model": map[string]any{"params_b": 70}, "registry": inline, "engine": "vllm"})
	return reqs
}

// TestPlanningAnswersValidate runs every request through the three planning
// entry points. An answer validates against its schema; an error object
// validates against error.schema.json — so the test means something whether
// or not a planner is finished. All three planners have landed, so the
// known-good requests must be answers, not errors.
func TestPlanningAnswersValidate(t *testing.T) {
	errSchema := load(t, "error")
	entries := []struct {
		name   string
		call   func(context.Context, []byte, api.Env) []byte
		schema *Schema
		mustOK bool
	}{
		{"plan", api.PlanSharding, load(t, "plan"), true},
		{"suggest", api.SuggestQuant, load(t, "suggest"), true},
		{"training", api.EstimateTraining, load(t, "training"), true},
	}
	reqs := planningRequests(t)
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	methods := []string{"lora", "qlora", "full", "prefix", "dpo", "rlhf", "distillation"}
	for _, e := range entries {
		answers, errors := 0, 0
		for i, k := range keys {
			body := reqs[k]
			if e.name == "training" {
				body = withTraining(t, body, methods[i%len(methods)])
			}
			out := e.call(context.Background(), body, noEnv)
			if isError(out) {
				errors++
				assert.NoError(t, errSchema.Validate(out), "%s %s: %s", e.name, k, out)
				if e.mustOK {
					assert.Fail(t, "error answer", "%s %s: %s", e.name, k, out)
				}
				continue
			}
			answers++
			assert.NoError(t, e.schema.Validate(out), "%s %s: %s", e.name, k, out)
		}
		t.Logf("%s: %d answers, %d error objects", e.name, answers, errors)
	}
}

func withTraining(t *testing.T, body []byte, method string) []byte {
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	m["training"] = map[string]any{"method": method}
	return mustJSON(t, m)
}

func TestErrorAnswersValidate(t *testing.T) {
	s := load(t, "error")
	for i, in := range []string{``, `{`, `[]`, `{"model":{"params":-1}}`, `{"model":{"params_b":7},"quant":"int3"}`,
		`{"model":{"name":"no-such-model-xyz"}}`, `{"model":{"path":"/nonexistent/x.gguf"}}`, `{"nope":1}`} {
		for _, call := range []func(context.Context, []byte, api.Env) []byte{api.PlanSharding, api.SuggestQuant, api.EstimateTraining} {
			out := call(context.Background(), []byte(in), noEnv)
			require.True(t, isError(out), "%d %q: %s", i, in, out)
			assert.NoError(t, s.Validate(out), "%s", out)
		}
	}
	out := api.Detect(context.Background(), []byte(`{"sysroot":"/nonexistent-sysroot"}`), noEnv)
	require.True(t, isError(out), "%s", out)
	assert.NoError(t, s.Validate(out))
	assert.Error(t, s.Validate([]byte(`{"error":{"code":"oops","message":"m"}}`)))
	assert.Error(t, s.Validate([]byte(`{"error":{"code":"internal"}}`)))
}

// One precision vocabulary: the contract levels of internal/quant are the
// names of internal/precision, each level needs itself as its device
// precision, and the registry and plan schemas list exactly those names.
func TestSchemaPrecisionNamesAreTheContracts(t *testing.T) {
	var names []string
	for _, l := range quant.Levels() {
		names = append(names, string(l))
		assert.Equal(t, string(l), l.Native())
	}
	assert.Equal(t, []string{string(precision.FP32), string(precision.BF16), string(precision.FP16),
		string(precision.FP8), string(precision.INT8), string(precision.INT4)}, names)
	sort.Strings(names)
	assert.Equal(t, names, enumAt(t, "registry", "$defs", "quant"))
}

// TestCatalogAnswersValidate: the answers of hwaccel_models_json and
// hwaccel_fit_json validate against models.schema.json and fit.schema.json,
// on every fixture machine, and their requests against the request schemas.
func TestCatalogAnswersValidate(t *testing.T) {
	models, fit := load(t, "models"), load(t, "fit")
	modelsReq, fitReq := load(t, "models-request"), load(t, "fit-request")
	for _, body := range []string{``, `{}`, `{"filter":"llama"}`, `{"quant":"q4_k_m"}`, `{"filter":"qwen","quant":"bf16"}`} {
		if body != "" {
			require.NoError(t, modelsReq.Validate([]byte(body)), body)
		}
		out := api.Models(context.Background(), []byte(body), noEnv)
		require.False(t, isError(out), "%s: %s", body, out)
		assert.NoError(t, models.Validate(out), body)
	}
	for _, name := range fixtureMachines(t) {
		body := mustJSON(t, map[string]any{"detect": fixtureOptions(t, name, map[string]string{}), "context_length": 8192})
		require.NoError(t, fitReq.Validate(body), name)
		out := api.Fit(context.Background(), body, noEnv)
		require.False(t, isError(out), "%s: %s", name, out)
		assert.NoError(t, fit.Validate(out), name)
	}
	for _, bad := range []string{`{"filtr":"x"}`, `{"quant":5}`, `[]`} {
		assert.Error(t, modelsReq.Validate([]byte(bad)), bad)
		assert.Error(t, fitReq.Validate([]byte(bad)), bad)
	}
}

// Every device a fixture machine lists as unavailable says why
// (unavailable_reason), so that a table's Unavailable section and a
// scheduler never have to match warnings to devices (the XDNA NPU of
// thinkpad-p16s-krackan said so only in a warning).
func TestEveryUnavailableFixtureDeviceSaysWhy(t *testing.T) {
	for _, name := range fixtureMachines(t) {
		out := api.Detect(context.Background(), mustJSON(t, fixtureOptions(t, name, map[string]string{})), noEnv)
		var reg struct {
			Devices []struct {
				ID                string `json:"id"`
				Available         bool   `json:"available"`
				UnavailableReason string `json:"unavailable_reason"`
			} `json:"devices"`
		}
		require.NoError(t, json.Unmarshal(out, &reg), name)
		for _, d := range reg.Devices {
			if !d.Available {
				assert.NotEmpty(t, d.UnavailableReason, "%s %s", name, d.ID)
			}
		}
	}
}
