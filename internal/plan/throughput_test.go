package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

func TestRingAllReduce(t *testing.T) {
	// 8 ranks, 1 MB message, 450 GB/s per direction: 2·7/8 MB / 450 GB/s.
	assert.InDelta(t, 2*7.0/8*1e6/450e9, ringAllReduceSeconds(8, 1e6, 450), 1e-15)
	assert.Zero(t, ringAllReduceSeconds(1, 1e6, 450), "one rank: nothing to reduce")
	assert.Zero(t, ringAllReduceSeconds(4, 1e6, 0), "unknown link: not counted (and said so)")
}

func TestStageDecodeSeconds(t *testing.T) {
	// 1 GB of weights at the 500 GB/s the stage reaches = 2 ms, plus 10
	// layers × 0.1 ms.
	in := decodeInputs{WeightBytes: 1e9, WeightGBs: 500, Layers: 10, LayerSeconds: 1e-4, TP: 1}
	total, ar := stageDecodeSeconds(in)
	assert.InDelta(t, 3e-3, total, 1e-12)
	assert.Zero(t, ar)
	// 0.25 GB of KV cache read at 250 GB/s adds 1 ms.
	in.KVBytes, in.KVGBs = 0.25e9, 250
	total, _ = stageDecodeSeconds(in)
	assert.InDelta(t, 4e-3, total, 1e-12)
	// TP 2 adds 2 all-reduces per layer of 1 MB over 100 GB/s: 2·1/2 MB / 100 GB/s each.
	in.TP, in.AllReduces, in.AllReduceBytes, in.LinkGBs = 2, 20, 1e6, 100
	total, ar = stageDecodeSeconds(in)
	assert.InDelta(t, 10*2*1e6/100e9, ar, 1e-12)
	assert.InDelta(t, 4e-3+ar, total, 1e-12)
}

func TestPrefillSeconds(t *testing.T) {
	// 7e9 multiplied params, no attention term: 14 GFLOP per token at 100
	// TFLOPS × 0.5.
	assert.InDelta(t, 14e9/50e12, prefillSeconds(7e9, 0, 100, 1, 0.5), 1e-15)
	// Tensor parallel 2 doubles the peak.
	assert.InDelta(t, 14e9/100e12, prefillSeconds(7e9, 0, 100, 2, 0.5), 1e-15)
	// The attention FLOPs of a token (promptAttentionFLOPs) add to the
	// matmuls'.
	assert.InDelta(t, (14e9+4*32*256*4096.0)/50e12, prefillSeconds(7e9, 4*32*256*4096.0, 100, 1, 0.5), 1e-15)
}

// TestMLAPromptAttentionFLOPs: a prompt token's attention is costed from
// the MLA widths the config states, not from hidden / heads (DeepSeek-V3
// 7168 / 128 = 56, GLM-4.7-Flash 2048 / 20 = 102), in the form the engine
// runs a prompt in. DeepSeek-V3 (config.json of deepseek-ai/DeepSeek-V3,
// the catalog's copy): 61 layers, 128 heads, qk_nope 128 + qk_rope 64 =
// 192 scored, v_head_dim 128 summed; decompressed (vLLM, SGLang) at a
// prompt of 4096 tokens, 2 × 61 × 2048 × 128 × (192 + 128) FLOPs per
// token; absorbed (llama.cpp), each head scores over kv_lora_rank 512 +
// 64 and sums 512: 2 × 61 × 2048 × 128 × (576 + 512). GLM-4.7-Flash
// (config.json of zai-org/GLM-4.7-Flash, the catalog's copy): 47 layers,
// 20 heads, 192 + 64 = 256 scored, 256 summed. A model without a latent
// (Llama-3.1-8B: 32 layers, 32 heads of 128) keeps 4 × 32 × 2048 × 4096
// in either form, as before.
func TestMLAPromptAttentionFLOPs(t *testing.T) {
	cases := []struct {
		name                   string
		decompressed, absorbed float64
	}{
		{"DeepSeek-V3", 2 * 61 * 2048 * 128 * (192 + 128), 2 * 61 * 2048 * 128 * (576 + 512)},
		{"GLM-4.7-Flash", 2 * 47 * 2048 * 20 * (256 + 256), 2 * 47 * 2048 * 20 * (576 + 512)},
		{"Llama-3.1-8B", 4 * 32 * 2048 * 4096, 4 * 32 * 2048 * 4096},
	}
	for _, c := range cases {
		m := model.Lookup(c.name)
		require.NotNil(t, m, c.name)
		assert.Equal(t, c.decompressed, promptAttentionFLOPs(m, false, 0, m.Layers, 4096), c.name)
		assert.Equal(t, c.absorbed, promptAttentionFLOPs(m, true, 0, m.Layers, 4096), c.name)
	}
	// Heads unknown: twice the hidden size, the square attention of old.
	assert.Equal(t, 2*4096.0, attentionHeadWidths(&model.Model{Hidden: 4096}, false))
}

