// Stage 3 of planning: figures, the memory a layout needs (see the package
// comment in request.go).

package plan

import (
	"math"
	"slices"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// levelWeights is the size of a model's weights at each level a request
// plans. It is computed once per request, before the search, and passed
// down with the request: the search estimates memory at the same few levels
// hundreds of times (every pool, every probe of the inverse questions).
// quant.WeightsBytes remembers sizes across requests, so computing it costs
// a lookup per level for a model seen before.
type levelWeights struct {
	levels []quant.Level
	bytes  []int64
}

// weightsAt sizes m's weights at every level of levels, through one
// quant.Weights so that the model's tensor list is enumerated once for all
// levels (a 60 000-layer config has hundreds of thousands of tensors).
func weightsAt(m *model.Model, levels []quant.Level) levelWeights {
	w := levelWeights{levels: levels, bytes: make([]int64, len(levels))}
	sizer := quant.NewWeights(m)
	for i, l := range levels {
		w.bytes[i] = sizer.Bytes(l)
	}
	return w
}

// monotone is w without the levels whose weights are larger than a
// better level's before them: a lower-quality level that is not smaller is
// never worth planning (llama.cpp's Q2_K outweighs Q3_K_M on a model whose
// rows fall back to wider types, Qwen2.5-0.5B's 896-wide rows).
func (w levelWeights) monotone() levelWeights {
	var out levelWeights
	for i, l := range w.levels {
		if n := len(out.bytes); n > 0 && w.bytes[i] > out.bytes[n-1] {
			continue
		}
		out.levels = append(out.levels, l)
		out.bytes = append(out.bytes, w.bytes[i])
	}
	return out
}

// at is the weights size at level l: the one computed for the request, or,
// for a level the request did not plan (a caller outside choose),
// quant.WeightsBytes itself.
func (w levelWeights) at(m *model.Model, l quant.Level) int64 {
	for i, x := range w.levels {
		if x == l {
			return w.bytes[i]
		}
	}
	return quant.WeightsBytes(m, l)
}

// estimate is quant.Estimate without notes, on the request's weights, with
// the KV cache rules of the request's engine.
func (r *planning) estimate(l quant.Level, ctx, batch int) quant.Breakdown {
	return r.estimateFor(nil, l, ctx, batch)
}

// estimateFor is estimate with the KV cache rules of engine e (nil: the
// request's), the engine a pool is planned for (budget.go), its weights
// sized as that engine loads level l (engine.WeightsLevel: int4 as the
// Q4_K_M file llama.cpp's command loads, where llama.cpp is the default
// engine as where it is named), plus what the published file it loads
// holds beyond them (fileExtra).
func (r *planning) estimateFor(e engine.Engine, l quant.Level, ctx, batch int) quant.Breakdown {
	if e == nil {
		e = r.requestEngine()
	}
	wl := engine.WeightsLevel(e, l)
	b := quant.EstimateWith(r.Model, r.weights.at(r.Model, wl)+r.fileExtra(e, wl), ctx, batch, r.kvOptionsAt(e, l))
	b.FileExperts = r.fileExperts(e, wl)
	return b
}

// kvOptionsAt is the KV cache storage of the request on engine e (nil:
// the request's) with weights at level l: kvOptionsFor under the engine's
// level rules (engine.KVRulesAt: SGLang's --kv-cache-dtype auto is 4-byte
// values beside fp32 weights). vLLM's 4-byte cache is counted in its
// start-up charge instead (vllmCharge.KVScale), which scales this estimate.
func (r *planning) kvOptionsAt(e engine.Engine, l quant.Level) quant.KVOptions {
	if e == nil {
		e = r.requestEngine()
	}
	return engine.KVRulesAt(e, r.kvOptionsFor(e), r.KVCacheDType, l)
}

// costs is the memory model of one model at one level, split so that layers
// can be placed: per-layer weights and KV, embedding and output head (on the
// first and last pipeline stage), and the per-device activations and
// runtime overhead.
type costs struct {
	Layers       int
	LayerWeights float64 // bytes of one transformer block's weights
	LayerKV      float64 // bytes of one layer's KV cache (all sequences)
	EmbedIn      float64 // token embedding, on the first stage
	EmbedOut     float64 // output head, on the last stage (0 when tied)
	Activations  int64   // working buffers, on every device
	Overhead     int64   // runtime overhead, on every device
	// GPUActivations is the working buffer on an accelerator when the
	// engine's differs from its host figure (quant.Breakdown
	// GPUActivationsBytes; 0: Activations).
	GPUActivations int64
	// HostEmbedIn: EmbedIn stays in host memory (the engine's rule,
	// engine.Memory.HostTokenEmbeddings); no stage on an accelerator holds
	// it.
	HostEmbedIn bool
	// TiedOut: the output head is the token embedding (tied). llama.cpp
	// then creates the output layer's weight as a second copy of
	// token_embd in the output layer's buffer (create_tensor(token_embd,
	// TENSOR_DUPLICATED) when the file has no output tensor:
	// src/models/llama.cpp, qwen3.cpp, ... of ggml-org/llama.cpp @
	// 34af94cd), so an engine keeping the
	// embedding in host memory (HostEmbedIn) holds it again on the device
	// of the last layer: the H200 logs of Llama-3.2-1B and Qwen3-0.6B
	// (internal/calibration/data/llamacpp-cuda-h200-memory, 34af94cd)
	// list the whole file on CUDA0 and token_embd once more on the host.
	TiedOut bool
	// Vision is the vision tower every stage holds, split over its
	// tensor-parallel ranks, when the pool's engine loads it beside the
	// language model (budget.Vision; costs.on); 0 otherwise. visionBytes
	// is the tower at the level (quant.VisionBytes), whatever the engine.
	// VisionWhole is the part of Vision each rank holds whole
	// (quant.VisionWholeBytes), visionWholeBytes its figure at the level.
	Vision, visionBytes           float64
	VisionWhole, visionWholeBytes float64
	// visionArch is the model's type (model.Model.Architecture), which an
	// engine's default launch may serve without its tower
	// (budget.VisionOff).
	visionArch string
	// FirstExtra is what the first device of the first stage holds beside
	// its layers (a draft model, a projector: companions.go), HostExtra
	// what stays in host memory.
	FirstExtra, HostExtra float64
	Heads                 int
	KVHeads               int
	// SplitBlock is the side of the tiles the loaded checkpoint stores its
	// weights in (quant.WeightBlock; 0: none, or a pool whose engine
	// loads them whatever the split) and SplitWidths the FFN widths
	// tensor parallelism splits (model.Model.TPSplitWidths): a
	// tensor-parallel size must leave every rank whole tiles of each
	// (validTP), or the engine refuses to load the checkpoint (SplitWhy,
	// engine.Parallelism.BlockSplitRefusal; SplitEP its expert-parallel
	// flag).
	SplitBlock        int
	SplitWidths       []int
	SplitWhy, SplitEP string
	Breakdown         quant.Breakdown // the single-replica estimate
	ActiveRatio       float64         // the weights' share a decode step reads: active / total parameters (MoE < 1), or bytes in a stored layout (quant.ActiveShare)
	// ExpertLayerWeights is the bytes of one MoE layer's routed experts
	// (0 for a dense model), ExpertActive the share of them a token reads
	// (experts per token / experts) and DenseLayers the leading layers
	// without experts: what llama.cpp's --n-cpu-moe moves to host memory
	// (moeoffload.go).
	ExpertLayerWeights float64
	ExpertActive       float64
	DenseLayers        int
	// ExpertShares is the share of a layer's routed experts in each of its
	// expert tensors, in the order llama.cpp's --fit moves them (down, gate,
	// up; expertTensorNames).
	ExpertShares [3]float64
	// ExpertPrefix and ExpertTensors, where every layer holds routed
	// experts whose tensors' types are known (setExpertsByLayer), are the
	// routed-expert bytes of the first i layers at index i and each
	// layer's expert tensors' bytes in ExpertShares' order; nil otherwise,
	// when every MoE layer holds ExpertLayerWeights in ExpertShares.
	ExpertPrefix  []float64
	ExpertTensors [][3]float64
	// Latent: the model caches an MLA latent (kv_lora_rank), which SGLang's
	// default fraction reserves more for (engine.Memory.FractionAt).
	Latent bool
	// VLLM, when set, is vLLM's start-up rule (vllmcharge.go): on a pool of
	// accelerators planned for vLLM (costs.on) each device is charged
	// vLLM's own start-up profile instead of Activations and Overhead, and
	// one sequence's KV cache as vLLM checks it.
	VLLM *vllmCharge
	// Context is the context the costs were made for (costsOf; 0:
	// unknown), Static SGLang's pool rule on the pool they are on
	// (costs.on, sglangfit.go).
	Context int
	Static  *staticRule
	// HostKVPool, on a host-memory pool whose engine names its KV pool
	// (engine.HostKVPooler, vLLM's VLLM_CPU_KVCACHE_SPACE; costs.on), is
	// that pool for the room a stage leaves: the stage's KV cache must fit
	// it, not only the room (stageFits), in whole blocks of HostKVBlock
	// tokens a sequence (hostKVNeed).
	HostKVPool  func(room int64) int64
	HostKVBlock int
	// HostKVEngine and HostKVSetting name the engine and the setting
	// that sizes that pool (engine.HostKVPooler.HostKVPoolSetting), for
	// a refusal (hostKVShortLine).
	HostKVEngine, HostKVSetting string
	// Loaded is the model and the bits of its stored values (costsOf),
	// for the weights as SGLang measures them (stagePart).
	Loaded loadedWeights
}

// loadedWeights is what the weights as an engine measures them depend on
// beside the layers and the tensor-parallel size.
type loadedWeights struct {
	Model     *model.Model
	ValueBits float64
}

// newCosts splits a quant.Estimate over layers. Embedding and head are sized
// as a checkpoint's stored layout at l keeps them (quant.StoredEmbeddingBytes:
// 16-bit unless it quantizes the head), else at the level's bits per weight,
// when the vocabulary and hidden size are known (and are at most a third of
// the weights, a guard against a shape that disagrees with the count);
// otherwise all weights are per layer.
func newCosts(m *model.Model, b quant.Breakdown, l quant.Level) costs {
	c := costs{Layers: m.Layers, Activations: b.ActivationsBytes, Overhead: b.OverheadBytes, GPUActivations: b.GPUActivationsBytes,
		Heads: m.Heads, KVHeads: m.EffectiveKVHeads(), Breakdown: b, ActiveRatio: 1, Latent: m.KVLoRARank > 0,
		FirstExtra: float64(b.CompanionGPUBytes), HostExtra: float64(b.CompanionHostBytes),
		visionBytes: float64(quant.VisionBytes(m, l)), visionWholeBytes: float64(quant.VisionWholeBytes(m, l)), visionArch: m.Architecture}
	if c.Layers <= 0 {
		c.Layers = 1
	}
	if blk := quant.WeightBlock(m, l); blk > 0 {
		c.SplitBlock, c.SplitWidths = blk, m.TPSplitWidths()
	}
	if m.Params > 0 && m.ActiveParams > 0 && m.ActiveParams < m.Params {
		c.ActiveRatio = float64(m.ActiveParams) / float64(m.Params)
	}
	if r, ok := quant.ActiveShare(m, l); ok {
		// A checkpoint's stored layout gives its parts different widths
		// (Kimi's bf16 attention beside int4 experts): the bytes a step
		// reads, not the parameters' share of them.
		c.ActiveRatio = r
	}
	w := float64(b.WeightsBytes)
	if m.Vocab > 0 && m.Hidden > 0 {
		e := float64(m.Vocab) * float64(m.Hidden) * l.BitsPerWeight() / 8
		c.EmbedIn = e
		if !m.TieEmbeddings {
			c.EmbedOut = e
		}
		if in, out, ok := quant.StoredEmbeddingBytes(m, l); ok {
			c.EmbedIn, c.EmbedOut = in, out
		}
		if c.EmbedIn+c.EmbedOut > w/3 {
			c.EmbedIn, c.EmbedOut = 0, 0
		}
		c.TiedOut = m.TieEmbeddings && c.EmbedIn > 0
	}
	c.LayerWeights = (w - c.EmbedIn - c.EmbedOut) / float64(c.Layers)
	c.setExperts(m, l, b.FileExperts)
	c.LayerKV = float64(b.KVCacheBytes) / float64(c.Layers)
	return c
}

// on is c for pool p: the runtime overhead of one device of its kind (a
// CPU holds no GPU context, quant.HostOverheadBytes; an accelerator the
// engine's own figure where it has one), the engine's working buffer on an
// accelerator, the token embedding kept in host memory where the engine
// keeps it there, and the vision tower where the engine loads it beside
// the language model (not where its default launch serves the model
// text-only without one: SGLang's Llama 4, budget.VisionOff).
func (c costs) on(p *pool) costs {
	c.VLLM = c.VLLM.onPool(p)
	par := p.Budget.Engine.Parallelism()
	c.SplitWhy, c.SplitEP = par.BlockSplitRefusal, par.ExpertParallel
	if c.SplitWhy == "" {
		c.SplitBlock = 0
	}
	c.Static = staticRuleOn(p, c.Context)
	c.Vision, c.VisionWhole = 0, 0
	if p.Budget.Vision && !slices.Contains(p.Budget.VisionOff, c.visionArch) {
		c.Vision, c.VisionWhole = c.visionBytes, c.visionWholeBytes
	}
	if p.Kind == registry.KindCPU {
		c.Overhead = quant.HostOverheadBytes
		if k, ok := p.Budget.Engine.(engine.HostKVPooler); ok {
			c.HostKVPool, c.HostKVBlock = k.HostKVPoolBytes, k.HostKVBlockTokens()
			c.HostKVEngine, c.HostKVSetting = p.Budget.Engine.Title(), k.HostKVPoolSetting()
		}
		return c
	}
	if p.Budget.Overhead > 0 {
		c.Overhead = p.Budget.Overhead
	}
	if c.GPUActivations > 0 {
		c.Activations = c.GPUActivations
	}
	c.HostEmbedIn = p.Budget.HostEmbeddings
	return c
}

// hostBytes is what a plan under c keeps in host memory beside its
// accelerators: the token embedding when the engine keeps it there.
func (c costs) hostBytes() int64 {
	h := c.HostExtra
	if c.HostEmbedIn {
		h += c.EmbedIn
	}
	return int64(math.Ceil(h))
}

// kvSplit is how many ways a TP group of n divides the KV cache: n, or the
// number of KV heads when there are fewer (each device then holds one head
// replicated, as vLLM does). An MLA latent is one head whatever the query
// heads: every rank keeps a token's whole kv_lora_rank + qk_rope_head_dim
// (and a DSA model's indexer key), so it is not divided. vLLM builds its
// cache from MLAAttentionSpec(num_kv_heads=1) in MLAAttention.
// get_kv_cache_spec (vllm/model_executor/layers/attention/mla_attention.py
// at vllm-project/vllm 90b0a26e) and ModelConfig.get_num_kv_heads returns
// 1 under use_mla (vllm/config/model.py at 18ec6629); SGLang sizes its
// pool by get_cell_size_per_token, whose MLA branch is (kv_lora_rank +
// qk_rope_head_dim) x layers x bytes with no TP term (python/sglang/srt/
// model_executor/model_runner_kv_cache_mixin.py at sgl-project/sglang
// 226149ac). Only vLLM's --decode-context-parallel-size (max_model_len
// over the DCP size, FullAttentionSpec.max_memory_usage_bytes in
// vllm/v1/kv_cache_interface.py at 001cabc1) and SGLang's
// --enable-dp-attention (each rank serves its own requests), both off by
// default and neither planned, spread an MLA cache over ranks.
func (c *costs) kvSplit(n int) float64 {
	if c.Latent {
		return 1
	}
	if c.KVHeads > 0 && c.KVHeads < n {
		return float64(c.KVHeads)
	}
	return float64(n)
}

// part is one device's memory in a plan, by component.
type part struct {
	Weights, KV, Activations, Overhead int64
}

func (p part) total() int64 { return p.Weights + p.KV + p.Activations + p.Overhead }

// stagePart is the memory of each device of a stage holding layers
// [start, end) split tp ways.
func (c *costs) stagePart(start, end, tp int) part {
	w := float64(end-start) * c.LayerWeights
	if start == 0 && !c.HostEmbedIn {
		w += c.EmbedIn
	}
	if start == 0 && end > start {
		// Whole on the first device; a tensor-parallel stage is charged it
		// on each of its devices (their parts are one figure).
		w += c.FirstExtra * float64(tp)
	}
	if end == c.Layers {
		w += c.EmbedOut
		if c.TiedOut && c.HostEmbedIn {
			w += c.EmbedIn
		}
	}
	if end > start {
		// Every stage builds the tower (vLLM and SGLang construct it
		// whatever the pipeline rank), its linear layers split over the
		// stage's ranks and its whole part (model.Model.VisionWholeParams) on each
		// (engine.Memory.VisionInProcess; charged tp times, as FirstExtra).
		w += c.Vision - c.VisionWhole + c.VisionWhole*float64(tp)
	}
	kv := c.VLLM.stageKV(float64(end-start)*c.LayerKV/c.kvSplit(tp), start, end, c.Layers, tp, c.kvSplit(tp))
	p := part{Weights: int64(math.Ceil(w / float64(tp))), KV: int64(math.Ceil(kv)),
		Activations: c.Activations, Overhead: c.Overhead}
	if c.VLLM != nil && len(c.VLLM.GPUs) > 0 {
		// Weights as vLLM loads them: its Marlin MXFP4 backend pads the
		// experts ("Model loading took" counts the padding).
		p.Weights += c.VLLM.moePadding(start, end, tp)
		if end > start {
			p.Weights += c.vllmVisionBuffers(tp) + c.vllmRopeCache()
		}
		st, charge, _ := c.VLLM.chargeWith(tp, p.Weights)
		p.Activations, p.Overhead = st.ActivationBytes, charge-st.ActivationBytes
	}
	if c.Static != nil && c.Loaded.Model != nil {
		// Weights as SGLang measures them: from the device's free memory,
		// PyTorch's allocator rounding included.
		p.Weights += engine.SGLangAllocatorRoundingBytes(c.Loaded.Model, c.Loaded.ValueBits, tp, start, end)
	}
	return p
}

// estimateSane is quant.Estimate (without notes, which planning does not
// use) with a sanity check: false when a component is negative or above
// maxPlanBytes (an overflow, or no machine holds it). The weights are the
// request's, computed once (levelWeights): they depend on the level only.
func estimateSane(req *planning, l quant.Level, ctx, batch int) (quant.Breakdown, bool) {
	return estimateSaneOn(req, nil, l, ctx, batch)
}

// estimateSaneOn is estimateSane for a plan on pool p (nil: the request's
// engine): the KV cache follows the rules of the engine p is planned for.
func estimateSaneOn(req *planning, p *pool, l quant.Level, ctx, batch int) (quant.Breakdown, bool) {
	var e engine.Engine
	if p != nil {
		e = p.Budget.Engine
	}
	b := req.estimateFor(e, l, ctx, batch)
	b.CompanionGPUBytes, b.CompanionHostBytes = req.companions(l, ctx, batch)
	for _, v := range []int64{b.WeightsBytes, b.KVCacheBytes, b.ActivationsBytes, b.OverheadBytes, b.TotalBytes, b.CompanionGPUBytes} {
		if v < 0 || v > maxPlanBytes {
			return b, false
		}
	}
	return b, true
}

// vllmRopeCache is the rotary table vLLM's GPU worker builds on each
// device of every stage on NVIDIA and AMD GPUs (engine.VLLMRopeCacheBytes):
// 0 for other engines and on other accelerators, whose workers' tables no
// row shows (the TPU row of vllm_startup.json prints none).
func (c *costs) vllmRopeCache() int64 {
	v := c.VLLM
	if v == nil || len(v.GPUs) == 0 || v.pool == nil || (v.pool.Kind != registry.KindCUDA && v.pool.Kind != registry.KindROCm) {
		return 0
	}
	return engine.VLLMRopeCacheBytes(c.VLLM.Model, c.VLLM.ValueBytes)
}

// vllmVisionBuffers is what vLLM keeps beside the tower on each device of
// a tensor-parallel group of tp (engine.VLLMDeepstackBytes at the profile's
// max_num_batched_tokens): 0 for other engines or without a tower.
func (c *costs) vllmVisionBuffers(tp int) int64 {
	if c.Vision <= 0 || c.VLLM == nil || len(c.VLLM.GPUs) == 0 {
		return 0
	}
	return engine.VLLMDeepstackBytes(c.VLLM.Model, c.VLLM.at(tp).MaxNumBatchedTokens, c.VLLM.ValueBytes)
}
