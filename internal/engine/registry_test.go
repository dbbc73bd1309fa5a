package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestBuiltinEngines(t *testing.T) {
	assert.Equal(t, []string{NameVLLM, NameLlamaCPP, NameSGLang, NameNone}, Names())
	assert.Equal(t, []string{"fp16", "bf16", "fp8", "int8", "f32", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}, CacheTypes())
	q8, ok := LookupCacheType("q8_0")
	require.True(t, ok)
	assert.Equal(t, 34.0/32, q8.BytesPerElement, "ggml q8_0: 34 bytes per block of 32")
	_, ok = LookupCacheType("auto")
	assert.False(t, ok, "auto is the request's, not a cache type")
}

// With no engine named: vLLM on the data-center accelerators it runs on
// (on CUDA from compute capability 7.0), llama.cpp on older NVIDIA GPUs,
// Metal, Vulkan, the CPU, shared-memory GPUs and for GGUF
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
		// vLLM needs compute capability 7.0 (vllmCUDAFloor): a V100 is
		// vLLM's, a P40 (6.1), a P100 (6.0) or a K80 (3.7) llama.cpp's; a
		// capability not known sets no floor.
		{Device{Kind: registry.KindCUDA, ComputeCapability: "7.0"}, NameVLLM},
		{Device{Kind: registry.KindCUDA, ComputeCapability: "6.1"}, NameLlamaCPP},
		{Device{Kind: registry.KindCUDA, ComputeCapability: "6.0"}, NameLlamaCPP},
		{Device{Kind: registry.KindCUDA, ComputeCapability: "3.7"}, NameLlamaCPP},
		{Device{Kind: registry.KindCUDA, ComputeCapability: "pci-id-table"}, NameVLLM},
	} {
		assert.Equal(t, c.want, Default(c.d).Name(), "%+v", c.d)
	}
}

func TestMemoryRules(t *testing.T) {
	v, _ := Lookup(NameVLLM)
	l, _ := Lookup(NameLlamaCPP)
	n, _ := Lookup(NameNone)
	assert.Equal(t, Memory{Fraction: 0.9, PagedKV: true, VisionInProcess: true, ProfiledStartup: true}, v.Memory(0),
		"vLLM's default --gpu-memory-utilization, one paged KV pool, a VLM's vision tower in its process, its start-up profile inside the fraction")
	assert.Equal(t, Memory{Fraction: 0.95, PagedKV: true, VisionInProcess: true, ProfiledStartup: true}, v.Memory(0.95))
	assert.Equal(t, Memory{Fraction: 1, MarginBytes: 1 << 30, HostTokenEmbeddings: true,
		OverheadBytes: map[registry.Kind]int64{registry.KindCUDA: calibration.LlamaCPPCUDAOverheadBytes}, ContextFloor: 4096,
		FitOverheadBytes: map[registry.Kind]int64{registry.KindCUDA: calibration.LlamaCPPCUDAFitOverheadBytes}},
		l.Memory(0), "llama.cpp --fit keeps 1 GiB free; token_embd in host memory; its CUDA overhead measured")
	assert.False(t, l.Memory(0).PagedKV, "llama.cpp reserves every slot's cache (--parallel)")
	assert.False(t, l.Memory(0).VisionInProcess, "llama.cpp loads a vision tower from --mmproj")
	s, _ := Lookup(NameSGLang)
	assert.False(t, s.Memory(0).ProfiledStartup, "SGLang keeps its workspace outside --mem-fraction-static (WorkspaceOutside), no profile charged inside")
	assert.Equal(t, Memory{Fraction: 1}, n.Memory(0))
	assert.False(t, l.Parallelism().Tensor)
	assert.True(t, v.Parallelism().Tensor)
	assert.True(t, l.Parallelism().HostLayersFirst && l.Parallelism().ExpertsOnHost, "llama.cpp: -ngl keeps the first layers on the host; --n-cpu-moe")
	assert.False(t, v.Parallelism().HostLayersFirst || v.Parallelism().ExpertsOnHost, "vLLM: --cpu-offload-gb streams weights to the GPU")
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
	assert.Equal(t, []string{NameVLLM, NameLlamaCPP, NameSGLang, NameNone, "extra"}, Names())
	Unregister("extra")
	assert.Equal(t, []string{NameVLLM, NameLlamaCPP, NameSGLang, NameNone}, Names())
	_, ok := Lookup("extra")
	assert.False(t, ok)
}

