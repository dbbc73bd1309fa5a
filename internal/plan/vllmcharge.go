// vLLM's own start-up accounting in the fit: a plan for vLLM on
// accelerators fits exactly when vLLM would start it. Each device's budget
// (total x --gpu-memory-utilization, or less where less is free) must hold
// the weights, what vLLM's start-up profile charges beside them
// (engine.VLLMStartupOf: the activation peak of the profile run, the
// memory allocated outside torch and, from 0.21.0, the estimated CUDA
// graphs; on TPU and Gaudi their backends' own rules, engine.VLLMBackend
// and VLLMStartup.Charge) and one sequence of --max-model-len tokens of KV
// cache as vLLM checks it (_check_enough_kv_cache_memory in
// vllm/v1/core/kv_cache_utils.py:
// whole blocks of vllmCharge.blockTokens (16, 128 on Gaudi), a sliding-window layer at its window
// plus one --max-num-batched-tokens step in vLLM's groups on GPUs
// (windowKVScale), at the whole length elsewhere, a hybrid model in vLLM's
// hybrid layout (layoutKVScale), the cache in the model's dtype). The fit, the maxima, the chosen context,
// the serving placement, the memory breakdown and engine_expect.vllm all
// read the charge from here (costs.stagePart).

package plan

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// vllmCharge is what a request's vLLM start-up profile depends on besides
// the GPU and the tensor-parallel size: the model, the release, the
// context (--max-model-len) and --max-num-seqs.
type vllmCharge struct {
	Model       *model.Model
	Version     engine.Version
	MaxModelLen int
	// MaxNumSeqs is the batch a plan emits as --max-num-seqs (0: vLLM's
	// default, which a plan of one sequence leaves).
	MaxNumSeqs int
	// KVScale is one sequence's KV cache as vLLM checks it over the
	// planner's estimate of it: --max-model-len rounded up to whole blocks
	// and, for fp32 weights with --kv-cache-dtype auto (engine.VLLMAutoCache), a cache of 4-byte
	// values (vllmTokenScale); on a pool of GPUs, for a model with
	// sliding-window layers, vLLM's layout of them (onPool, windowKVScale).
	KVScale float64
	// ValueBytes is the width of the model's 16-bit (4 at fp32) values,
	// which vLLM's buffers beside the weights take
	// (engine.VLLMDeepstackBytes).
	ValueBytes int
	// dtypeScale is the fp32 part of KVScale; kvOptions the cache the
	// planner's estimate is of (both for windowKVScale), under the rules
	// of the pool's engine (onPool): kvFor is the request's cache under an
	// engine's rules (planning.kvOptionsFor), fp32Cache a cache of 4-byte
	// values (fp32 weights, --kv-cache-dtype auto: engine.VLLMAutoCache).
	dtypeScale float64
	kvOptions  quant.KVOptions
	kvFor      func(engine.Engine) quant.KVOptions
	fp32Cache  bool
	// windowScale is the part of KVScale that layoutKVScale adds (0 or 1:
	// none): vLLM holds it for a request, a decode step does not read it
	// (readKV). baseScale is KVScale without it.
	windowScale, baseScale float64
	// hybrid: KVScale is vLLM's hybrid layout, which depends on the
	// tensor-parallel size (scaleAt).
	hybrid bool
	// MXFP4 is a plan at mxfp4: the MoE experts load as MXFP4, which some
	// GPUs' backends pad (engine.VLLMStartup.MoEPaddingBytesPerLayer).
	MXFP4 bool
	// GPUs are one device of each distinct GPU of the pool the costs are
	// on (set by costs.on: pool.distinctGPUs); the charge is the largest
	// of theirs. Graphs: the pool's GPUs run vLLM's CUDA graphs.
	GPUs   []*device
	Graphs bool
	// Backend is the vLLM worker of the pool's kind (vllmBackendOf).
	Backend engine.VLLMBackend
	pool    *pool // the pool GPUs are of
}

