package schema

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
)

// Every schema object allows additional properties (schema/README.md: a
// newer library's fields must still validate), so Validate cannot notice a
// member the library answers that no schema declares: budget.host_bytes of
// a llama.cpp plan and a catalog checkpoint's size_bytes were answered,
// documented in docs/, and absent from schema/ with their unit. These tests
// walk real answers and list every member whose object's schema has no
// property of that name.

// undeclared lists the members of v (a decoded JSON document) that node
// does not declare, as paths ("budget.host_bytes"; "[]" for array items).
func (s *Schema) undeclared(node, v any, path string, depth int) []string {
	if depth > maxRefDepth {
		return nil
	}
	var out []string
	switch x := v.(type) {
	case map[string]any:
		props, extra := s.objectShape(node, depth)
		for k, val := range x {
			if sub, ok := props[k]; ok {
				for _, p := range sub {
					out = append(out, s.undeclared(p, val, path+"."+k, depth+1)...)
				}
			} else if len(extra) > 0 {
				for _, p := range extra {
					out = append(out, s.undeclared(p, val, path+".*", depth+1)...)
				}
			} else {
				out = append(out, strings.TrimPrefix(path+"."+k, "."))
			}
		}
	case []any:
		for _, it := range s.itemSchemas(node, depth) {
			for _, val := range x {
				out = append(out, s.undeclared(it, val, path+"[]", depth+1)...)
			}
		}
	}
	return out
}

// branches is node with its $ref followed and its oneOf/anyOf/allOf
// alternatives flattened: every schema a value at node may be read by.
func (s *Schema) branches(node any, depth int) []map[string]any {
	n, ok := node.(map[string]any)
	if !ok || depth > maxRefDepth {
		return nil
	}
	out := []map[string]any{n}
	if ref, ok := n["$ref"].(string); ok {
		if target, err := s.resolve(ref); err == nil {
			out = append(out, s.branches(target, depth+1)...)
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		alts, _ := n[k].([]any)
		for _, a := range alts {
			out = append(out, s.branches(a, depth+1)...)
		}
	}
	return out
}

// objectShape is the declared properties of node (each name with every
// schema that declares it) and the schemas of additionalProperties given as
// an object (a map such as timing.backends).
func (s *Schema) objectShape(node any, depth int) (map[string][]any, []any) {
	props := map[string][]any{}
	var extra []any
	for _, b := range s.branches(node, depth) {
		if p, ok := b["properties"].(map[string]any); ok {
			for k, v := range p {
				props[k] = append(props[k], v)
			}
		}
		if a, ok := b["additionalProperties"].(map[string]any); ok {
			extra = append(extra, a)
		}
	}
	return props, extra
}

// itemSchemas is every items schema of node's branches.
func (s *Schema) itemSchemas(node any, depth int) []any {
	var out []any
	for _, b := range s.branches(node, depth) {
		if it, ok := b["items"]; ok {
			out = append(out, it)
		}
	}
	return out
}

// undeclaredIn decodes an answer and lists its undeclared members, once each.
func undeclaredIn(t *testing.T, s *Schema, answer []byte) []string {
	t.Helper()
	v, err := decode(answer)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, p := range s.undeclared(s.root, v, "", 0) {
		seen[p] = true
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// The walker itself: a member no schema declares is found at any depth,
// through $ref, items and oneOf, and one declared anywhere is not.
func TestUndeclaredFindsMembers(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{
		"a":{"$ref":"#/$defs/a"},
		"m":{"type":"object","additionalProperties":{"type":"object","properties":{"x":{}}}},
		"o":{"oneOf":[{"type":"object","properties":{"p":{}}},{"type":"object","properties":{"q":{}}}]}},
		"$defs":{"a":{"type":"array","items":{"type":"object","properties":{"b":{}}}}}}`))
	require.NoError(t, err)
	assert.Empty(t, undeclaredIn(t, s, []byte(`{"a":[{"b":1}],"m":{"k":{"x":1}},"o":{"p":1,"q":2}}`)))
	assert.Equal(t, []string{"a[].c", "m.*.y", "o.r", "top"},
		undeclaredIn(t, s, []byte(`{"a":[{"b":1,"c":2}],"m":{"k":{"y":1}},"o":{"r":1},"top":0}`)))
}

// TestAnswersDeclareEveryMember: planning answers for the spread of
// requests of TestPlanningAnswersValidate plus the requests whose answers
// carry the rarer members (a llama.cpp plan keeping the token embedding in
// host memory: budget.host_bytes), the whole catalog, fit, and rent answers
// name only members their schema declares.
func TestAnswersDeclareEveryMember(t *testing.T) {
	reqs := planningRequests(t)
	for _, model := range []string{"Llama-3.1-8B", "Qwen3-30B-A3B", "gpt-oss-120b"} {
		for _, machine := range []string{"h200-vm", "dgx-h100", "macbook-m2-max-32gb"} {
			reqs[machine+"/"+model+"/llama.cpp"] = mustJSON(t, map[string]any{"model": model, "engine": "llama.cpp",
				"detect": fixtureOptions(t, machine, map[string]string{})})
		}
	}
	for _, e := range []struct {
		name string
		call func(context.Context, []byte, api.Env) []byte
	}{{"plan", api.PlanSharding}, {"suggest", api.SuggestQuant}} {
		s := load(t, e.name)
		for k, body := range reqs {
			out := e.call(context.Background(), body, noEnv)
			if isError(out) {
				continue
			}
			assert.Empty(t, undeclaredIn(t, s, out), "%s %s", e.name, k)
		}
	}
	training := load(t, "training")
	for k, body := range reqs {
		out := api.EstimateTraining(context.Background(), withTraining(t, body, "qlora"), noEnv)
		if !isError(out) {
			assert.Empty(t, undeclaredIn(t, training, out), "training %s", k)
		}
	}
	assert.Empty(t, undeclaredIn(t, load(t, "models"), api.Models(context.Background(), nil, noEnv)), "models")
	fit := api.Fit(context.Background(), mustJSON(t, map[string]any{"detect": fixtureOptions(t, "dgx-h100", map[string]string{})}), noEnv)
	require.False(t, isError(fit), "%s", fit)
	assert.Empty(t, undeclaredIn(t, load(t, "fit"), fit), "fit")
	rent := load(t, "rent")
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, in := range []string{`{"model":"Llama-3.1-8B"}`, `{"model":"gpt-oss-120b"}`, `{"model":"Qwen3-30B-A3B","engine":"llama.cpp"}`} {
		out := api.RentAt(context.Background(), []byte(in), now)
		require.False(t, isError(out), "%s", out)
		assert.Empty(t, undeclaredIn(t, rent, out), "rent %s", in)
	}
}

// TestRegistriesDeclareEveryMember: the registry of every fixture machine
// names only members registry.schema.json declares.
func TestRegistriesDeclareEveryMember(t *testing.T) {
	s := load(t, "registry")
	for _, name := range fixtureMachines(t) {
		out := api.Detect(context.Background(), mustJSON(t, fixtureOptions(t, name, map[string]string{})), noEnv)
		require.False(t, isError(out), "%s: %s", name, out)
		assert.Empty(t, undeclaredIn(t, s, out), name)
	}
}
