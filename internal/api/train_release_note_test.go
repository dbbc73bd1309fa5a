package api

import (
	"context"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A training answer for an ollama tag or a tuned release's name carried
// the plan's note "serves mistralai/Mistral-7B-Instruct-v0.3, the
// instruction-tuned release ollama's mistral:7b names": a training run
// serves nothing. It says what the run trains; a plan still says serves.
func TestTrainingReleaseNoteSaysWhatIsTrained(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"mistral:7b", "trains mistralai/Mistral-7B-Instruct-v0.3, the instruction-tuned release ollama's mistral:7b names"},
		{"gemma3:27b", "trains google/gemma-3-27b-it, the instruction-tuned release ollama's gemma3:27b names"},
		{"Mistral-7B-Instruct-v0.3", "trains mistralai/Mistral-7B-Instruct-v0.3, the release named"},
	} {
		detect := fixtureDetect(t, "h200-vm")
		var train struct {
			Warnings []string `json:"warnings"`
		}
		out := EstimateTraining(context.Background(), []byte(`{"model":{"name":"`+c.name+`"},"training":{"method":"lora"},"detect":`+detect+`}`), NoEnv)
		require.NoError(t, json.Unmarshal(out, &train), "%s", out)
		text := strings.Join(train.Warnings, "\n")
		assert.Contains(t, text, c.want, "%s: %s", c.name, out)
		served := "serves " + strings.TrimPrefix(c.want, "trains ")
		assert.NotContains(t, text, served, "%s: %s", c.name, out)

		var plan struct {
			Warnings []string `json:"warnings"`
		}
		out = PlanSharding(context.Background(), []byte(`{"model":{"name":"`+c.name+`"},"detect":`+detect+`}`), NoEnv)
		require.NoError(t, json.Unmarshal(out, &plan), "%s", out)
		assert.Contains(t, strings.Join(plan.Warnings, "\n"), served, "%s: %s", c.name, out)
	}
}