// vllmVersion is the vLLM release a request plans for: its engine_version,
// else engine.VLLMDefaultVersion, parsed on the first call of a planning
// (a regular expression per cost made it a tenth of a plan's time).
func vllmVersion(req *planning) engine.Version {
	if req.vllm == nil {
		v, err := engine.ParseVersion(req.EngineVersion)
		if req.EngineVersion == "" || err != nil { // Validate refused a bad one
			v, _ = engine.ParseVersion(engine.VLLMDefaultVersion)
		}
		req.vllm = &v
	}
	return *req.vllm
}

// costsOf is newCosts of estimate b at level l for a plan of ctx tokens
// per sequence serving seqs sequences per replica, with vLLM's start-up
// rule, which costs.on applies on a pool of accelerators planned for vLLM.
func (r *planning) costsOf(b quant.Breakdown, l quant.Level, ctx, seqs int) costs {
	c := newCosts(r.Model, b, l)
	if r.training || ctx <= 0 {
		return c
	}
	c.Context = ctx
	c.Loaded = loadedWeights{Model: r.Model, ValueBits: math.Floor(l.BitsPerWeight())}
	v := &vllmCharge{Model: r.Model, Version: vllmVersion(r), MaxModelLen: ctx, KVScale: 1, MXFP4: l == quant.MXFP4, ValueBytes: 2,
		kvFor: r.kvOptionsFor, fp32Cache: engine.VLLMAutoCache(r.KVCacheDType) && l == quant.FP32}
	if l == quant.FP32 {
		v.ValueBytes = 4
	}
	if seqs > 1 {
		v.MaxNumSeqs = seqs
	}
	c.VLLM = v
	return c
}

// poolReadShare is what a decode step reads of one sequence over its KV
// cache under o where the engine sizes its pools by its own rules
// (quant.KVOptions.WindowTokensRatio and StatePoolRatio: SGLang's): the
// window layers' windows, the attention layers' tokens and the sequence's
// recurrent state, as the planner's cache counts them; 1 otherwise.
func poolReadShare(m *model.Model, ctx int, o quant.KVOptions) float64 {
	if o.WindowTokensRatio <= 0 && o.StatePoolRatio <= 0 {
		return 1
	}
	kept := quant.KVCacheBytes(m, ctx, 1, o)
	o.WindowTokensRatio, o.StatePoolRatio = 0, 0
	read := quant.KVCacheBytes(m, ctx, 1, o)
	if kept <= 0 || read <= 0 {
		return 1
	}
	return float64(read) / float64(kept)
}

// cacheDTypeScale is the KV cache of one sequence vLLM allocates for v's
// model over the planner's estimate of it under v.kvOptions: a cache of
// 4-byte values for fp32 weights with --kv-cache-dtype auto (fp32Cache),
// else 1.
func (v *vllmCharge) cacheDTypeScale() float64 {
	if !v.fp32Cache {
		return 1
	}
	o := v.kvOptions
	plan := quant.KVCacheBytes(v.Model, v.MaxModelLen, 1, o)
	if plan <= 0 {
		return 1
	}
	o.Bytes = 4
	return float64(quant.KVCacheBytes(v.Model, v.MaxModelLen, 1, o)) / float64(plan)
}

// onPool is v for the GPUs of pool p: nil unless p's engine charges its
// start-up profile (budget.ProfiledStartup: vLLM) and its devices are
// accelerators; the cache is the one the planner estimates under that
// engine's rules. The distinct GPUs are listed once per pool (a pool of
// thousands of identical devices has one).
func (v *vllmCharge) onPool(p *pool) *vllmCharge {
	if v == nil || p.Kind == registry.KindCPU || p.Budget.Engine == nil || !p.Budget.ProfiledStartup {
		return nil
	}
	if v.pool == p {
		return v
	}
	out := *v
	out.kvOptions = v.kvFor(p.Budget.Engine)
	out.dtypeScale = out.cacheDTypeScale()
	out.pool, out.GPUs = p, p.distinctGPUs()
	out.Graphs = p.Kind == registry.KindCUDA || p.Kind == registry.KindROCm
	out.Backend = vllmBackendOf(p.Kind)
	out.windowScale, out.hybrid = 0, false
	// A sequence holds whole blocks of the backend's size.
	out.KVScale = float64(out.blocksOf(v.MaxModelLen)) / float64(v.MaxModelLen) * out.dtypeScale
	if w, ok := out.layoutKVScale(); ok {
		out.baseScale = float64(out.blocksOf(v.MaxModelLen)) / float64(v.MaxModelLen) * out.dtypeScale
		out.KVScale = w * out.dtypeScale
		out.windowScale = out.KVScale / out.baseScale
	}
	return &out
}

