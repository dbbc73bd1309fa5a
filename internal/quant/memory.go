package quant

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// KVOptions describes the KV cache storage.
type KVOptions struct {
	// Bytes per cached element: 2 for fp16/bf16 (the default when 0), 1 for
	// an fp8/int8 cache.
	Bytes float64
	// StateBytes per element of a recurrent layer's state: 4 (fp32) when 0,
	// the type llama.cpp keeps its recurrent cells in (GGML_TYPE_F32 for
	// both r and s, llama_model::create_memory in src/llama-model.cpp of
	// ggml-org/llama.cpp).
	StateBytes float64
	// SlidingExtra is how many cells a sliding-window layer holds beyond its
	// window, and SlidingPad the multiple its size is rounded up to (0: the
	// window alone). llama.cpp: one micro-batch (n_ubatch) and 256
	// (llamaCPP.KVRules in internal/engine/llamacpp.go).
	SlidingExtra, SlidingPad int
	// NoSlidingWindow: the engine caches the whole context on every layer
	// (llama.cpp for Phi-3).
	NoSlidingWindow bool
	// WindowTokensRatio, when above 0, is what the engine keeps in a
	// sliding-window or chunked layer's cache per token of the context,
	// whatever the window: SGLang keeps those layers in a pool of
	// --swa-full-tokens-ratio times the full layers' tokens (0.8, its
	// hybrid-SWA pool) or, for a model outside its hybrid-SWA list, the
	// whole context on every layer (1) (engine.SGLangWindowTokensRatio).
	WindowTokensRatio float64
	// StatePoolRatio, when above 0, is the memory the engine gives a
	// hybrid model's recurrent states for each byte of its attention cache,
	// in a pool of its own sized by that ratio rather than per sequence:
	// each attention token is charged (1 + StatePoolRatio) times its bytes
	// and no state per sequence (SGLang's --mamba-full-memory-ratio,
	// engine.SGLangMambaFullMemoryRatio). A model without both kinds of
	// layers is charged as without it.
	StatePoolRatio float64
	// NoFlashAttention: attention is computed without flash attention
	// (llama.cpp -fa off), so the working buffer holds a micro-batch's
	// scores over the whole cache (ActivationsBytes).
	NoFlashAttention bool
	// GraphPeak: on a GPU the working buffer is the peak of a graph
	// allocator that reuses a tensor's memory once its last reader ran
	// (llama.cpp's ggml-alloc on its CUDA backend): the larger of one
	// layer's tensors and the output step's (logits and final hidden rows),
	// not their sum (ActivationsBytes; Breakdown.GPUActivationsBytes). Its
	// CPU backend keeps the summed figure, which its measured buffers
	// (internal/calibration/data/llamacpp_measurements.json) fit better.
	GraphPeak bool
	// IndexerKeyBytes is what one token's lightning-indexer key takes in
	// the cache of each layer that runs an indexer (model.Model.
	// IndexerHeads): 0 for index_head_dim values at Bytes each, llama.cpp's
	// cache (llama_kv_cache_dsa keeps the keys in a second llama_kv_cache
	// of one head at --cache-type-k, src/llama-kv-cache-dsa.cpp); vLLM and
	// SGLang keep index_head_dim fp8 values and one fp32 scale per 128 of
	// them, 132 bytes for DeepSeek-V3.2, whatever --kv-cache-dtype says
	// (dsaIndexerKeyBytes in internal/engine).
	IndexerKeyBytes float64
	// ScaledFP8Latent: a one-byte cache stores an MLA layer's latent as
	// fp8 with one fp32 scale per 128 values and keeps its RoPE key at 16
	// bits, FlashMLA's sparse layout (vLLM's fp8_ds_mla, SGLang's NSA
	// pool): 512 + 4 x 4 + 64 x 2 = 656 bytes a token for DeepSeek-V3.2,
	// where a plain fp8 latent is 576.
	ScaledFP8Latent bool
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

// cells is the number of tokens per sequence layer l caches at contextLen
// tokens: the context, or the window or chunk of a windowed layer (a
// chunked layer's cache is sized as a sliding window of the chunk, as
// llama.cpp's iSWA cache does for LLAMA_SWA_TYPE_CHUNKED); 0 for a layer
// that caches nothing per token.
func (o KVOptions) cells(l model.Layer, contextLen int) int {
	switch l.Kind {
	case model.FullAttention, model.LatentAttention:
		return contextLen
	case model.SlidingWindow:
		if o.NoSlidingWindow {
			return contextLen
		}
		return o.slidingCells(l.Window, contextLen)
	case model.ChunkedAttention:
		return o.slidingCells(l.Window, contextLen)
	}
	return 0
}

// cachedTokens is the tokens per sequence layer l's cache is charged at
// contextLen tokens: its cells, or for a window layer the context times
// WindowTokensRatio where the engine sets one.
func (o KVOptions) cachedTokens(l model.Layer, contextLen int) float64 {
	if o.WindowTokensRatio > 0 && (l.Kind == model.SlidingWindow || l.Kind == model.ChunkedAttention) {
		return o.WindowTokensRatio * float64(contextLen)
	}
	return float64(o.cells(l, contextLen))
}

func (o KVOptions) stateBytes() float64 {
	if o.StateBytes > 0 {
		return o.StateBytes
	}
	return 4
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
	// GPUActivationsBytes is the working buffer on a GPU when the options
	// asked for the graph allocator's peak (KVOptions.GraphPeak; 0
	// otherwise): llama.cpp's GPU backends. ActivationsBytes stays the
	// summed figure its CPU backend was measured at.
	GPUActivationsBytes int64 `json:"-"`
	// CompanionGPUBytes and CompanionHostBytes are what the request loads
	// beside the model (a draft model, a multimodal projector; planning
	// fills them, internal/plan companions.go): on the plan's first
	// device, and in host memory.
	CompanionGPUBytes, CompanionHostBytes int64 `json:"-"`
	// FileExperts is the routed experts of the GGUF file the engine
	// loads where it is larger than the weights derived and WeightsBytes
	// charges it (FileRoutedExperts; planning fills it): what of the
	// weights llama.cpp's --n-cpu-moe can move to host memory. nil: the
	// experts of the level's mix (RoutedExpertBytes).
	FileExperts *RoutedExperts `json:"-"`
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
		WeightsBytes:  weightsBytes,
		KVCacheBytes:  KVCacheBytes(m, contextLen, batch, kv),
		OverheadBytes: PerDeviceOverheadBytes(),
	}
	if kv.GraphPeak {
		b.GPUActivationsBytes = ActivationsBytes(m, contextLen, batch, kv)
		kv.GraphPeak = false
	}
	b.ActivationsBytes = ActivationsBytes(m, contextLen, batch, kv)
	b.TotalBytes = b.WeightsBytes + b.KVCacheBytes + b.ActivationsBytes + b.OverheadBytes
	return b
}

