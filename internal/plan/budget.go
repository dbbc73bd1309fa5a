// The memory budget of a plan: which engine the plan is made for, and how
// much of each device that engine lets the model, its KV cache and its own
// buffers use. A plan, its max_context_length and max_batch_size and its
// engine_args are all made on one budget (see the package comment in
// request.go).

package plan

import (
	"fmt"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// engineRule is what a request says about engines: the engine it names (""
// for none), the memory fraction it asks for (0: the engine's default) and
// whether it points at a GGUF model file or GGUF quant type (which an
// engine may claim: engine.Device). It is comparable: pools built under one
// rule are shared (pools.go).
type engineRule struct {
	Engine   string
	Fraction float64
	GGUF     bool
	// GGUFBy names what in the request is GGUF (ggufChooser), for the
	// budget line where that choice overrides the devices' default.
	GGUFBy string
}

// engineRule is the request's rule: a training estimate is planned for no
// inference engine.
func (r *planning) engineRule() engineRule {
	if r.training {
		return engineRule{Engine: engine.NameNone, Fraction: r.MemoryFraction}
	}
	// A cache type only some engines add (llama.cpp's q8_0) chooses the
	// engine as a GGUF quant does (checkCacheTypeEngine refuses it with
	// another engine named).
	by := r.ggufChooser()
	return engineRule{Engine: r.Engine, Fraction: r.MemoryFraction, GGUF: by != "", GGUFBy: by}
}

// ggufChooser is what in the request makes it a GGUF request, in words
// ("the GGUF quant q4_k_m"), "" where nothing does: a GGUF quant type, a
// .gguf model file, a GGUF repository named as the model, or a cache type
// only some engines add.
func (r *planning) ggufChooser() string {
	switch {
	case quant.Level(r.Quant).IsGGUF():
		return "the GGUF quant " + strings.ToLower(r.Quant)
	case r.Model != nil && r.Model.Source == "gguf header":
		return "the .gguf model file"
	case namesGGUFRepository(r.Model):
		return "the GGUF repository " + r.Model.Checkpoints[r.Model.NamedCheckpoint].Repo
	case r.KVCacheDType != "" && !engine.IsCommonCacheType(r.KVCacheDType):
		return "the cache type " + r.KVCacheDType
	}
	return ""
}

// namesGGUFRepository reports whether the request named a catalog GGUF
// repository as the model (ggml-org/gemma-3-27b-it-GGUF): a GGUF model, as
// a .gguf file is, which chooses llama.cpp where no engine is named
// (docs/requests.md, engine). vLLM, the default on data-center GPUs, loads
// none of its types: the plan was a refusal.
func namesGGUFRepository(m *model.Model) bool {
	if m == nil || m.NamedCheckpoint < 0 || m.NamedCheckpoint >= len(m.Checkpoints) {
		return false
	}
	return m.Checkpoints[m.NamedCheckpoint].IsGGUF()
}

// budget is the memory rule of one pool: the engine its plans are made for
// and the share of each device that engine may use.
type budget struct {
	Engine    engine.Engine
	ByDefault bool    // the request named no engine: Engine is the default for the pool
	Fraction  float64 // of each accelerator's total memory (1: no cap)
	Margin    int64   // bytes left free on each accelerator
	// Overhead is the engine's memory on each accelerator beyond its
	// buffers (0: quant.PerDeviceOverheadBytes).
	Overhead int64
	// HostEmbeddings: the token embedding stays in host memory.
	HostEmbeddings bool
	// MarginCredit is the part of the overhead the engine allocates out of
	// its margin (engine.Memory.FitOverheadBytes): usable memory grows by
	// it, so a plan is the engine's own placement.
	MarginCredit int64
	// Paged: the engine serves the batch from one paged KV pool
	// (engine.Memory.PagedKV): a plan must hold one full-context sequence,
	// and the batch is how many run at once (fitBatch).
	Paged bool
	// FractionOf is the engine's fraction for a device of that total
	// memory (engine.Memory.FractionOf), nil when Fraction holds for all;
	// Fraction is then the first device's.
	FractionOf func(totalBytes int64) float64
	// FractionAt is the engine's fraction for a plan's parallelism
	// (engine.Memory.FractionAt), nil when FractionOf or Fraction holds
	// whatever the layout (planFraction).
	FractionAt func(engine.Layout) float64
	// LinkedGroup is what each rank of a tensor-parallel group over a
	// high-bandwidth link holds for the engine's process groups
	// (engine.Memory.LinkedGroupBytes).
	LinkedGroup int64
	// WorkspaceOutside: the engine's fraction holds the weights and the KV
	// pool only (engine.Memory.WorkspaceOutside: SGLang).
	WorkspaceOutside bool
	// ProfiledStartup: the engine charges its start-up profile inside its
	// fraction (engine.Memory.ProfiledStartup: vLLM; vllmCharge).
	ProfiledStartup bool
	// Vision: the engine loads a multimodal model's vision tower beside
	// the language model (engine.Memory.VisionInProcess).
	Vision bool
	// VisionOff are the model types whose tower the engine's default
	// launch does not build (engine.Memory.VisionOff).
	VisionOff []string
	// OverDefault is the engine the pool's devices default to where the
	// request's GGUF chose Engine instead (GGUFBy says what), nil
	// otherwise.
	OverDefault engine.Engine
	GGUFBy      string
	// DefaultOn and OverDefaultOn name the pool's devices ("cuda:1 (Tesla
	// P40)") whose own default is Engine and those whose default
	// (OverDefault) the request's GGUF overrode, where the pool holds both
	// (an H200 beside a P40 under a GGUF quant: vLLM is the H200's
	// default, llama.cpp the P40's); "" where one default holds for every
	// device. OverDefaultIDs are the latter's ids (Budget.EngineChosenOn).
	DefaultOn, OverDefaultOn string
	OverDefaultIDs           []string
}

// budgetFor is the budget of a device's pool under rule e: the named
// engine's, else the engine that claims the device (engine.Default: vLLM
// on data-center accelerators (NVIDIA ones from its compute capability
// floor), llama.cpp on older NVIDIA GPUs, Metal, Vulkan, the CPU, GPUs
// that share host memory and for GGUF models, no engine where neither
// runs). The host's memory is planned whole whatever the engine: engines
// cap accelerators, not system memory.
func (e engineRule) budgetFor(d *registry.Device) budget {
	var b budget
	b.Engine, b.ByDefault = e.engineOf(d)
	if b.ByDefault && e.GGUF {
		plain := e
		plain.GGUF = false
		if def := engine.Default(plain.device(d)); def != b.Engine {
			b.OverDefault, b.GGUFBy = def, e.GGUFBy
		}
	}
	m := b.Engine.Memory(e.Fraction)
	b.Paged, b.WorkspaceOutside, b.LinkedGroup = m.PagedKV, m.WorkspaceOutside, m.LinkedGroupBytes
	b.Vision, b.VisionOff = m.VisionInProcess, m.VisionOff
	b.ProfiledStartup = m.ProfiledStartup
	if d.Kind == registry.KindCPU {
		b.Fraction = 1
		return b
	}
	b.Fraction, b.Margin = m.Fraction, m.MarginBytes
	// On a device that shares host memory (Apple, APUs) the embedding kept
	// "in host memory" is the same RAM: it stays counted on the device.
	b.Overhead, b.HostEmbeddings = m.OverheadBytes[d.Kind], m.HostTokenEmbeddings && !d.MemoryShared
	if fo, ok := m.FitOverheadBytes[d.Kind]; ok && b.Overhead > fo {
		b.MarginCredit = min(b.Overhead-fo, b.Margin)
	}
	if m.FractionOf != nil && d.MemoryBytes > 0 {
		b.FractionOf, b.FractionAt = m.FractionOf, m.FractionAt
		b.Fraction = b.deviceFraction(d)
	}
	return b
}

// setDefaults sets which of the pool's devices devs the request's GGUF
// chose Engine over their own default on: budgetFor read the first device
// only, so a pool of an H200 then a P40 said "over vllm, the default for
// cuda_gpu devices" though llama.cpp is the P40's own default, and one of
// the P40 then the H200 said llama.cpp was the default for all. Where the
// devices' defaults differ the budget names them (DefaultOn,
// OverDefaultOn); OverDefault is then the first overridden device's
// default (one kind of device has two defaults at most: vLLM, and
// llama.cpp below vLLM's compute-capability floor).
func (b *budget) setDefaults(e engineRule, devs []*device) {
	if !b.ByDefault || !e.GGUF {
		return
	}
	plain := e
	plain.GGUF = false
	var own, over []*device
	b.OverDefault, b.GGUFBy = nil, ""
	for _, d := range devs {
		def := engine.Default(plain.device(&d.Dev))
		if def == b.Engine {
			own = append(own, d)
			continue
		}
		if b.OverDefault == nil {
			b.OverDefault, b.GGUFBy = def, e.GGUFBy
		}
		over = append(over, d)
	}
	b.DefaultOn, b.OverDefaultOn, b.OverDefaultIDs = "", "", nil
	if len(own) > 0 && len(over) > 0 {
		b.DefaultOn, b.OverDefaultOn = devicesInWords(own), devicesInWords(over)
		for _, d := range over {
			b.OverDefaultIDs = append(b.OverDefaultIDs, d.ID)
		}
	}
}

// engineOf is the engine that plans device d under rule e: the named one,
// else the one that claims d (engine.Default), byDefault then.
func (e engineRule) engineOf(d *registry.Device) (eng engine.Engine, byDefault bool) {
	if eng, ok := engine.Lookup(e.Engine); ok {
		return eng, false
	}
	return engine.Default(e.device(d)), true
}

// device is what the engine registry is asked about registry device d
// under rule e (engine.Default, engine.Alternatives): one function, so the
// request's GGUF flag reaches every question.
func (e engineRule) device(d *registry.Device) engine.Device {
	return engine.Device{Kind: d.Kind, SharedMemory: d.MemoryShared, GGUF: e.GGUF, ComputeCapability: d.ComputeCapability}
}

// otherEngines are the engines besides the one rule e defaults to on d that
// would also plan it (engine.Alternatives).
func otherEngines(e engineRule, d *registry.Device) []engine.Engine {
	return engine.Alternatives(e.device(d))
}

// deviceFraction is the engine's own fraction for d alone
// (budget.FractionAt at TP 1, else FractionOf).
func (b budget) deviceFraction(d *registry.Device) float64 {
	if b.FractionAt != nil {
		return b.FractionAt(engine.Layout{TotalBytes: d.MemoryBytes, Kind: d.Kind, TP: 1, PP: 1})
	}
	return b.FractionOf(d.MemoryBytes)
}

// planFraction is the memory fraction a plan is started with: the pool's,
// or where the engine's own default depends on the layout
// (budget.FractionAt: SGLang's --mem-fraction-static reserves memory per
// parallel rank) that default for the plan's smallest device, its tensor-
// and pipeline-parallel degrees and whether the model caches an MLA
// latent. It is at most the pool's fraction (the TP 1 value the plan was
// fitted against) on a pool of one device size.
func planFraction(pl *planned) float64 {
	b := pl.Pool.Budget
	if b.FractionAt == nil {
		return b.Fraction
	}
	l, ok := planLayout(pl)
	if !ok {
		return b.Fraction
	}
	return b.FractionAt(l)
}

// planLayout is what an engine's own fraction for plan pl depends on
// (engine.Layout): its smallest accelerator, its tensor- and pipeline-
// parallel degrees and whether the model caches an MLA latent; false when
// no accelerator's memory is known.
func planLayout(pl *planned) (engine.Layout, bool) {
	var smallest int64
	pp := 0
	for _, s := range pl.Stages {
		if len(s.Devices) == 0 || s.Devices[0].Dev.Kind == registry.KindCPU {
			continue
		}
		pp++
		for _, d := range s.Devices {
			if m := d.Dev.MemoryBytes; m > 0 && (smallest == 0 || m < smallest) {
				smallest = m
			}
		}
	}
	if smallest == 0 {
		return engine.Layout{}, false
	}
	return engine.Layout{TotalBytes: smallest, Kind: pl.Pool.Kind, TP: max(pl.TP, 1), PP: max(pp, 1), Latent: pl.Costs.Latent}, true
}

// planBudget is the plan's pool budget with the fraction the plan is
// started with (planFraction).
func planBudget(pl *planned) budget {
	b := pl.Pool.Budget
	b.Fraction = planFraction(pl)
	return b
}

// fitBatch is the number of full-context sequences a plan on pool p must
// hold when batch are asked: batch, or one where p's engine serves its
// sequences from one paged KV pool (budget.Paged), which runs batch of them
// at once as far as the pool has room and queues the rest.
func fitBatch(p *pool, batch int) int {
	if p != nil && p.Budget.Paged {
		return 1
	}
	return batch
}

// usable is the bytes a plan may place on d under b: its usable memory
// (free, else the runtime's limit such as Metal's working-set cap, else
// total; registry.Device.UsableMemory) less the engine's margin, at most
// the fraction of its total memory. An engine whose fraction holds the
// weights and its KV pool only (WorkspaceOutside: SGLang) uses the whole
// device, the fraction dividing it between that pool and the rest, which
// stageFits checks by SGLang's own rule (staticHolds, restHolds).
func (b budget) usable(d *registry.Device) int64 {
	u := d.UsableMemory()
	if d.Kind == registry.KindCPU {
		return u
	}
	u = max(u-b.Margin+b.MarginCredit, 0)
	if f := b.fractionOn(d); f < 1 && d.MemoryBytes > 0 && !b.WorkspaceOutside {
		u = min(u, int64(float64(d.MemoryBytes)*f))
	}
	return u
}

// fractionOn is the fraction of d's total memory the engine may use under
// b: its own for d (deviceFraction) where it depends on the device, else
// b's.
func (b budget) fractionOn(d *registry.Device) float64 {
	if b.FractionOf != nil && d.MemoryBytes > 0 {
		return b.deviceFraction(d)
	}
	return b.Fraction
}

// room says what device d offers a plan under b: its free memory and,
// where the engine's share keeps a plan below that, what the engine may
// use of it and the engine's setting that sets the share
// (engine.BudgetSetting): "79.2 GiB free, of which vLLM may use 71.7 GiB
// under --gpu-memory-utilization 0.9" (docs/cli.md). A refusal called that share
// "free", which on an H200 with 139.8 GiB free read 126.8 under SGLang
// (whose plans now use the whole device: budget.usable, staticShareLine).
func (b budget) room(d *device) string {
	free, word := d.Dev.UsableMemoryOf()
	s := gib(free) + " " + word
	if d.Usable >= free {
		return s
	}
	s += ", of which " + b.Engine.Title() + " may use " + gib(d.Usable)
	if set := engine.BudgetSetting(b.Engine, engine.Memory{Fraction: b.fractionOn(&d.Dev), MarginBytes: b.Margin}); set != "" {
		s += " under " + set
	}
	return s
}

// roomInAll says what the devices of pool p offer a plan together: what
// the engine may use of them ("286.7 GiB vLLM may use in all") where its
// share keeps a plan below their memory, else that memory ("279.6 GiB free
// in all").
func (b budget) roomInAll(p *pool) string {
	var free int64
	for _, d := range p.Devices {
		free += d.Dev.UsableMemory()
	}
	if t := p.usableTotal(); t < free {
		return gib(t) + " " + b.Engine.Title() + " may use in all"
	}
	_, word := p.Devices[0].Dev.UsableMemoryOf()
	return gib(free) + " " + word + " in all"
}

// Budget is the memory budget of an answer: the engine the plan was made
// for and how much of each device it counts on.
type Budget struct {
	// Engine is the engine's name (engine.Names).
	Engine string `json:"engine"`
	// EngineDefault is true when the request named no engine: Engine is
	// the default for the chosen devices, or, where EngineChosenFor says
	// so, the engine the request's GGUF weights or cache type chose over
	// that default.
	EngineDefault bool `json:"engine_default"`
	// EngineChosenFor names what in a request that named no engine chose
	// Engine over the devices' default ("the GGUF quant q4_k_m", "the GGUF
	// repository ggml-org/gemma-3-27b-it-GGUF", "the cache type q8_0");
	// "" where Engine is the devices' default or was named.
	EngineChosenFor string `json:"engine_chosen_for,omitempty"`
	// EngineChosenOn are the devices whose default EngineChosenFor
	// overrode, where the pool's other devices default to Engine (an H200
	// beside a Tesla P40 under a GGUF quant: cuda:0, vLLM's; the P40's
	// default is llama.cpp); nil where every device's default was
	// overridden or none was.
	EngineChosenOn []string `json:"engine_chosen_on,omitempty"`
	// MemoryFraction is the fraction of each device's total memory the
	// engine may use (vLLM's --gpu-memory-utilization; 1: no cap).
	MemoryFraction float64 `json:"memory_fraction"`
	// MarginBytes is the memory left free on each device (llama.cpp --fit).
	MarginBytes int64 `json:"margin_bytes"`
	// EngineReservedBytes is what the engine itself holds on each device of
	// the plan, inside the budget: its runtime context and the peak of its
	// working buffers (the answer's overhead and activations, per device).
	EngineReservedBytes int64 `json:"engine_reserved_bytes"`
	// HostBytes is what the engine keeps in host memory beside the plan's
	// accelerators and outside its memory figures: llama.cpp's token
	// embedding (token_embd stays on the CPU whatever -ngl says).
	HostBytes int64 `json:"host_bytes,omitempty"`
	// Source says where the rule comes from.
	Source string `json:"source"`
}

// budgetOf is the Budget of a plan (nil without a pool).
func budgetOf(pl *planned) *Budget {
	if pl.Pool == nil {
		return nil
	}
	b := planBudget(pl)
	c := pl.Costs.on(pl.Pool)
	out := &Budget{Engine: b.Engine.Name(), EngineDefault: b.ByDefault, MemoryFraction: b.Fraction, MarginBytes: b.Margin,
		EngineReservedBytes: engineReserved(pl, c)}
	if b.OverDefault != nil {
		out.EngineChosenFor, out.EngineChosenOn = b.GGUFBy, b.OverDefaultIDs
	}
	if pl.Pool.Kind != registry.KindCPU {
		out.HostBytes = c.hostBytes()
	}
	out.Source = budgetSource(b, pl.Pool.Kind)
	return out
}

// engineReserved is what the engine holds on a device of plan pl beside
// the weights and the KV cache (Budget.EngineReservedBytes): the
// activations and overhead its shards are charged, the largest over the
// accelerators of its stages. vLLM's charge on Gaudi depends on the
// weights the device holds (engine.VLLMStartup.Charge: a share of what
// they leave free), so it is taken from the stages as planned, not from an
// empty stage, which held only the token embedding and read 9.1 GiB per
// Gaudi 2 where the shards of Llama-3.3-70B at TP 8 hold 6.1. A plan
// without stages (a refusal) reads the part of one device holding the
// whole model at the plan's tensor-parallel size.
func engineReserved(pl *planned, c costs) int64 {
	var r int64
	found := false
	for _, s := range pl.Stages {
		if len(s.Devices) == 0 || s.Devices[0].Dev.Kind == registry.KindCPU {
			continue
		}
		r, found = max(r, s.Part.Activations+s.Part.Overhead), true
	}
	if !found {
		p := c.stagePart(0, c.Layers, max(pl.TP, 1))
		r = p.Activations + p.Overhead
	}
	return r
}

// budgetSource explains a budget in one line: the engine's own sentence
// (engine.Engine.BudgetSource), else the plain rule.
func budgetSource(b budget, k registry.Kind) string {
	return budgetSourceFor(b, k, string(k)+" devices")
}

// budgetSourceFor is budgetSource with the devices the default engine is
// the default for named as given: "cuda_gpu devices", or, where the
// default engines split one kind between them, the pool's own devices.
func budgetSourceFor(b budget, k registry.Kind, devices string) string {
	name := b.Engine.Name()
	who := "engine " + name
	switch {
	case b.OverDefault != nil && b.DefaultOn != "":
		who = fmt.Sprintf("no engine named: %s, the default for %s, chosen for %s over %s, the default for %s,", name, b.DefaultOn, b.GGUFBy, b.OverDefault.Name(), b.OverDefaultOn)
	case b.OverDefault != nil:
		who = fmt.Sprintf("no engine named: %s, chosen for %s over %s, the default for %s,", name, b.GGUFBy, b.OverDefault.Name(), devices)
	case b.ByDefault:
		who = fmt.Sprintf("no engine named: %s, the default for %s,", name, devices)
	}
	if k == registry.KindCPU {
		return fmt.Sprintf("%s plans within the host's available memory", who)
	}
	if s := b.Engine.BudgetSource(who, engine.Memory{Fraction: b.Fraction, MarginBytes: b.Margin}); s != "" {
		return s
	}
	switch {
	case b.Fraction < 1:
		return fmt.Sprintf("%s plans each device within %s of its total memory", who, fmtFraction(b.Fraction))
	}
	return fmt.Sprintf("%s plans each device within its usable memory (free, else total)", who)
}

// fmtFraction writes a fraction as the engines take it: 0.9, 0.95.
func fmtFraction(f float64) string {
	return fmt.Sprintf("%g", f)
}
