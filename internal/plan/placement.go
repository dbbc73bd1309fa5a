// The placement of a serving plan (issue 21 item 4): choose finds the
// fewest devices that hold the model at the best level; a serving engine
// with a paged KV pool (vLLM, SGLang) is then spread over the identical
// devices of that plan the way a serving engineer runs it: tensor parallel
// inside a high-bandwidth domain (NVLink, NVSwitch, xGMI, ICI, ...), and
// data-parallel replicas beyond it (other domains, other nodes, devices
// joined by PCIe only), choosing among the layouts that fit by the speed
// model at the asked batch.

package plan

import (
	"fmt"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
)

// layout is one candidate placement of a serving plan: replicas of one
// shape (TP devices per stage, Stages stages) on the identical devices of
// the fewest plan, and what the speed model gives it at the asked batch.
type layout struct {
	Plan planned
	// PerSequence is one sequence's decode tokens/s in a replica at its
	// share of the batch; Total all replicas' together (0: unknown).
	PerSequence, Total float64
}

// spreadsServing reports whether the request leaves the placement to the
// planner and the plan is a serving plan the default placement spreads:
// a fitting plan on accelerators of an engine with a paged KV pool, with
// no devices, tensor_parallel_size or replicas asked, no "placement":
// "fewest", and no host memory in it.
func spreadsServing(req *planning, pl *planned) bool {
	return pl.Fits && pl.Pool != nil && pl.Pool.Budget.Paged && !req.training && !pl.Offloaded &&
		req.Placement != planreq.PlacementFewest && req.Devices == nil && req.TensorParallel == 0 && !req.dataParallel() &&
		(pl.Strategy == StrategyNone || pl.Strategy == StrategyTensor || pl.Strategy == StrategyPipeline)
}

// spreadServing replaces the choice's plan by the best layout of its
// identical devices (spreadsServing), updates the chosen level's row and
// records the comparison for the explanation. A plan it does not spread,
// or for which no layout is better than the fewest devices, stays.
func spreadServing(req *planning, ch *choice) {
	pl := &ch.Plan
	if ch.Outcome != outcomeFits || !spreadsServing(req, pl) {
		return
	}
	group := groupOf(pl)
	if group == nil {
		return
	}
	layouts := servingLayouts(req, subPool(pl.Pool, group), pl, ch.InterStage)
	if len(layouts) == 0 {
		return
	}
	best := 0
	for i := range layouts {
		if betterLayout(&layouts[i], &layouts[best], req.BatchSize) {
			best = i
		}
	}
	chosen := layouts[best]
	if chosen.Plan.devices() <= pl.devices() {
		return // nothing more to use: the fewest devices are all there is
	}
	ch.Spread = &spread{req: req, chosen: chosen, fewest: *pl, inter: ch.InterStage, layouts: layouts}
	ch.Plan = chosen.Plan
	ch.Plan.Pool = pl.Pool
	for i := range ch.Rows {
		if ch.Rows[i].Quant == string(ch.Plan.Level) && ch.Rows[i].Fits.Yes() {
			ch.Rows[i].Strategy = ch.Plan.Strategy
		}
	}
}

// spread is what the placement compared when it spread a plan: the
// layout chosen, the fewest plan it replaced and every layout scored.
// Only the answer's choice is worded (placement): PlanSharding's first
// pass is made again at the chosen context.
type spread struct {
	req     *planning
	chosen  layout
	fewest  planned
	inter   float64
	layouts []layout
}

// placement says why the choice's serving plan was spread over more
// devices than the fewest that hold it; "" when it was not.
func (ch *choice) placement() string {
	s := ch.Spread
	if s == nil {
		return ""
	}
	fewest := fewestLayout(s.req, &s.fewest, s.inter)
	return explainPlacement(s.req, &s.chosen, &fewest, s.layouts)
}

// groupOf is the devices of the plan's pool identical to its first (same
// name and memory, as identicalGroups groups them), in pool order; nil when
// the plan spans devices of several kinds.
func groupOf(pl *planned) []*device {
	first := &pl.Stages[0].Devices[0].Dev
	same := func(d *device) bool { return d.Dev.Name == first.Name && d.Dev.MemoryBytes == first.MemoryBytes }
	for _, s := range pl.Stages {
		for _, d := range s.Devices {
			if !same(d) {
				return nil
			}
		}
	}
	var g []*device
	for _, d := range pl.Pool.Devices {
		if same(d) {
			g = append(g, d)
		}
	}
	return g
}