// KVCacheBytes is the KV cache and recurrent state for batch sequences of
// contextLen tokens, summed over the model's layers by kind
// (model.LayerKind):
//
//	full / GQA / MQA       2 (K and V) × kv_heads × head_dim elements per token
//	sliding window         the same, for at most window tokens per sequence
//	                       plus what the engine keeps beyond the window
//	                       (kv.SlidingExtra); chunked: one chunk; both
//	                       at kv.WindowTokensRatio of the context where set
//	MLA (DeepSeek V2/V3)   kv_lora_rank + qk_rope_head_dim elements per token
//	DSA indexer (V3.2)     the indexer's key per token in each indexer layer,
//	                       as the engine stores it (dsaBytesPerToken)
//	shared KV              nothing (it reads another layer's cache)
//	recurrent              conv + SSM state per sequence, whatever the context,
//	                       at kv.StateBytes per element; under
//	                       kv.StatePoolRatio none, the attention tokens
//	                       charged (1 + ratio) times instead
//
// A model without a known shape gives 0 (the caller reports it unknown).
func KVCacheBytes(m *model.Model, contextLen, batch int, kv KVOptions) int64 {
	if m == nil || contextLen <= 0 || batch <= 0 || m.Layers <= 0 {
		return 0
	}
	perSeq, state := kvElementsPerSequence(m, contextLen, kv)
	if perSeq == 0 && state == 0 {
		return 0
	}
	if kv.StatePoolRatio > 0 && perSeq > 0 && state > 0 {
		perSeq, state = perSeq*(1+kv.StatePoolRatio), 0
	}
	dsa := dsaBytesPerToken(m, kv) * float64(contextLen)
	return int64(math.Ceil((perSeq*kv.bytes()+dsa)*float64(batch) + state*float64(batch)*kv.stateBytes()))
}

