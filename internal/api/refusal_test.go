package api

import (
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// TestGoldenRefusals checks every planning answer of the golden files: an
// answer that does not fit carries a refusal whose code is one of
// plan.RefusalCodes and whose text is the explanation's "does not fit:"
// line; an answer that fits carries none.
func TestGoldenRefusals(t *testing.T) {
	files := goldenFiles(t)
	refused := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var answers map[string]struct {
			Fits        *bool         `json:"fits"`
			Refusal     *plan.Refusal `json:"refusal"`
			Explanation []string      `json:"explanation"`
		}
		require.NoError(t, json.Unmarshal(b, &answers), f)
		var fields map[string]map[string]any
		require.NoError(t, json.Unmarshal(b, &fields), f)
		for name, a := range answers {
			what := filepath.Base(f) + " " + name
			fits, has := fields[name]["fits"]
			if !has {
				continue // the detect answer, or an error object
			}
			if fits == nil {
				// "Unknown" is not "no": fits is null where no device's
				// memory is known (no_device), or where devices of
				// unknown memory were left out that might lift the
				// refusal, which then names them (docs/requests.md:
				// a CPU of unknown RAM under include_cpu on the tpu-v5e
				// and slimbook-hero-rtx4060-igpu fixtures).
				require.NotNil(t, a.Refusal, what)
				if a.Refusal.Code != plan.RefusalNoDevice {
					assert.Contains(t, []string{plan.RefusalMemory, plan.RefusalTooFewDevices}, a.Refusal.Code, what)
					assert.Contains(t, a.Refusal.Text, "left out because their memory is unknown (counted, they might", what)
					assert.Contains(t, a.Explanation, "does not fit: "+a.Refusal.Text, what)
				}
				refused[a.Refusal.Code]++
				continue
			}
			if *a.Fits {
				assert.Nil(t, a.Refusal, what)
				continue
			}
			require.NotNil(t, a.Refusal, what)
			assert.Contains(t, plan.RefusalCodes, a.Refusal.Code, what)
			assert.NotEqual(t, plan.RefusalNoDevice, a.Refusal.Code, "%s: no device with known memory is fits null", what)
			assert.NotContains(t, fields[name], "quant", "%s: a refusal carries no quant", what)
			assert.NotContains(t, fields[name], "strategy", "%s: a refusal carries no strategy", what)
			assert.Contains(t, a.Explanation, "does not fit: "+a.Refusal.Text, what)
			refused[a.Refusal.Code]++
		}
	}
	// The fixtures refuse for lack of devices, of memory and of support.
	for _, code := range []string{plan.RefusalNoDevice, plan.RefusalMemory, plan.RefusalUnsupported} {
		assert.Positive(t, refused[code], code)
	}
}

// TestRefusalCodesMatchTheSchemas ties the answer schemas' refusal codes to
// plan.RefusalCodes.
func TestRefusalCodesMatchTheSchemas(t *testing.T) {
	for _, name := range []string{"plan", "suggest", "training"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "schema", name+".schema.json"))
		require.NoError(t, err)
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Defs       struct {
				Refusal struct {
					Properties struct {
						Code struct {
							Enum []string `json:"enum"`
						} `json:"code"`
					} `json:"properties"`
				} `json:"refusal"`
			} `json:"$defs"`
		}
		require.NoError(t, json.Unmarshal(b, &s), name)
		assert.Contains(t, s.Properties, "refusal", name)
		assert.ElementsMatch(t, plan.RefusalCodes, s.Defs.Refusal.Properties.Code.Enum, name)
	}
}
