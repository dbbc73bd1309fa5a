package api

import (
	"context"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// integerMember is one member a request schema types "integer": its path
// and the range the schema states (nil where it states none).
type integerMember struct {
	file     string
	path     []string
	min, max *big.Int
}

// integerMembers walks every "properties" of the named schema file
// (descending into objects and the integer branch of a oneOf) and returns
// each member typed "integer".
func integerMembers(t *testing.T, file string) []integerMember {
	b, err := os.ReadFile(filepath.Join("..", "..", "schema", file))
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(b, &s))
	var out []integerMember
	bound := func(a map[string]any, k string) *big.Int {
		if v, ok := a[k].(float64); ok {
			i, _ := big.NewFloat(v).Int(nil)
			return i
		}
		return nil
	}
	var walk func(props map[string]any, path []string)
	walk = func(props map[string]any, path []string) {
		for name, p := range props {
			p := p.(map[string]any)
			here := append(append([]string(nil), path...), name)
			alts := []any{p}
			if one, ok := p["oneOf"].([]any); ok {
				alts = append(alts, one...)
			}
			for _, a := range alts {
				if a := a.(map[string]any); a["type"] == "integer" {
					out = append(out, integerMember{file, here, bound(a, "minimum"), bound(a, "maximum")})
				}
			}
			if sub, ok := p["properties"].(map[string]any); ok {
				walk(sub, here)
			}
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		walk(props, nil)
	}
	return out
}

// send puts text v at the member's path in a request its entry point
// takes, and returns the answer of that entry point (the C ABI's path:
// hwaccel_plan_sharding, hwaccel_estimate_training, hwaccel_fit_json,
// hwaccel_rent_json).
func (m integerMember) send(v string) []byte {
	ctx := context.Background()
	switch {
	case m.file == "fit-request.schema.json":
		req := requestWith(m.path, v)
		var top map[string]json.RawMessage
		if err := json.Unmarshal(req, &top); err != nil {
			panic(err)
		}
		delete(top, "model")
		top["filter"] = json.RawMessage(`"Llama-3.1-8B"`)
		b, _ := json.Marshal(top)
		return Fit(ctx, b, NoEnv)
	case m.file == "rent-request.schema.json":
		rent := `{"max_nodes":` + v + `}`
		if m.path[len(m.path)-1] == "schema" {
			rent = `{"prices":{"schema":` + v + `,"machines":[]}}`
		}
		return Rent(ctx, []byte(`{"model":{"params_b":1},"rent":`+rent+`}`), NoEnv)
	case m.path[0] == "training":
		return EstimateTraining(ctx, requestWith(m.path, v), NoEnv)
	}
	return PlanSharding(ctx, requestWith(m.path, v), NoEnv)
}

// Every member a request schema types "integer" is read one way through
// every entry point: an integer in any JSON form with no fractional part
// (4096.0, 4.096e3; JSON Schema draft 2020-12 validation §6.1.1) is that
// integer, and one past the stated range, however large, is refused
// quoting it as written. Before, the training counts, fit's context_length
// and rent's max_nodes decoded into Go ints: 4096.0 there was "expected an
// integer, got the number 4096.0" while the schema takes it, and
// 9223372036854775808 was "outside the range of an integer" rather than
// outside the member's range.
func TestEveryIntegerMemberReadsAlike(t *testing.T) {
	var members []integerMember
	for _, f := range []string{"request.schema.json", "fit-request.schema.json", "rent-request.schema.json",
		"detect-options.schema.json", "models-request.schema.json"} {
		members = append(members, integerMembers(t, f)...)
	}
	require.GreaterOrEqual(t, len(members), 14, "the walk found the schemas' integer members")
	for _, m := range members {
		name := m.file + " " + strings.Join(m.path, ".")
		low := big.NewInt(1)
		if m.min != nil {
			low = m.min
		}
		plain := m.send(low.String())
		require.NotContains(t, string(plain), `"error"`, "%s %s: the lowest value is refused: %s", name, low, plain)
		for _, form := range integralForms(low) {
			assert.Equal(t, string(plain), string(m.send(form)), "%s: %s is %s", name, form, low)
		}
		for _, text := range []string{"9007199254740993", "9223372036854775808", "1e400", "4.096E+30", "-9223372036854775809"} {
			ans := m.send(text)
			if m.holds(text) {
				// In the schema's range (size_bytes reaches 2^60; a price
				// file's schema has none): the integer is taken.
				assert.NotContains(t, string(ans), `"error"`, "%s %s: %s", name, text, ans)
				continue
			}
			assert.Equal(t, errs.InvalidArgument, errorCode(t, ans), "%s %s: %s", name, text, ans)
			assert.Regexp(t, `"message":"[^"]*\b(`+m.path[0]+`|`+m.path[len(m.path)-1]+`)\b[^"]* `+regexp.QuoteMeta(text)+` (bytes )?is outside \[`, string(ans),
				"%s %s: refused naming the member and quoting the number as written", name, text)
		}
	}
}

// holds reports whether the integer text lies in the member's range.
func (m integerMember) holds(text string) bool {
	f, _, err := big.ParseFloat(text, 10, 2048, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	v, _ := f.Int(nil)
	return (m.min == nil || v.Cmp(m.min) >= 0) && (m.max == nil || v.Cmp(m.max) <= 0)
}

// integralForms writes integer v as JSON numbers with no fractional part
// other than its plain digits.
func integralForms(v *big.Int) []string {
	s := v.String()
	scaled := s + "00e-2"
	if s == "0" {
		scaled = "0.0e-2"
	}
	return []string{s + ".0", s + ".000", s + "e0", s + "E+0", scaled, "0." + s + "e" + itoa(len(s))}
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }
