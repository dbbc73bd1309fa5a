package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// otherEngineLine is the explanation's line that names another engine
// fitting the model, or "".
func otherEngineLine(lines []string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, "engine llama.cpp") || strings.HasPrefix(l, "engine vllm") {
			return l
		}
	}
	return ""
}

// On an 8 GiB laptop GPU (the slimbook-hero-rtx4060-igpu fixture's RTX 4060
// Laptop GPU, 8188 MiB) a request naming no engine is planned for vLLM,
// the default for CUDA GPUs, where Llama-3.1-8B does not fit even at int4
// (vLLM's start-up charge); llama.cpp, which also runs there, holds it in a
// 4-bit GGUF. The refusal said nothing of it: a user with such a card read
// "does not fit" for a model llama.cpp runs. It now names the engine that
// fits, and what it would plan.
func TestRefusalNamesAnotherEngineThatFits(t *testing.T) {
	d := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4060 Laptop GPU", 8188<<20, "8.9")
	free := int64(7800 << 20)
	d.Vendor, d.MemoryFreeBytes = "nvidia", &free
	r := reg(t, []registry.Device{d})

	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"}}`, r))
	require.False(t, a.Fits.Yes(), "vLLM does not hold it: %s", dump(t, a.Explanation))
	line := otherEngineLine(a.Explanation)
	require.NotEmpty(t, line, dump(t, a.Explanation))
	// llama.cpp fits it at the last level vLLM was refused at, int4
	// (Q4_K_M); the line names what its command, the engine named with
	// quant auto, plans: Q5_K_M, a published file that fits. It named
	// q4_k_m, and that command planned q5_k_m.
	named := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp"}`, r))
	require.True(t, named.Fits.Yes())
	assert.Equal(t, "q5_k_m", named.Quant)
	assert.Contains(t, line, "engine llama.cpp fits it: "+named.Quant+" on cuda:0")
	assert.Contains(t, line, `"engine": "llama.cpp"`)

	// suggest says the same.
	sg, err := SuggestQuant(request(t, `{"model":{"name":"Llama-3.1-8B"}}`, r))
	require.NoError(t, err)
	require.False(t, sg.Fits.Yes())
	assert.Equal(t, line, otherEngineLine(sg.Explanation))

	// An engine the request named is its answer: no other engine is tried.
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm"}`, r))
	require.False(t, a.Fits.Yes())
	assert.Empty(t, otherEngineLine(a.Explanation))

	// Nor is a line written when the other engine does not fit either.
	a = shard(t, request(t, `{"model":{"name":"gpt-oss-120b"}}`, r))
	require.False(t, a.Fits.Yes())
	assert.Empty(t, otherEngineLine(a.Explanation))
}

// A request for a GGUF quant naming no engine is llama.cpp's on a CUDA GPU
// (engine.Default with Device.GGUF): when llama.cpp refuses it, the other
// engines tried are asked about the same device, GGUF flag included, so
// llama.cpp is not replanned as "another engine". The device was built
// twice (engineOf and otherEngineFits) and the second left the flag out:
// vLLM was then the default and llama.cpp the alternative, planned again
// at the level it had just refused.
func TestGGUFRequestDoesNotReplanTheRefusedEngine(t *testing.T) {
	d := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4060 Laptop GPU", 8188<<20, "8.9")
	r := reg(t, []registry.Device{d})
	p, err := newPlanning(request(t, `{"model":{"name":"Llama-3.1-70B"},"quant":"q4_k_m"}`, r))
	require.NoError(t, err)
	rule := p.engineRule()
	require.True(t, rule.GGUF)
	refused, byDefault := rule.engineOf(&r.Devices[0])
	require.True(t, byDefault)
	require.Equal(t, "llama.cpp", refused.Name())
	for _, e := range otherEngines(rule, &r.Devices[0]) {
		assert.NotEqual(t, refused.Name(), e.Name(), "the refused default is not another engine")
	}

	a := shard(t, p.Request)
	require.False(t, a.Fits.Yes())
	assert.Empty(t, otherEngineLine(a.Explanation))
}