// servingLayouts are the layouts of sub's devices that hold the model as
// the fewest plan pl does (same costs): for every tensor-parallel size t
// the model's heads allow, as many replicas of t devices inside one
// high-bandwidth domain as the domains hold (t = 1: one device each, where
// one device holds the model), and, for a pipeline plan, as many replicas
// of its shape as fit. Tensor parallelism is not spread over PCIe: its
// all-reduce there is not in the speed model (the link rate is unknown),
// and a serving engineer runs replicas on such devices.
func servingLayouts(req *planning, sub *pool, pl *planned, inter float64) []layout {
	c := pl.Costs
	n := len(sub.Devices)
	var out []layout
	add := func(units [][]stage, tp int, unit string) {
		if len(units) == 0 {
			return
		}
		l := layoutOf(req, sub, pl, units, tp, unit)
		l.PerSequence, l.Total = scoreLayout(req, &l.Plan, inter)
		out = append(out, l)
	}
	if pl.Strategy == StrategyPipeline {
		add(placeUnits(sub, c, pl.TP, len(pl.Stages), n), pl.TP, StrategyPipeline)
		return out
	}
	add(placeUnits(sub, c, 1, 1, n), 1, StrategyNone)
	if !sub.tensorParallel() {
		return out
	}
	largest := 0
	for _, dom := range sub.Domains {
		largest = max(largest, len(dom))
	}
	for t := 2; t <= min(largest, maxTPSize); t++ {
		if c.validTP(t) {
			add(placeUnits(sub, c, t, 1, n/t), t, StrategyTensor)
		}
	}
	return out
}

// layoutOf is the plan of replicas units (each tp devices per stage) on
// sub: one replica is a plain plan of its strategy, several a data-parallel
// plan serving the batch split evenly.
func layoutOf(req *planning, sub *pool, pl *planned, units [][]stage, tp int, unit string) layout {
	base := pl.Costs.on(sub) // as placeUnits placed the units
	c := base
	for len(units) > 1 && c.VLLM != nil {
		// Each of vLLM's replicas profiles its own --max-num-seqs (the
		// replica's share of the batch) at start-up: the units placed at
		// the whole batch's charge are checked again at the share's.
		c = c.withSeqs(req.replicaBatch(len(units)))
		kept := refitUnits(units, c)
		if len(kept) == len(units) {
			units = kept
			break
		}
		if len(kept) == 0 {
			kept = units[:1] // one replica serves the whole batch, as placed
		}
		units, c = refitUnits(kept, base), base
	}
	p := planned{Fits: true, Strategy: unit, Level: pl.Level, Pool: sub, Stages: units[0], TP: tp, Costs: c}
	if len(units) > 1 {
		p.Strategy, p.Unit, p.DP, p.Replicas, p.Batch = StrategyData, unit, len(units), units, req.replicaBatch(len(units))
	}
	return layout{Plan: p}
}

// fewestLayout is the fewest plan scored as a layout, for the explanation.
func fewestLayout(req *planning, pl *planned, inter float64) layout {
	l := layout{Plan: *pl}
	l.PerSequence, l.Total = scoreLayout(req, &l.Plan, inter)
	return l
}

// scoreLayout is what the speed model gives a layout at the request's
// batch: one sequence's decode tokens/s and all replicas' together. Each
// replica serves its share of the batch, at most as many full-context
// sequences at once as its KV pool holds (concurrency); replicas left
// without a sequence (a batch smaller than the replicas) add nothing.
func scoreLayout(req *planning, pl *planned, inter float64) (perSeq, total float64) {
	share := pl.batchOf(req)
	running := share
	if share > 1 {
		running = min(share, concurrency(pl, req))
	}
	one := *pl
	one.Stages, one.DP, one.Replicas, one.Concurrent = pl.replicas()[0], 0, nil, running
	t := estimateNoted(&one, req, inter, fitted, false)
	if t.DecodeTokensPerS <= 0 {
		return 0, 0
	}
	busy := max(min(pl.replicaCount(), (req.BatchSize+share-1)/share), 1)
	return t.DecodeTokensPerS / float64(running), t.DecodeTokensPerS * float64(busy)
}

// concurrency is how many full-context sequences one replica of a paged
// plan holds at once (its KV pool), at least one: maxFitting of the
// replica with the least memory on a device, so that a layout of hundreds
// of replicas costs one replica's search.
func concurrency(pl *planned, req *planning) int {
	one := *pl
	one.DP, one.Replicas = 0, nil
	least := int64(-1)
	for _, r := range pl.replicas() {
		for _, s := range r {
			if b := s.budget(); least < 0 || b < least {
				least, one.Stages = b, r
			}
		}
	}
	return max(maxFitting(&one, req, false), 1)
}

// replicaCount is the plan's replicas (1 without data parallelism).
func (p *planned) replicaCount() int { return max(p.DP, 1) }

// relTie is how close two speeds are to count as equal: the speed model
// is not finer than this.
const relTie = 0.005