// SGLang's default --mem-fraction-static follows
// ServerArgs._handle_gpu_memory_settings: on an H100 80GB (81559 MiB) the
// reserve is 512 + 1.5 x 8192 + 128 + 2 x 256 + 8 x 58 prefill graphs =
// 13904 MiB, so (81559 - 13904) / 81559 = 0.830; on a 24 GB GPU (24564 MiB)
// it is 512 + 1.5 x 2048 + 128 + 2 x 24 + 8 x 42 = 4096 MiB, so 0.833. The
// layout's own value (FractionAt) and the memory SGLang's process groups
// take over NVLink come with the default only.
func TestSGLangMemoryFraction(t *testing.T) {
	s, ok := Lookup(NameSGLang)
	require.True(t, ok)
	m := s.Memory(0)
	require.NotNil(t, m.FractionOf)
	assert.True(t, m.PagedKV)
	assert.Equal(t, 0.830, m.FractionOf(81559<<20))
	assert.Equal(t, 0.833, m.FractionOf(24564<<20))
	require.NotNil(t, m.FractionAt)
	assert.Equal(t, 0.828, m.FractionAt(Layout{TotalBytes: 81559 << 20, Kind: registry.KindCUDA, TP: 2, PP: 1}))
	assert.Equal(t, int64(2<<30), m.LinkedGroupBytes)
	asked := s.Memory(0.7)
	assert.Nil(t, asked.FractionOf, "an asked fraction is used as it is")
	assert.Nil(t, asked.FractionAt)
	assert.Equal(t, 0.7, asked.Fraction)
	assert.False(t, s.RunsOn(registry.KindTPU))
	assert.Equal(t, Never, s.Preference(Device{Kind: registry.KindCUDA}), "planned for only when named")
}

// vLLM and SGLang each answer their own fitted time per request
// (PromptRequestTimer); llama.cpp, which has no serving prompt model, does
// not implement it.
func TestPromptRequestTimers(t *testing.T) {
	c := calibration.Throughput{VLLMPromptRequestSeconds: 0.011, ServingPromptRequestSeconds: 0.077}
	want := map[string]float64{NameVLLM: 0.011, NameSGLang: 0.077}
	for name, seconds := range want {
		en, ok := Lookup(name)
		require.True(t, ok, name)
		timer, ok := en.(PromptRequestTimer)
		require.True(t, ok, name)
		assert.Equal(t, seconds, timer.PromptRequestSeconds(c), name)
	}
	llama, ok := Lookup(NameLlamaCPP)
	require.True(t, ok)
	_, ok = llama.(PromptRequestTimer)
	assert.False(t, ok)
}

// SGLang words its own reserve warning (the planner asks through
// ReserveWarner and never spells SGLang's sources): the fraction as its
// flag, its default and what each leaves outside the pool.
func TestSGLangWordsItsReserveWarning(t *testing.T) {
	e, ok := Lookup("sglang")
	require.True(t, ok)
	w, ok := e.(ReserveWarner)
	require.True(t, ok)
	got := w.ReserveWarning(0.95, 0.903, 141<<30)
	assert.Contains(t, got, "--mem-fraction-static 0.95 is above SGLang's own default for this GPU and layout (0.903), which keeps 13.7 GiB")
	assert.Contains(t, got, "0.95 keeps 7.0 GiB")
	v, ok := Lookup("vllm")
	require.True(t, ok)
	_, vllmWarns := v.(ReserveWarner)
	assert.False(t, vllmWarns, "vLLM's fraction holds its activations too")
}
