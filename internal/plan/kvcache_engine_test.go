package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A llama.cpp plan sized at one of llama.cpp's quantized cache types
// (kv_cache_dtype q4_0: 18 bytes per 32 values) must pass the type to
// llama-server: without --cache-type-k/-v it allocates f16, its default
// (common/arg.cpp of ggml-org/llama.cpp), 3.6 times the cache the plan
// counted (Llama-3.1-8B at 131072 tokens: 16.0 GiB, not 4.5).
func TestLlamaCPPCommandCarriesItsCacheType(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	for _, kv := range []string{"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "f32"} {
		a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":4096,"kv_cache_dtype":"`+kv+`"}`, r))
		require.True(t, a.Fits, kv)
		args := a.EngineArgs["llama.cpp"]
		assert.Equal(t, kv, argValue(args, "--cache-type-k"), "%s: %v", kv, args)
		assert.Equal(t, kv, argValue(args, "--cache-type-v"), "%s: %v", kv, args)
	}
	// int8 is written as llama.cpp's q8_0, as before; the 16-bit default
	// needs no flag.
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":4096,"kv_cache_dtype":"int8"}`, r))
	assert.Equal(t, "q8_0", argValue(a.EngineArgs["llama.cpp"], "--cache-type-k"))
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":4096}`, r))
	assert.NotContains(t, a.EngineArgs["llama.cpp"], "--cache-type-k")
}
