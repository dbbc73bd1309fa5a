package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// The engine a plan is made for is its pool's (budget.go); what that
// engine runs on, loads and is started with is internal/engine's. This
// file hands a fitting plan to it as an engine.Placement.

// engineCannotRun is why engine e cannot run on devices of kind k, ""
// when it can or no engine is given.
func engineCannotRun(k registry.Kind, e engine.Engine) string {
	if e == nil || e.RunsOn(k) {
		return ""
	}
	return fmt.Sprintf("%s does not run on %s devices", e.Title(), k)
}

// engineCannotRunOn is why engine e cannot run on pool p: its kind
// (engineCannotRun), or for a CPU pool a vector extension the engine
// needs and the CPU lacks (engine.CPUFloor; its detected cpu_features,
// else its family's record: specs.CPUVectorOf).
func engineCannotRunOn(p *pool, e engine.Engine) string {
	if r := engineCannotRun(p.Kind, e); r != "" || p.Kind != registry.KindCPU {
		return r
	}
	floor, ok := e.(engine.CPUFloor)
	if !ok {
		return ""
	}
	for _, d := range p.Devices {
		if v, known := specs.CPUVectorOf(d.Dev); known {
			if r := floor.CannotRunOnCPU(v); r != "" {
				return r
			}
		}
	}
	return ""
}

// requestEngine is the engine the request names, nil when none.
func (r *planning) requestEngine() engine.Engine {
	e, _ := engine.Lookup(r.Engine)
	return e
}

// engine is the engine pool p is planned for, nil for no pool.
func (p *pool) engine() engine.Engine {
	if p == nil {
		return nil
	}
	return p.Budget.Engine
}

// sizedAs is the level whose bytes a plan at level l on pool p loads: the
// file type its engine loads for l (engine.WeightsLevel: llama.cpp's Q4_K_M
// for int4), else l. The plan keeps l as its level.
func (p *pool) sizedAs(l quant.Level) quant.Level {
	return engine.WeightsLevel(p.engine(), l)
}

// sizedAsNotes says, for a request that names no engine, which levels the
// pools' default engines size as a file type of their own (sizedAs), and
// on which kinds of device, in the engine's words (engine.SizedAsNote:
// "int4 is sized as the GGUF type Q4_K_M, the file llama.cpp loads for it
// on cuda_gpu devices"), once per level and engine.
func sizedAsNotes(pools []*pool, levels []quant.Level) []string {
	var notes []string
	for _, l := range levels {
		var engines []engine.Engine
		kinds := map[string][]string{}
		for _, p := range pools {
			e, s := p.engine(), p.sizedAs(l)
			if s == l {
				continue
			}
			if _, seen := kinds[e.Name()]; !seen {
				engines = append(engines, e)
			}
			if k := string(p.Kind); !slices.Contains(kinds[e.Name()], k) {
				kinds[e.Name()] = append(kinds[e.Name()], k)
			}
		}
		for _, e := range engines {
			if n := engine.SizedAsNote(e, l, strings.Join(kinds[e.Name()], " and ")); n != "" {
				notes = append(notes, n)
			}
		}
	}
	return notes
}

// tensorParallel reports whether the pool's engine splits tensors over
// devices (llama.cpp splits whole layers only).
func (p *pool) tensorParallel() bool { return p.Budget.Engine.Parallelism().Tensor }

// offloadFitsOn reports whether a level fits with cpu_offload on pool p
// (its origin, all the devices of its kind the request allows) and the
// host, as planOffloadLevels plans it (offloadAt); false without a host.
func offloadFitsOn(req *planning, p *pool) func(quant.Level) bool {
	return func(l quant.Level) bool {
		if p == nil || p.Kind == registry.KindCPU {
			return false
		}
		want, _ := req.checkDevices()
		host := hostDevice(req, want)
		if host == nil {
			return false
		}
		_, ok := offloadAt(req, []*pool{p.origin()}, host, l)
		return ok
	}
}

// sharesHost reports whether pool p's devices use the host RAM a
// cpu_offload plan would (hostBeside leaves none beside them).
func sharesHost(req *planning, p *pool) bool {
	h := hostDevice(req, nil)
	return h != nil && hostBeside(h, p) == nil
}