// scaleAt is KVScale for the cache of one of tp ranks, the planner's
// estimate of which is its whole over split (costs.kvSplit): for a hybrid
// model vLLM's layout at tp (the state and the heads split over the
// ranks, the block raised to hold one rank's state: hybridKVScale).
func (v *vllmCharge) scaleAt(tp int, split float64) float64 {
	if !v.hybrid || tp <= 1 {
		return v.KVScale
	}
	h, ok := v.hybridScale(tp, split)
	if !ok {
		return v.KVScale
	}
	return h * v.dtypeScale
}

// readKV is the part of kv bytes of KV cache as vLLM checks it, on one of
// tp ranks (split: scaleAt), that a decode step reads: without what a
// window layer holds beyond its window for a prompt step, nor a hybrid's
// padding (windowScale).
func (v *vllmCharge) readKV(kv float64, tp int, split float64) float64 {
	if v == nil || v.windowScale <= 0 {
		return kv
	}
	return kv / (v.scaleAt(tp, split) / v.baseScale)
}

// windowKVScale is one sequence's KV cache as vLLM checks it over the
// planner's estimate for a model with sliding-window layers on GPUs
// (engine.VLLMWindowLayoutOf): vLLM needs the blocks of a request at
// --max-model-len in each group, a window group holding its window plus
// one --max-num-batched-tokens step and a block
// (_max_memory_usage_bytes_from_groups and SlidingWindowSpec in vLLM),
// where the planner counts a window layer at its window; false for other
// models, backends and releases. The step is the largest of the pool's
// GPUs' defaults.
func (v *vllmCharge) windowKVScale() (float64, bool) {
	return v.windowSpanScale(0, 0, 0)
}

// windowSpanScale is windowKVScale for the layers [start, end) of a model
// of layers layers (end 0: all of them), the layers one pipeline stage
// holds: vLLM lays out each stage's own layers in groups
// (engine.VLLMWindowSetup's Start and End, as engine_expect's
// vllmWindowLayout), where the planner counts each layer at the model's
// average (costs.LayerKV), so a stage holding more full-attention layers
// than its share needs more than the whole-model scale gives it.
func (v *vllmCharge) windowSpanScale(start, end, layers int) (float64, bool) {
	if v.Backend != engine.VLLMBackendGPU {
		return 0, false
	}
	batched := 0
	for _, d := range v.GPUs {
		batched = max(batched, engine.VLLMStartupOf(v.Model, v.setup(d, 1)).MaxNumBatchedTokens)
	}
	o := v.kvOptions
	bytes := o.Bytes
	if bytes <= 0 {
		bytes = 2 // quant.KVOptions' default
	}
	l, ok := engine.VLLMWindowLayoutOf(v.Model, engine.VLLMWindowSetup{Version: v.Version, TP: 1, MaxModelLen: v.MaxModelLen,
		MaxNumBatchedTokens: batched, KVBytes: bytes, Start: start, End: end})
	plan := float64(quant.KVCacheBytes(v.Model, v.MaxModelLen, 1, o))
	if end > 0 && layers > 0 {
		plan *= float64(end-start) / float64(layers) // the stage's share, as stagePart counts it
	}
	if !ok || plan <= 0 {
		return 0, false
	}
	need := float64(l.PageBytes) * float64(l.LayersPerGroup) * float64(l.BlocksPerRequest())
	return need / plan, true
}

