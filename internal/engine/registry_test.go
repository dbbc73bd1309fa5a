package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestBuiltinEngines(t *testing.T) {
	assert.Equal(t, []string{NameVLLM, NameLlamaCPP, NameNone}, Names())
	assert.Equal(t, []string{"fp16", "bf16", "fp8", "int8", "f32", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}, CacheTypes())
	q8, ok := LookupCacheType("q8_0")
	require.True(t, ok)
	assert.Equal(t, 34.0/32, q8.BytesPerElement, "ggml q8_0: 34 bytes per block of 32")
	_, ok = LookupCacheType("auto")
	assert.False(t, ok, "auto is the request's, not a cache type")
}

// With no engine named: vLLM on the data-center accelerators it runs on,
// llama.cpp on Metal, Vulkan, the CPU, shared-memory GPUs and for GGUF
// models, no engine where neither runs (docs/requests.md, engine row).
func TestDefaultEngine(t *testing.T) {
	for _, c := range []struct {
		d    Device
		want string
	}{
		{Device{Kind: registry.KindCUDA}, NameVLLM},
		{Device{Kind: registry.KindROCm}, NameVLLM},
		{Device{Kind: registry.KindTPU}, NameVLLM},
		{Device{Kind: registry.KindGaudi}, NameVLLM},
		{Device{Kind: registry.KindNeuron}, NameVLLM},
		{Device{Kind: registry.KindIntelGPU}, NameVLLM},
		{Device{Kind: registry.KindCUDA, GGUF: true}, NameLlamaCPP},
		{Device{Kind: registry.KindROCm, SharedMemory: true}, NameLlamaCPP},
		{Device{Kind: registry.KindMetal}, NameLlamaCPP},
		{Device{Kind: registry.KindVulkan}, NameLlamaCPP},
		{Device{Kind: registry.KindCPU}, NameLlamaCPP},
		{Device{Kind: registry.KindTPU, GGUF: true}, NameVLLM},
		{Device{Kind: registry.KindIntelNPU}, NameNone},
		{Device{Kind: registry.KindCerebras, GGUF: true}, NameNone},
	} {
		assert.Equal(t, c.want, Default(c.d).Name(), "%+v", c.d)
	}
}

func TestMemoryRules(t *testing.T) {
	v, _ := Lookup(NameVLLM)
	l, _ := Lookup(NameLlamaCPP)
	n, _ := Lookup(NameNone)
	assert.Equal(t, Memory{Fraction: 0.9, PagedKV: true}, v.Memory(0), "vLLM's default --gpu-memory-utilization, one paged KV pool")
	assert.Equal(t, Memory{Fraction: 0.95, PagedKV: true}, v.Memory(0.95))
	assert.Equal(t, Memory{Fraction: 1, MarginBytes: 1 << 30}, l.Memory(0), "llama.cpp --fit keeps 1 GiB free")
	assert.False(t, l.Memory(0).PagedKV, "llama.cpp reserves every slot's cache (--parallel)")
	assert.Equal(t, Memory{Fraction: 1}, n.Memory(0))
	assert.False(t, l.Parallelism().Tensor)
	assert.True(t, v.Parallelism().Tensor)
}

type named struct {
	Base
	name string
}

func (n named) Name() string  { return n.name }
func (n named) Title() string { return n.name }

func TestRegisterRefusesEmptyAndRepeatedNames(t *testing.T) {
	assert.Panics(t, func() { Register(named{}) })
	assert.Panics(t, func() { Register(named{name: NameVLLM}) })
	g := Generation()
	Register(named{name: "extra"})
	assert.NotEqual(t, g, Generation())
	assert.Equal(t, []string{NameVLLM, NameLlamaCPP, NameNone, "extra"}, Names())
	Unregister("extra")
	assert.Equal(t, []string{NameVLLM, NameLlamaCPP, NameNone}, Names())
	_, ok := Lookup("extra")
	assert.False(t, ok)
}