// dsaBytesPerToken is what DeepSeek Sparse Attention adds to one token's
// cache over all layers beyond the latent's elements at kv.Bytes: the
// lightning indexer's key in each indexer layer (kv.IndexerKeyBytes, else
// index_head_dim elements), and with kv.ScaledFP8Latent on a one-byte
// cache each latent layer's scales (4 bytes per 128 values) and the second
// byte of its RoPE key's 16 bits. Both hold the whole context. 0 for a
// model without an indexer under options no engine sets for one.
func dsaBytesPerToken(m *model.Model, kv KVOptions) float64 {
	var b float64
	if m.IndexerLayers > 0 && m.IndexerHeadDim > 0 {
		key := kv.IndexerKeyBytes
		if key <= 0 {
			key = float64(m.IndexerHeadDim) * kv.bytes()
		}
		b = float64(m.IndexerLayers) * key
	}
	if kv.ScaledFP8Latent && kv.bytes() == 1 {
		for l, n := range m.CachedLayerCounts() {
			if l.Kind == model.LatentAttention {
				b += float64(n) * (float64(l.LatentDim/128*4) + float64(l.RopeDim))
			}
		}
	}
	return b
}

// kvElementsPerSequence is the cached elements of one sequence of
// contextLen tokens over all layers: per-token caches and recurrent states
// apart (they are stored at different widths).
func kvElementsPerSequence(m *model.Model, contextLen int, kv KVOptions) (cached, state float64) {
	for l, n := range m.CachedLayerCounts() {
		if l.CachesPerToken() {
			cached += layerElementsPerToken(m, l) * float64(n) * kv.cachedTokens(l, contextLen)
		}
	}
	return cached, m.RecurrentStateElements()
}

// layerElementsPerToken is the number of values layer l caches per token.
func layerElementsPerToken(m *model.Model, l model.Layer) float64 {
	switch l.Kind {
	case model.LatentAttention:
		return float64(l.LatentDim + l.RopeDim)
	case model.FullAttention, model.SlidingWindow, model.ChunkedAttention:
		heads, dim := l.KVHeads, l.HeadDim
		if heads == 0 {
			heads = m.EffectiveKVHeads()
		}
		if dim == 0 {
			dim = m.EffectiveHeadDim()
		}
		return 2 * float64(heads) * float64(dim)
	}
	return 0
}

// kvElementsPerToken is the values one token adds to the cache over all
// layers that cache per token (0: heads unknown, or no such layer).
func kvElementsPerToken(m *model.Model) float64 {
	var e float64
	for l, n := range m.CachedLayerCounts() {
		if l.CachesPerToken() {
			e += float64(n) * layerElementsPerToken(m, l)
		}
	}
	return e
}

// ActivationsBytes is the inference working buffer: the tensors alive at
// once while one chunk of T = min(batch × context, llama.cpp's n_ubatch
// calibration.MicroBatchTokens) tokens goes through a layer, in fp32 as llama.cpp's compute graph keeps them, plus the
// logits of every token of the chunk (llama.cpp reserves its graph for the
// worst case where every token outputs logits):
//
//	T × (2·I + (H + 2·K)·d + 2·h) × 4 B   (gate and up outputs, q/k/v, residual and normed input)
//	+ T × V × 4 B                         (logits)
//
// With kv.GraphPeak the two terms are not summed: the buffer is the larger
// of T × (2·I + (H + 2·K)·d + 2·h) and T × (V + h) rows of 4 B.
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
	T := float64(min(int64(contextLen)*int64(batch), calibration.MicroBatchTokens))
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
	layer := 2*I + heads*d + 2*float64(m.Hidden)
	perToken := layer + float64(m.Vocab)
	if kv.GraphPeak {
		// The output step holds the logits and the final normed hidden
		// rows; the layers' tensors are free by then. Measured (llama.cpp
		// 81ff7abe, CUDA, H200, data/llamacpp-cuda-h200-memory): Llama-3.1-8B
		// 258.5 MiB at every context with -fa on, this gives 258.5 MiB.
		perToken = max(layer, float64(m.Vocab)+float64(m.Hidden))
	}
	b := int64(math.Ceil(T * perToken * 4))
	if kv.NoFlashAttention {
		b = max(b, attentionScoresBytes(m, T, attendedCells(m, contextLen, kv)))
	}
	return b
}