// TestPrefillPath checks which build's constants and kernel a prompt pass
// takes: on a Hopper GPU (the H200: compute capability 9.0) today's build,
// where llama.cpp runs integer weights through MMQ at the INT8 peak (1979
// TOPS) and 16-bit weights through a GEMM at the FP16 peak (989 TFLOPS); on
// Ada (an RTX 4090, compute capability 8.9 from its record) and Ampere GA10x
// (an A40, 8.6), GDDR Blackwell (an RTX 5090, 12.0) and GA100 (an A100,
// 8.0) today's build with their own MMQ fraction (Q8_0 taking it too); for
// another engine's integer weights, in the replay of a build before MMQ, on
// an architecture today's build has no rows for (Blackwell's GB10, 12.1;
// Turing) and on a stage mixing architectures, a GEMM on dequantized
// weights with the 2023-24 builds' pass time. llama.cpp's GEMM accumulates
// in FP16, so on a record that states that rate apart (the RTX 4090: 330.3
// TFLOPS, twice its FP32-accumulate 165.15) its peak is that figure;
// another engine's is not.
func TestPrefillPath(t *testing.T) {
	e := efficiency{PrefillMFU: 0.7, PrefillMFUQ8: 0.12, PrefillMFUKQuant: 0.09, PrefillMFUKQuantAda: 0.4, PrefillMFUKQuantAmpere: 0.25,
		PrefillMFUKQuantBlackwell: 0.38, PrefillMFUKQuantGA100: 0.13,
		PrefillLayerLatency: 400e-6, PrefillLayerLatencyPreMMQ: 1400e-6}
	dev := func(name, cc string) []*device {
		s, ok := specs.ByName(name)
		require.True(t, ok, name)
		return []*device{{ID: "gpu", Dev: registry.Device{Kind: registry.KindCUDA, Name: s.Name, ComputeCapability: cc}, BandwidthGBs: s.BandwidthGBs, Spec: &s}}
	}
	level := func(name string) quant.Level {
		l, err := quant.Parse(name)
		require.NoError(t, err)
		return l
	}
	h200, rtx4090, a40 := dev("NVIDIA H200 SXM 141GB", "9.0"), dev("NVIDIA GeForce RTX 4090", ""), dev("NVIDIA A40", "8.6")
	assert.Equal(t, prefillPath{Kernel: KernelMMQ, Precision: "int8", PeakTFLOPS: 1979, MFU: 0.09, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archHopper}, e.prefillPath(h200, level("q4_k_m"), true, false))
	assert.Equal(t, prefillPath{Kernel: KernelMMQ, Precision: "int8", PeakTFLOPS: 1979, MFU: 0.12, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archHopper}, e.prefillPath(h200, level("q8_0"), true, false))
	assert.Equal(t, prefillPath{Kernel: KernelGEMM, Precision: "fp16", PeakTFLOPS: 989, MFU: 0.7, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archHopper}, e.prefillPath(h200, level("fp16"), true, false))
	assert.Equal(t, prefillPath{Kernel: KernelGEMM, Precision: "fp16", PeakTFLOPS: 989, MFU: 0.7, Dequantized: true, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archHopper},
		e.prefillPath(h200, level("q4_k_m"), false, false), "another engine")
	pre := prefillPath{Kernel: KernelGEMM, Precision: "fp16", PeakTFLOPS: 989, MFU: 0.7, Dequantized: true, LayerSeconds: 1400e-6}
	assert.Equal(t, pre, e.prefillPath(h200, level("q4_k_m"), true, true), "a build before MMQ")

	assert.Equal(t, prefillPath{Kernel: KernelMMQ, Precision: "int8", PeakTFLOPS: 660.6, MFU: 0.4, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archAda},
		e.prefillPath(rtx4090, level("q4_0"), true, false), "Ada: its own fraction")
	assert.Equal(t, prefillPath{Kernel: KernelMMQ, Precision: "int8", PeakTFLOPS: 660.6, MFU: 0.4, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archAda},
		e.prefillPath(rtx4090, level("q8_0"), true, false), "Ada Q8_0: the same fraction (no Q8_0 row)")
	assert.Equal(t, prefillPath{Kernel: KernelGEMM, Precision: "fp16", PeakTFLOPS: 330.3, FP16Accumulate: true, MFU: 0.7, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archAda},
		e.prefillPath(rtx4090, level("fp16"), true, false), "Ada 16-bit: cuBLAS, accumulating in FP16 (the GeForce rate), with today's pass time")
	assert.Equal(t, prefillPath{Kernel: KernelGEMM, Precision: "fp16", PeakTFLOPS: 165.15, MFU: 0.7, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archAda},
		e.prefillPath(rtx4090, level("fp16"), false, false), "another engine's GEMM accumulates in FP32")
	assert.Equal(t, prefillPath{Kernel: KernelGEMM, Precision: "fp16", PeakTFLOPS: 330.3, FP16Accumulate: true, MFU: 0.7, Dequantized: true, LayerSeconds: 1400e-6},
		e.prefillPath(rtx4090, level("q4_0"), true, true), "a build before MMQ: dequantized weights through the FP16-accumulate GEMM")
	assert.Equal(t, prefillPath{Kernel: KernelMMQ, Precision: "int8", PeakTFLOPS: 299.3, MFU: 0.25, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archAmpere},
		e.prefillPath(a40, level("q4_k_m"), true, false), "Ampere: its own fraction")
	assert.Equal(t, prefillPath{Kernel: KernelGEMM, Precision: "fp16", PeakTFLOPS: 149.7, MFU: 0.7, Dequantized: true, LayerSeconds: 1400e-6},
		e.prefillPath(append(rtx4090, a40...), level("q4_k_m"), true, false), "a stage mixing architectures: the 2023-24 path (the slowest peak)")
	noAda := e
	noAda.PrefillMFUKQuantAda = 0
	assert.Equal(t, prefillPath{Kernel: KernelGEMM, Precision: "fp16", PeakTFLOPS: 330.3, FP16Accumulate: true, MFU: 0.7, Dequantized: true, LayerSeconds: 1400e-6},
		noAda.prefillPath(rtx4090, level("q4_k_m"), true, false), "an architecture without fitted rows")
	a100 := dev("NVIDIA A100 SXM4 80GB", "8.0")
	assert.Equal(t, prefillPath{Kernel: KernelMMQ, Precision: "int8", PeakTFLOPS: 624, MFU: 0.13, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archGA100},
		e.prefillPath(a100, level("q4_k_m"), true, false), "GA100 (8.0): its own fraction, not GA10x's")
	rtx5090 := dev("NVIDIA GeForce RTX 5090", "")
	assert.Equal(t, prefillPath{Kernel: KernelMMQ, Precision: "int8", PeakTFLOPS: 838, MFU: 0.38, LayerSeconds: 400e-6, TodaysBuild: true, Arch: archBlackwellGDDR},
		e.prefillPath(rtx5090, level("q8_0"), true, false), "GDDR Blackwell (12.0 from the record): its own fraction")
	assert.Zero(t, e.prefillPath(rtx5090, level("fp16"), true, false).PeakTFLOPS, "the RTX 5090 record holds no 16-bit peak: no 16-bit prefill figure")
	gb10 := dev("NVIDIA GeForce RTX 4090", "12.1") // the record's peaks, GB10's compute capability
	assert.Equal(t, prefillPath{Kernel: KernelGEMM, Precision: "fp16", PeakTFLOPS: 330.3, FP16Accumulate: true, MFU: 0.7, Dequantized: true, LayerSeconds: 1400e-6},
		e.prefillPath(gb10, level("q4_k_m"), true, false), "GB10 (12.1, LPDDR5X): no rows of today's build, the 2023-24 path")
}

