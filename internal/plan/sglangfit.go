// SGLang's own pool in the fit: a plan for SGLang fits when the KV pool
// SGLang sizes on each device at the layout's own --mem-fraction-static
// (lower at TP > 1 and PP > 1: engine.Memory.FractionAt) and after its
// process groups (about 2 GiB per rank of an NVLinked group:
// engine.Memory.LinkedGroupBytes) holds one full-context sequence
// (staticPool, expect.go), and the rest of the device the activations
// (restHolds): engine_expect.sglang.max_total_num_tokens is then at least
// the context, and the plan's context and batch are that pool's. The
// device's budget is its whole usable memory (budget.usable), which
// SGLang divides between the two.

package plan

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// staticRule is what SGLang's pool on a stage depends on beside the
// stage: the pool's fraction rule, the process-group memory and the
// context one sequence must reach. Engine is the pool's engine, which
// names itself and the setting of its fraction in a refusal
// (staticShortLine).
type staticRule struct {
	Engine     engine.Engine
	Fraction   float64
	FractionAt func(engine.Layout) float64
	Linked     int64
	Context    int
	Kind       registry.Kind
}

// staticRuleOn is SGLang's rule for costs c on pool p: nil unless p's
// engine reserves its workspace outside its fraction (budget.
// WorkspaceOutside) on accelerators and c was made for a context
// (costsOf).
func staticRuleOn(p *pool, ctx int) *staticRule {
	if ctx <= 0 || p.Kind == registry.KindCPU || !p.Budget.WorkspaceOutside {
		return nil
	}
	return &staticRule{Engine: p.Budget.Engine, Fraction: p.Budget.Fraction, FractionAt: p.Budget.FractionAt, Linked: p.Budget.LinkedGroup,
		Context: ctx, Kind: p.Kind}
}

// fraction is SGLang's --mem-fraction-static for stage s of a layout of
// pp stages: the asked or pool fraction, else SGLang's own for the
// stage's smallest device, its TP and pp (planFraction).
func (r *staticRule) fraction(s stage, pp int, latent bool) float64 {
	if r.FractionAt == nil {
		return r.Fraction
	}
	var smallest int64
	for _, d := range s.Devices {
		if m := d.Dev.MemoryBytes; m > 0 && (smallest == 0 || m < smallest) {
			smallest = m
		}
	}
	if smallest == 0 {
		return r.Fraction
	}
	return r.FractionAt(engine.Layout{TotalBytes: smallest, Kind: r.Kind, TP: max(len(s.Devices), 1), PP: max(pp, 1), Latent: latent})
}

// staticHolds reports whether SGLang's pool on stage s of a layout of pp
// stages holds one sequence of the context: the tokens engineExpectOf
// reports for it are at least the context. True without SGLang's rule.
func (c *costs) staticHolds(s stage, pp int) bool {
	r := c.Static
	if r == nil || s.Part.KV <= 0 || len(s.Devices) == 0 {
		return true
	}
	return staticTokens(s, r.fraction(s, pp, c.Latent), r.Linked, r.Context) >= int64(r.Context)
}

// staticTokens is the tokens SGLang's pool on stage s holds at fraction,
// Part.KV being one sequence of ctx tokens on one device (fitBatch), an
// MLA model's whole latent on every rank as SGLang keeps it (kvSplit;
// get_cell_size_per_token in python/sglang/srt/model_executor/
// model_runner_kv_cache_mixin.py), page size 1.
func staticTokens(s stage, fraction float64, linked int64, ctx int) int64 {
	perToken := float64(s.Part.KV) / float64(ctx)
	return int64(float64(staticPool(s, fraction, linked)) / perToken)
}

// restHolds reports whether what SGLang leaves outside its fraction on
// stage s of a layout of pp stages, (1 - --mem-fraction-static) of the
// memory free before the weights (staticFree less staticShare), holds the
// plan's activations: SGLang runs its forward passes and captures its CUDA
// graphs there, and stops with an out-of-memory error at graph capture or
// on a long prompt when it cannot (the "Not enough memory" and capture
// failures its ModelRunner asks to lower --mem-fraction-static for). The
// plan refuses such a layout. True without SGLang's rule.
func (c *costs) restHolds(s stage, pp int) bool {
	r := c.Static
	if r == nil || len(s.Devices) == 0 {
		return true
	}
	return s.Part.Activations <= staticRest(s, r.fraction(s, pp, c.Latent), r.Linked)
}

