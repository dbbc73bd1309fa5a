package quant

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// KVOptions describes the KV cache storage.
type KVOptions struct {
	// Bytes per cached element: 2 for fp16/bf16 (the default when 0), 1 for
	// an fp8/int8 cache.
	Bytes float64
	// SlidingExtra is how many cells a sliding-window layer holds beyond its
	// window, and SlidingPad the multiple its size is rounded up to (0: the
	// window alone). llama.cpp: one micro-batch (n_ubatch) and 256
	// (llamaCPP.KVRules in internal/engine/llamacpp.go).
	SlidingExtra, SlidingPad int
	// NoSlidingWindow: the engine caches the whole context on every layer
	// (llama.cpp for Phi-3).
	NoSlidingWindow bool
	// NoFlashAttention: attention is computed without flash attention
	// (llama.cpp -fa off), so the working buffer holds a micro-batch's
	// scores over the whole cache (ActivationsBytes).
	NoFlashAttention bool
}

// slidingCells is the number of cells per sequence a sliding-window layer
// holds at contextLen tokens.
func (o KVOptions) slidingCells(window, contextLen int) int {
	cells := max(window, 1) + o.SlidingExtra
	if o.SlidingPad > 0 {
		cells = (cells + o.SlidingPad - 1) / o.SlidingPad * o.SlidingPad
	}
	return min(contextLen, cells)
}

func (o KVOptions) bytes() float64 {
	if o.Bytes > 0 {
		return o.Bytes
	}
	return 2
}

// Breakdown is an inference memory estimate for one model replica.
type Breakdown struct {
	WeightsBytes     int64    `json:"weights_bytes"`
	KVCacheBytes     int64    `json:"kv_cache_bytes"`
	ActivationsBytes int64    `json:"activations_bytes"`
	OverheadBytes    int64    `json:"overhead_bytes"`
	TotalBytes       int64    `json:"total_bytes"`
	Notes            []string `json:"notes,omitempty"`
}

// Estimate is the memory one replica of the model needs at level l for
// batch sequences of contextLen tokens, on one device (OverheadBytes is one
// device's runtime overhead; a plan over N devices adds N-1 more).
func Estimate(m *model.Model, l Level, contextLen, batch int, kv KVOptions) Breakdown {
	b := EstimateWith(m, WeightsBytes(m, l), contextLen, batch, kv)
	b.Notes = append(b.Notes, m.Notes...)
	b.Notes = append(b.Notes, estimateNotes(m, contextLen)...)
	return b
}

// EstimateWith is Estimate for weights already known (WeightsBytes of the
// level), without notes. The weights do not depend on context or batch, so
// a caller probing many contexts or batches (plan's inverse questions)
// computes them once; the per-tensor walk is the costly part of Estimate.
func EstimateWith(m *model.Model, weightsBytes int64, contextLen, batch int, kv KVOptions) Breakdown {
	b := Breakdown{
		WeightsBytes:     weightsBytes,
		KVCacheBytes:     KVCacheBytes(m, contextLen, batch, kv),
		ActivationsBytes: ActivationsBytes(m, contextLen, batch, kv),
		OverheadBytes:    PerDeviceOverheadBytes(),
	}
	b.TotalBytes = b.WeightsBytes + b.KVCacheBytes + b.ActivationsBytes + b.OverheadBytes
	return b
}

// KVCacheBytes is the KV cache for batch sequences of contextLen tokens,
// summed per layer:
//
//	standard / GQA / MQA   2 (K and V) × kv_heads × head_dim elements per token
//	MLA (DeepSeek V2/V3)   kv_lora_rank + qk_rope_head_dim elements per token:
//	                       the compressed latent and the decoupled RoPE key
//	                       (DeepSeek-V2 paper, arXiv 2405.04434, §2.1 and
//	                       Table 1: (d_c + d_h^R)·l elements per token)
//
// Sliding-window layers hold at most window tokens per sequence (Mistral 7B
// paper arXiv 2310.06825 §2 "rolling buffer cache"; Gemma 2/3 local layers),
// plus what the engine keeps beyond the window (kv.SlidingExtra).
// A model without a known shape gives 0 (the caller reports it unknown).
func KVCacheBytes(m *model.Model, contextLen, batch int, kv KVOptions) int64 {
	if m == nil || contextLen <= 0 || batch <= 0 || m.Layers <= 0 {
		return 0
	}
	perTokenLayer := kvElementsPerTokenLayer(m)
	if perTokenLayer == 0 {
		return 0
	}
	sliding := min(m.SlidingLayers, m.Layers)
	if m.SlidingWindow <= 0 || kv.NoSlidingWindow {
		sliding = 0
	}
	full := m.Layers - sliding
	tokens := float64(full)*float64(contextLen) + float64(sliding)*float64(kv.slidingCells(m.SlidingWindow, contextLen))
	return int64(math.Ceil(perTokenLayer * tokens * float64(batch) * kv.bytes()))
}