// TestMetalPrefillPath: llama.cpp on Apple GPUs runs its Metal kernels at
// the record's FP32 figure (the M1 Max record: 10.4 TFLOPS, 32 cores),
// scaled to the GPU cores detection counted (24: 7.8), with the Metal
// fraction of the weight type, no dequantized copy and Metal's time per
// layer; without a fitted fraction, or for another engine, the peak is 0
// (no figure).
func TestMetalPrefillPath(t *testing.T) {
	e := efficiency{PrefillMFU: 0.7, PrefillMFUMetal: 0.8, PrefillMFUMetalQuant: 0.6, LayerLatencyMetal: 150e-6, PrefillLayerLatencyPreMMQ: 1400e-6}
	s, ok := specs.ByName("Apple M1 Max")
	require.True(t, ok)
	gpu := func(cores int) []*device {
		return []*device{{ID: "gpu", Dev: registry.Device{Kind: registry.KindMetal, Vendor: "apple", Name: s.Name, Cores: cores}, BandwidthGBs: s.BandwidthGBs, Spec: &s}}
	}
	q4, err := quant.Parse("q4_k_m")
	require.NoError(t, err)
	f16, err := quant.Parse("fp16")
	require.NoError(t, err)
	assert.Equal(t, prefillPath{Kernel: KernelMetal, Precision: "fp32", PeakTFLOPS: 10.4, MFU: 0.6, LayerSeconds: 150e-6}, e.prefillPath(gpu(0), q4, true, true))
	assert.Equal(t, prefillPath{Kernel: KernelMetal, Precision: "fp32", PeakTFLOPS: 10.4, MFU: 0.8, LayerSeconds: 150e-6}, e.prefillPath(gpu(32), f16, true, false))
	p := e.prefillPath(gpu(24), q4, true, false)
	assert.InDelta(t, 7.8, p.PeakTFLOPS, 1e-9, "24 of the record's 32 cores")
	unfitted := e
	unfitted.PrefillMFUMetalQuant = 0
	assert.Zero(t, unfitted.prefillPath(gpu(0), q4, true, false).PeakTFLOPS, "no fitted fraction: no prefill figure")
	assert.Zero(t, e.prefillPath(gpu(0), q4, false, false).PeakTFLOPS, "another engine: no tensor figure, no Metal fraction")
}

