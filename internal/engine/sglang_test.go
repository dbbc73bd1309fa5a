package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// SGLang captures prefill CUDA graphs for every token count of
// _generate_prefill_cuda_graph_batch_sizes up to the chunk: 8 steps of 4
// to 32, 14 of 16 to 256, 8 of 32 to 512, 8 of 64 to 1024, then steps of
// 256 to 4096 and of 512 beyond.
func TestSGLangPrefillGraphs(t *testing.T) {
	for tokens, want := range map[int]int{2048: 42, 4096: 50, 8192: 58, 16384: 74, 32: 8, 3: 0} {
		assert.Equal(t, want, sglangPrefillGraphs(tokens), "up to %d tokens", tokens)
	}
}

// SGLang's default --mem-fraction-static, worked by hand from
// _handle_gpu_memory_settings and reserve_for_graph_mb
// (python/sglang/srt/server_args.py at sgl-project/sglang 001067ff): the
// reserve in MiB is 512 + 1.5 x chunk + tp x pp x 128 + 2 x decode graph
// batch + the prefill graphs (8 per size on CUDA, 1536 for MLA, none on
// ROCm), at least 10240 above 60 GiB.
func TestSGLangDefaultFraction(t *testing.T) {
	const mib = int64(1) << 20
	cases := []struct {
		name string
		l    Layout
		want float64
	}{
		// 24576 - (512 + 3072 + 128 + 48 + 336) = 20480
		{"RTX 4090, TP 1", Layout{TotalBytes: 24576 * mib, Kind: registry.KindCUDA}, 0.833},
		// 15360 - (512 + 3072 + 128 + 16 + 336) = 11296
		{"T4, TP 1", Layout{TotalBytes: 15360 * mib, Kind: registry.KindCUDA}, 0.735},
		// 81559 - (512 + 12288 + 128 + 512 + 464) = 67655
		{"H100, TP 1", Layout{TotalBytes: 81559 * mib, Kind: registry.KindCUDA, TP: 1, PP: 1}, 0.830},
		// 81559 - (512 + 12288 + 256 + 512 + 464) = 67527
		{"H100, TP 2", Layout{TotalBytes: 81559 * mib, Kind: registry.KindCUDA, TP: 2, PP: 1}, 0.828},
		// 143771 - (512 + 12288 + 1024 + 1024 + 464) = 128459
		{"H200, TP 8", Layout{TotalBytes: 143771 * mib, Kind: registry.KindCUDA, TP: 8, PP: 1}, 0.893},
		// 143771 - (512 + 12288 + 1024 + 1024 + 1536) = 127387
		{"H200, TP 8, MLA", Layout{TotalBytes: 143771 * mib, Kind: registry.KindCUDA, TP: 8, PP: 1, Latent: true}, 0.886},
		// 196592 - (512 + 24576 + 128 + 1024) = 170352: no prefill graphs on ROCm
		{"MI300X, TP 1", Layout{TotalBytes: 206141652992, Kind: registry.KindROCm, TP: 1, PP: 1}, 0.867},
		// 81559 - (512 + 12288 + 512 + 512 + 464) = 67271
		{"H100, TP 2 x PP 2", Layout{TotalBytes: 81559 * mib, Kind: registry.KindCUDA, TP: 2, PP: 2}, 0.825},
		{"memory unknown", Layout{Kind: registry.KindCUDA}, 0.88},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, sglangFractionAt(c.l), c.name)
	}
	assert.Equal(t, sglangFractionAt(Layout{TotalBytes: 81559 * mib, Kind: registry.KindCUDA}), sglangFraction(81559*mib),
		"FractionOf is the value on one CUDA GPU")
}

// SGLang's mm_disabled_models (ModelConfig.__init__ in
// python/sglang/srt/configs/model_config.py at sgl-project/sglang
// 001adf564fd332c285397a46a034ee2f93ba7515) serves Llama 4 and Gemma 3
// text-only by default; of the two only Llama 4's model class then leaves
// its tower unbuilt (mllama4.py at 0076e713398e6fbb7279a61940428b611b800a24;
// gemma3_mm.py at 017f5d473f3f81d668e92be0437ad8711ab4a11e builds it
// whatever the flag). The memory rule names what the default launch does
// not build; vLLM's and llama.cpp's name nothing.
func TestSGLangVisionOffByDefault(t *testing.T) {
	for _, asked := range []float64{0, 0.8} {
		m := sglang{}.Memory(asked)
		assert.True(t, m.VisionInProcess)
		assert.Equal(t, []string{"llama4", "llama4_text"}, m.VisionOff, "asked %v", asked)
	}
	for _, name := range []string{NameVLLM, NameLlamaCPP} {
		e, ok := Lookup(name)
		require.True(t, ok)
		assert.Empty(t, e.Memory(0).VisionOff, name)
	}
}

