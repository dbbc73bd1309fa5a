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

// A training run refused on accelerators said how many such devices would
// hold it and then "no setting fits this one device", having tried only
// gradient checkpointing and ZeRO: untrue where QLoRA (Llama-3.1-70B on
// one H200) or an optimizer of less state fits. 8-bit AdamW (2 bytes a
// parameter against AdamW's 8) holds Llama-3.1-8B's full fine-tune on one
// 96 GB Gaudi 2; Adafactor, whose factored moment is next to nothing,
// holds it on one 80 GB H100. The line now names what fits the devices at
// hand, and its figure is what a request with that setting answers.
func TestTrainingRefusalNamesWhatFitsTheDevicesAtHand(t *testing.T) {
	for _, c := range []struct {
		machine, model, training string
		count                    string // the count of such devices, as before
		fits                     string // what fits the devices at hand
		asked                    string // that setting as a request's training options
	}{
		{"h200-vm", "Llama-3.1-70B", `{"method":"full"}`, "would fit on 9 such devices (",
			`on this one device it fits with "method": "qlora" and gradient_checkpointing (`, `{"method":"qlora","gradient_checkpointing":true}`},
		{"gaudi2-8", "Llama-3.1-8B", `{"method":"full","num_devices":1}`, "would fit on 2 such devices (",
			`on this one device it fits with "optimizer": "adamw_8bit" and gradient_checkpointing (`, `{"method":"full","num_devices":1,"optimizer":"adamw_8bit","gradient_checkpointing":true}`},
		{"dgx-h100", "Llama-3.1-8B", `{"method":"full","num_devices":1}`, "would fit on 2 such devices (",
			`on this one device it fits with "optimizer": "adafactor" and gradient_checkpointing (`, `{"method":"full","num_devices":1,"optimizer":"adafactor","gradient_checkpointing":true}`},
		{"tpu-v4", "Llama-3.1-8B", `{"method":"full"}`, "would fit on 5 such devices (",
			`on these 4 devices it fits with "method": "lora" and gradient_checkpointing (`, `{"method":"lora","gradient_checkpointing":true}`},
	} {
		lines := trainingExplanation(t, c.machine, `{"model":{"name":"`+c.model+`"},"training":`+c.training+`}`)
		text := strings.Join(lines, "\n")
		assert.Contains(t, text, c.count, "%s %s", c.machine, c.training)
		assert.NotContains(t, text, "no setting fits", "%s %s", c.machine, c.training)
		require.Contains(t, text, c.fits, "%s %s", c.machine, c.training)

		var a struct {
			Fits      bool `json:"fits"`
			PerDevice struct {
				TotalBytes int64 `json:"total_bytes"`
			} `json:"per_device"`
		}
		out := EstimateTraining(context.Background(), []byte(`{"model":{"name":"`+c.model+`"},"training":`+c.asked+`,"detect":`+fixtureDetect(t, c.machine)+`}`), NoEnv)
		require.NoError(t, json.Unmarshal(out, &a), "%s", out)
		assert.True(t, a.Fits, "%s %s: %s", c.machine, c.asked, out)
		assert.Contains(t, text, c.fits+fmt.Sprintf("%.1f GiB)", float64(a.PerDevice.TotalBytes)/(1<<30)), "%s: the figure is the setting's own estimate", c.machine)
	}
}

// Where the whole model is trained, an optimizer of less state is tried
// before a lighter method, so that full fine-tuning stays full where it
// can; an adapter method is offered none (its optimizer state is the
// adapters'), and a request already on the lightest is offered nothing
// lighter of it.
func TestTrainingLighterOptimizerKeepsTheMethod(t *testing.T) {
	for _, c := range []struct {
		model, training, want, not string
	}{
		{"Llama-3.1-8B", `{"method":"full","num_devices":1,"optimizer":"adamw_8bit"}`, `on this one device it fits with "optimizer": "adafactor" and gradient_checkpointing (`, `"adamw_8bit"`},
		{"Qwen2.5-14B", `{"method":"full","num_devices":1,"optimizer":"sgd","gradient_checkpointing":true}`, `on this one device it fits with "method": "lora" (`, `"optimizer"`},
		{"Llama-3.1-70B", `{"method":"lora","num_devices":1}`, `on this one device it fits with "method": "qlora" (`, `"optimizer"`},
	} {
		lines := trainingExplanation(t, "dgx-h100", `{"model":{"name":"`+c.model+`"},"training":`+c.training+`}`)
		text := strings.Join(lines, "\n")
		assert.Contains(t, text, c.want, "%s: %q", c.training, lines)
		assert.NotContains(t, text, c.not, "%s", c.training)
	}
}
