package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Without a detected core count a Neuron chip counts its generation's
// cores to vLLM: Trainium2 4 (8 NeuronCores-v3 grouped by LNC=2),
// Inferentia2 2.
func TestVLLMNeuronCoresByGeneration(t *testing.T) {
	for arch, cores := range map[string]int{"trainium2": 4, "inferentia2": 2, "trainium": 2} {
		d := gpu(registry.KindNeuron, 0, "AWS chip", 96*gibBytes, "")
		d.Vendor, d.Architecture = "amazon", arch
		d.Quantizations = []string{"fp32", "bf16", "fp16", "fp8", "int8"}
		a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm"}`, reg(t, []registry.Device{d})))
		require.True(t, a.Fits.Yes(), arch)
		args := a.EngineArgs[engineVLLM]
		assert.Equal(t, itoa(cores), argAfter(args, "--tensor-parallel-size"), arch)
		assert.NotContains(t, args, "--gpu-memory-utilization", arch)
	}
}

// Auto never tries a level as wide as the native format: an int4 requantization
// of MXFP4 is not narrower, int8 is not narrower than fp8.
func TestNativeLevelsAreNarrower(t *testing.T) {
	for name, want := range map[string][]string{
		"gpt-oss-120b":       {"mxfp4"},
		"DeepSeek-V3":        {"fp8", "int4"},
		"Qwen/Qwen3-32B-FP8": {"fp8", "int4"},
	} {
		req := request(t, `{"model":{"name":"`+name+`"}}`, nil)
		ls, _ := levelsFor(planningOf(t, req))
		var got []string
		for _, l := range ls {
			got = append(got, string(l))
		}
		assert.Equal(t, want, got, name)
	}
	// A 16-bit native checkpoint keeps the auto ladder.
	ls, _ := levelsFor(planningOf(t, request(t, `{"model":{"name":"Llama-3.1-8B"}}`, nil)))
	assert.Equal(t, autoLevels, ls)
}

// A named GGUF repository of several types: auto tries its types, best
// first, so that llama.cpp takes the best of the files named that fits;
// an engine that loads no GGUF still plans the release's Hugging Face
// levels (ggufUnloaded), whichever type the catalog lists first, an F16
// one included (vLLM and SGLang take fp16 itself as a level).
func TestNamedGGUFRepositoryAutoTriesItsTypes(t *testing.T) {
	m := &model.Model{Name: "X", NamedCheckpoint: 1, Checkpoints: []model.Checkpoint{
		{Quant: "bf16", Repo: "org/X"},
		{Quant: "fp16", Repo: "gg/X-GGUF", Method: "gguf"},
		{Quant: "q4_k_m", Repo: "gg/X-GGUF", Method: "gguf"},
		{Quant: "q8_0", Repo: "gg/X-GGUF", Method: "gguf"},
		{Quant: "q2_k", Repo: "b/X-GGUF", Method: "gguf"},
	}}
	assert.Equal(t, []quant.Level{quant.FP16, "q8_0", "q4_k_m"}, namedGGUFTypes(m))
	ls, why := nativeLevels(m)
	assert.Equal(t, []quant.Level{quant.FP16, "q8_0", "q4_k_m"}, ls)
	assert.Equal(t, "auto: gg/X-GGUF, the GGUF repository named, holds fp16 > q8_0 > q4_k_m (the types the catalog lists of it); auto plans the best of them that fits", why)
	for _, e := range []string{"vllm", "sglang"} {
		_, ok := ggufUnloaded(&planning{Request: &Request{Model: m, Engine: e}})
		assert.True(t, ok, e)
	}
	_, ok := ggufUnloaded(&planning{Request: &Request{Model: m, Engine: "llama.cpp"}})
	assert.False(t, ok)

	// One type keeps nativeLevels' rule: that type, then narrower levels.
	m.Checkpoints = m.Checkpoints[:2]
	m.Checkpoints[1].Quant = "q8_0"
	ls, _ = nativeLevels(m)
	assert.Equal(t, []quant.Level{"q8_0", quant.INT4}, ls)
}

// ggml-org/gemma-3-27b-it-GGUF, listed at several types, named for
// llama.cpp: auto tries those types, best first, down to Q4_K_M, below
// which no auto level is narrower.
func TestCatalogGGUFRepositoryAutoTriesItsTypes(t *testing.T) {
	req := planningOf(t, request(t, `{"model":{"name":"ggml-org/gemma-3-27b-it-GGUF"},"engine":"llama.cpp"}`, nil))
	ls, why := levelsFor(req)
	require.GreaterOrEqual(t, len(ls), 2)
	assert.Equal(t, quant.Level("q4_k_m"), ls[len(ls)-1])
	for i := 1; i < len(ls); i++ {
		assert.Greater(t, ls[i-1].BitsPerWeight(), ls[i].BitsPerWeight(), "best first: %v", ls)
	}
	assert.Contains(t, why, "auto: ggml-org/gemma-3-27b-it-GGUF, the GGUF repository named, holds ")
	assert.NotContains(t, why, "then narrower levels")
}

func argAfter(args []string, flag string) string {
	for i, s := range args {
		if s == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