// fitTargets are, per accelerator of the plan's stages in order, the bytes
// the plan leaves free of what the engine measures as free there
// (engine.Placement.FitTargetBytes): its usable memory and the margin's
// part allocated later (MarginCredit) less the budget it planned within.
// That is the margin alone unless a memory fraction caps the device lower.
func fitTargets(pl *planned) []int64 {
	b := planBudget(pl)
	var out []int64
	for _, s := range pl.Stages {
		for i := range s.Devices {
			d := &s.Devices[i].Dev
			if d.Kind == registry.KindCPU {
				continue
			}
			out = append(out, d.UsableMemory()+b.MarginCredit-b.usable(d))
		}
	}
	return out
}

// hostKVRoom is, for a plan on host memory alone (every device a CPU: one,
// or one per host of a cluster's pipeline stages or replicas), the room
// it leaves there for the KV cache, the least over its devices: a
// device's usable memory less the weights, activations and overhead
// placed on it (the room its max_batch_size and max_context_length are
// searched in); 0 for any other plan (engine.Placement.HostKVSpaceBytes).
// The least, because the engine's pool is one figure for every rank:
// vLLM's CPU worker reports VLLM_CPU_KVCACHE_SPACE GiB as each rank's
// KV memory (CPUWorker.determine_available_memory returns
// cache_config.cpu_kvcache_space_bytes, vllm/v1/worker/cpu_worker.py of
// the v0.9.2 tag) and its engine core sizes the cache with the fewest
// blocks any worker holds (vllm/v1/core/kv_cache_utils.py).
func hostKVRoom(pl *planned) int64 {
	if pl.Pool.Kind != registry.KindCPU || pl.Offloaded {
		return 0
	}
	room := int64(-1)
	for _, r := range pl.replicas() {
		for _, s := range r {
			p := s.Part
			for _, d := range s.Devices {
				if d.Dev.Kind != registry.KindCPU {
					return 0
				}
				if left := max(d.Usable-p.Weights-p.Activations-p.Overhead, 0); room < 0 || left < room {
					room = left
				}
			}
		}
	}
	return max(room, 0)
}

// hostKVPool is the KV pool the engine of a plan on host memory alone
// names for it (engine.HostKVPooler, vLLM's VLLM_CPU_KVCACHE_SPACE): false
// where the engine sizes no such pool or the plan is not on the host alone.
func hostKVPool(pl *planned) (int64, bool) {
	k, ok := pl.Pool.Budget.Engine.(engine.HostKVPooler)
	if !ok {
		return 0, false
	}
	room := hostKVRoom(pl)
	if room <= 0 {
		return 0, false
	}
	return k.HostKVPoolBytes(room), true
}

// placementOf is a fitting plan as its engine sees it.
func placementOf(pl *planned, req *planning, cluster bool) *engine.Placement {
	v := &engine.Placement{
		Model: req.Model, Level: pl.Level, Kind: pl.Pool.Kind,
		Memory: engine.Memory{Fraction: planFraction(pl), MarginBytes: pl.Pool.Budget.Margin},
		Stages: placedStages(pl.Stages), TP: pl.TP, DP: pl.DP, Layers: pl.Costs.Layers,
		Offloaded: pl.Offloaded, Context: req.ContextLength, Batch: pl.batchOf(req),
		KVCacheDType: req.KVCacheDType, NoFlashAttention: req.NoFlashAttention,
		MultiNode: cluster && multiNode(pl), CPUMoE: pl.CPUMoE, CPUMoEPart: pl.CPUMoEPart,
		AllExpertsOnHost: pl.AllExpertsOnHost, HostShared: sharesHost(req, pl.Pool),
	}
	if pl.Offloaded {
		v.OffloadedWeightBytes = pl.Stages[len(pl.Stages)-1].Part.Weights
	}
	v.FitTargetBytes = fitTargets(pl)
	v.HostKVSpaceBytes = hostKVRoom(pl)
	if req.CPUOffload {
		v.OffloadFits = offloadFitsOn(req, pl.Pool)
	}
	if d := req.Draft; d != nil {
		v.Draft = &engine.Companion{Model: d.Model, File: d.File, Level: draftLevel(d.Model.FileQuant, pl.Level)}
	}
	if p := req.Projector; p != nil {
		v.Projector = &engine.ProjectorFile{File: p.File, OnHost: p.OnHost}
	}
	for _, r := range pl.Replicas {
		v.Replicas = append(v.Replicas, placedStages(r))
	}
	return v
}

