package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// goldenPlan is the part of a golden plan answer the peak check reads.
type goldenPlan struct {
	Quant string `json:"quant"`
	Model struct {
		Params       float64 `json:"params"`
		ActiveParams float64 `json:"active_params"`
	} `json:"model"`
	Shards []struct {
		DeviceID string `json:"device_id"`
	} `json:"shards"`
	Throughput struct {
		PrefillTokensPerS float64 `json:"prefill_tokens_per_s"`
	} `json:"throughput"`
	Budget struct {
		Engine string `json:"engine"`
	} `json:"budget"`
}

// No vLLM or SGLang plan of the golden answers (every fixture machine)
// states a prefill figure above what its GPUs allow at the serving
// prompt's fitted efficiency: prefill tokens/s × 2 × active weights ≤
// ServingPromptMFU × dense peak of the plan's precision (fp8 for fp8
// weights, else 16-bit) × the GPUs the plan runs on. The figure that
// rose up to 30-fold under the unfitted model (issue 22) is held here.
func TestGoldenServingPrefillWithinPeak(t *testing.T) {
	files := goldenFiles(t)
	checked, ratio := 0, 0.0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var answers map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &answers), f)
		var detect struct {
			Devices []registry.Device `json:"devices"`
		}
		require.NoError(t, json.Unmarshal(answers["detect"], &detect), f)
		byID := map[string]registry.Device{}
		for _, d := range detect.Devices {
			byID[d.ID] = d
		}
		for name, a := range answers {
			if !strings.HasPrefix(name, "plan-") {
				continue
			}
			var p goldenPlan
			if json.Unmarshal(a, &p) != nil || p.Throughput.PrefillTokensPerS <= 0 || p.Budget.Engine != "vllm" && p.Budget.Engine != "sglang" {
				continue
			}
			ids := map[string]bool{}
			peak := 0.0
			for _, s := range p.Shards {
				ids[s.DeviceID] = true
				d := byID[s.DeviceID]
				rec, ok := specs.ForDevice(&d)
				pk := rec.BF16TFLOPS
				if p.Quant == "fp8" && rec.FP8TFLOPS > 0 {
					pk = rec.FP8TFLOPS
				}
				if !ok || pk <= 0 {
					peak = -1
					break
				}
				if peak == 0 || pk < peak && peak > 0 {
					peak = pk
				}
			}
			if peak <= 0 {
				continue
			}
			active := p.Model.Params
			if p.Model.ActiveParams > 0 {
				active = p.Model.ActiveParams
			}
			bound := calibration.Fitted.ServingPromptMFU * peak * 1e12 * float64(len(ids))
			checked++
			ratio = max(ratio, p.Throughput.PrefillTokensPerS*2*active/bound)
			assert.LessOrEqual(t, p.Throughput.PrefillTokensPerS*2*active, bound, "%s %s: %.0f tokens/s on %d GPUs", filepath.Base(f), name, p.Throughput.PrefillTokensPerS, len(ids))
		}
	}
	assert.Greater(t, checked, 20, "serving plans with a prefill figure on known GPUs")
	t.Logf("%d serving plans checked; the highest at %.2f of the bound", checked, ratio)
}