func TestDecodeScalesWithBandwidthAndBytes(t *testing.T) {
	one := func(name string, cc string, body string) *ShardingAnswer {
		d := gpu(registry.KindCUDA, 0, name, 80*gibBytes, cc)
		return shard(t, request(t, body, reg(t, []registry.Device{d})))
	}
	h := one("NVIDIA H100 80GB HBM3", "9.0", `{"model":{"name":"llama-3.1-8b"},"quant":"bf16"}`)
	a := one("NVIDIA A100-SXM4-80GB", "8.0", `{"model":{"name":"llama-3.1-8b"},"quant":"bf16"}`)
	require.NotNil(t, h.Throughput)
	require.NotNil(t, a.Throughput)
	assert.Greater(t, h.Throughput.DecodeTokensPerS, a.Throughput.DecodeTokensPerS, "3.35 TB/s beats 2.04 TB/s")
	h4 := one("NVIDIA H100 80GB HBM3", "9.0", `{"model":{"name":"llama-3.1-8b"},"quant":"int4"}`)
	// On HBM the 4-bit kernel, not the memory, sets the pace: llama.cpp on an
	// H200 decodes Llama-3.1-8B Q4_K_M at 264.7 tokens/s and F16 at 209.4
	// (internal/calibration/data/h200-speed), 1.26x for 3.3x fewer bytes.
	assert.Greater(t, h4.Throughput.DecodeTokensPerS, h.Throughput.DecodeTokensPerS, "4-bit weights are fewer bytes")
	assert.Less(t, h4.Throughput.DecodeTokensPerS, 2*h.Throughput.DecodeTokensPerS, "but the k-quant kernel streams them at a lower rate")
	big := one("NVIDIA H100 80GB HBM3", "9.0", `{"model":{"name":"llama-3.1-70b"},"quant":"int4"}`)
	assert.Less(t, big.Throughput.DecodeTokensPerS, h4.Throughput.DecodeTokensPerS/3, "a 9x larger model is much slower (reference §7.1 #1)")

	// Unknown device: no bandwidth, no figure, and the reason.
	u := one("Some Future GPU", "9.0", `{"model":{"name":"llama-3.1-8b"}}`)
	require.True(t, u.Fits.Yes())
	assert.Zero(t, u.Throughput.DecodeTokensPerS)
	assert.Zero(t, u.Throughput.PrefillTokensPerS)
	assert.Contains(t, u.Throughput.Assumptions[len(u.Throughput.Assumptions)-2], "not in the datasheet table")

	// A detected bandwidth wins over the table.
	d := h100(0)
	d.MemoryBandwidthGBs = 1000
	det := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"quant":"bf16"}`, reg(t, []registry.Device{d})))
	assert.Less(t, det.Throughput.DecodeTokensPerS, h.Throughput.DecodeTokensPerS)
}

func TestValidTP(t *testing.T) {
	c := costs{Heads: 28, KVHeads: 4}
	assert.True(t, c.validTP(1))
	assert.True(t, c.validTP(2))
	assert.True(t, c.validTP(4))
	assert.False(t, c.validTP(7), "7 splits 28 heads but not 4 KV heads, nor do they divide 7")
	assert.False(t, c.validTP(8), "28 heads do not split 8 ways")
	c = costs{Heads: 64, KVHeads: 8}
	assert.True(t, c.validTP(16), "8 KV heads replicated over 16 ranks")
	assert.False(t, c.validTP(0))
}

// TestDecodeReadsTiedEmbeddingsAsHead: a decode step reads the output head
// every token; with tied embeddings the head is the token-embedding matrix,
// so it is read although the input lookup is not. Qwen2.5-0.5B (tied) at
// fp16: every weight once, 2 B x 494 M = 988 MB per token (llama.cpp's
// model buffer, internal/calibration/data/llamacpp_measurements.json: 988 MB); counting the embedding as a
// lookup only gave 716 MB. Llama-3.1-8B (untied) does not read its input
// embedding (525 M of its 8.03 B weights).
func TestDecodeReadsTiedEmbeddingsAsHead(t *testing.T) {
	bytesPerToken := func(name string) float64 {
		m, err := modelio.Resolve(model.Spec{Name: name})
		require.NoError(t, err)
		l, err := quant.Parse("fp16")
		require.NoError(t, err)
		r := NewReplay(engine.NameLlamaCPP, m, l, specs.Spec{Name: "test GPU", Category: specs.ConsumerGPU, Memory: specs.MemoryGDDR6X, BandwidthGBs: 1000}, 1, 0, 1)
		return 1e12 / r.Decode(calibration.Throughput{DecodeGDDR: calibration.DecodeFractions{Float: 1}, KVReadRatio: 1})
	}
	assert.InEpsilon(t, 988e6, bytesPerToken("Qwen2.5-0.5B"), 0.01)
	m, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-8B"})
	require.NoError(t, err)
	assert.InEpsilon(t, 2*float64(m.Params-128256*4096), bytesPerToken("Llama-3.1-8B"), 0.01)
}

// TestReplayWithoutOutputHead: a step that computes no logits (llama-bench's
// pp at a micro-batch of one token) reads every weight a decode step reads
// but the output head: Llama-3.1-8B (untied) saves its head, 128256 x 4096
// at 2 B; Qwen2.5-0.5B (tied) the embedding matrix it would read as its
// head, 151936 x 896 at 2 B.
func TestReplayWithoutOutputHead(t *testing.T) {
	c := calibration.Throughput{DecodeGDDR: calibration.DecodeFractions{Float: 1}, KVReadRatio: 1}
	gpu := specs.Spec{Name: "test GPU", Category: specs.ConsumerGPU, Memory: specs.MemoryGDDR6X, BandwidthGBs: 1000}
	for name, head := range map[string]float64{"Llama-3.1-8B": 2 * 128256 * 4096, "Qwen2.5-0.5B": 2 * 151936 * 896} {
		m, err := modelio.Resolve(model.Spec{Name: name})
		require.NoError(t, err)
		l, err := quant.Parse("fp16")
		require.NoError(t, err)
		with := NewReplay(engine.NameLlamaCPP, m, l, gpu, 1, 0, 1).Decode(c)
		without := NewReplay(engine.NameLlamaCPP, m, l, gpu, 1, 0, 1).WithoutOutputHead().Decode(c)
		require.Positive(t, with, name)
		require.Greater(t, without, with, name)
		assert.InEpsilon(t, head, 1e12/with-1e12/without, 0.01, name) // 1e12 B/s: seconds to bytes
	}
}

// TestReplayOf2023PaysItsPassTime: the replay of a 2023 ./main run
// (BuiltIn2023) pays PrefillLayerLatency2023 per layer and pass, a May 2024
// replay (BuiltBeforeMMQ) PrefillLayerLatencyPreMMQ: with the matmuls
// alike, the two prompt times differ by layers × the difference / 512.
func TestReplayOf2023PaysItsPassTime(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Llama-2-7B"})
	require.NoError(t, err)
	l, err := quant.Parse("fp16")
	require.NoError(t, err)
	s, ok := specs.ByName("NVIDIA A40")
	require.True(t, ok)
	c := calibration.Throughput{DecodeGDDR: calibration.DecodeFractions{Float: 1}, KVReadRatio: 1, PrefillMFU: 0.8,
		PrefillLayerLatencyPreMMQ: 900e-6, PrefillLayerLatency2023: 1800e-6}
	may2024 := NewReplay(engine.NameLlamaCPP, m, l, s, 1, 512, 256).BuiltBeforeMMQ().Prefill(c)
	of2023 := NewReplay(engine.NameLlamaCPP, m, l, s, 1, 512, 256).BuiltIn2023().Prefill(c)
	require.Positive(t, may2024)
	require.Positive(t, of2023)
	assert.InEpsilon(t, float64(m.Layers)*900e-6/512, 1/of2023-1/may2024, 1e-3) // the rates are rounded to 0.001 tok/s
}

// TestCPUDecode: a CPU of a family in the datasheet table gets its memory
// bandwidth (one socket) and a decode estimate; with few cores the
// quantized matrix-vector work, not the memory, bounds it; a CPU outside
// the table gets none and the answer says why.
func TestCPUDecode(t *testing.T) {
	cpu := func(name string, cores int) *ShardingAnswer {
		d := registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: name, Available: true,
			MemoryBytes: 256 * gibBytes, Cores: cores}
		return shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp","context_length":512}`, reg(t, []registry.Device{d})))
	}
	many := cpu("AMD EPYC 9654 96-Core Processor", 96)
	require.NotNil(t, many.Throughput, dump(t, many))
	assert.Equal(t, BoundBandwidth, many.Throughput.Bound)
	assert.Positive(t, many.Throughput.DecodeTokensPerS)
	// 460.8 GB/s x 0.68 over about 4.7 GB of weights read: about 60 tokens/s.
	assert.InDelta(t, 60, many.Throughput.DecodeTokensPerS, 10)

	two := cpu("AMD EPYC 9354 32-Core Processor", 2)
	require.NotNil(t, two.Throughput)
	assert.Equal(t, BoundCompute, two.Throughput.Bound, dump(t, two))
	// 2 cores x the per-core rate of Q4_K_M's stored types (Q4_K and
	// Q6_K) over 7.5e9 weights read (the input embedding is a lookup),
	// less the per-layer time.
	mix, ok := newHostMix(model.Lookup("Llama-3.1-8B"), "q4_k_m", 1, true)
	require.True(t, ok)
	assert.InDelta(t, 2*fitted.hostCoreRate(mix, registry.Device{Kind: registry.KindCPU})/7.5e9, two.Throughput.DecodeTokensPerS, 1)
	assert.Less(t, two.Throughput.DecodeTokensPerS, many.Throughput.DecodeTokensPerS)

	unknown := cpu("AMD EPYC", 32)
	require.NotNil(t, unknown.Throughput)
	assert.Zero(t, unknown.Throughput.DecodeTokensPerS)
	assert.Contains(t, strings.Join(unknown.Throughput.Assumptions, "\n"), "host memory bandwidth")
}

