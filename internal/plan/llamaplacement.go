// The placement of a llama.cpp plan under the default "serving" placement:
// the devices llama.cpp itself would run the model on, at the context it
// would run.
//
// llama.cpp shown every GPU of a machine (no CUDA_VISIBLE_DEVICES, its
// default) splits the layers over all of them: its model parameters default
// to LLAMA_SPLIT_MODE_LAYER over every device (llama_model_default_params in
// src/llama-model.cpp), each device's share of the layers in proportion to
// its free memory ("default split, by free memory" in load_tensors, same
// file). With no -c its context is the model's trained one (n_ctx 0 means
// n_ctx_train, src/llama-context.cpp), and --fit (on by default, common/arg.cpp)
// keeps it when every device's free-memory target is met by the split
// ("targets for free memory can be met on all devices, no changes needed",
// step 1 of common_params_fit_impl in common/fit.cpp, ggml-org/llama.cpp
// 6d0892ba065b38ee790b825fdc8fb8e2c453e6dd), and reduces it, over all the
// devices together, only when they do not hold it (its step 2). The fewest
// devices that hold the model at the 4096-token floor, with the context cut
// to what they hold, is therefore not the decision llama.cpp would make
// (Llama-3.3-70B q8_0 on 8 H100s: one GPU at 30720 tokens, where llama.cpp
// runs 131072 over the GPUs it is shown). This file plans the fewest
// identical devices that hold the model at the context llama.cpp would run,
// else all of them at the most context they hold; "placement": "fewest"
// keeps the fewest devices.

package plan

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// llamaSpread is what the llama.cpp placement compared when it used more
// devices than the fewest that hold the model at the context floor.
type llamaSpread struct {
	// Fewest is the number of devices of the fewest plan; FewestContext the
	// context per sequence they hold (maxFitting, rounded down to
	// contextStep).
	Fewest, FewestContext int
	// Target is the context per sequence llama.cpp would run: the model's
	// trained context (per sequence of the -np slots), rounded down to
	// contextStep.
	Target int
	// Whole is the model's trained context and Seqs the -np slots that
	// share it (Target is Whole / Seqs, rounded down).
	Whole, Seqs int
	// Chosen is the number of devices planned, of Group identical ones;
	// Holds says whether they hold Target (else they are all of the group,
	// and fitContext cuts the context to what they hold).
	Chosen, Group int
	Holds         bool
}

// spreadsLlama reports whether the request leaves the devices and the
// context of plan pl to llama.cpp's own rules: a fitting llama.cpp plan
// (an engine whose --fit chooses the context, ContextFloor) on accelerators
// of one machine, all in device memory, with no context_length, devices,
// tensor_parallel_size or replicas asked and no "placement": "fewest".
// A cluster is left alone: one llama.cpp process splits layers over the
// GPUs of its own machine (other nodes need its RPC backend).
func spreadsLlama(req *planning, ch *choice) bool {
	pl := &ch.Plan
	return ch.Outcome == outcomeFits && pl.Fits && pl.Pool != nil && pl.Pool.Kind != registry.KindCPU &&
		!pl.Pool.Budget.Paged && pl.Pool.Budget.Engine.Memory(0).ContextFloor > 0 &&
		!req.training && !pl.Offloaded && !ch.Cluster && !req.ContextGiven &&
		req.Placement != planreq.PlacementFewest && req.Devices == nil && req.TensorParallel == 0 && !req.dataParallel() &&
		pl.TP <= 1 && (pl.Strategy == StrategyNone || pl.Strategy == StrategyPipeline)
}

// llamaTarget is the context per sequence llama.cpp runs with no -c: the
// model's trained context over the plan's -np slots (fitContext), rounded
// down to contextStep; 0 when the trained context is unknown.
func llamaTarget(req *planning, pl *planned) int {
	t := req.Model.MaxContext / max(pl.batchOf(req), 1)
	return t - t%contextStep
}

// spreadLlama replaces the choice's llama.cpp plan (spreadsLlama) by
// llamaSplit's, updates the chosen level's row and records the comparison
// for the explanation. A plan llamaSplit leaves stays.
func spreadLlama(req *planning, ch *choice) {
	if !spreadsLlama(req, ch) {
		return
	}
	spread, why, ok := llamaSplit(req, &ch.Plan)
	if !ok {
		return
	}
	ch.Plan, ch.Llama = spread, why
	for i := range ch.Rows {
		if ch.Rows[i].Quant == string(ch.Plan.Level) && ch.Rows[i].Fits.Yes() {
			ch.Rows[i].Strategy = ch.Plan.Strategy
		}
	}
}