// staticRest is what SGLang keeps outside --mem-fraction-static on each
// device of stage s: the memory free before the weights less their and the
// KV pool's share.
func staticRest(s stage, fraction float64, linked int64) int64 {
	return staticFree(s, linked) - staticShare(s, fraction, linked)
}

// stageFits is the fit of stage s of a layout of pp stages: its part
// within its budget and, for SGLang (whose budget is the whole device),
// SGLang's own division of it: its pool holding one sequence and the rest
// the activations.
func (c *costs) stageFits(s stage, pp int) bool {
	return s.Part.total() <= s.budget() && c.staticHolds(s, pp) && c.restHolds(s, pp) && c.hostKVHolds(s)
}

// hostKVHolds reports whether the KV pool a host-memory plan's engine
// names for the room stage s leaves (costs.HostKVPool: vLLM on the CPU
// rounds it down to whole GiB) holds the stage's KV cache; true where the
// engine names none.
func (c *costs) hostKVHolds(s stage) bool {
	if c.HostKVPool == nil {
		return true
	}
	return c.hostKVNeed(s.Part.KV) <= c.HostKVPool(s.budget()-s.Part.total()+s.Part.KV)
}

// hostKVHoldsTogether reports whether the one KV pool a host-memory plan's
// engine names for all of stages holds each stage's KV cache: vLLM's
// VLLM_CPU_KVCACHE_SPACE is one value for every rank (engine/vllmcpu.go),
// the whole GiB of the least room any stage leaves (hostKVRoom), so a
// stage with more room than another cannot use it. true where the engine
// names no pool or there is one stage (hostKVHolds checks it).
func (c *costs) hostKVHoldsTogether(stages []stage) bool {
	if c.HostKVPool == nil || len(stages) < 2 {
		return true
	}
	room := int64(-1)
	for _, s := range stages {
		if r := s.budget() - s.Part.total() + s.Part.KV; room < 0 || r < room {
			room = r
		}
	}
	pool := c.HostKVPool(room)
	for _, s := range stages {
		if c.hostKVNeed(s.Part.KV) > pool {
			return false
		}
	}
	return true
}

// hostKVNeed is a KV cache of kv bytes (sequences of c.Context tokens) as
// a host pool of c.HostKVBlock-token blocks holds it: each sequence in
// whole blocks, as vLLM checks --max-model-len against its pool
// (engine.HostKVPooler); kv where the block or the context is unknown.
func (c *costs) hostKVNeed(kv int64) int64 {
	b := c.HostKVBlock
	if b <= 1 || c.Context <= 0 {
		return kv
	}
	blocks := (c.Context + b - 1) / b * b
	return int64(math.Ceil(float64(kv) * float64(blocks) / float64(c.Context)))
}

// staticShortLine says, for a refused tensor-parallel group of SGLang,
// what SGLang's own pool on it would hold against one sequence, when the
// plan's split fits but the pool does not ("" otherwise), in the engine's
// words for itself and its fraction (engine.BudgetSetting).
func staticShortLine(g []*device, c costs) string {
	r := c.Static
	if r == nil || len(g) == 0 {
		return ""
	}
	s := stage{Devices: g, Start: 0, End: c.Layers, Part: c.stagePart(0, c.Layers, len(g))}
	if s.Part.total() > s.budget() || c.staticHolds(s, 1) {
		return ""
	}
	f := r.fraction(s, 1, c.Latent)
	setting := engine.BudgetSetting(r.Engine, engine.Memory{Fraction: f})
	return fmt.Sprintf("%s's %s at TP %d leaves each device %s of KV pool once its CUDA context, process groups and weights are in: %d tokens, fewer than one sequence of %d",
		r.Engine.Title(), setting, len(g), gib(staticPool(s, f, r.Linked)), max(staticTokens(s, f, r.Linked, r.Context), 0), r.Context)
}