// TestPrefillPassSeconds checks the per-pass term of the prefill model by
// hand: 7B at fp16 (14 GB) on a 1000 GB/s device at 50 % bandwidth, 32
// layers at 100 us, a 1000-token prompt in passes of 512; quantized weights
// add a 16-bit copy written and read (4 bytes per weight).
func TestPrefillPassSeconds(t *testing.T) {
	e := efficiency{DecodeGDDR: calibration.DecodeFractions{Float: 0.5}}
	in := prefillPassInputs{WeightBytes: 14e9, Params: 7e9, Layers: 32, Prompt: 1000, BandwidthGBs: 1000, LayerSeconds: 100e-6}
	assert.InDelta(t, (32*100e-6+14e9/500e9)/512, prefillPassSeconds(in, e), 1e-12)
	in.Prompt = 256 // one pass of the whole prompt
	assert.InDelta(t, (32*100e-6+14e9/500e9)/256, prefillPassSeconds(in, e), 1e-12)
	in.WeightBytes, in.Dequantized = 3.9e9, true
	assert.InDelta(t, (32*100e-6+(3.9e9+4*7e9)/500e9)/256, prefillPassSeconds(in, e), 1e-12)

	q4, err := quant.Parse("q4_k_m")
	require.NoError(t, err)
	fp16, err := quant.Parse("fp16")
	require.NoError(t, err)
	assert.True(t, dequantizedForMatmul(q4))
	assert.False(t, dequantizedForMatmul(fp16))
}

