package api

import (
	"context"
	"fmt"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A training run refused on a unified-memory host (a Mac, a DGX Spark, a
// Strix Halo: one GPU whose memory is the machine's own RAM) said it
// "would fit on 9 such devices (20.6 GiB each)": such a device comes one to
// a machine, so the count is not something its user can add. The answer
// says instead what needs less memory on this device: a lighter method,
// a shorter micro-batch or sequence, else a smaller model. A discrete
// GPU keeps the count up to 16 devices (more of them is a server to
// rent; beyond, the same search, as the slimbook row below shows).
func TestTrainingRefusalOnUnifiedMemorySaysWhatNeedsLess(t *testing.T) {
	for _, c := range []struct {
		machine, model, training string
		want                     string // in the line that replaces the count
	}{
		{"macbook-m2-max-32gb", "Llama-3.1-8B", `"full"`, `it fits with "method": "qlora" and gradient_checkpointing (`},
		{"macbook-m2-max-32gb", "Llama-3.1-8B", `"lora"`, `it fits with "method": "qlora" (`},
		{"macbook-m3-pro", "Qwen2.5-7B", `"full","micro_batch":8,"seq_len":32768`, `it fits with "method": "qlora", gradient_checkpointing, "micro_batch": 1 and "seq_len": `},
		{"dgx-spark-gb10", "Llama-3.1-70B", `"full"`, `it fits with "method": "qlora" and gradient_checkpointing (`},
		{"strix-halo-128gb", "Llama-3.1-70B", `"full"`, `it fits with "method": "qlora" and gradient_checkpointing (`},
		{"macbook-m3-pro", "Llama-3.1-70B", `"full"`, `only a smaller model fits it: even "method": "qlora" and gradient_checkpointing needs `},
	} {
		lines := trainingExplanation(t, c.machine, `{"model":{"name":"`+c.model+`"},"training":{"method":`+c.training+`}}`)
		text := strings.Join(lines, "\n")
		assert.Contains(t, text, c.want, "%s: %q", c.machine, lines)
		assert.NotContains(t, text, "such devices", "%s: %q", c.machine, lines)
		assert.Contains(t, text, "its memory is the host's, so more of it is another machine", "%s", c.machine)
	}
}

// A refusal on a discrete laptop GPU (the Slimbook's 8 GB RTX 4060) said
// the run "would fit on 715 such devices" (full) or "on 90 such devices"
// (LoRA): true, but no one owns 90 laptop GPUs. A count is kept only up
// to maxDevicesSuggested (16: two 8-GPU servers); beyond it the answer
// says what needs less memory on the devices the user has, as on unified
// memory. Llama-3.1-70B full training on a DGX H100 still needs 16 such
// devices (two DGX nodes), which is a count people have.
func TestTrainingRefusalOnDiscreteGPUCountsOnlyMachinesPeopleHave(t *testing.T) {
	for _, c := range []struct {
		machine, model, training string
		want                     string
	}{
		{"slimbook-hero-rtx4060-igpu", "Llama-3.1-8B", `"full"`, `more than 16 devices of this memory; on this one device it fits with "method": "qlora", gradient_checkpointing and "seq_len": 768 (`},
		{"slimbook-hero-rtx4060-igpu", "Llama-3.1-8B", `"lora"`, `on this one device it fits with "method": "qlora" and "seq_len": 768 (`},
		{"slimbook-hero-rtx4060-igpu", "Llama-3.1-70B", `"full"`, `on this one device only a smaller model fits it: even "method": "qlora" and gradient_checkpointing needs `},
		{"dgx-h100", "Llama-3.1-70B", `"full"`, "would fit on 16 such devices ("},
	} {
		lines := trainingExplanation(t, c.machine, `{"model":{"name":"`+c.model+`"},"training":{"method":`+c.training+`}}`)
		text := strings.Join(lines, "\n")
		assert.Contains(t, text, c.want, "%s %s: %q", c.machine, c.training, lines)
		if c.machine == "slimbook-hero-rtx4060-igpu" {
			assert.NotContains(t, text, "such devices", "%s: %q", c.machine, lines)
		}
	}
}

// A lighter setting's figure is what that setting's own estimate says:
// the Mac's line for Llama-3.1-8B full training names QLoRA with gradient
// checkpointing at the per-device total a QLoRA request answers, and that
// request fits.
func TestUnifiedMemoryLighterSettingIsItsOwnEstimate(t *testing.T) {
	var a struct {
		Fits      bool `json:"fits"`
		PerDevice struct {
			TotalBytes int64 `json:"total_bytes"`
		} `json:"per_device"`
	}
	out := EstimateTraining(context.Background(), []byte(`{"model":{"name":"Llama-3.1-8B"},"training":{"method":"qlora","gradient_checkpointing":true},"detect":`+fixtureDetect(t, "macbook-m2-max-32gb")+`}`), NoEnv)
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	require.True(t, a.Fits)
	lines := trainingExplanation(t, "macbook-m2-max-32gb", `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"full"}}`)
	assert.Contains(t, strings.Join(lines, "\n"), fmt.Sprintf(`"method": "qlora" and gradient_checkpointing (%.1f GiB)`, float64(a.PerDevice.TotalBytes)/(1<<30)))
}

func trainingExplanation(t *testing.T, machine, request string) []string {
	t.Helper()
	req := strings.TrimSuffix(request, "}") + `,"detect":` + fixtureDetect(t, machine) + `}`
	var a struct {
		Fits        bool     `json:"fits"`
		Explanation []string `json:"explanation"`
	}
	out := EstimateTraining(context.Background(), []byte(req), NoEnv)
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	require.NotEmpty(t, a.Explanation, "%s: %s", machine, out)
	require.False(t, a.Fits, "%s: %s", machine, out)
	return a.Explanation
}

// On host RAM (no accelerator, or none that runs the precision) a refused
// run said nothing of what would fit: host RAM is not counted in devices,
// so no count was given, and no lighter setting either. It now gets the
// same search as a unified-memory GPU.
func TestTrainingRefusalOnHostRAMSaysWhatNeedsLess(t *testing.T) {
	lines := trainingExplanation(t, "cpu-only", `{"model":{"name":"Llama-3.1-70B"},"training":{"method":"full"}}`)
	assert.Contains(t, strings.Join(lines, "\n"), `host RAM: it fits with "method": "qlora" and gradient_checkpointing (49.1 GiB)`, "%q", lines)
}
