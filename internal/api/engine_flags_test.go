package api

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vLLM on Neuron counts NeuronCores, not chips: an Inferentia2 chip has two
// NeuronCores-v2 (AWS Neuron docs, Inferentia2 architecture,
// https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/inferentia2.html),
// so one chip is --tensor-parallel-size 2; and vLLM's Neuron backend has no
// --gpu-memory-utilization.
func TestVLLMOnNeuronCountsCores(t *testing.T) {
	// trn1-2xlarge: one Trainium chip whose neuron-ls capture counts 2
	// NeuronCores (plan.TestVLLMNeuronCoresByGeneration covers the
	// per-generation counts and plans over several chips).
	a := fullPlan(t, "trn1-2xlarge", `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm"}`)
	require.Equal(t, true, a["fits"])
	shards := len(a["shards"].([]any))
	args := argsOf(a, "vllm")
	assert.Equal(t, strconv.Itoa(2*shards), flagValue(args, "--tensor-parallel-size"), "%v", args)
	assert.NotContains(t, args, "--gpu-memory-utilization")
}

// vLLM int8 on TPU is its weight-only tpu_int8 method applied on load, not
// a GPTQ/AWQ checkpoint.
func TestVLLMInt8OnTPU(t *testing.T) {
	for _, m := range []string{"tpu-v5e", "tpu-v4"} {
		a := fullPlan(t, m, `{"model":{"name":"Llama-3.1-8B"},"quant":"int8","engine":"vllm"}`)
		require.Equal(t, true, a["fits"], m)
		args := argsOf(a, "vllm")
		assert.Equal(t, "tpu_int8", flagValue(args, "--quantization"), m)
		assert.NotContains(t, explanation(a), "GPTQ", m)
		assert.Equal(t, "meta-llama/Llama-3.1-8B", loadOf(a, "vllm")["repo"], "tpu_int8 quantizes the 16-bit checkpoint")
	}
}

// An engine that cannot run on the devices says so as the reason, in the
// levels table and the explanation, not "no device supports int4".
func TestEngineThatCannotRunSaysSo(t *testing.T) {
	for _, c := range []struct{ machine, engine, want string }{
		{"tpu-v5e", "llama.cpp", "llama.cpp does not run on tpu devices"},
		{"tpu-v4", "llama.cpp", "llama.cpp does not run on tpu devices"},
		{"macbook-m3-pro", "vllm", "vLLM does not run on metal_gpu devices"},
	} {
		a := fullPlan(t, c.machine, `{"model":{"name":"Llama-3.1-8B"},"engine":"`+c.engine+`"}`)
		assert.Equal(t, false, a["fits"], c.machine)
		for _, l := range a["levels"].([]any) {
			row := l.(map[string]any)
			assert.Equal(t, false, row["fits"], c.machine)
			assert.Contains(t, row["reason"], c.want, "%s %s", c.machine, row["quant"])
		}
		ex := explanation(a)
		assert.Contains(t, ex, "does not fit: "+c.want, c.machine)
		assert.NotContains(t, ex, "no available device supports", c.machine)
		assert.NotContains(t, ex, "do not support", c.machine)
	}
}

// "flash_attention": false is llama.cpp's -fa off (common/arg.cpp: -fa takes
// on, off or auto, auto being the default), and only then; vLLM has no such
// flag, which the explanation says.
func TestFlashAttentionOffIsLlamaCPPFlag(t *testing.T) {
	a := fullPlan(t, "two-nvidia", `{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m","engine":"llama.cpp","flash_attention":false}`)
	require.Equal(t, true, a["fits"])
	assert.Equal(t, "off", flagValue(argsOf(a, "llama.cpp"), "-fa"))

	a = fullPlan(t, "two-nvidia", `{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m","engine":"llama.cpp"}`)
	assert.NotContains(t, argsOf(a, "llama.cpp"), "-fa", "the default (auto) needs no flag")

	a = fullPlan(t, "two-nvidia", `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","flash_attention":false}`)
	require.Equal(t, true, a["fits"])
	assert.NotContains(t, argsOf(a, "vllm"), "-fa")
	assert.Contains(t, explanation(a), "vLLM: no command-line flag turns flash attention off")
}
