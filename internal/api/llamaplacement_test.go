package api

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// llamaRun is what a llama.cpp plan runs: its devices, -c and the device
// list of its command.
type llamaRun struct {
	Devices []string
	Context string
	Visible string
	Split   string
}

func llamaRunOf(t *testing.T, a plan.ShardingAnswer) llamaRun {
	t.Helper()
	require.True(t, a.Fits.Yes(), a.Explanation)
	var r llamaRun
	for _, s := range a.Shards {
		r.Devices = append(r.Devices, s.DeviceID)
	}
	args := a.EngineArgs["llama.cpp"]
	flag := func(name string) string {
		if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	r.Context, r.Split = flag("-c"), flag("--split-mode")
	r.Visible = a.EngineEnv["llama.cpp"]["CUDA_VISIBLE_DEVICES"]
	return r
}

func placementLine(a plan.ShardingAnswer) string {
	for _, l := range a.Explanation {
		if len(l) > 10 && l[:10] == "placement:" {
			return l
		}
	}
	return ""
}

// Llama-3.3-70B q8_0 for llama.cpp on the DGX H100 with no context: llama.cpp
// shown the GPUs splits the layers over them and keeps the model's 131072
// tokens, which two H100s hold. The plan was one H100 at 28160 tokens with
// seven idle; "placement": "fewest" still plans that.
func TestDGXH100LlamaCPPHoldsTheModelsContext(t *testing.T) {
	const body = `{"model":{"name":"Llama-3.3-70B-Instruct"},"engine":"llama.cpp","quant":"q8_0"`
	a, _ := fixtureShardingAnswer(t, "dgx-h100", body+`}`)
	r := llamaRunOf(t, a)
	assert.Equal(t, llamaRun{Devices: []string{"cuda:0", "cuda:1"}, Context: "131072", Visible: "0,1", Split: "layer"}, r)
	assert.Equal(t, 131072, a.MaxContextLength)
	assert.Len(t, a.IdleDevices, 6)
	line := placementLine(a)
	assert.Contains(t, line, "2 devices of the 8 identical ones hold the model's 131072-token context per sequence")
	assert.Contains(t, line, "1 device holds 28160 tokens")

	f, _ := fixtureShardingAnswer(t, "dgx-h100", body+`,"placement":"fewest"}`)
	assert.Equal(t, llamaRun{Devices: []string{"cuda:0"}, Context: "28160", Visible: "0", Split: "none"}, llamaRunOf(t, f))
	assert.Empty(t, placementLine(f))

	// A context the request gives is the one llama.cpp runs (-c): the
	// fewest devices that hold it, as before.
	c, _ := fixtureShardingAnswer(t, "dgx-h100", body+`,"context_length":16384}`)
	assert.Equal(t, llamaRun{Devices: []string{"cuda:0"}, Context: "16384", Visible: "0", Split: "none"}, llamaRunOf(t, c))
}

// The case of the last session: Qwen2.5-72B-Instruct-AWQ as a q8_0 GGUF
// (int8 for llama.cpp) was cut to 21760 tokens on one H100; two hold
// its whole 32768 tokens.
func TestDGXH100LlamaCPPQwen72BKeepsItsContext(t *testing.T) {
	a, _ := fixtureShardingAnswer(t, "dgx-h100", `{"model":{"name":"Qwen/Qwen2.5-72B-Instruct-AWQ"},"engine":"llama.cpp","quant":"int8"}`)
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, []string{"cuda:0", "cuda:1"}, llamaRunOf(t, a).Devices)
	assert.Equal(t, 32768, a.MaxContextLength)
	assert.Contains(t, placementLine(a), "1 device holds 21760 tokens")
}

// Two L40S (PCIe, no NVLink): Llama-3.3-70B q4_k_m fits one at 13568
// tokens; llama.cpp splits it over both at the model's 131072.
func TestTwoL40SLlamaCPPSplitsForTheContext(t *testing.T) {
	const body = `{"model":{"name":"Llama-3.3-70B-Instruct"},"engine":"llama.cpp","quant":"q4_k_m"`
	a, _ := fixtureShardingAnswer(t, "two-nvidia", body+`}`)
	r := llamaRunOf(t, a)
	assert.Equal(t, llamaRun{Devices: []string{"cuda:0", "cuda:1"}, Context: "131072", Visible: "0,1", Split: "layer"}, r)
	assert.Empty(t, a.IdleDevices)
	assert.Contains(t, placementLine(a), "1 device holds 13568 tokens")

	f, _ := fixtureShardingAnswer(t, "two-nvidia", body+`,"placement":"fewest"}`)
	assert.Equal(t, llamaRun{Devices: []string{"cuda:0"}, Context: "13568", Visible: "0", Split: "none"}, llamaRunOf(t, f))
}