// llamaSplit is a layer split of pl's level over the fewest devices of its
// group of identical devices (groupOf) that hold the model at llama.cpp's
// context (llamaTarget), else over all of them, planned at the request's
// context (PlanSharding then chooses the context, fitContext), and what
// was compared. Devices join in order of most usable memory (a busy GPU
// last) and split the layers in pool order, each in proportion to what it
// holds, as llama.cpp's default split by free memory does. ok is false
// when pl's devices already hold the target, there is nothing more to
// use, or the command could not name the devices.
func llamaSplit(req *planning, pl *planned) (planned, *llamaSpread, bool) {
	target := llamaTarget(req, pl)
	group := groupOf(pl)
	if target <= req.ContextLength || len(group) <= pl.devices() {
		return planned{}, nil, false
	}
	at, ok := costsAtContext(req, pl, target)
	if !ok || unitFits(pl.Stages, at, false, false) {
		return planned{}, nil, false // the fewest devices hold llama.cpp's context already
	}
	why := &llamaSpread{Fewest: pl.devices(), Target: target, Whole: req.Model.MaxContext, Seqs: max(pl.batchOf(req), 1),
		Chosen: len(group), Group: len(group)}
	for k := pl.devices() + 1; k <= len(group); k++ {
		if _, ok := layerSplit(joining(group, k), at); ok {
			why.Chosen, why.Holds = k, true
			break
		}
	}
	stages, ok := layerSplit(joining(group, why.Chosen), pl.Costs)
	if !ok {
		return planned{}, nil, false
	}
	spread := planned{Fits: true, Strategy: StrategyPipeline, Level: pl.Level, Pool: pl.Pool, Stages: stages, TP: 1, Costs: pl.Costs}
	if pl.Pool.Budget.Engine.Env(placementOf(&spread, req, false)) == nil {
		// The command cannot make exactly these devices visible (no
		// CUDA_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES: a compute
		// partition, a GPU without a UUID, a backend without such a
		// variable), and --tensor-split numbers the devices llama.cpp
		// sees from 0: a split would land on other devices.
		return planned{}, nil, false
	}
	fewest := maxFitting(pl, req, true)
	why.FewestContext = min(fewest-fewest%contextStep, target)
	return spread, why, true
}

// costsAtContext is the costs of plan pl's level on its pool at ctx tokens
// per sequence (maxFitting's own estimate); false when the estimate is not
// sane.
func costsAtContext(req *planning, pl *planned, ctx int) (costs, bool) {
	batch := pl.batchOf(req)
	b, sane := estimateSaneOn(req, pl.Pool, pl.Level, ctx, fitBatch(pl.Pool, batch))
	if !sane {
		return costs{}, false
	}
	return req.costsOf(b, pl.Pool.sizedAs(pl.Level), ctx, batch).on(pl.Pool), true
}

// joining is the k devices of group that join a llama.cpp split first,
// in pool order: the most usable memory first (an idle GPU before a busy
// one), pool order among equals (mostUsable).
func joining(group []*device, k int) []*device { return mostUsable(group, k) }

// layerSplit is one stage of whole layers per device of ds (two or more),
// in their order, the layers in proportion to what each holds
// (assignLayers); false when they do not hold the model under c.
func layerSplit(ds []*device, c costs) ([]stage, bool) {
	stages := make([]stage, len(ds))
	for i, d := range ds {
		stages[i] = stage{Devices: []*device{d}}
	}
	return stages, assignLayers(stages, c, false)
}

// llamaPlacement says why a llama.cpp plan uses more devices than the
// fewest that hold the model; "" when it does not.
func (ch *choice) llamaPlacement() string {
	s := ch.Llama
	if s == nil {
		return ""
	}
	fewest := fmt.Sprintf("%s %s %d tokens", counted(s.Fewest, "device"), holdOrHolds(s.Fewest), s.FewestContext)
	held, short := fmt.Sprintf("the model's %d-token context per sequence", s.Target), fmt.Sprintf("the model's %d tokens per sequence", s.Target)
	if s.Seqs > 1 {
		// -np slots share the trained context: Target is a share of it.
		fewest += " per sequence"
		held = trainedShare(s.Whole, s.Seqs, s.Target)
		short = held
	}
	head := fmt.Sprintf("placement: %s of the %d identical ones hold %s, the fewest that do",
		counted(s.Chosen, "device"), s.Group, held)
	if !s.Holds {
		head = fmt.Sprintf("placement: all %d identical devices, which hold the most context, less than %s",
			s.Group, short)
	}
	return fmt.Sprintf("%s: %s; %s (%s plans that)", head, fitSpread(ch.Plan.Pool.Budget.Engine), fewest, HintPlacementFewest)
}

// fitSpread is what engine e does shown every GPU of a machine, in its
// words (engine.FitNamer), else the planner's.
func fitSpread(e engine.Engine) string {
	if n, ok := e.(engine.FitNamer); ok {
		return n.FitSpread()
	}
	return e.Title() + " shown every GPU uses all of them and keeps the model's trained context when they hold it, else cuts it to what they hold"
}

// holdOrHolds is the verb for n devices.
func holdOrHolds(n int) string {
	if n == 1 {
		return "holds"
	}
	return "hold"
}
