package plan

import (
	"fmt"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"iter"
	"math"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// efficiency holds the few physical constants of the throughput model
// (calibration.Throughput documents each); a defined type so that the
// model's methods hang on it.
type efficiency calibration.Throughput

// fitted are the constants in use: calibration.Fitted, fitted on the
// measurements of internal/calibration/data by `go generate
// ./internal/calibration` (docs/accuracy.md "Throughput (decode and
// prefill)").
var fitted = efficiency(calibration.Fitted)

// Throughput is the speed estimate of a plan. A figure that cannot be
// estimated (device bandwidth or peak FLOPS unknown) is omitted and the
// assumptions say why.
type Throughput struct {
	DecodeTokensPerS float64 `json:"decode_tokens_per_s,omitempty"`
	// DecodeTokensPerSTotal is, for a data-parallel plan, the decode rate
	// of all replicas together: DecodeTokensPerS (one replica, all of its
	// sequences) times the replicas.
	DecodeTokensPerSTotal float64 `json:"decode_tokens_per_s_total,omitempty"`
	// Sequences is how many sequences decode at once in the figures (one
	// replica's: runningOf), when more than one: DecodeTokensPerS is their
	// rate together, each decoding at DecodeTokensPerS / Sequences.
	Sequences         int     `json:"sequences,omitempty"`
	PrefillTokensPerS float64 `json:"prefill_tokens_per_s,omitempty"`
	Bound             string  `json:"bound,omitempty"`
	// ValidatedOn names the measured set and device class that vouch for
	// the decode figures, or begins with NotValidated and says why none does
	// (validatedOn).
	ValidatedOn string `json:"validated_on"`
	// PrefillValidatedOn names the held-out prompt rows and device class
	// that vouch for PrefillTokensPerS, or begins with NotValidated and says
	// why none do (prefillValidatedOn); absent without a prefill figure.
	PrefillValidatedOn string   `json:"prefill_validated_on,omitempty"`
	Assumptions        []string `json:"assumptions"`
}

// Bounds.
const (
	BoundBandwidth    = "memory_bandwidth"
	BoundInterconnect = "interconnect"
	BoundPCIe         = "pcie"
	BoundCompute      = "compute"
)

// streamSeconds is the time to stream bytes from memory of bwGBs at the
// fraction a GDDR GPU's 16-bit kernels reach (the prompt passes' weight
// traffic).
func streamSeconds(bytes, bwGBs float64, e efficiency) float64 {
	return bytes / (bwGBs * 1e9 * e.DecodeGDDR.Float)
}

// appleGPU reports whether d is an Apple SoC's GPU (unified memory).
func appleGPU(d *device) bool {
	return d.Dev.Kind != registry.KindCPU && (d.Dev.Vendor == "apple" || d.Spec != nil && d.Spec.Category == "apple_soc_unified_memory")
}

// hbmPart reports whether a datasheet record is an HBM part, by the memory
// class the record states (internal/specs/class.go). It replaced a bandwidth
// threshold (1000 GB/s) that counted the V100 (HBM2, 900 GB/s) as GDDR.
func hbmPart(s *specs.Spec) bool {
	return s != nil && s.Memory.HBM()
}

// Memory classes of memoryClass: which decode fractions of
// calibration.Throughput apply to a device.
const (
	MemoryClassGDDR    = "gddr"
	MemoryClassHBM     = "hbm"
	MemoryClassUnified = "unified"
	MemoryClassHost    = "host"
)

// memoryClass is d's memory class as the speed model knows it: the one
// place that classifies a device (Apple SoC GPUs by vendor or category,
// HBM parts by their record's typed memory class, hbmPart).
func memoryClass(d *device) string {
	switch {
	case d.Dev.Kind == registry.KindCPU:
		return MemoryClassHost
	case appleGPU(d):
		return MemoryClassUnified
	case hbmPart(d.Spec):
		return MemoryClassHBM
	}
	return MemoryClassGDDR
}

// Weight type families of weightFamily: which kernel a decode step
// streams the weights through.
const (
	WeightsFloat  = "float"
	WeightsQ8     = "q8"
	WeightsKQuant = "kquant"
)

// weightFamily is the family of a level's weight type: 16/32-bit and fp8
// floats, 8-bit blocks with one scale (Q8_0; int8, which llama.cpp stores as
// Q8_0), and every other integer type (k-quants, legacy 4/5-bit, IQ, int4,
// MXFP4).
func weightFamily(l quant.Level) string {
	switch l.Native() {
	case "fp32", "fp16", "bf16", "fp8":
		return WeightsFloat
	}
	if l == quant.INT8 || l.GGUFType() == "Q8_0" {
		return WeightsQ8
	}
	return WeightsKQuant
}

// classFractions is the fraction set of a memory class (GDDR for a device
// of no other class).
func (e efficiency) classFractions(class string) calibration.DecodeFractions {
	switch class {
	case MemoryClassHBM:
		return e.DecodeHBM
	case MemoryClassUnified:
		return e.DecodeUnified
	case MemoryClassHost:
		h := e.DecodeBandwidthHost
		return calibration.DecodeFractions{Float: h, Q8: h, KQuant: h}
	}
	return e.DecodeGDDR
}

// familyFraction picks a family's fraction from a set.
func familyFraction(f calibration.DecodeFractions, family string) float64 {
	switch family {
	case WeightsFloat:
		return f.Float
	case WeightsQ8:
		return f.Q8
	}
	return f.KQuant
}

// decodeFraction is the fraction of d's memory bandwidth a decode step
// reaches while streaming weights of level l: by memory class and weight
// type family, and for integer weights on a GPU today's CUDA build is
// measured on (todaysDecode; older: a replay of an older build or another
// backend) that architecture's fraction.
func (e efficiency) decodeFraction(d *device, l quant.Level, older bool) float64 {
	family := weightFamily(l)
	if f := e.todaysDecode(d, older); f > 0 && family != WeightsFloat {
		return f
	}
	return familyFraction(e.classFractions(memoryClass(d)), family)
}

// Architectures of today's decode fractions beside archAmpere and archAda.
const archBlackwellGDDR = "blackwell-gddr" // 12.0: RTX 50, RTX PRO Blackwell (GDDR7); not B200/B300 (10.x, HBM) nor GB10 (12.1, LPDDR5X)

// decodeArchitecture is d's architecture among those today's llama.cpp
// CUDA build's decode is measured on (data/prefill_today.json of
// internal/calibration: Ampere GA10x, Ada, GDDR Blackwell), by its detected
// compute capability, else its record's; "" for any other device.
func decodeArchitecture(d *device) string {
	if !nvidiaGPU(d) || memoryClass(d) != MemoryClassGDDR {
		return ""
	}
	cc := d.Dev.ComputeCapability
	if cc == "" && d.Spec != nil {
		cc = d.Spec.Arch
	}
	if cc == "12.0" {
		return archBlackwellGDDR
	}
	if a := mmqArchitecture(d); a == archAmpere || a == archAda {
		return a
	}
	return ""
}

// todaysDecode is the integer-weight decode fraction of today's build on
// d's architecture (decodeArchitecture), 0 where it has none or the run is
// not of that build (older: a replay of a 2023-24 build or of another
// backend, planning.todaysCUDA).
func (e efficiency) todaysDecode(d *device, older bool) float64 {
	if older {
		return 0
	}
	switch decodeArchitecture(d) {
	case archAmpere:
		return e.DecodeTodayAmpere
	case archAda:
		return e.DecodeTodayAda
	case archBlackwellGDDR:
		return e.DecodeTodayBlackwell
	}
	return 0
}

// kvFraction is the fraction of d's memory bandwidth at which a decode step
// reads the KV cache: the class's 16-bit fraction times KVReadRatio.
func (e efficiency) kvFraction(d *device) float64 {
	return e.classFractions(memoryClass(d)).Float * e.KVReadRatio
}

// layerLatency is the fixed time per layer per decode step on d, by the
// backend its class runs (CUDA and other GPU backends, Metal, CPU threads)
// and, on a GPU today's CUDA build is measured on (todaysDecode), that
// build's time.
func (e efficiency) layerLatency(d *device, older bool) float64 {
	switch memoryClass(d) {
	case MemoryClassHost:
		return e.LayerLatencyHost
	case MemoryClassUnified:
		return e.LayerLatencyMetal
	}
	if e.todaysDecode(d, older) > 0 {
		return e.LayerLatencyCUDAToday
	}
	return e.LayerLatencyCUDA
}

// ringAllReduceSeconds is the time of one ring all-reduce of msgBytes over n
// devices whose links carry linkGBs per direction: each device sends and
// receives 2(n-1)/n of the message.
func ringAllReduceSeconds(n int, msgBytes, linkGBs float64) float64 {
	if n < 2 || linkGBs <= 0 {
		return 0
	}
	return 2 * float64(n-1) / float64(n) * msgBytes / (linkGBs * 1e9)
}

// decodeInputs are the plain numbers of one pipeline stage's decode step.
type decodeInputs struct {
	WeightBytes  float64 // weights read per device per step
	KVBytes      float64 // KV cache read per device per step
	WeightGBs    float64 // rate the slowest device of the stage streams weights at (datasheet x decodeFraction)
	KVGBs        float64 // rate it reads the KV cache at (datasheet x kvFraction)
	Layers       int
	LayerSeconds float64 // fixed time per layer (layerLatency of the stage's backend)
	TP           int
	// AllReduces is the stage's all-reduces per step under tensor
	// parallelism: two a layer (attention's and the FFN's output
	// projections); a serving engine's plan counts one a part, with Layers
	// its parts and LayerSeconds the part time (ServingBlocks).
	AllReduces     int
	AllReduceBytes float64 // one all-reduce message (hidden × batch × 2 bytes)
	LinkGBs        float64 // per-direction TP link bandwidth, 0 unknown
	// AllReduceSeconds is the fixed latency of one all-reduce (the
	// engine's collective at a one-token message), 0 where not fitted.
	AllReduceSeconds float64
	// MoELayers and MoELayerSeconds are the stage's expert layers and the
	// engine's fixed routing and expert-kernel time per such layer.
	MoELayers       int
	MoELayerSeconds float64
	// MLALayers and MLALayerSeconds are the stage's multi-head latent
	// attention layers and the engine's fixed time per such layer.
	MLALayers       int
	MLALayerSeconds float64
	// IndexerLayers and IndexerSeconds are the stage's DeepSeek Sparse
	// Attention indexers and the engine's fixed time per indexer.
	IndexerLayers  int
	IndexerSeconds float64
	// ComputeSeconds is the matrix-vector work of the step where it can
	// exceed the streaming time (a CPU: weights / (cores × rate)), else 0.
	ComputeSeconds float64
}

// streamingSeconds is the time the stage's memory traffic takes.
func (in decodeInputs) streamingSeconds() float64 {
	s := in.WeightBytes / (in.WeightGBs * 1e9)
	if in.KVBytes > 0 {
		s += in.KVBytes / (in.KVGBs * 1e9)
	}
	return s
}

// stageDecodeSeconds is one stage's share of a decode step: streaming its
// weights and reading its KV cache at the rates the stage reaches, the
// per-layer fixed time, and its all-reduces (AllReduces) under tensor
// parallelism. allReduce is that last term alone.
func stageDecodeSeconds(in decodeInputs) (total, allReduce float64) {
	total = math.Max(in.streamingSeconds(), in.ComputeSeconds) + float64(in.Layers)*in.LayerSeconds +
		float64(in.MoELayers)*in.MoELayerSeconds + float64(in.MLALayers)*in.MLALayerSeconds + float64(in.IndexerLayers)*in.IndexerSeconds
	if in.TP > 1 {
		allReduce = float64(in.AllReduces) * (in.AllReduceSeconds + ringAllReduceSeconds(in.TP, in.AllReduceBytes, in.LinkGBs))
	}
	return total + allReduce, allReduce
}

// prefillSeconds is the time to process one prompt token on a stage: 2 FLOPs
// per weight a token multiplies plus the attention FLOPs of its layers
// (promptAttentionFLOPs), at the fraction mfu of the stage's peak.
func prefillSeconds(matmulParams, attention, peakTFLOPS float64, tp int, mfu float64) float64 {
	flops := 2*matmulParams + attention
	return flops / (peakTFLOPS * 1e12 * float64(tp) * mfu)
}

// promptAttentionFLOPs is one prompt token's attention over the layers
// start to end-1 of m, averaged over a prompt of prompt tokens, layer kind
// by layer kind (model.Layer): a multiply and an add per key the token
// attends to (layerKeysPerToken) for each element of each head's score
// (q·k, its query-key width) and of its weighted sum of values (p·v, its
// value width), 2 × keys × layerHeadWidths per attention layer, plus the
// state update of a recurrent mixer (recurrentTokenFLOPs). A model of full
// attention layers only gets 2 × layers × prompt / 2 × the heads' widths,
// as before layer kinds were read, bit for bit. absorbed: see
// attentionHeadWidths.
func promptAttentionFLOPs(m *model.Model, absorbed bool, start, end, prompt int) float64 {
	var flops float64
	for l, n := range stageLayerCounts(m, start, end) {
		if keys := layerKeysPerToken(sharedKind(m, l), prompt); keys > 0 {
			flops += 2 * float64(n) * keys * layerHeadWidths(m, l, absorbed)
		}
		flops += float64(n) * recurrentTokenFLOPs(l)
	}
	return flops
}

// stageLayerCounts yields each entry of m's layer pattern with how many of
// the layers start to end-1 it describes (layer i is m.LayerAt(i)), in the
// pattern's order, so that sums over it add in the same order every time;
// a model without a pattern is one entry, DefaultLayer × (end − start).
// The cost is the pattern's length, as model.LayerCounts'.
func stageLayerCounts(m *model.Model, start, end int) iter.Seq2[model.Layer, int] {
	return func(yield func(model.Layer, int) bool) {
		if end <= start {
			return
		}
		p := len(m.LayerKinds)
		if p == 0 {
			yield(m.DefaultLayer(), end-start)
			return
		}
		// below is how many of the layers 0 to x-1 are entry j.
		below := func(x, j int) int {
			n := x / p
			if j < x%p {
				n++
			}
			return n
		}
		for j, l := range m.LayerKinds {
			if n := below(end, j) - below(start, j); n > 0 && !yield(l, n) {
				return
			}
		}
	}
}

// sharedKind is the layer whose window a SharedKV layer attends over (the
// layer whose cache it reads, SharesWith), else l itself.
func sharedKind(m *model.Model, l model.Layer) model.Layer {
	if l.Kind != model.SharedKV {
		return l
	}
	if src := m.LayerAt(l.SharesWith); src.Kind != model.SharedKV {
		return src
	}
	return model.Layer{Kind: model.FullAttention}
}

// layerKeysPerToken is the keys a prompt token attends to in a layer of
// kind l, averaged over a prompt of prompt tokens: the integral over the
// prompt of the keys at position x, divided by the prompt. Full (and
// latent) attention: x keys, prompt / 2 on average. A sliding window of w
// (Mistral 7B paper, arXiv 2310.06825 §2; Gemma 2/3 local layers;
// gpt-oss's 128-token layers): min(x, w), w − w²/(2·prompt) once the
// prompt is longer. A chunk of c (Llama 4's chunked layers,
// attention_chunk_size: each token attends within its chunk, chunked
// attention mask of transformers' models/llama4/modeling_llama4.py): its
// position within the chunk, (⌊prompt/c⌋·c² + (prompt mod c)²) /
// (2·prompt). Recurrent and feed-forward layers attend to nothing.
func layerKeysPerToken(l model.Layer, prompt int) float64 {
	p := float64(prompt)
	w := float64(l.Window)
	switch l.Kind {
	case model.FullAttention, model.LatentAttention, model.SharedKV:
		return p / 2
	case model.SlidingWindow:
		if l.Window <= 0 || l.Window >= prompt {
			return p / 2
		}
		return w - w*w/(2*p)
	case model.ChunkedAttention:
		if l.Window <= 0 || l.Window >= prompt {
			return p / 2
		}
		whole, rest := float64(prompt/l.Window), float64(prompt%l.Window)
		return (whole*w*w + rest*rest) / (2 * p)
	}
	return 0
}

// layerHeadWidths is attentionHeadWidths for a layer of kind l: the
// model's, unless the layer names a head width of its own (Gemma 4's
// global layers, global_head_dim), which its queries, keys and values
// share (attention_k_eq_v: the values are the keys, the same width).
func layerHeadWidths(m *model.Model, l model.Layer, absorbed bool) float64 {
	if l.HeadDim > 0 && l.Kind != model.LatentAttention && m.Heads > 0 {
		return float64(m.Heads) * float64(2*l.HeadDim)
	}
	return attentionHeadWidths(m, absorbed)
}

// recurrentTokenFLOPs is the per-token state update of a layer's
// recurrent mixer (a Recurrent layer, or the one beside a parallel
// hybrid's attention): 4 FLOPs per element of its SSM state, a multiply
// and an add to update it and a multiply and an add to read the output
// from it. That is the recurrence of a Mamba2 head, h_t = a_t·h_{t−1} +
// x_t·B_tᵀ and y_t = h_t·C_t (arXiv 2405.21060 §3, the SSM recurrence), and
// the lower bound of a gated DeltaNet head, S_t = α_t·S_{t−1}(I − β_t·k_t·k_tᵀ)
// + β_t·v_t·k_tᵀ and o_t = S_t·q_t (arXiv 2412.06464 §2), whose delta rule
// reads the state once more (S·k). The projections around the state are
// weights, counted with the matmuls; a short convolution (LFM2's, and the
// convolution before each Mamba2 or DeltaNet state, ConvState) is left
// out: a few taps per channel, 3 % of the state's FLOPs for Qwen3-Next
// and 1 % for Nemotron-H, and LFM2's layers keep no SSM state.
func recurrentTokenFLOPs(l model.Layer) float64 {
	return 4 * float64(l.SSMState)
}

// attentionHeadWidths is the query-key plus the value width of every query
// head of a layer of m, summed: heads × (d_qk + d_v) in the form the
// engine computes a prompt in. Multi-head latent attention has two forms
// (the header of vllm/v1/attention/backends/mla/common.py,
// vllm-project/vllm at 00a817ad): decompressed, each head scores over
// qk_nope + qk_rope and sums values of v_head_dim (DeepSeek-V3: 192 and
// 128), which vLLM's _forward_prefill and SGLang's MHA forward methods run
// for a prompt (handle_attention_* in
// python/sglang/srt/models/deepseek_common/attention_backend_handler.py,
// sgl-project/sglang at a7654069), absorbed only for decode; absorbed,
// each head scores over the cached latent and RoPE key (kv_lora_rank +
// qk_rope, 576) and sums the latent (kv_lora_rank, 512), which llama.cpp
// runs for prompts too whenever the GGUF carries the MLA widths
// (llm_build_deepseek2 in src/models/deepseek2.cpp, ggml-org/llama.cpp at
// 07bede6a: the is_mla branch takes every batch). absorbed picks that
// form. Heads unknown: twice the hidden size (square attention).
func attentionHeadWidths(m *model.Model, absorbed bool) float64 {
	qk, v := m.QKHeadDim(), m.ValueHeadDim()
	if absorbed && m.KVLoRARank > 0 {
		qk, v = m.LatentQKDim(), m.LatentValueDim()
	}
	if m.Heads <= 0 || qk <= 0 || v <= 0 {
		return 2 * float64(m.Hidden)
	}
	return float64(m.Heads) * float64(qk+v)
}

// prefillPassInputs are the plain numbers of one stage's prompt passes.
type prefillPassInputs struct {
	WeightBytes  float64 // weights a device of the stage reads per pass
	Params       float64 // weights per device (all experts of a MoE: a pass of 512 tokens touches them all)
	Layers       int
	Prompt       int
	Dequantized  bool    // weights are int8/int4 and dequantized to 16 bits per pass
	BandwidthGBs float64 // slowest device of the stage
	LayerSeconds float64 // fixed time per layer per pass (the build's PrefillLayerLatency)
}

// prefillPassSeconds is the per-token share of the fixed costs of the prompt
// passes (micro-batches of calibration.MicroBatchTokens tokens): every pass reads the
// stage's weights (and, dequantized, writes and reads their 16-bit copy) at
// the decode bandwidth efficiency, and pays LayerSeconds per layer.
func prefillPassSeconds(in prefillPassInputs, e efficiency) float64 {
	tokens := float64(min(in.Prompt, calibration.MicroBatchTokens))
	bytes := in.WeightBytes
	if in.Dequantized {
		bytes += calibration.DequantCopyBytesPerParam * in.Params
	}
	pass := float64(in.Layers)*in.LayerSeconds + streamSeconds(bytes, in.BandwidthGBs, e)
	return pass / tokens
}

// Prefill matmul kernels of prefillPath.
const (
	KernelGEMM = "gemm" // 16-bit (fp8) GEMM: cuBLAS on NVIDIA, the vendor BLAS elsewhere; integer weights dequantized first
	KernelMMQ  = "mmq"  // llama.cpp's quantized kernels on int8 tensor cores
	// KernelMetal is llama.cpp's Metal matmul kernels on an Apple GPU's
	// FP32 ALUs (no tensor figure: the peak is specs.Spec.GPUFP32TFLOPS).
	KernelMetal = "metal"
)

// prefillPath is how a stage's prompt passes run: the kernel, the dense
// peak of the precision it runs in (the slowest device's), the fraction of
// it reached, whether integer weights are dequantized into a 16-bit buffer
// first, and the fixed time per layer per pass of the build whose
// constants apply (TodaysBuild: today's, else the 2023-24 builds').
type prefillPath struct {
	Kernel       string
	Precision    string
	PeakTFLOPS   float64
	MFU          float64
	Dequantized  bool
	LayerSeconds float64
	TodaysBuild  bool
	Arch         string // TodaysBuild: the architecture whose fractions apply (archHopper, …)

	// FP16Accumulate: the peak is the FP16-accumulate rate every device of
	// the stage states apart (fp16GEMMPeak).
	FP16Accumulate bool
}

// prefillPath picks the stage's build constants and kernel. Today's
// llama.cpp build is measured on NVIDIA Hopper (the H200 records), Ada,
// Ampere GA10x, GDDR Blackwell and GA100 GPUs (data/prefill_today.json of
// internal/calibration), so a stage
// all of GPUs of one of those architectures (mmqArchitecture) takes today's
// constants with that architecture's MMQ fractions, and every other stage
// the 2023-24 builds' (the newest measured on those devices; a replay of
// such a build, preMMQ, takes them too). Under today's constants llama.cpp
// (the engine the speed constants are of; also a plan naming none) runs
// integer weights through MMQ at the INT8 peak
// (https://github.com/ggml-org/llama.cpp/pull/8075: the default on GPUs
// with int8 tensor cores since June 2024); 16-bit weights, other engines
// and the 2023-24 builds run a 16-bit GEMM at the 16-bit (fp8) peak,
// integer weights dequantized first.
func (e efficiency) prefillPath(devs []*device, l quant.Level, llamaCPP, preMMQ bool) prefillPath {
	if llamaCPP && allAppleGPUs(devs) {
		return e.metalPrefillPath(devs, l)
	}
	arch := ""
	if !preMMQ && len(devs) > 0 {
		arch = mmqArchitecture(devs[0])
		for _, d := range devs[1:] {
			if mmqArchitecture(d) != arch {
				arch = ""
			}
		}
	}
	q8, kquant := e.mmqFractions(arch)
	today := kquant > 0
	p := prefillPath{Kernel: KernelGEMM, Precision: computePrecision(l), MFU: e.PrefillMFU, Dequantized: dequantizedForMatmul(l),
		LayerSeconds: e.PrefillLayerLatencyPreMMQ, TodaysBuild: today}
	if today {
		p.Arch = arch
	}
	if today {
		p.LayerSeconds = e.PrefillLayerLatency
		mfu := kquant
		switch weightFamily(l) {
		case WeightsFloat:
			mfu = 0
		case WeightsQ8:
			mfu = q8
		}
		if llamaCPP && mfu > 0 {
			p.Kernel, p.Precision, p.MFU, p.Dequantized = KernelMMQ, "int8", mfu, false
		}
	}
	p.PeakTFLOPS = math.Inf(1)
	accumulating := llamaCPP && p.Kernel == KernelGEMM && p.Precision == "fp16"
	p.FP16Accumulate = accumulating && len(devs) > 0
	for _, d := range devs {
		peak, fp16Accumulate := d.fp16GEMMPeak(accumulating)
		if !fp16Accumulate {
			peak = d.peakTFLOPS(p.Precision)
		}
		p.PeakTFLOPS = math.Min(p.PeakTFLOPS, peak)
		p.FP16Accumulate = p.FP16Accumulate && fp16Accumulate
	}
	return p
}

// metalPrefillPath is the prompt path of llama.cpp's Metal backend on a
// stage of Apple GPUs: its matmul kernels (kernel_mul_mm in ggml-metal of
// https://github.com/ggml-org/llama.cpp) dequantize integer weights tile by
// tile into threadgroup memory, so no 16-bit copy is written, and run on
// the GPU's ALUs, so the peak is the FP32 figure (appleGPUPeak) and the
// fraction is PrefillMFUMetal (16-bit weights) or PrefillMFUMetalQuant
// (integer weights), fitted on Apple rows alone. The fixed time per layer
// per pass is Metal's decode time per layer (LayerLatencyMetal): no Apple
// row fits a prompt pass time of its own. A zero fraction or an unknown
// peak leaves the peak 0: no prefill figure.
func (e efficiency) metalPrefillPath(devs []*device, l quant.Level) prefillPath {
	p := prefillPath{Kernel: KernelMetal, Precision: "fp32", MFU: e.PrefillMFUMetal, LayerSeconds: e.LayerLatencyMetal}
	if dequantizedForMatmul(l) {
		p.MFU = e.PrefillMFUMetalQuant
	}
	if p.MFU <= 0 {
		return p
	}
	p.PeakTFLOPS = math.Inf(1)
	for _, d := range devs {
		p.PeakTFLOPS = math.Min(p.PeakTFLOPS, appleGPUPeak(d))
	}
	return p
}

// allAppleGPUs reports whether devs is one or more Apple GPUs and nothing
// else.
func allAppleGPUs(devs []*device) bool {
	for _, d := range devs {
		if !appleGPU(d) {
			return false
		}
	}
	return len(devs) > 0
}

// appleGPUPeak is an Apple GPU's FP32 peak, TFLOPS: its record's figure
// (specs.Spec.GPUFP32TFLOPS, of GPUCores cores) scaled to the GPU cores
// detection counted (system_profiler, registry.Device.Cores) where they
// differ, since a chip name is sold with several core counts and the
// figure is cores x ALUs x clock; 0 when the record states none.
func appleGPUPeak(d *device) float64 {
	if d.Spec == nil || d.Spec.GPUFP32TFLOPS <= 0 {
		return 0
	}
	if d.Dev.Cores > 0 && d.Spec.GPUCores > 0 {
		return d.Spec.GPUFP32TFLOPS * float64(d.Dev.Cores) / float64(d.Spec.GPUCores)
	}
	return d.Spec.GPUFP32TFLOPS
}

// fp16GEMMPeak is d's FP16-accumulate tensor peak and true when the GEMM
// accumulates in FP16 (accumulating) and d's record states that rate apart
// from its FP32-accumulate FP16 figure (specs.Spec.FP16AccumFP16TFLOPS: a
// GeForce part, twice the rate); else 0 and false. llama.cpp's 16-bit GEMM
// (16-bit weights, and integer weights dequantized before MMQ) calls
// cublasGemmEx with CUBLAS_COMPUTE_16F (ggml_cuda_op_mul_mat_cublas in
// ggml-cuda.cu of https://github.com/ggml-org/llama.cpp, 2024); PyTorch's
// GEMM under vLLM accumulates in FP32.
func (d *device) fp16GEMMPeak(accumulating bool) (float64, bool) {
	if !accumulating || d.Spec == nil || d.Spec.FP16AccumFP16TFLOPS <= 0 {
		return 0, false
	}
	return d.Spec.FP16AccumFP16TFLOPS, true
}

// requestPrefillPath is prefillPath for a stage of devs in the plan pl of
// req: a replay of a 2023 ./main run (req.main2023) pays that build's pass
// time.
func (e efficiency) requestPrefillPath(devs []*device, pl *planned, req *planning) prefillPath {
	p := e.prefillPath(devs, pl.Level, llamaCPPKernels(pl, req), req.preMMQ)
	if req.main2023 && !p.TodaysBuild && p.Kernel != KernelMetal {
		p.LayerSeconds = e.PrefillLayerLatency2023
	}
	return p
}

// NVIDIA architectures today's llama.cpp build is measured on.
const (
	archHopper = "hopper" // compute capability 9.x: H100, H200, GH200, H20
	archAda    = "ada"    // 8.9: RTX 40, L4, L40, L40S, RTX 6000 Ada
	archAmpere = "ampere" // 8.6 (GA102-GA107): RTX 30, RTX A2000-A6000, A10, A40; not GA100 (8.0: A100, A30), a different chip
	archGA100  = "ga100"  // 8.0: A100, A30 (Ampere's datacenter chip: other tensor cores, HBM2)
)

// mmqFractions is the MMQ fractions (Q8_0, other integer types) of today's
// build on arch; zero where the architecture has no fitted rows.
func (e efficiency) mmqFractions(arch string) (q8, kquant float64) {
	switch arch {
	case archHopper:
		return e.PrefillMFUQ8, e.PrefillMFUKQuant
	case archAda:
		return e.PrefillMFUKQuantAda, e.PrefillMFUKQuantAda
	case archAmpere:
		return e.PrefillMFUKQuantAmpere, e.PrefillMFUKQuantAmpere
	case archBlackwellGDDR:
		return e.PrefillMFUKQuantBlackwell, e.PrefillMFUKQuantBlackwell
	case archGA100:
		return e.PrefillMFUKQuantGA100, e.PrefillMFUKQuantGA100
	}
	return 0, 0
}

// mmqArchitecture is d's NVIDIA architecture among those today's build is
// measured on (archHopper, archAda, archAmpere, archBlackwellGDDR,
// archGA100), by its detected compute capability, else its record's; ""
// for any other device.
func mmqArchitecture(d *device) string {
	if !nvidiaGPU(d) {
		return ""
	}
	cc := d.Dev.ComputeCapability
	if cc == "" && d.Spec != nil {
		cc = d.Spec.Arch
	}
	switch {
	case strings.HasPrefix(cc, "9."):
		return archHopper
	case cc == "8.9":
		return archAda
	case cc == "8.6":
		return archAmpere
	case cc == "8.0":
		return archGA100
	case cc == "12.0":
		return archBlackwellGDDR
	}
	return ""
}

// llamaCPPKernels reports whether a plan's prompt passes run llama.cpp's
// kernels: its engine is the one the speed rows ran (engine.SpeedKernels:
// llama.cpp), or it names none (the speed constants are llama.cpp's).
func llamaCPPKernels(pl *planned, req *planning) bool {
	en := planEngine(pl, req)
	return en == nil || engine.SpeedModelOf(en) == engine.SpeedKernels
}

// matmulParams is the weights a prompt token multiplies: the active
// parameters less an untied input embedding (a row lookup; tied, it is
// also the output head and is multiplied).
func matmulParams(m *model.Model, active float64) float64 {
	if !m.TieEmbeddings {
		if w := active - float64(m.Vocab)*float64(m.Hidden); w > 0 {
			return w
		}
	}
	return active
}

// dequantizedForMatmul reports whether a level's weights are integer
// (int8/int4, GGUF k-quants included) and so dequantized before the 16-bit
// matmul.
func dequantizedForMatmul(l quant.Level) bool {
	n := l.Native()
	return n == "int8" || n == "int4"
}

// computePrecision is the tensor-core precision a level's matmuls run in:
// fp8 for fp8 weights, bf16 for bf16, else fp16 (int8/int4 weights are
// dequantized to 16-bit in the kernels llama.cpp and vLLM use at batch 1).
func computePrecision(l quant.Level) string {
	switch l.Native() {
	case "fp8":
		return "fp8"
	case "bf16":
		return "bf16"
	}
	return "fp16"
}

func (d *device) peakTFLOPS(precision string) float64 {
	if d.Spec == nil {
		return 0
	}
	if v := d.Spec.PeakTFLOPS(precision); v > 0 {
		return v
	}
	if precision == "fp8" || precision == "fp16" {
		return d.Spec.PeakTFLOPS("bf16")
	}
	if precision == "bf16" {
		return d.Spec.PeakTFLOPS("fp16")
	}
	return 0
}

// estimateThroughput estimates decode and prefill speed of a fitting plan.
// Decode: a step reads every stage's weights (active share for MoE) and KV
// cache once; stages of a pipeline run one after another for a step (a
// pipelined engine overlaps micro-batches, but each micro-batch re-reads the
// stage's weights, so bandwidth-bound throughput is the same), so the step
// time is the SUM of the stage times, not their minimum. Prefill: compute
// bound at prefillMFU of the dense peak.
//
// A data-parallel plan is estimated per replica, at the replica's share of
// the batch; the slowest replica's figures are reported, and the total is
// that decode rate times the replicas (independent requests: the replicas
// share nothing during a step).
func estimateThroughput(pl *planned, req *planning, interStageGBs float64) Throughput {
	t := estimateReplicas(pl, req, interStageGBs)
	if t.PrefillTokensPerS > 0 {
		t.PrefillValidatedOn = prefillValidatedOn(pl, req)
	}
	if t.DecodeTokensPerS <= 0 {
		// Nothing to vouch for: a device class read from a missing record
		// (a MIG slice, an unknown part) must not borrow another class's
		// validation.
		t.ValidatedOn = NotValidated + ": no decode speed is estimated (the assumptions say why)"
		return t
	}
	t.ValidatedOn, _ = validatedOn(pl, req)
	if n := pl.runningOf(req); n > 1 {
		t.Sequences = n
	}
	return t
}

// estimateReplicas is estimateThroughput's figures: of the plan, or of its
// slowest replica and all replicas together.
func estimateReplicas(pl *planned, req *planning, interStageGBs float64) Throughput {
	if pl.DP < 2 {
		return estimateWith(pl, req, interStageGBs, fitted)
	}
	// The figures of every replica, without their notes, then the slowest
	// again with them: a plan of hundreds of replicas formats one set.
	var t Throughput
	slowest := 0
	for i, r := range pl.Replicas {
		one := *pl
		one.Stages = r
		ti := estimateNoted(&one, req, interStageGBs, fitted, false)
		if i == 0 || slower(ti, t) {
			t, slowest = ti, i
		}
	}
	one := *pl
	one.Stages = pl.Replicas[slowest]
	t = estimateWith(&one, req, interStageGBs, fitted)
	if t.DecodeTokensPerS > 0 {
		t.DecodeTokensPerSTotal = round3(t.DecodeTokensPerS * float64(pl.DP))
	}
	running := pl.runningOf(req)
	note := fmt.Sprintf(
		"data_parallel: decode_tokens_per_s and prefill_tokens_per_s are one replica's (the slowest), serving %s; decode_tokens_per_s_total = %d replicas x decode_tokens_per_s, assuming independent requests keep every replica busy with %s (%d in flight in all)",
		counted(running, "sequence"), pl.DP, counted(running, "sequence"), pl.DP*running)
	if b := req.BatchSize; b > 0 && b < pl.DP*running {
		// A batch smaller than that leaves replicas idle: the total is the
		// plan's capacity, not the batch's rate.
		note += fmt.Sprintf("; the batch of %d keeps %d of the %d replicas busy", b, (b+running-1)/running, pl.DP)
	}
	t.Assumptions = append(t.Assumptions, note)
	return t
}

// runningOf is how many sequences one replica of the plan decodes at once:
// its share of the batch, or fewer where its paged KV pool holds fewer at
// full context (planned.Concurrent).
func (p *planned) runningOf(req *planning) int {
	b := p.batchOf(req)
	if p.Concurrent > 0 && p.Concurrent < b {
		return p.Concurrent
	}
	return b
}

// pagedSequences is how many times a decode step reads a stage's KV cache
// (Part.KV): once where the plan holds every sequence's cache, running
// times on a paged pool, whose plan holds one sequence (fitBatch).
func pagedSequences(pl *planned, running int) float64 {
	if fitBatch(pl.Pool, running) != running {
		return float64(running)
	}
	return 1
}

// slower reports whether a is a slower estimate than b (an omitted figure
// counts as slowest: it cannot be vouched for).
func slower(a, b Throughput) bool {
	if (a.DecodeTokensPerS == 0) != (b.DecodeTokensPerS == 0) {
		return a.DecodeTokensPerS == 0
	}
	return a.DecodeTokensPerS < b.DecodeTokensPerS
}

// estimateWith is the speed estimate of a plan's stages under the
// constants e, with its assumptions.
func estimateWith(pl *planned, req *planning, interStageGBs float64, e efficiency) Throughput {
	return estimateNoted(pl, req, interStageGBs, e, true)
}

// offloadPrefillOmitted is why a plan with part of the model in host
// memory (cpu_offload) states no prefill: no prefill model covers weights
// read from, or layers run in, host memory.
const offloadPrefillOmitted = "prefill omitted: part of the model's weights is in host memory (cpu_offload), and prefill with weights in host memory is not modelled"

// servingDecode is the fitted batch-1 overhead of a serving engine
// of the calibration set the engine names (servingFitOf; vLLM's:
// calibration.Throughput.VLLM; SGLang's: its own, sglangDecode) and true,
// or false for llama.cpp, engines that name no fitted set, and plans on
// devices other than NVIDIA and AMD GPUs (the rows of
// data/serving_decode.json ran CUDA and ROCm builds; vLLM on a TPU, Gaudi
// or Trainium keeps the generic per-layer time).
func (e efficiency) servingDecode(en engine.Engine, pl *planned) (calibration.ServingDecode, bool) {
	fit := servingFitOf(en)
	if fit == "" || len(pl.Stages) == 0 {
		return calibration.ServingDecode{}, false
	}
	for i, s := range pl.Stages {
		if pl.streamed() && i == len(pl.Stages)-1 {
			continue // host memory the GPU reads: no device of its own
		}
		for _, d := range s.Devices {
			if !nvidiaGPU(d) && !amdGPU(d) {
				return calibration.ServingDecode{}, false
			}
		}
	}
	if fit == calibration.ServingFitSGLang {
		s, _ := e.sglangDecode(pl)
		return s, true
	}
	return e.VLLM, true
}

// amdGPU reports whether d is an AMD GPU (detected or by its record).
func amdGPU(d *device) bool {
	return d.Dev.Kind != registry.KindCPU && (strings.EqualFold(d.Dev.Vendor, "amd") || d.Spec != nil && d.Spec.Vendor == "AMD")
}

// servingNote is the assumption naming the fixed costs s of vLLM's set a
// serving engine's plan pays, in the words of its rows.
func servingNote(s calibration.ServingDecode) string {
	return calibration.ServingFitVLLM.DecodeNote(servingCostsText(s))
}

// servingCostsText names what a batch-1 decode step under s streams at and
// pays.
func servingCostsText(s calibration.ServingDecode) string {
	parts := fmt.Sprintf("%.0f us per part of a layer (its mixer or its feed-forward block)", s.PartSeconds*1e6)
	if s.PartSecondsLater != s.PartSeconds {
		parts = fmt.Sprintf("%.0f us per part of a layer (its mixer or its feed-forward block) on Hopper, Blackwell and CDNA3 GPUs, %.0f us on earlier ones", s.PartSecondsLater*1e6, s.PartSeconds*1e6)
	}
	return fmt.Sprintf("streams the weights and KV cache at %.0f%% of memory bandwidth and pays %.0f us per step, %s, %.0f us per tensor-parallel all-reduce (one per part), %.0f us per MoE layer, %.0f us per latent-attention (MLA) layer and %.0f us per sparse-attention indexer",
		s.BandwidthFraction*100, s.StepSeconds*1e6, parts, s.AllReduceSeconds*1e6, s.MoELayerSeconds*1e6, s.MLALayerSeconds*1e6, s.IndexerSeconds*1e6)
}

// hostRuns reports whether an offloaded plan's host stage runs on the CPU
// at a known host bandwidth bw (an engine that computes offloaded layers on
// the host, engine.Parallelism OffloadOnHost: llama.cpp), rather than
// crossing PCIe every step (vLLM's --cpu-offload-gb).
func hostRuns(pl *planned, req *planning, bw float64) bool {
	e := planEngine(pl, req)
	return e != nil && e.Parallelism().OffloadOnHost && bw > 0 && !math.IsInf(bw, 1)
}

// planEngine is the engine a plan was made for: its pool's budget engine,
// else the request's (nil when neither names one).
func planEngine(pl *planned, req *planning) engine.Engine {
	if pl.Pool != nil && pl.Pool.Budget.Engine != nil {
		return pl.Pool.Budget.Engine
	}
	return req.requestEngine()
}

// stageHostMix is the stored types of what stage s of pl multiplies per
// token where it runs on one CPU (hostMix: its share of the layers, and
// the output head where it holds it and head is true), at the level its
// engine loads (engine.WeightsLevel: llama.cpp's int4 is Q4_K_M); the
// zero mix on any other stage, which the host terms do not read.
func stageHostMix(pl *planned, req *planning, s stage, head bool) hostMix {
	if len(s.Devices) != 1 || s.Devices[0].Dev.Kind != registry.KindCPU || pl.Costs.Layers <= 0 {
		return hostMix{}
	}
	mix, _ := newHostMix(req.Model, engine.WeightsLevel(planEngine(pl, req), pl.Level), float64(s.End-s.Start)/float64(pl.Costs.Layers), head)
	return mix
}

// hostComputeSeconds is a CPU stage's matrix-vector time per decode step:
// the weights it reads (weightBytes at the mean bytes per weight of the
// types they are stored in, mix) over its cores × the per-core rate of
// each type (calibration.Throughput.HostWeightsPerCore), type by type.
// 0 for other devices, unknown cores or a type without a rate.
func hostComputeSeconds(devs []*device, weightBytes float64, mix hostMix, e efficiency) float64 {
	if len(devs) != 1 || devs[0].Dev.Kind != registry.KindCPU || devs[0].Dev.Cores <= 0 {
		return 0
	}
	perWeight, bytes := mix.secondsPerWeight(e.HostWeightsPerCore), mix.bytesPerWeight()
	if perWeight <= 0 || bytes <= 0 {
		return 0
	}
	return weightBytes / bytes * perWeight / (float64(devs[0].Dev.Cores) * e.hostCoreFactor(devs[0].Dev))
}

// cpuOnly reports whether every device of the plan is a CPU and nothing
// is offloaded.
func cpuOnly(pl *planned) bool {
	if pl.Offloaded || len(pl.Stages) == 0 {
		return false
	}
	for _, s := range pl.Stages {
		for _, d := range s.Devices {
			if d.Dev.Kind != registry.KindCPU {
				return false
			}
		}
	}
	return true
}

// hostPrefillSeconds is a CPU stage's prompt time per token: the matmul
// FLOPs of prefillSeconds over its cores × the per-core FLOP/s of the
// types its layers' weights are stored in (mix; calibration.Throughput.
// HostPrefillFLOPSPerCore), each type's share of the weights at its rate.
// 0 for other devices, unknown cores or a type without a rate.
func (e efficiency) hostPrefillSeconds(devs []*device, mix hostMix, activeParams, attention float64) float64 {
	if len(devs) != 1 || devs[0].Dev.Kind != registry.KindCPU || devs[0].Dev.Cores <= 0 {
		return 0
	}
	perFLOP := mix.secondsPerWeight(e.HostPrefillFLOPSPerCore)
	if perFLOP <= 0 {
		return 0
	}
	flops := 2*activeParams + attention
	return flops * perFLOP / float64(devs[0].Dev.Cores)
}

// hostCoreRate is the weights one core of CPU d multiplies per second in
// mix: the per-type rates' mean (weights over the time they take), times
// hostCoreFactor.
func (e efficiency) hostCoreRate(mix hostMix, d registry.Device) float64 {
	perWeight := mix.secondsPerWeight(e.HostWeightsPerCore)
	if perWeight <= 0 {
		return 0
	}
	return e.hostCoreFactor(d) / perWeight
}

// hostCoreFactor is calibration.Throughput.HostCoreFactorNoAVX512 on an
// x86 CPU whose vector extensions are known (specs.CPUVectorOf: its
// cpu_features, else its family's record) and lack AVX-512, else 1. The
// factor is fitted on AVX2 cores; a narrower x86 vector (AVX, SSE4.2)
// takes it too, as a core that lacks AVX2 is not faster than one that has
// it (no row measures one). Arm CPUs and CPUs of unknown extensions keep
// the fitted rates: the one published Arm row (an Apple core, Q4_0) ran
// twice as fast per core as they say, and one source cannot be
// cross-validated (docs/accuracy.md, "CPU decode by instruction set").
func (e efficiency) hostCoreFactor(d registry.Device) float64 {
	v, ok := specs.CPUVectorOf(d)
	if !ok || v.Arch != registry.CPUArchX86 || v.AVX512 || e.HostCoreFactorNoAVX512 <= 0 {
		return 1
	}
	return e.HostCoreFactorNoAVX512
}

// hostCoreFactorNote says, for decodeNote, where hostCoreFactor scales
// the rate of CPU d; "" where it does not.
func (e efficiency) hostCoreFactorNote(d registry.Device) string {
	f := e.hostCoreFactor(d)
	if f == 1 {
		return ""
	}
	v, _ := specs.CPUVectorOf(d)
	measured := "as measured on AVX2 cores"
	if !v.AVX2 {
		measured = "as measured on AVX2 cores, taken for this narrower vector unmeasured"
	}
	return fmt.Sprintf("; %.2f x the rate of an AVX-512 core, %s: widest vector %s, per %s", f, measured, v.Widest, v.Source)
}

// familyNames are the weight type families as the assumptions name them.
var familyNames = map[string]string{WeightsFloat: "16-bit weights", WeightsQ8: "8-bit Q8_0 weights", WeightsKQuant: "k-quant/4-bit weights, dequantized by the kernel"}

// servingWeightsName names a serving engine's weights by the level they are
// stored at: the families above are llama.cpp's kernels (k-quants
// dequantized in the kernel), which vLLM and SGLang do not run; their fp8,
// int8/int4 (Marlin, AWQ/GPTQ) and MXFP4 weights are streamed at the one
// fraction of their fit (internal/calibration/fit/serving.go).
func servingWeightsName(l quant.Level) string {
	if l == quant.MXFP4 {
		return "MXFP4 weights"
	}
	switch n := l.Native(); n {
	case "fp32":
		return "32-bit float weights"
	case "fp16", "bf16":
		return n + " weights"
	case "fp8":
		return "8-bit float (fp8) weights"
	case "int8":
		return "8-bit integer weights"
	case "int4":
		return "4-bit integer weights"
	}
	return string(l) + " weights"
}

// backendNames are the backends whose per-layer time a memory class pays.
var backendNames = map[string]string{MemoryClassGDDR: "GPU backend", MemoryClassHBM: "GPU backend", MemoryClassUnified: "Metal", MemoryClassHost: "CPU threads"}

// decodeNote is the decode assumption: which fractions of memory bandwidth
// the plan's first device reaches for weights and KV cache and why (its
// memory class and the weights' family), and the per-layer time (for a
// serving engine, named by serving, a pointer to its fixed costs instead;
// serving is "" for llama.cpp).
func (e efficiency) decodeNote(pl *planned, req *planning, batch int, serving string, older bool) string {
	context := req.ContextLength
	if len(pl.Stages) == 0 || len(pl.Stages[0].Devices) == 0 {
		return "decode streams the weights and the KV cache at a fraction of memory bandwidth"
	}
	d := pl.Stages[0].Devices[0]
	class, family := memoryClass(d), weightFamily(pl.Level)
	f := e.decodeFraction(d, pl.Level, older)
	kv := fmt.Sprintf("reads the KV cache of %s x %s at %.0f%%", counted(context, "token"), counted(batch, "sequence"), e.kvFraction(d)*100)
	layer := fmt.Sprintf("plus %.0f us per layer per step (%s", e.layerLatency(d, older)*1e6, backendNames[class])
	if e.layerLatency(d, older) == 0 {
		layer = "no fixed time per layer (" + backendNames[class]
	}
	runs := runsEngine(planEngine(pl, req))
	if e.todaysDecode(d, older) > 0 {
		layer += ", today's " + ofRuns(runs, todaysDecodeNote[decodeArchitecture(d)])
	}
	switch {
	case class == MemoryClassHost && d.BandwidthGBs <= 0:
		return "decode streams the weights at a fraction of host memory bandwidth (unknown for this CPU)"
	case class == MemoryClassHost && d.Dev.Cores > 0:
		s := pl.Stages[0]
		mix := stageHostMix(pl, req, s, s.End == pl.Costs.Layers && !req.noLogits)
		return fmt.Sprintf("decode streams the weights at %.0f%% of memory bandwidth (host memory, %s) or multiplies them at %s x %.1f G weights/s (per core, by the types the weights are stored in: %s%s), whichever is slower, %s, %s; fitted on %s)",
			f*100, d.BandwidthSource, counted(d.Dev.Cores, "core"), e.hostCoreRate(mix, d.Dev)/1e9, mix.describe(e.HostWeightsPerCore), e.hostCoreFactorNote(d.Dev), kv, layer, ofRuns(runs, "measurements"))
	}
	where := map[string]string{MemoryClassGDDR: "GDDR GPU", MemoryClassHBM: "HBM part", MemoryClassUnified: "Apple unified memory", MemoryClassHost: "host memory"}[class]
	if mem, shared := sharedMemoryGPU(d); class == MemoryClassGDDR && shared {
		where = "a GPU sharing " + mem + " memory with the CPU, at the GDDR GPUs' fractions"
	}
	if serving != "" {
		return fmt.Sprintf("decode reads the weights (%s, %s) and the KV cache of %s x %s at %s's fraction of memory bandwidth, plus its fixed costs (both listed below)",
			where, servingWeightsName(pl.Level), counted(context, "token"), counted(batch, "sequence"), serving)
	}
	return fmt.Sprintf("decode streams the weights at %.0f%% of memory bandwidth (%s, %s), %s, %s; fitted on %s)",
		f*100, where, familyNames[family], kv, layer, ofRuns(runs, "measurements"))
}

// prefillNote is the prefill assumption: the kernel the first stage's
// matmuls run through, at which fraction of which peak, the per-pass costs
// and which build's constants apply.
func (e efficiency) prefillNote(pl *planned, req *planning) string {
	var devs []*device
	if len(pl.Stages) > 0 {
		devs = pl.Stages[0].Devices
	}
	path := e.requestPrefillPath(devs, pl, req)
	runs := runsEngine(planEngine(pl, req))
	kernel := "GEMM"
	switch path.Kernel {
	case KernelMMQ:
		kernel = runsOwn(runs, "quantized MMQ kernels on int8 tensor cores")
	case KernelMetal:
		return fmt.Sprintf("prefill matmuls run at %.0f%% of the GPU's FP32 peak (%s; Apple GPUs state no tensor figure); each pass of up to %d prompt tokens re-reads the weights and costs %.0f us per layer (the fraction fitted on %s of May 2024, the time per layer Metal's decode time)",
			path.MFU*100, runsOwn(runs, "Metal kernels"), calibration.MicroBatchTokens, path.LayerSeconds*1e6, ofRuns(runs, "Metal prompt processing"))
	}
	copyNote := ""
	if path.Dequantized {
		copyNote = " (and writes and reads their 16-bit dequantized copy)"
	}
	build := "the May 2024 " + ofRuns(runs, "build's constants, the newest measured on this device class")
	if path.TodaysBuild {
		build = "today's " + ofRuns(runs, todaysBuildNote[path.Arch])
	}
	precision := path.Precision
	if path.FP16Accumulate {
		precision = "fp16 (FP16-accumulate)"
	}
	return fmt.Sprintf("prefill matmuls run at %.0f%% of the dense %s peak (%s); each pass of up to %d prompt tokens re-reads the weights%s and costs %.0f us per layer (fitted on %s: %s)",
		path.MFU*100, precision, kernel, calibration.MicroBatchTokens, copyNote, path.LayerSeconds*1e6, ofRuns(runs, "prompt processing"), build)
}

// todaysDecodeNote says, per architecture, which rows today's decode
// constants come from (data/prefill_today.json of internal/calibration),
// after "today's" and the engine of the runs (runsEngine).
var todaysDecodeNote = map[string]string{
	archAmpere:        "CUDA build, measured on NVIDIA Ampere GA10x GPUs",
	archAda:           "CUDA build, measured on NVIDIA Ada GPUs",
	archBlackwellGDDR: "CUDA build, measured on NVIDIA GeForce Blackwell GPUs",
}

// todaysBuildNote says, per architecture, what today's build's prefill
// constants were measured on (internal/calibration/data: h200-speed and
// prefill_today.json), after "today's" and the engine of the runs
// (runsEngine).
var todaysBuildNote = map[string]string{
	archHopper:        "build, measured on an NVIDIA H200",
	archAda:           "build: the MMQ fraction measured on an NVIDIA Ada GPU (RTX 4090), the time per layer on an NVIDIA H200",
	archAmpere:        "build: the MMQ fraction measured on an NVIDIA Ampere GA102 GPU (A40), the time per layer on an NVIDIA H200",
	archBlackwellGDDR: "build: the MMQ fraction measured on an NVIDIA GeForce Blackwell GPU (RTX 5090), the time per layer on an NVIDIA H200",
	archGA100:         "build: the MMQ fraction measured on one NVIDIA GA100 GPU (A30; no A100 row checks it), the time per layer on an NVIDIA H200",
}

func unknownBandwidth(pl *planned) string {
	for _, s := range pl.Stages {
		for _, d := range s.Devices {
			if d.BandwidthGBs <= 0 {
				name := d.Dev.Name
				if name == "" {
					name = string(d.Dev.Kind)
				}
				if d.Dev.Kind == registry.KindCPU {
					return d.ID + " (host memory bandwidth is not detected and the CPU family is not in the datasheet table)"
				}
				return d.ID + " (" + name + ", not in the datasheet table)"
			}
		}
	}
	return "a device"
}

func round3(v float64) float64 {
	if v >= 100 {
		return math.Round(v*10) / 10
	}
	return math.Round(v*1000) / 1000
}