// attentionScoresBytes is the working buffer of one attention step without
// flash attention for T tokens attending nKV cache cells, in fp32, after
// build_attn_mha in llama.cpp's src/llama-graph.cpp
// (https://github.com/ggml-org/llama.cpp/blob/master/src/llama-graph.cpp):
// kq = K·Q is nKV × T per head, and soft_max_ext writes its result over it
// (the allocator runs it in place: its input has no other user), so one
// score matrix per layer is alive; the fp32 mask (nKV × T, shared by the
// heads) is an input of the graph beside it.
//
//	T × nKV × (H + 1) × 4 B  +  T × r·h × 4 B
//
// with r = calibration.AttentionHiddenRows hidden-sized fp32 rows per token
// alive beside the scores (residual, normed input, Q, the K and V rows being
// written, the attention output), fitted on the -fa off runs of
// internal/calibration/data/llamacpp_measurements.json.
//
// Measured (llama.cpp 34af94cd, CPU): Llama-3.2-1B at 32768 cells 2134 MiB,
// this gives 2134 MiB.
func attentionScoresBytes(m *model.Model, T float64, nKV int) int64 {
	heads := float64(max(m.Heads, 1))
	return int64(math.Ceil(T * (float64(nKV)*(heads+1) + calibration.AttentionHiddenRows*float64(m.Hidden)) * 4))
}

// attendedCells is the number of cache cells the widest layer attends to at
// contextLen tokens: the whole context, or the window's cells when every
// layer that caches per token is windowed.
func attendedCells(m *model.Model, contextLen int, kv KVOptions) int {
	widest := 0
	for l := range m.LayerCounts() {
		widest = max(widest, kv.cells(l, contextLen))
	}
	if widest == 0 {
		return contextLen
	}
	return widest
}

// PerDeviceOverheadBytes is the runtime overhead on each accelerator used:
// the CUDA context and the caching allocator's slack
// (calibration.GPURuntimeOverheadBytes, with its measurements).
func PerDeviceOverheadBytes() int64 { return calibration.GPURuntimeOverheadBytes }

// HostOverheadBytes is the runtime overhead charged to a CPU that runs the
// model: none. llama.cpp's CPU backend holds no context buffer: what it
// allocates is the model, KV cache, output and compute buffers, all counted
// elsewhere in the estimate, and the process's resident memory beyond model
// and KV cache was 20-70 MiB in every measured run, under the compute buffer
// it holds (internal/calibration/data/llamacpp_measurements.json, 41 runs of llama.cpp
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
	case kvElementsPerToken(m) == 0 && m.CountLayers(model.Recurrent) == 0:
		notes = append(notes, "attention heads unknown: the KV cache is not counted")
	}
	if m.KVLoRARank > 0 {
		notes = append(notes, fmt.Sprintf("KV cache holds the MLA latent (%d values per token per layer)", m.KVLoRARank+m.QKRopeHeadDim))
	}
	if m.IndexerLayers > 0 {
		notes = append(notes, fmt.Sprintf("KV cache also holds the sparse-attention indexer's key (%d values per token) in %d of %d layers", m.IndexerHeadDim, m.IndexerLayers, m.Layers))
	}
	if window, n := m.SlidingLayers(); n > 0 && contextLen > window {
		notes = append(notes, fmt.Sprintf("%d of %d layers use a %d-token sliding window: their KV cache is capped at the window", n, m.Layers, window))
	}
	if n := m.CountLayers(model.Recurrent); n > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d layers keep a recurrent state per sequence instead of a per-token KV cache", n, m.Layers))
	}
	if m.MaxContext > 0 && contextLen > m.MaxContext {
		notes = append(notes, fmt.Sprintf("context %d exceeds the model's maximum %d", contextLen, m.MaxContext))
	}
	return notes
}