// kvElementsPerTokenLayer is the number of cached values per token in one
// layer.
func kvElementsPerTokenLayer(m *model.Model) float64 {
	if m.KVLoRARank > 0 {
		return float64(m.KVLoRARank + m.QKRopeHeadDim)
	}
	return 2 * float64(m.EffectiveKVHeads()) * float64(m.EffectiveHeadDim())
}

// ChunkTokens is the number of prompt tokens an engine processes in one
// forward pass when prefilling: llama.cpp's default n_ubatch (512,
// common/common.h). The working buffer is sized for one such chunk.
const ChunkTokens = 512

// ActivationsBytes is the inference working buffer: the tensors alive at
// once while one chunk of T = min(batch × context, ChunkTokens) tokens goes
// through a layer, in fp32 as llama.cpp's compute graph keeps them, plus the
// logits of every token of the chunk (llama.cpp reserves its graph for the
// worst case where every token outputs logits):
//
//	T × (2·I + (H + 2·K)·d + 2·h) × 4 B   (gate and up outputs, q/k/v, residual and normed input)
//	+ T × V × 4 B                         (logits)
//
// With flash attention (kv.NoFlashAttention false, llama.cpp's default
// -fa auto on CPU, CUDA and Metal) there is no T × context score matrix.
// Without it the buffer is at least the attention step's (attentionScoresBytes),
// and the larger of the two is the answer: llama.cpp's graph allocator reuses
// the memory of tensors no longer needed, so the peak is one of the two, not
// their sum. This is an allowance derived from the graph's shapes, checked
// against llama.cpp's allocation (TestActivationsWithoutFlashAttention).
// Without a shape: 0.
func ActivationsBytes(m *model.Model, contextLen, batch int, kv KVOptions) int64 {
	if m == nil || m.Hidden <= 0 || contextLen <= 0 || batch <= 0 {
		return 0
	}
	T := float64(min(int64(contextLen)*int64(batch), ChunkTokens))
	I := float64(m.Intermediate)
	if m.IsMoE() {
		// Routed tokens fan out to k experts of width MoEIntermediate.
		ie := float64(m.MoEIntermediate)
		if ie == 0 {
			ie = I
		}
		I = max(I, ie*float64(max(m.ExpertsPerToken, 1)))
	}
	if I == 0 {
		I = 4 * float64(m.Hidden)
	}
	d := float64(m.EffectiveHeadDim())
	heads := float64(m.Heads + 2*m.EffectiveKVHeads())
	perToken := 2*I + heads*d + 2*float64(m.Hidden) + float64(m.Vocab)
	b := int64(math.Ceil(T * perToken * 4))
	if kv.NoFlashAttention {
		b = max(b, attentionScoresBytes(m, T, attendedCells(m, contextLen, kv)))
	}
	return b
}

// attentionHiddenRows is the number of hidden-sized fp32 rows per token
// alive beside the scores in llama.cpp's attention step without flash
// attention (residual, normed input, Q, the K and V rows being written, the
// attention output): the compute buffers measured beyond scores and mask
// were 5.0 h (Phi-3-mini) to 5.5 h (Llama-3.2-1B) per token
// (testdata/llamacpp/measurements.json); the larger is taken.
const attentionHiddenRows = 5.5