// staticShareLine says, for a refused plan of SGLang, how SGLang divides
// device d (the largest of the pool) with need on it: the share its
// --mem-fraction-static gives the weights and its KV pool once its CUDA
// context is in (staticShare), and the rest it leaves its activations and
// CUDA graphs (staticRest), in the engine's words for itself and its
// fraction (engine.BudgetSetting); "" without SGLang's rule. The need
// counts all four parts against the device's free memory, which SGLang
// uses whole (budget.usable), so without this line a model whose weights
// fill SGLang's share read as fitting the free memory.
func staticShareLine(d *device, c costs, need part) string {
	r := c.Static
	if r == nil {
		return ""
	}
	s := stage{Devices: []*device{d}, Start: 0, End: c.Layers, Part: need}
	f := r.fraction(s, 1, c.Latent)
	setting := engine.BudgetSetting(r.Engine, engine.Memory{Fraction: f})
	return fmt.Sprintf("%s's %s gives the weights and its KV pool %s of it once its CUDA context is in, and leaves the rest (%s) to its activations and CUDA graphs",
		r.Engine.Title(), setting, gib(staticShare(s, f, r.Linked)), gib(staticRest(s, f, r.Linked)))
}

// hostKVShortLine says, for a refused plan on one host device whose whole
// need fits the device but whose KV cache does not fit the pool its engine
// names (hostKVHolds), what that pool holds, named as the engine names it
// (costs.HostKVEngine, HostKVSetting: vLLM's VLLM_CPU_KVCACHE_SPACE), in
// whole GiB. "" otherwise.
func hostKVShortLine(d *device, c costs, need part) string {
	if c.HostKVPool == nil || need.total() > d.Usable {
		return ""
	}
	room := d.Usable - need.total() + need.KV
	pool := c.HostKVPool(room)
	kv := c.hostKVNeed(need.KV)
	if kv <= pool {
		return ""
	}
	return fmt.Sprintf("%s's CPU KV cache is %s in whole GiB: the %s left beside the weights and activations give %d GiB, less than the KV cache's %s",
		c.HostKVEngine, c.HostKVSetting, gib(room), pool>>30, gib(kv))
}

// offloadCopyShortClause says, for a refused cpu_offload request at level
// l, when the copy of one offloaded layer is why offloading did not help
// on a pool of accel: its engine copies an offloaded layer to the GPU in
// that layer's forward pass (par.OffloadCopiedPerPass: SGLang) and keeps
// it beside the activations outside its KV pool (streamedGPUPart), and
// with every layer but one offloaded, the most the GPU can shed, the rest
// holds the activations but not them and the copy. The refusal's own
// figures are of the plan without offload, whose activations fit that
// rest (Qwen2.5-14B at bf16 on an RTX 4090 at --mem-fraction-static 0.974:
// activations 0.4 GiB, rest 0.6 GiB, copy 0.5 GiB), so without this clause
// nothing said why. "" otherwise.
func offloadCopyShortClause(req *planning, accel []*pool, l quant.Level) string {
	for _, p := range accel {
		if line := offloadCopyShortOn(req, p, l); line != "" {
			return line
		}
	}
	return ""
}

// offloadCopyShortOn is offloadCopyShortClause on pool p.
func offloadCopyShortOn(req *planning, p *pool, l quant.Level) string {
	if p.Budget.Engine == nil || !p.Budget.Engine.Parallelism().OffloadCopiedPerPass || len(p.Devices) == 0 || req.Model.Layers < 2 {
		return ""
	}
	b, sane := estimateSaneOn(req, p, l, req.ContextLength, fitBatch(p, req.BatchSize))
	if !sane {
		return ""
	}
	c := req.costsOf(b, p.sizedAs(l), req.ContextLength, req.BatchSize).on(p)
	if c.Static == nil || c.LayerWeights <= 0 {
		return ""
	}
	off := int64(float64(c.Layers-1) * c.LayerWeights)
	s := stage{Devices: []*device{largestDevice(p)}, Start: 0, End: c.Layers, Part: streamedGPUPart(c, off, p.Budget.Engine.Parallelism())}
	copied := min(off, int64(c.LayerWeights))
	without := s
	without.Part.Activations -= copied
	if c.restHolds(s, 1) || !c.restHolds(without, 1) {
		return ""
	}
	f := c.Static.fraction(s, 1, c.Latent)
	return fmt.Sprintf("; offloaded, %s's %s leaves %s outside its KV pool, less than the activations (%s) and the copy of one offloaded layer (%s) its forward pass makes there",
		c.Static.Engine.Title(), engine.BudgetSetting(c.Static.Engine, engine.Memory{Fraction: f}), gib(staticRest(s, f, c.Static.Linked)), gib(without.Part.Activations), gib(copied))
}
