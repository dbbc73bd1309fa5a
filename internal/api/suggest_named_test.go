package api

import (
	"context"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSuggestAnswersTheNamedLevel: docs/requests.md said of "quant" that
// "suggest ignores it", but hwaccel_suggest_quant plans a named level as
// plan does: its answer is that level, its levels table that one row, and
// its explanation says it was requested. The docs now say so; this pins it.
func TestSuggestAnswersTheNamedLevel(t *testing.T) {
	type answer struct {
		Quant  string `json:"quant"`
		Levels []struct {
			Quant string `json:"quant"`
		} `json:"levels"`
		Explanation []string `json:"explanation"`
	}
	suggest := func(extra string) answer {
		in := `{"model":"Llama-3.1-8B"` + extra + `,"detect":` + fixtureDetect(t, "h200-vm") + `}`
		out := SuggestQuant(context.Background(), []byte(in), NoEnv)
		var a answer
		require.NoError(t, json.Unmarshal(out, &a), "%s", out)
		return a
	}
	auto := suggest("")
	assert.Equal(t, "bf16", auto.Quant)
	assert.Greater(t, len(auto.Levels), 1, "auto tries every level")
	named := suggest(`,"quant":"int4"`)
	assert.Equal(t, "int4", named.Quant)
	require.Len(t, named.Levels, 1)
	assert.Equal(t, "int4", named.Levels[0].Quant)
	assert.Contains(t, named.Explanation, "quant int4 was requested")
}