// layoutKVScale is one sequence's KV cache as vLLM checks it and counts
// it in its concurrency, over the planner's estimate, for a model whose
// cache vLLM lays out other than the planner counts it; false where the
// two agree. The same layouts make engine_expect's figures
// (engineExpectOf), so the plan's fit, its max_batch_size and the
// concurrency it headlines are one computation:
//   - on GPUs, a model with sliding-window layers in vLLM's groups
//     (windowKVScale);
//   - a model with recurrent layers beside attention, in vLLM's hybrid
//     layout (hybridScale: the attention block raised to hold a state,
//     the state padded to the attention page, layers in groups of equal
//     size), at TP 1 here and at the plan's tensor-parallel size where a
//     part is made (scaleAt);
//   - otherwise every attention layer at the whole length
//     (fullLengthScale), sliding-window ones included: vLLM-Gaudi's
//     runner gives every decoder attention layer a FullAttentionSpec
//     (get_kv_cache_spec in vllm_gaudi/v1/worker/hpu_model_runner.py,
//     "TODO: Support other attention modules, e.g., sliding window", at
//     vllm-project/vllm-gaudi tags v0.19.0 (da9f1820) to v0.27.0rc0
//     (d01a3cae); no SlidingWindowSpec in any of its history), the v0
//     workers of HabanaAI/vllm-fork print the blocks x block size over
//     the length (vllm/executor/executor_base.py), vLLM's TPU backend
//     puts every layer in one group (vllmWindowLayout), and on GPUs a
//     window model whose layout VLLMWindowLayoutOf does not follow is
//     counted so in engine_expect too.
func (v *vllmCharge) layoutKVScale() (float64, bool) {
	if len(v.GPUs) == 0 || v.MaxModelLen <= 0 {
		return 0, false
	}
	if w, ok := v.windowKVScale(); ok {
		return w, true
	}
	if h, ok := v.hybridScale(1, 1); ok {
		v.hybrid = true
		return h, true
	}
	full := fullLengthScale(v.Model, v.MaxModelLen, v.kvOptions)
	if full == 1 {
		return 0, false
	}
	return float64(v.blocksOf(v.MaxModelLen)) / float64(v.MaxModelLen) * full, true
}

// blockTokens is the tokens of one KV cache block vLLM allocates on v's
// backend by default: 128 on Gaudi (vllmGaudiBlockTokens), 16 elsewhere
// (vllmBlockTokens).
func (v *vllmCharge) blockTokens() int {
	if v != nil && v.Backend == engine.VLLMBackendGaudi {
		return vllmGaudiBlockTokens
	}
	return vllmBlockTokens
}

// blocksOf is ctx tokens rounded up to whole blocks (blockTokens).
func (v *vllmCharge) blocksOf(ctx int) int {
	b := v.blockTokens()
	return (ctx + b - 1) / b * b
}

// fullLengthScale is model m's KV cache of ctx tokens with every attention
// layer at the whole length over the planner's estimate under o (1 for a
// model without sliding-window layers).
func fullLengthScale(m *model.Model, ctx int, o quant.KVOptions) float64 {
	plan := quant.KVCacheBytes(m, ctx, 1, o)
	if plan <= 0 {
		return 1
	}
	o.NoSlidingWindow = true
	return float64(quant.KVCacheBytes(m, ctx, 1, o)) / float64(plan)
}

// hybridScale is one request of --max-model-len tokens on one of tp
// ranks in vLLM's hybrid layout (engine.VLLMHybridLayoutOf: its attention
// blocks and state blocks, each a page of the raised block in every layer
// of a group) over the planner's estimate of its KV cache and state on
// that rank (the whole over split); false for a model without recurrent
// layers beside attention or one the layout does not follow.
func (v *vllmCharge) hybridScale(tp int, split float64) (float64, bool) {
	return v.hybridSpanScale(tp, split, 0, 0, 0)
}