// betterLayout reports whether a beats b at batch: at batch 1 the faster
// sequence, above it more tokens/s in all; then more devices in use (more
// KV room, more sequences), then the larger tensor-parallel size (more KV
// room per replica).
func betterLayout(a, b *layout, batch int) bool {
	x, y := a.PerSequence, b.PerSequence
	if batch > 1 {
		x, y = a.Total, b.Total
	}
	if d := x - y; d > relTie*max(x, y) || -d > relTie*max(x, y) {
		return x > y
	}
	if a.Plan.devices() != b.Plan.devices() {
		return a.Plan.devices() > b.Plan.devices()
	}
	return a.Plan.TP > b.Plan.TP
}

// layoutName names a layout briefly: "TP8", "TP2 x 4 replicas", "1 device
// x 8 replicas", "PP2 x TP8".
func layoutName(pl *planned) string {
	var s string
	switch {
	case len(pl.Stages) > 1 && pl.TP > 1:
		s = fmt.Sprintf("PP%d x TP%d", len(pl.Stages), pl.TP)
	case len(pl.Stages) > 1:
		s = fmt.Sprintf("PP%d", len(pl.Stages))
	case pl.TP > 1:
		s = fmt.Sprintf("TP%d", pl.TP)
	default:
		s = "1 device"
	}
	if pl.DP > 1 {
		s += fmt.Sprintf(" x %d replicas", pl.DP)
	}
	return s
}

// explainPlacement says why the layout was chosen: its speed against the
// fewest devices' at the asked batch, the layouts compared, and how to ask
// for the fewest devices.
func explainPlacement(req *planning, chosen, fewest *layout, all []layout) string {
	pl := &chosen.Plan
	where := "over " + linkName(pl)
	what, unit := "the decode speed per sequence", "tokens/s per sequence"
	x, y := chosen.PerSequence, fewest.PerSequence
	if req.BatchSize > 1 {
		what, unit = "the decode tokens/s in all", "tokens/s in all"
		x, y = chosen.Total, fewest.Total
	}
	if req.ContextLength > chosenSpeedDepth {
		// The layouts are compared at the plan's context, a deeper KV cache
		// than the chosenSpeedDepth a chosen context's throughput is stated
		// at: say so, or the chosen layout's figure reads as a second,
		// different speed beside the Throughput line.
		unit += fmt.Sprintf(", at a KV depth of %d tokens per sequence", req.ContextLength)
	}
	speed := fmt.Sprintf("the speed model cannot compare the layouts (%s), so the most devices and the largest tensor-parallel size are taken", "no decode speed is estimated for these devices")
	switch {
	case x > 0 && y > 0 && x-y <= relTie*x && pl.DP > 1:
		speed = fmt.Sprintf("as fast as %s, the fewest devices that hold the model, at batch %d (%s %s), with %d replicas serving %d times the sequences at once",
			layoutName(&fewest.Plan), req.BatchSize, fmtSpeed(x), unit, pl.DP, pl.DP)
	case x > 0 && y > 0:
		speed = fmt.Sprintf("%.2gx %s of %s, the fewest devices that hold the model, at batch %d (%s against %s %s)",
			x/y, what, layoutName(&fewest.Plan), req.BatchSize, fmtSpeed(x), fmtSpeed(y), unit)
	}
	var cmp []string
	for i := range all {
		v := all[i].PerSequence
		if req.BatchSize > 1 {
			v = all[i].Total
		}
		if v > 0 {
			cmp = append(cmp, fmt.Sprintf("%s %s", layoutName(&all[i].Plan), fmtSpeed(v)))
		} else {
			cmp = append(cmp, layoutName(&all[i].Plan)+" unknown")
		}
	}
	return fmt.Sprintf("placement: %s %s: %s; layouts of the %d identical devices compared (%s): %s; %s plans the fewest devices instead",
		layoutName(pl), where, speed, len(pl.Pool.Devices), unit, strings.Join(cmp, ", "), HintPlacementFewest)
}

// linkName says what joins a layout's devices: the high-bandwidth link of
// its tensor-parallel groups, else that its replicas are separate devices.
func linkName(pl *planned) string {
	d := pl.Stages[0].Devices[0]
	if pl.TP > 1 && d.LinkKind != "" {
		if pl.DP > 1 {
			return d.LinkKind + ", replicas beyond it"
		}
		return d.LinkKind
	}
	if pl.DP > 1 && pl.TP == 1 && len(pl.Stages) == 1 {
		if d.LinkKind == "" {
			return "separate devices (the registry shows no high-bandwidth link between them: replicas, not tensor parallelism over PCIe or an unknown link)"
		}
		return "separate devices (one replica each is faster than tensor parallelism over " + d.LinkKind + " here)"
	}
	return "separate device groups"
}

// fmtSpeed writes a speed as the answer rounds it.
func fmtSpeed(v float64) string { return fmt.Sprintf("%g", round3(v)) }