func placedStages(stages []stage) []engine.Stage {
	out := make([]engine.Stage, len(stages))
	for i, s := range stages {
		ds := make([]engine.PlacedDevice, len(s.Devices))
		for j, d := range s.Devices {
			ds[j] = engine.PlacedDevice{ID: d.ID, Dev: &d.Dev}
		}
		out[i] = engine.Stage{Devices: ds, Start: s.Start, End: s.End}
	}
	return out
}

// engineAnswer is what a fitting plan's engine says about running it: its
// flags (under its name, absent when it cannot express the plan), what it
// loads, its environment, and notes for the explanation, start-up notes
// last, and warnings (a checkpoint of another release than the request
// named: engine.Load.Switch). Flags of one engine never describe a plan
// made on another engine's budget.
type engineAnswer struct {
	Args     map[string][]string
	Load     map[string]Load
	Env      map[string]map[string]string
	Notes    []string
	Warnings []string
}

func engineAnswerOf(pl *planned, req *planning, cluster bool) engineAnswer {
	out := engineAnswer{Args: map[string][]string{}}
	if !pl.Fits || pl.Pool == nil {
		return out
	}
	out.Load, out.Env = map[string]Load{}, map[string]map[string]string{}
	e := pl.Pool.Budget.Engine
	v := placementOf(pl, req, cluster)
	if r := engineCannotRun(v.Kind, e); r != "" {
		out.Notes = append(out.Notes, r)
	} else {
		args, notes, ok := e.Args(v)
		out.Notes = append(out.Notes, notes...)
		if ok {
			name := e.Name()
			out.Args[name] = args
			if ld, _ := e.Load(v); ld != nil {
				out.Load[name] = loadOf(ld)
				if ld.Switch != "" {
					out.Warnings = append(out.Warnings, e.Title()+": "+ld.Switch)
				}
			}
			if env := e.Env(v); env != nil {
				out.Env[name] = env
			}
		}
	}
	out.Notes = append(out.Notes, e.StartNotes(v)...)
	return out
}

func loadOf(ld *engine.Load) Load {
	return Load{Quant: ld.Quant, Repo: ld.Repo, File: ld.File, GGUFType: ld.GGUFType, Method: ld.Method, Source: ld.Source, Needs: ld.Needs}
}

func multiNode(pl *planned) bool {
	node := -1
	for _, r := range pl.replicas() {
		for _, s := range r {
			for _, d := range s.Devices {
				if node >= 0 && d.Node != node {
					return true
				}
				node = d.Node
			}
		}
	}
	return false
}

// ownLadderNote says, for a request that names no engine under quant auto,
// that a default engine of the pools walks a ladder of its own when named:
// llama.cpp by default plans the wire contract's levels (int8 and int4
// sized as Q8_0 and Q4_K_M files, /work/shared/contract.md's quant
// names), while "engine": "llama.cpp" walks the GGUF types, q5_k_m and
// q6_k between them included, so the same engine gives two answers
// (docs/requests.md, quant). "" where no pool's default engine has one.
func ownLadderNote(req *planning, pools []*pool, levels []quant.Level) string {
	if req.Quant != "auto" || len(levels) < 2 {
		return ""
	}
	for _, p := range pools {
		e := p.engine()
		if e == nil || !p.Budget.ByDefault {
			continue
		}
		ladder, _ := e.Levels(levels)
		var own []quant.Level // the engine's levels the contract's do not name
		for _, l := range ladder {
			if !slices.Contains(levels, l) {
				own = append(own, l)
			}
		}
		if len(own) < 4 {
			continue
		}
		return fmt.Sprintf("with %s named, auto walks %s's GGUF ladder instead (%s > %s > %s > ... > %s); a request naming no engine keeps the levels above, the quant names of the wire contract",
			HintEngine(e.Name()), e.Title(), own[0], own[1], own[2], own[len(own)-1])
	}
	return ""
}