// attentionScoresBytes is the working buffer of one attention step without
// flash attention for T tokens attending nKV cache cells, in fp32, after
// build_attn_mha in llama.cpp's src/llama-graph.cpp
// (https://github.com/ggml-org/llama.cpp/blob/master/src/llama-graph.cpp):
// kq = K·Q is nKV × T per head, and soft_max_ext writes its result over it
// (the allocator runs it in place: its input has no other user), so one
// score matrix per layer is alive; the fp32 mask (nKV × T, shared by the
// heads) is an input of the graph beside it.
//
//	T × nKV × (H + 1) × 4 B  +  T × 5.5·h × 4 B
//
// Measured (llama.cpp 34af94cd, CPU): Llama-3.2-1B at 32768 cells 2134 MiB,
// this gives 2134 MiB.
func attentionScoresBytes(m *model.Model, T float64, nKV int) int64 {
	heads := float64(max(m.Heads, 1))
	return int64(math.Ceil(T * (float64(nKV)*(heads+1) + attentionHiddenRows*float64(m.Hidden)) * 4))
}

// attendedCells is the number of cache cells the widest layer attends to at
// contextLen tokens: the whole context, or the sliding-window cells when
// every layer uses the window.
func attendedCells(m *model.Model, contextLen int, kv KVOptions) int {
	if m.SlidingWindow > 0 && m.SlidingLayers >= m.Layers && !kv.NoSlidingWindow {
		return kv.slidingCells(m.SlidingWindow, contextLen)
	}
	return contextLen
}

// overheadBytes is the runtime overhead per device: the CUDA context
// (driver state, kernel images of the libraries loaded) and the caching
// allocator's slack. PyTorch maintainers measure the context alone at "~700+
// MB" depending on CUDA version and device
// (https://discuss.pytorch.org/t/high-gpu-memory-overhead/81330; 723 MiB in
// https://discuss.pytorch.org/t/what-is-the-reason-for-pytorchs-gpu-memory-floor/73021).
// 768 MiB covers that; CUDA lazy loading (default since CUDA 12.2) makes it
// smaller, so this errs on the safe side. The value is checked against the
// one measured nvidia-smi row of memory.json (Llama-2-7B int8 on an RTX
// 3090) in TestInferenceMemoryRow.
const overheadBytes = 768 << 20

// PerDeviceOverheadBytes is the runtime overhead on each accelerator used.
func PerDeviceOverheadBytes() int64 { return overheadBytes }

// HostOverheadBytes is the runtime overhead charged to a CPU that runs the
// model: none. llama.cpp's CPU backend holds no context buffer: what it
// allocates is the model, KV cache, output and compute buffers, all counted
// elsewhere in the estimate, and the process's resident memory beyond model
// and KV cache was 20-70 MiB in every measured run, under the compute buffer
// it holds (testdata/llamacpp/measurements.json, 41 runs of llama.cpp
// 34af94cd; docs/accuracy.md "Against llama.cpp's allocation").
const HostOverheadBytes = 0

// Largest returns the largest n in [1, limit] with ok(n), for ok monotone
// (true then false), or 0 when ok(1) is false. It is a binary search, so ok
// runs O(log limit) times; plan uses it for its inverse questions (longest
// context, largest batch, largest training micro-batch).
func Largest(limit int, ok func(int) bool) int {
	if limit < 1 || !ok(1) {
		return 0
	}
	lo, hi := 1, limit
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// estimateNotes explains what shaped the estimate.
func estimateNotes(m *model.Model, contextLen int) []string {
	var notes []string
	switch {
	case m.Layers == 0:
		notes = append(notes, "model shape unknown: KV cache and working buffers are not counted")
	case kvElementsPerTokenLayer(m) == 0:
		notes = append(notes, "attention heads unknown: the KV cache is not counted")
	}
	if m.KVLoRARank > 0 {
		notes = append(notes, fmt.Sprintf("KV cache holds the MLA latent (%d values per token per layer)", m.KVLoRARank+m.QKRopeHeadDim))
	}
	if m.SlidingWindow > 0 && m.SlidingLayers > 0 && contextLen > m.SlidingWindow {
		notes = append(notes, fmt.Sprintf("%d of %d layers use a %d-token sliding window: their KV cache is capped at the window", m.SlidingLayers, m.Layers, m.SlidingWindow))
	}
	if m.MaxContext > 0 && contextLen > m.MaxContext {
		notes = append(notes, fmt.Sprintf("context %d exceeds the model's maximum %d", contextLen, m.MaxContext))
	}
	return notes
}