// hybridSpanScale is hybridScale for the layers [start, end) of a model
// of layers layers (end 0: all of them), one pipeline stage's: vLLM lays
// out each stage's own layers (engine.VLLMCacheSetup's Start and End, as
// engine_expect's vllmHybridLayout), where the planner counts each layer
// at the model's average.
func (v *vllmCharge) hybridSpanScale(tp int, split float64, start, end, layers int) (float64, bool) {
	if v.Model.RecurrentStateElements() == 0 {
		return 0, false
	}
	o := v.kvOptions
	bytes := o.Bytes
	if bytes <= 0 {
		bytes = 2 // quant.KVOptions' default
	}
	l, ok := engine.VLLMHybridLayoutOf(v.Model, engine.VLLMCacheSetup{Version: v.Version, TP: tp, MaxModelLen: v.MaxModelLen,
		KVBytes: bytes, ModelBytes: 2, Start: start, End: end})
	plan := float64(quant.KVCacheBytes(v.Model, v.MaxModelLen, 1, o))
	if end > 0 && layers > 0 {
		plan *= float64(end-start) / float64(layers) // the stage's share, as stagePart counts it
	}
	if !ok || plan <= 0 || split <= 0 {
		return 0, false
	}
	need := float64(l.PageBytes) * float64(l.LayersPerGroup) * float64(l.BlocksPerRequest())
	return need / (plan / split), true
}

// vllmBackendOf is the vLLM worker that sizes the KV cache on devices of
// kind k (engine.VLLMBackend): tpu-inference on TPU, the HPU worker on
// Gaudi, the GPU worker elsewhere (NVIDIA; AMD runs the same worker).
func vllmBackendOf(k registry.Kind) engine.VLLMBackend {
	switch k {
	case registry.KindTPU:
		return engine.VLLMBackendTPU
	case registry.KindGaudi:
		return engine.VLLMBackendGaudi
	}
	return engine.VLLMBackendGPU
}

// setup is the vLLM set-up of GPU d in a tensor-parallel group of tp.
func (v *vllmCharge) setup(d *device, tp int) engine.VLLMSetup {
	capability := ""
	if v.pool.Kind == registry.KindCUDA {
		capability = d.Dev.ComputeCapability
	}
	return engine.VLLMSetup{Version: v.Version, TotalBytes: d.Dev.MemoryBytes, Name: d.Dev.Name, TP: max(tp, 1),
		MaxModelLen: v.MaxModelLen, MaxNumSeqs: v.MaxNumSeqs, Graphs: v.Graphs, MXFP4Experts: v.MXFP4, Capability: capability,
		Backend: v.Backend, ValueBytes: v.ValueBytes}
}

// rule is the worker whose rule sizes the cache on the pool's GPUs
// (engine.VLLMSetup.Rule).
func (v *vllmCharge) rule() engine.VLLMBackend {
	return v.setup(v.GPUs[0], 1).Rule()
}

// at is vLLM's start-up profile on each device of a tensor-parallel group
// of tp: the one whose charge is the largest over the pool's GPUs
// (chargeWith; which one does not depend on the weights but on Gaudi,
// where only the charge does).
func (v *vllmCharge) at(tp int) engine.VLLMStartup {
	st, _, _ := v.chargeWith(tp, 0)
	return st
}

// chargeWith is vLLM's start-up charge on each device of a tensor-parallel
// group of tp holding weights bytes of weights, with the part of it kept
// for graphs (engine.VLLMStartup.Charge): the largest over the pool's
// GPUs, each at its total memory and the pool's fraction.
func (v *vllmCharge) chargeWith(tp int, weights int64) (st engine.VLLMStartup, charge, graphs int64) {
	fraction := 1.0
	if v.pool != nil {
		fraction = v.pool.Budget.Fraction
	}
	for i, d := range v.GPUs {
		s := v.setup(d, tp)
		one := engine.VLLMStartupOf(v.Model, s)
		c, g := one.Charge(s.TotalBytes, weights, fraction)
		if i == 0 || c+one.MoEPaddingBytesPerLayer > charge+st.MoEPaddingBytesPerLayer {
			st, charge, graphs = one, c, g
		}
	}
	return st, charge, graphs
}