// sglangTextOnlyNote says what --enable-multimodal changes: for Llama 4 the
// tower's bytes a rank, split over the tensor-parallel ranks but for its
// whole part; for Gemma 3 only that images need it; nothing for others.
func TestSGLangTextOnlyNote(t *testing.T) {
	llama4 := &model.Model{Name: "Llama-4-Scout", Architecture: "llama4", VisionParams: 1 << 30, VisionWholeParams: 1 << 28}
	// 2 bytes a value: (2 GiB − 0.5 GiB whole) / 4 ranks + 0.5 GiB = 0.875 GiB
	note := sglangTextOnlyNote(&Placement{Model: llama4, Level: quant.BF16, TP: 4})
	assert.Contains(t, note, "Llama 4")
	assert.Contains(t, note, "--enable-multimodal")
	assert.Contains(t, note, "0.88 GiB a rank")

	gemma3 := &model.Model{Name: "Gemma-3-27B", Architecture: "gemma3_text", VisionParams: 400 << 20}
	note = sglangTextOnlyNote(&Placement{Model: gemma3, Level: quant.BF16, TP: 1})
	assert.Contains(t, note, "Gemma 3")
	assert.Contains(t, note, "--enable-multimodal")
	assert.NotContains(t, note, "GiB a rank")

	textOnly := &model.Model{Name: "Llama-4-text", Architecture: "llama4_text"}
	assert.Empty(t, sglangTextOnlyNote(&Placement{Model: textOnly, Level: quant.BF16, TP: 1}), "no tower, nothing to enable")
	qwen := &model.Model{Name: "Qwen2.5-VL-7B", Architecture: "qwen2_5_vl", VisionParams: 600 << 20}
	assert.Empty(t, sglangTextOnlyNote(&Placement{Model: qwen, Level: quant.BF16, TP: 1}))
}

// SGLang's chunked_prefill_size grows with the GPU's memory
// (_handle_gpu_memory_settings of python/sglang/srt/server_args.py): 2048
// below 35 GiB, 4096 below 60, 8192 below 160 (H100, H200), 16384 above
// (B200, MI300X).
func TestSGLangChunkedPrefillSize(t *testing.T) {
	for mib, want := range map[float64]int{24 * 1024: 2048, 40 * 1024: 4096, 80 * 1024: 8192, 141 * 1024: 8192, 192 * 1024: 16384} {
		assert.Equal(t, want, SGLangChunkedPrefillSize(mib), "%.0f MiB", mib)
	}
}

// SGLang's mamba_cache_per_req for Qwen3-Next-80B-A3B (config.json: 36
// gated DeltaNet layers, 16 key heads and 32 value heads of dim 128, conv
// kernel 4): a (2 x 16 x 128 + 32 x 128) x 3 bf16 conv state and a
// 32 x 128 x 128 float32 state a layer (hybrid_gdn_params), split over
// the attention TP ranks; a third of the states that 0.9 / 1.9 of the pool
// holds run at once (init_memory, model_runner_kv_cache_mixin.py at
// sgl-project/sglang 001ccef0). A model without recurrent layers has no
// such cap.
func TestSGLangMambaRequestCap(t *testing.T) {
	next := model.Lookup("Qwen3-Next-80B-A3B-Instruct")
	require.NotNil(t, next)
	const perRequest = 36 * ((2*16*128+32*128)*3*2 + 32*128*128*4)
	assert.Equal(t, float64(perRequest), sglangMambaStateBytes(next, 1))
	assert.Equal(t, float64(perRequest)/4, sglangMambaStateBytes(next, 4))
	pool := int64(50 << 30)
	n, why, ok := sglang{}.MaxRequests(next, pool, 1)
	require.True(t, ok)
	assert.Equal(t, int(float64(pool)*0.9/1.9/perRequest)/3, n)
	assert.Contains(t, why, "max_mamba_cache_size // 3")
	n4, _, _ := sglang{}.MaxRequests(next, pool, 4)
	assert.Equal(t, int(float64(pool)*0.9/1.9/(perRequest/4))/3, n4)
	_, _, ok = sglang{}.MaxRequests(model.Lookup("Llama-3.1-8B"), pool, 1)
	assert.False(t, ok, "no mamba state pool")
}
