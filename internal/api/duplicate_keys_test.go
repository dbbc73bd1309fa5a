package api

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// A key given twice in one object is invalid_json at every entry point
// (issue 14 item 15: {"params_b":7,"params_b":700} was planned as 700B,
// the last value winning).
func TestRepeatedKeysAreInvalidJSONAtEveryEntryPoint(t *testing.T) {
	const gpu = `{"kind":"cuda_gpu","index":0,"available":true,"memory_bytes":85520809984}`
	planning := map[string]func(context.Context, []byte, Env) []byte{
		"plan": PlanSharding, "suggest": SuggestQuant, "train": EstimateTraining,
	}
	requests := map[string]string{
		"model":           `{"model":{"params_b":7,"params_b":700},"registry":{"devices":[` + gpu + `]}}`,
		"model case":      `{"model":{"params_b":7,"PARAMS_B":700},"registry":{"devices":[` + gpu + `]}}`,
		"request":         `{"model":{"params_b":7},"quant":"int8","quant":"fp16","registry":{"devices":[` + gpu + `]}}`,
		"registry":        `{"model":{"params_b":7},"registry":{"devices":[` + gpu + `],"devices":[]}}`,
		"registry device": `{"model":{"params_b":7},"registry":{"devices":[` + strings.Replace(gpu, `"index":0`, `"index":0,"index":1`, 1) + `]}}`,
		"cluster node":    `{"model":{"params_b":7},"cluster":[{"devices":[` + strings.Replace(gpu, `"available":true`, `"available":true,"available":false`, 1) + `]}]}`,
		"detect options":  `{"model":{"params_b":7},"detect":{"no_exec":true,"no_exec":false,"path":""}}`,
		"training":        `{"model":{"params_b":7},"registry":{"devices":[` + gpu + `]},"training":{"method":"lora","method":"full"}}`,
	}
	for entry, f := range planning {
		for name, req := range requests {
			if name == "training" && entry != "train" {
				continue // only estimate_training reads the training object
			}
			ans := f(context.Background(), []byte(req), NoEnv)
			assert.Equal(t, errs.InvalidJSON, errorCode(t, ans), "%s, repeated key in %s: %s", entry, name, ans)
			assert.Contains(t, string(ans), "more than once", "%s, %s", entry, name)
		}
		// The same requests without the repeat are answers, so the error
		// above is the repeat's.
		ok := `{"model":{"params_b":7},"registry":{"devices":[` + gpu + `]}}`
		assert.Empty(t, errorCode(t, f(context.Background(), []byte(ok), NoEnv)), entry)
	}
	ans := Detect(context.Background(), []byte(`{"no_exec":true,"no_exec":false,"path":""}`), NoEnv)
	assert.Equal(t, errs.InvalidJSON, errorCode(t, ans), "detect options: %s", ans)
	_, err := DecodeOptions([]byte(`{"env":{"CUDA_VISIBLE_DEVICES":"0","CUDA_VISIBLE_DEVICES":"1"}}`), NoEnv)
	assert.Equal(t, errs.InvalidJSON, errs.CodeOf(err), "detect options, env map")
}