// vllmChargeLine names the start-up charge of the pool's engine in a
// refusal: what each device of a group of tp holds beside the weights and
// the KV cache, in the engine's words (engine.StartupChargeNamer: "vLLM
// 0.21.0's start-up charge 4.5 GiB (peak activation ...)"), else as its
// title's start-up charge.
func vllmChargeLine(c costs, tp int) string {
	if c.VLLM == nil || len(c.VLLM.GPUs) == 0 || c.VLLM.pool == nil {
		return ""
	}
	st, charge, graphs := c.VLLM.chargeWith(tp, c.stagePart(0, c.Layers, tp).Weights)
	e := c.VLLM.pool.Budget.Engine
	if n, ok := e.(engine.StartupChargeNamer); ok {
		return n.StartupChargeLine(st, c.VLLM.rule(), charge, graphs)
	}
	return fmt.Sprintf("%s's start-up charge %s", e.Title(), gib(charge))
}

// scaledKV is kv bytes of KV cache, the planner's estimate on one of tp
// ranks (split: scaleAt), as vLLM checks it (vllmCharge.KVScale).
func (v *vllmCharge) scaledKV(kv float64, tp int, split float64) float64 {
	if v == nil || v.KVScale <= 0 {
		return kv
	}
	return math.Ceil(kv * v.scaleAt(tp, split))
}

// stageKV is scaledKV for the cache of a device of a pipeline stage
// holding layers [start, end) of layers: a hybrid or sliding-window model
// at the stage's own layout (hybridSpanScale, windowSpanScale), the whole
// model's scale otherwise and for a stage of every layer.
func (v *vllmCharge) stageKV(kv float64, start, end, layers, tp int, split float64) float64 {
	if v == nil || v.windowScale <= 0 || end <= start || (start == 0 && end == layers) {
		return v.scaledKV(kv, tp, split)
	}
	var w float64
	var ok bool
	if v.hybrid {
		w, ok = v.hybridSpanScale(tp, split, start, end, layers)
	} else {
		w, ok = v.windowSpanScale(start, end, layers)
	}
	if !ok {
		return v.scaledKV(kv, tp, split)
	}
	return math.Ceil(kv * w * v.dtypeScale)
}

// withSeqs is c with vLLM's rule for seqs sequences per replica
// (vllmCharge.MaxNumSeqs); c itself without the rule.
func (c costs) withSeqs(seqs int) costs {
	if c.VLLM == nil {
		return c
	}
	v := *c.VLLM
	v.MaxNumSeqs = 0
	if seqs > 1 {
		v.MaxNumSeqs = seqs
	}
	c.VLLM = &v
	return c
}

// refitUnits is the leading replicas of units whose stages, their parts
// made again under c, still fit their devices (the rest dropped).
func refitUnits(units [][]stage, c costs) [][]stage {
	var out [][]stage
	for _, u := range units {
		r := make([]stage, len(u))
		for i, s := range u {
			s.Part = c.stagePart(s.Start, s.End, len(s.Devices))
			if !c.stageFits(s, len(u)) {
				return out
			}
			r[i] = s
		}
		out = append(out, r)
	}
	return out
}

// kvScale is v's KVScale, 1 without the rule.
func (v *vllmCharge) kvScale() float64 {
	if v == nil || v.KVScale <= 0 {
		return 1
	}
	return v.KVScale
}

// moePadding is the bytes vLLM's MXFP4 backend adds to the experts of
// layers [start, end) on each device of a tensor-parallel group of tp
// (engine.VLLMStartup.MoEPaddingBytesPerLayer): the MoE layers among them,
// past the model's leading dense ones.
func (v *vllmCharge) moePadding(start, end, tp int) int64 {
	if v == nil || !v.MXFP4 || len(v.GPUs) == 0 {
		return 0
	}
	moe := end - max(start, v.Model.DenseLayers)
	if moe <= 0 {
		return 0
	}
	return int64(moe) * v.at(tp).MoEPaddingBytesPerLayer
}
