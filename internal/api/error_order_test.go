package api

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// Every export applies one order: malformed text, trailing data and a
// repeated key are invalid_json before any unknown-key or value check,
// wherever in the text each problem sits. Before, detect, models, fit,
// plan, suggest and train answered invalid_argument for an unknown key met
// before the trailing data or the repeat, while rent (which decodes its top
// level ignoring unknown keys) answered invalid_json.
func TestSyntaxProblemsOutrankShapeAndValueProblemsAtEveryExport(t *testing.T) {
	exports := map[string]func(context.Context, []byte, Env) []byte{
		"detect": Detect, "suggest": SuggestQuant, "plan": PlanSharding, "train": EstimateTraining,
		"models": Models, "fit": Fit, "rent": Rent,
	}
	inputs := map[string]string{
		"unknown key, trailing data":        `{"bogus_key":1} x`,
		"unknown key, repeated key":         `{"bogus_key":1,"other":1,"other":2}`,
		"unknown key repeated":              `{"bogus_key":1,"bogus_key":2}`,
		"unknown key, malformed":            `{"bogus_key":1,"other":}`,
		"unknown key, nested repeat":        `{"bogus_key":1,"detect":{"no_exec":true,"no_exec":false}}`,
		"wrong type, trailing data":         `{"filter":1,"no_exec":"x","model":1,"rent":1} x`,
		"repeat inside the unknown's value": `{"bogus_key":{"a":1,"a":2}}`,
		// A value refused before the member holding the repeat is decoded.
		"bad value, later repeat": `{"model":{"params_b":-1},"quant":"zzz","filter":1,"no_exec":1,` +
			`"detect":{"no_exec":true,"no_exec":false},"rent":{"sort":"x","sort":"y"}}`,
		"bad value, repeat in training": `{"model":{"params_b":7},"context_length":-5,"quant":"zzz","no_exec":1,` +
			`"training":{"method":"lora","method":"full"}}`,
	}
	for name, f := range exports {
		for what, in := range inputs {
			ans := f(context.Background(), []byte(in), NoEnv)
			assert.Equal(t, errs.InvalidJSON, errorCode(t, ans), "%s, %s: %s", name, what, ans)
		}
		// Without the syntax problem the unknown key is invalid_argument,
		// so the answers above are the syntax problem's.
		ans := f(context.Background(), []byte(`{"bogus_key":1}`), NoEnv)
		if name != "rent" { // rent's top level takes keys it does not know
			assert.Equal(t, errs.InvalidArgument, errorCode(t, ans), "%s: %s", name, ans)
		}
	}
}
