package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// On a Mac llama.cpp is the default engine: a request naming no engine
// plans the contract's levels (int4 sized as Q4_K_M), while the same
// engine named walks its GGUF ladder (q5_k_m, q6_k between them). The
// default plan's auto line says so; a named engine or a named level does
// not get the line, nor a default engine without a ladder of its own.
func TestDefaultLlamaCPPPlanSaysTheNamedEngineWalksTheGGUFLadder(t *testing.T) {
	const said = `with "engine": "llama.cpp" named, auto walks llama.cpp's GGUF ladder instead (q8_0 > q6_k > q5_k_m > ... > iq1_s)`
	mac := registry.Device{ID: "metal:0", Kind: registry.KindMetal, Family: registry.KindMetal.Family(), Name: "Apple M3 Max",
		Vendor: "apple", Available: true, MemoryBytes: 36 << 30, MemoryUsableBytes: 27 << 30, MemoryShared: true}
	r := reg(t, []registry.Device{mac})

	a := shard(t, request(t, `{"model":{"name":"Qwen3-8B"}}`, r))
	require.True(t, a.Fits.Yes())
	require.NotEmpty(t, a.Explanation)
	assert.Contains(t, a.Explanation[0], said)
	sg, err := SuggestQuant(request(t, `{"model":{"name":"Qwen3-8B"}}`, r))
	require.NoError(t, err)
	assert.Contains(t, sg.Explanation[0], said)

	a = shard(t, request(t, `{"model":{"name":"Qwen3-8B"},"engine":"llama.cpp"}`, r))
	assert.NotContains(t, dump(t, a.Explanation), "named, auto walks")
	a = shard(t, request(t, `{"model":{"name":"Qwen3-8B"},"quant":"int4"}`, r))
	assert.NotContains(t, dump(t, a.Explanation), "named, auto walks")

	h100 := gpu(registry.KindCUDA, 0, "NVIDIA H100 80GB HBM3", 80<<30, "9.0")
	h100.Vendor = "nvidia"
	a = shard(t, request(t, `{"model":{"name":"Qwen3-8B"}}`, reg(t, []registry.Device{h100})))
	require.True(t, a.Fits.Yes())
	assert.Equal(t, engineVLLM, a.Budget.Engine)
	assert.NotContains(t, dump(t, a.Explanation), "named, auto walks")
}
