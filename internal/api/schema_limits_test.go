package api

import (
	"context"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// Every numeric range and list length schema/request.schema.json declares
// is the one the engine enforces: the bound itself is not refused as out of
// range, the first number (or item) past it is invalid_argument naming the
// member. (The schema is
// what hosts validate against; a bound it states that the engine does not
// keep, or keeps elsewhere, sends hosts' valid requests to errors.)
func TestRequestSchemaRangesAreEnforced(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "schema", "request.schema.json"))
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(b, &s))
	type bound struct {
		path      []string
		key       string
		v         float64
		isInteger bool
	}
	var bounds []bound
	var walk func(props map[string]any, path []string)
	walk = func(props map[string]any, path []string) {
		for name, p := range props {
			p := p.(map[string]any)
			here := append(append([]string(nil), path...), name)
			alts := []any{p}
			if one, ok := p["oneOf"].([]any); ok {
				alts = one
			}
			for _, a := range alts {
				a := a.(map[string]any)
				for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "maxItems"} {
					if v, ok := a[k].(float64); ok {
						bounds = append(bounds, bound{here, k, v, a["type"] == "integer"})
					}
				}
			}
			if sub, ok := p["properties"].(map[string]any); ok && name != "model" {
				walk(sub, here)
			}
		}
	}
	walk(s["properties"].(map[string]any), nil)
	// The model object's members, under "model" ($defs.model).
	walk(s["$defs"].(map[string]any)["model"].(map[string]any)["properties"].(map[string]any), []string{"model"})
	require.NotEmpty(t, bounds)
	for _, bd := range bounds {
		name := strings.Join(bd.path, ".")
		// The number just past the bound, written exactly: an integer
		// as an integer (2^60 + 1 has no float64), else a relative step.
		at := func(d int64) string {
			if bd.key == "maxItems" {
				return listOf(name, int(bd.v)+int(d))
			}
			if bd.isInteger {
				i, _ := big.NewFloat(bd.v).Int(nil)
				return i.Add(i, big.NewInt(d)).String()
			}
			return strconv.FormatFloat(bd.v+float64(d)*max(1e-9, math.Abs(bd.v)*1e-9), 'g', -1, 64)
		}
		inside, outside := at(0), at(1)
		switch bd.key {
		case "minimum":
			outside = at(-1)
		case "exclusiveMinimum":
			inside, outside = at(1), at(0)
		}
		call := PlanSharding
		if bd.path[0] == "training" {
			call = EstimateTraining
		}
		send := func(v string) []byte { return call(context.Background(), requestWith(bd.path, v), NoEnv) }
		ans := send(inside)
		if errorCode(t, ans) == errs.InvalidArgument {
			assert.NotRegexp(t, `outside|more than|at most|at least|exceeds|reasonable`, string(ans), "%s %s %v: the bound refused: %s", name, bd.key, inside, ans)
		}
		ans = send(outside)
		assert.Equal(t, errs.InvalidArgument, errorCode(t, ans), "%s %s: %v past the bound: %s", name, bd.key, outside, ans)
		assert.Contains(t, string(ans), bd.path[0], "%s: %s", name, ans)
		t.Logf("%s %s %.40s: %.150s", name, bd.key, outside, ans)
	}
}

// listOf is a JSON list of n distinct items of the list member name:
// device ids, or node registries of one CPU each.
func listOf(name string, n int) string {
	items := make([]string, n)
	for i := range items {
		switch name {
		case "devices":
			items[i] = strconv.Quote("cuda:" + strconv.Itoa(i))
		case "cluster":
			items[i] = `{"devices":[{"kind":"cpu","index":0,"available":true,"memory_bytes":1073741824}]}`
		default:
			panic("no items for list " + name)
		}
	}
	return "[" + strings.Join(items, ",") + "]"
}

// requestWith is a plan request for a 1B model (unless path is the model's)
// on a CPU of 64 GiB, with path set to v.
func requestWith(path []string, v string) []byte {
	req := map[string]any{"model": map[string]any{},
		"registry": map[string]any{"devices": []any{map[string]any{"kind": "cpu", "index": 0, "available": true, "memory_bytes": int64(64) << 30}}}}
	at := req
	for _, p := range path[:len(path)-1] {
		if _, ok := at[p].(map[string]any); !ok {
			at[p] = map[string]any{}
		}
		at = at[p].(map[string]any)
	}
	if path[0] != "model" {
		req["model"] = map[string]any{"params_b": 1}
	}
	at[path[len(path)-1]] = json.RawMessage(v)
	if path[0] == "mmproj" {
		at["offload"] = false
	}
	if path[0] == "cluster" {
		delete(req, "registry")
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return b
}

// Every list a request schema says holds no item twice (uniqueItems) is one
// the engine refuses a repeat in, and every list the engine refuses a
// repeat in says so: devices (wire.decodeDevices refuses "devices holds an
// empty or repeated id"). Before, the schema let a validated request
// through that the engine then refused.
func TestRequestSchemaUniqueItemsAreEnforced(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "schema", "request.schema.json"))
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(b, &s))
	var unique []string
	for name, p := range s["properties"].(map[string]any) {
		if p.(map[string]any)["uniqueItems"] == true {
			unique = append(unique, name)
		}
	}
	assert.ElementsMatch(t, []string{"devices"}, unique, "the lists the engine refuses a repeated item in")
	for _, name := range unique {
		one := strings.Trim(listOf(name, 1), "[]")
		ans := PlanSharding(context.Background(), requestWith([]string{name}, "["+one+","+one+"]"), NoEnv)
		assert.Equal(t, errs.InvalidArgument, errorCode(t, ans), "%s repeated: %s", name, ans)
		assert.Contains(t, string(ans), "repeated", "%s: %s", name, ans)
		two := listOf(name, 2)
		ans = PlanSharding(context.Background(), requestWith([]string{name}, two), NoEnv)
		assert.NotContains(t, string(ans), "repeated", "%s %s: %s", name, two, ans)
	}
}
