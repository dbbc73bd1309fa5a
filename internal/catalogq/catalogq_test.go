package catalogq

import (
	"testing"

	"github.com/goccy/go-json"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// A fit row is marked (no_command) from the load of its plan's engine;
// a plan lists no load only where the model has no checkpoint at all
// (engine.vllm.Load, engine.sglang.Load), which a catalog model never is:
// an entry that lists none has its Hugging Face id as its checkpoint
// (model.defaultCheckpoint). So no fit row escapes the mark that way;
// this pins the premise for every entry and every model Models lists.
func TestEveryCatalogModelHasACheckpoint(t *testing.T) {
	ms := Models("", "")
	require.NotEmpty(t, ms)
	for _, c := range ms {
		m := model.Lookup(c.Name)
		require.NotNil(t, m, c.Name)
		assert.NotEmpty(t, m.Checkpoints, "%s: a fit row of it would list no load and carry no no_command", c.Name)
		assert.NotEmpty(t, c.Checkpoints, c.Name)
	}
}

// A fit row's fits is its plan's: true, false, or null where the plan
// cannot tell (refusal no_device), as the plan answer writes it
// (plan.Fit); the row sorts by it, those that fit first, the ones that
// cannot be told with those that do not.
func TestRowFitsIsThePlansFit(t *testing.T) {
	m := Model{Name: "m", Params: 1}
	for _, tc := range []struct {
		fit  plan.Fit
		json string
	}{{plan.FitYes, "true"}, {plan.FitNo, "false"}, {plan.FitUnknown, "null"}} {
		p := &plan.ShardingAnswer{Fits: tc.fit}
		if !tc.fit.Yes() {
			p.Refusal = &plan.Refusal{Code: plan.RefusalMemory, Text: "why"}
		}
		r := Row(m, p)
		b, err := json.Marshal(r)
		require.NoError(t, err)
		var back map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, tc.json, string(back["fits"]), tc.fit.String())
		var decoded FitRow
		require.NoError(t, json.Unmarshal(b, &decoded))
		assert.Equal(t, r, decoded, "a front end decoding the row keeps %s", tc.fit)
	}
	rows := []FitRow{
		Row(Model{Name: "unknown"}, &plan.ShardingAnswer{Fits: plan.FitUnknown}),
		Row(Model{Name: "no"}, &plan.ShardingAnswer{Fits: plan.FitNo}),
		Row(Model{Name: "yes"}, &plan.ShardingAnswer{Fits: plan.FitYes}),
	}
	Sort(rows)
	assert.Equal(t, "yes", rows[0].Model)
}
