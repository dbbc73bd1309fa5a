package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A distillation, DPO or RLHF run with no teacher, reference, reward or
// critic named trains beside a copy of the trained model in each role
// (resolveCompanions; docs/requests.md, training), and the answer said so
// nowhere: Llama-3.1-8B distilled on an H200 counted "frozen models 15.0
// GiB" with no word of which model that was. The explanation now names each
// companion the run holds and says which were not named and so are the
// trained model.
func TestTrainingExplanationNamesItsCompanions(t *testing.T) {
	gpus := trainGPUs(t, 1, 80<<30)
	explain := func(training string) string {
		a := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":`+training+`}`, gpus))
		return strings.Join(a.Explanation, "\n")
	}
	got := explain(`{"method":"distillation"}`)
	assert.Contains(t, got, "companion models: teacher Llama-3.1-8B, frozen (the trained model: no training.teacher named)")

	got = explain(`{"method":"distillation","teacher":{"name":"Llama-3.1-70B"}}`)
	assert.Contains(t, got, "companion models: teacher Llama-3.1-70B, frozen")
	assert.NotContains(t, got, "no training.teacher named")

	got = explain(`{"method":"ppo","reward":{"name":"Llama-3.1-70B"}}`)
	assert.Contains(t, got, "companion models: reference Llama-3.1-8B, frozen (the trained model: no training.reference named); "+
		"reward Llama-3.1-70B, frozen; critic Llama-3.1-8B, trained (the trained model: no training.critic named)")

	for _, m := range []string{`{}`, `{"method":"lora"}`} {
		assert.NotContains(t, explain(m), "companion models", m)
	}
}
