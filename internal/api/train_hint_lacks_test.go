package api

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The "would fit on N such devices" and "even with ..." lines of a training
// refusal name only what the request lacks of gradient checkpointing and
// ZeRO stage 3. Before, they named both even when the request had set them
// (ai-hwaccel train --fsdp --gradient-checkpointing ... was told to add
// --gradient-checkpointing and --zero 3).
func TestTrainingRefusalNamesOnlyWhatTheRequestLacks(t *testing.T) {
	for _, c := range []struct {
		model, training string
		want, not       []string
	}{
		{"Llama-3.1-70B", `{"method":"full"}`,
			[]string{"such devices (", "each) with gradient_checkpointing and zero_stage 3 (ZeRO-3/FSDP); on this one device"}, nil},
		{"Llama-3.1-70B", `{"method":"full","gradient_checkpointing":true}`,
			[]string{"each) with zero_stage 3 (ZeRO-3/FSDP); on this one device"}, []string{"gradient_checkpointing and"}},
		{"Llama-3.1-70B", `{"method":"full","fsdp":true}`,
			[]string{"each) with gradient_checkpointing; on this one device"}, []string{"zero_stage 3"}},
		{"Llama-3.1-70B", `{"method":"full","zero_stage":3,"gradient_checkpointing":true}`,
			[]string{"each) as set; on this one device"}, []string{"zero_stage 3", "with gradient_checkpointing"}},
		{"Llama-3.1-405B", `{"method":"full","fsdp":true,"gradient_checkpointing":true}`,
			[]string{"as set it needs more than 16 devices of this memory"}, []string{"even with", "zero_stage 3 it"}},
		{"Llama-3.1-405B", `{"method":"full","fsdp":true}`,
			[]string{"even with gradient_checkpointing it needs more than 16 devices"}, []string{"zero_stage 3 it"}},
		{"Llama-3.1-405B", `{"method":"full"}`,
			[]string{"even with gradient_checkpointing and zero_stage 3 it needs more than 16 devices"}, nil},
	} {
		lines := trainingExplanation(t, "h200-vm", `{"model":{"name":"`+c.model+`"},"training":`+c.training+`}`)
		text := strings.Join(lines, "\n")
		for _, w := range c.want {
			assert.Contains(t, text, w, "%s %s", c.model, c.training)
		}
		for _, n := range c.not {
			assert.NotContains(t, text, n, "%s %s", c.model, c.training)
		}
	}
}
