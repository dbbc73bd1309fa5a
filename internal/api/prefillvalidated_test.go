package api

import (
	"os"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoldenPrefillHasItsStatement: in every golden answer, an object
// with a prefill figure (prefill_tokens_per_s) says what vouches for it
// (prefill_validated_on, issue 22), and one without a prefill figure
// carries no such statement.
func TestGoldenPrefillHasItsStatement(t *testing.T) {
	files := goldenFiles(t)
	withPrefill := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var doc any
		require.NoError(t, json.Unmarshal(raw, &doc), f)
		eachObject(doc, func(o map[string]any) {
			p, hasPrefill := o["prefill_tokens_per_s"].(float64)
			v, hasStatement := o["prefill_validated_on"].(string)
			if hasPrefill && p > 0 {
				withPrefill++
				assert.NotEmpty(t, v, "%s: a prefill figure without prefill_validated_on", f)
				return
			}
			assert.False(t, hasStatement, "%s: prefill_validated_on without a prefill figure: %s", f, v)
		})
	}
	assert.Positive(t, withPrefill)
}

// eachObject calls f on every JSON object within v.
func eachObject(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(x)
		for _, e := range x {
			eachObject(e, f)
		}
	case []any:
		for _, e := range x {
			eachObject(e, f)
		}
	}
}