// The V100 (HBM2 at 900 GB/s) is an HBM part by its record's memory class;
// the L40S (GDDR6 at 864 GB/s) is not.
func TestHBMPartByMemoryClass(t *testing.T) {
	v100, ok := specs.ByName("NVIDIA Tesla V100 PCIe 32GB")
	require.True(t, ok)
	l40s, ok := specs.ByName("NVIDIA L40S")
	require.True(t, ok)
	assert.True(t, hbmPart(&v100))
	assert.False(t, hbmPart(&l40s))
	assert.False(t, hbmPart(nil))
}

// TestValidatedOn: a throughput says which measured set vouches for it
// (llama.cpp on an NVIDIA HBM GPU with k-quant weights: the H200 and A100/
// H100 rows) or why none does (vLLM, an AMD part, two GPUs in tensor
// parallel, a batch of several sequences).
func TestValidatedOn(t *testing.T) {
	plan := func(body string, devs ...registry.Device) *ShardingAnswer {
		a := shard(t, request(t, body, reg(t, devs)))
		require.NotNil(t, a.Throughput, dump(t, a))
		return a
	}
	ok := plan(`{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, h100(0))
	assert.Contains(t, ok.Throughput.ValidatedOn, "NVIDIA HBM GPUs")
	assert.Contains(t, ok.Throughput.ValidatedOn, "kquant weights")
	assert.False(t, strings.HasPrefix(ok.Throughput.ValidatedOn, NotValidated))

	for name, a := range map[string]*ShardingAnswer{
		"vllm":    plan(`{"model":{"name":"llama-3.1-8b"},"quant":"bf16","engine":"vllm"}`, h100(0)),
		"amd":     plan(`{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, mi300x(0)),
		"tp":      plan(`{"model":{"name":"llama-3.1-70b"},"quant":"bf16","engine":"vllm","tensor_parallel_size":2}`, h100(0), h100(1)),
		"batch 8": plan(`{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp","batch_size":8}`, h100(0)),
	} {
		assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, NotValidated), "%s: %s", name, a.Throughput.ValidatedOn)
	}
}

