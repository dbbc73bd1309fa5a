package api

import (
	"context"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// When no level fits, the refusal is the nearest miss: the lowest level
// the devices run, refused for memory, not a lower level they do not run.
// Llama-3.1-405B on four TPU v4 chips (bf16 and int8 run but do not fit,
// int4 does not run) is int8's misfit (insufficient_memory), where it said
// "tpu (google) devices do not support int4", as if int4 were why.
func TestNothingFitsSaysTheNearestMiss(t *testing.T) {
	out := PlanSharding(context.Background(), []byte(`{"model":"Llama-3.1-405B",`+detectSource("tpu-v4")+`}`), NoEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	var p struct {
		Fits    bool `json:"fits"`
		Refusal struct {
			Code string `json:"code"`
			Text string `json:"text"`
		} `json:"refusal"`
	}
	require.NoError(t, json.Unmarshal(out, &p))
	require.False(t, p.Fits)
	assert.Equal(t, "insufficient_memory", p.Refusal.Code)
	assert.Contains(t, p.Refusal.Text, "int8 needs")

	// Where no level runs at all (a K80 under llama.cpp's compute
	// capability floor), the refusal says why, as before.
	out = PlanSharding(context.Background(), []byte(`{"model":"Llama-3.1-8B",`+detectSource("nvidia-driver-no-tool")+`}`), NoEnv)
	require.NoError(t, json.Unmarshal(out, &p))
	assert.Equal(t, "unsupported", p.Refusal.Code)
	assert.Contains(t, p.Refusal.Text, "5.0")
}