// TestValidatedOnTodaysBuild: on a GDDR GPU whose decode takes today's
// llama.cpp CUDA constants (an RTX 5090, Blackwell 12.0) a plan names the
// scoreboard rows of its architecture for integer weights of the k-quant
// family, the rows' Q4_0 family; Q8_0 weights, which no row of today's
// build measures, are not validated until measured; 16-bit weights are
// measured (internal/calibration/data/decode_today_microbatch.json) but replay
// past the 12 % a validated figure meets, and say so; neither is a layer
// split over two of them. Its prefill runs MMQ at the Blackwell
// fraction of the record's INT8 peak and says so.
func TestValidatedOnTodaysBuild(t *testing.T) {
	rtx5090 := func(i int) registry.Device {
		d := gpu(registry.KindCUDA, i, "NVIDIA GeForce RTX 5090", 32607<<20, "12.0")
		d.Vendor = "nvidia"
		return d
	}
	plan := func(body string, devs ...registry.Device) *ShardingAnswer {
		a := shard(t, request(t, body, reg(t, devs)))
		require.NotNil(t, a.Throughput, dump(t, a))
		return a
	}
	q4 := plan(`{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, rtx5090(0))
	assert.Contains(t, q4.Throughput.ValidatedOn, "prefill_today.json")
	assert.Contains(t, q4.Throughput.ValidatedOn, "GeForce Blackwell")
	assert.False(t, strings.HasPrefix(q4.Throughput.ValidatedOn, NotValidated), q4.Throughput.ValidatedOn)
	assert.Positive(t, q4.Throughput.PrefillTokensPerS)
	notes := strings.Join(q4.Throughput.Assumptions, "\n")
	assert.Contains(t, notes, "MMQ")
	assert.Contains(t, notes, "RTX 5090")
	for level, why := range map[string]string{"fp16": "decode_today_microbatch.json: " + TodayFloatCheck, "q8_0": "until measured"} {
		a := plan(`{"model":{"name":"llama-3.1-8b"},"quant":"`+level+`","engine":"llama.cpp"}`, rtx5090(0))
		assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, NotValidated), "%s: %s", level, a.Throughput.ValidatedOn)
		assert.Contains(t, a.Throughput.ValidatedOn, why, level)
		assert.Positive(t, a.Throughput.DecodeTokensPerS, "%s: the figure is still given", level)
	}
	split := plan(`{"model":{"name":"llama-3.1-70b"},"quant":"q4_k_m","engine":"llama.cpp"}`, rtx5090(0), rtx5090(1))
	require.Greater(t, len(split.Shards), 1, dump(t, split))
	assert.True(t, strings.HasPrefix(split.Throughput.ValidatedOn, NotValidated), split.Throughput.ValidatedOn)
}

// TestLlamaCPPOffloadRunsOnHost: with llama.cpp the layers left in host RAM
// run on the CPU (-ngl N), so their weights stream from host memory at the
// host fraction (or its cores bound them), not across PCIe as vLLM's
// --cpu-offload-gb does; the plan is slower than the GPU alone would be and
// says so. Llama-3.1-70B q4_k_m (about 40 GiB) on a 24 GiB GPU and a
// 32-core EPYC 9354 (460.8 GB/s, internal/specs/host.go).
func TestLlamaCPPOffloadRunsOnHost(t *testing.T) {
	g := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24*gibBytes, "8.9")
	g.Vendor = "nvidia"
	cpu := registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: "AMD EPYC 9654 96-Core Processor",
		Vendor: "amd", Available: true, MemoryBytes: 256 * gibBytes, Cores: 96}
	r := reg(t, []registry.Device{g, cpu})
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"quant":"q4_k_m","engine":"llama.cpp","cpu_offload":true,"context_length":4096}`, r))
	require.True(t, a.Fits.Yes(), dump(t, a))
	require.Equal(t, StrategyOffload, a.Strategy)
	require.NotNil(t, a.Throughput)
	notes := strings.Join(a.Throughput.Assumptions, "\n")
	assert.Contains(t, notes, "offloaded layers run on the CPU")
	assert.NotContains(t, notes, "cross PCIe")
	assert.Equal(t, BoundBandwidth, a.Throughput.Bound)
	assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, NotValidated))
	// The host share is at least (40 - 24) GiB of weights at 0.68 x 460.8
	// GB/s, about 55 ms: below 18 tokens/s; and it is faster than streaming
	// all of the weights (42 GiB with the KV cache) from host memory, about
	// 7 tokens/s.
	d := a.Throughput.DecodeTokensPerS
	assert.Less(t, d, 18.0)
	assert.Greater(t, d, 1e9*0.68*460.8/(42*float64(gibBytes)))
	assert.Zero(t, a.Throughput.PrefillTokensPerS, "prefill with layers on the CPU is not modelled")
}

// A plan whose decode speed is omitted (a GPU with no datasheet bandwidth,
// as a MIG slice of an H200 is) is not validated: validated_on never vouches
// for a figure that is not there, nor names a device class the part is not
// (the slice has no record, so it would read as GDDR).
func TestNoDecodeFigureIsNotValidated(t *testing.T) {
	g := gpu(registry.KindCUDA, 0, "NVIDIA H200 MIG 1c.3g.71gb", 70*gibBytes, "9.0")
	g.Vendor = "nvidia"
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, reg(t, []registry.Device{g})))
	require.True(t, a.Fits.Yes(), dump(t, a))
	require.NotNil(t, a.Throughput)
	assert.Zero(t, a.Throughput.DecodeTokensPerS)
	assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, NotValidated), a.Throughput.ValidatedOn)
}

// A serving engine's decode note names the weights by their stored level,
// not by llama.cpp's kernel families: fp8 is not "16-bit weights" and an
// AWQ/GPTQ int4 checkpoint is not a k-quant dequantized in the kernel.
func TestServingWeightsName(t *testing.T) {
	for l, want := range map[quant.Level]string{
		quant.BF16: "bf16 weights", quant.FP16: "fp16 weights", quant.FP32: "32-bit float weights",
		quant.FP8: "8-bit float (fp8) weights", quant.INT8: "8-bit integer weights",
		quant.INT4: "4-bit integer weights", quant.MXFP4: "MXFP4 weights",
	} {
		assert.Equal(t, want, servingWeightsName(l), l)
	}
}
