package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// Data parallelism: the request's "replicas" asks for that many copies of
// the model, each on its own devices, each serving ceil(batch_size /
// replicas) of the sequences. Every replica is the smallest model-parallel
// unit (one device, tensor parallel, pipeline, tensor x pipeline) that holds
// the model at that per-replica batch, and all replicas have the same shape
// (one --tensor-parallel-size for the engine) on devices of one identical
// group (same name and memory size). Without "replicas" nothing here runs:
// a data-parallel plan never needs less memory per device than the
// tensor-parallel plan over the same devices (every replica holds all the
// weights), so it is never chosen on the planner's own; it is chosen for
// throughput, which only the host can weigh against latency.

// dataParallel reports whether the request asked for replicas.
func (r *planning) dataParallel() bool { return r.Replicas > 0 || r.ReplicasMax }

// replicaBatch is the batch one of n replicas serves: the requested batch
// split evenly, rounded up.
func (r *planning) replicaBatch(n int) int {
	if n < 1 {
		return r.BatchSize
	}
	return (r.BatchSize + n - 1) / n
}

// rowBatch is the batch the level table is estimated at: one replica's
// share when a number of replicas was asked, the whole batch otherwise
// ("max" rows of fitting levels are replaced by the chosen plan's share).
func (r *planning) rowBatch() int {
	if r.Replicas > 1 {
		return r.replicaBatch(r.Replicas)
	}
	return r.BatchSize
}

// planOn plans one level on one pool: planPool for a request without
// replicas (b is the estimate at the request's batch), planReplicas for one
// with them.
func (r *planning) planOn(p *pool, b quant.Breakdown, l quant.Level) planned {
	if !r.dataParallel() {
		return planPool(p, r.costsOf(b, p.sizedAs(l), r.ContextLength, r.BatchSize), l, r.TensorParallel)
	}
	return planReplicas(r, p, l)
}

// batchOf is the batch one replica of the plan serves.
func (p *planned) batchOf(req *planning) int {
	if p.Batch > 0 {
		return p.Batch
	}
	return req.BatchSize
}

// replicas returns the stages of every replica (one replica, the plan's
// stages, when the plan is not data parallel).
func (p *planned) replicas() [][]stage {
	if len(p.Replicas) > 0 {
		return p.Replicas
	}
	return [][]stage{p.Stages}
}

// planReplicas places the request's replicas on one pool at level l. One
// replica (replicas 1, or "max" where no group holds two) is today's plan of
// the whole pool, marked dp_size 1. Otherwise every group of identical
// devices is tried and the best placement wins: fitting, then (for "max")
// the most replicas, then the simplest unit, then the fewest devices.
func planReplicas(req *planning, p *pool, l quant.Level) planned {
	if req.Replicas == 1 {
		return single(req, p, l)
	}
	var best *planned
	var reasons []string
	code, needs := RefusalTooFewDevices, req.Replicas // no group of identical devices
	for _, g := range identicalGroups(p.Devices) {
		pl := replicasOn(req, subPool(p, g), l)
		if !pl.Fits {
			if len(reasons) == 0 {
				code, needs = pl.Code, pl.Needs
			}
			reasons = append(reasons, pl.Reason)
			continue
		}
		if best == nil || betterPlan(&pl, best) {
			cp := pl
			best = &cp
		}
	}
	if best != nil && best.DP > 1 {
		return *best
	}
	if req.ReplicasMax {
		return single(req, p, l)
	}
	return planned{Level: l, Pool: p, DP: req.Replicas, Code: code, Needs: needs, Reason: strings.Join(dedupe(reasons), "; ")}
}

// single is the one-replica plan: planPool at the whole batch.
func single(req *planning, p *pool, l quant.Level) planned {
	b, sane := estimateSaneOn(req, p, l, req.ContextLength, fitBatch(p, req.BatchSize))
	if !sane {
		return planned{Level: l, Pool: p, Code: RefusalTooLarge, Reason: "needs more than 1 EiB"}
	}
	pl := planPool(p, req.costsOf(b, p.sizedAs(l), req.ContextLength, req.BatchSize), l, req.TensorParallel)
	pl.DP = 1
	if pl.Fits {
		pl.Unit = pl.Strategy
		pl.Replicas = [][]stage{pl.Stages}
	}
	return pl
}

// replicasOn places replicas on one group of identical devices (sub). The
// first replica is the smallest unit planPool finds at the per-replica
// batch; the others take the same shape on the devices left. "max" starts
// from one replica per device and lowers the count to what was placed
// (fewer replicas mean a larger per-replica batch, never more room), until
// the count placed reaches the count asked.
func replicasOn(req *planning, sub *pool, l quant.Level) planned {
	n := len(sub.Devices)
	want := req.Replicas
	if req.ReplicasMax {
		want = n
	}
	if want > n {
		return planned{Level: l, Pool: sub, DP: want, Code: RefusalTooFewDevices, Needs: want, Reason: fmt.Sprintf(
			"%d replicas need at least %d devices; the group of identical %s devices (%s) has %d",
			want, want, sub.label(), groupName(sub), n)}
	}
	for {
		batch := req.replicaBatch(want)
		b, sane := estimateSaneOn(req, sub, l, req.ContextLength, fitBatch(sub, batch))
		if !sane {
			return planned{Level: l, Pool: sub, DP: want, Code: RefusalTooLarge, Reason: "needs more than 1 EiB"}
		}
		c := req.costsOf(b, sub.sizedAs(l), req.ContextLength, batch)
		c.VLLM = c.VLLM.onPool(sub) // the plan's Costs charge what its parts do
		first := planPool(sub, c, l, req.TensorParallel)
		if !first.Fits {
			return planned{Level: l, Pool: sub, DP: want, Code: first.Code, Reason: fmt.Sprintf(
				"one replica (batch %d) does not fit the %d identical %s devices (%s): %s", batch, n, sub.label(), groupName(sub), first.Reason)}
		}
		used := map[*device]bool{}
		markUsed(used, first.Stages)
		units := append([][]stage{first.Stages}, placeUnits(without(sub, used), c, first.TP, len(first.Stages), want-1)...)
		if len(units) >= want {
			strategy := first.Strategy
			if want > 1 {
				strategy = StrategyData
			}
			return planned{Fits: true, Strategy: strategy, Unit: first.Strategy, Level: l, Pool: sub,
				Stages: units[0], TP: first.TP, Costs: c, DP: want, Batch: batch, Replicas: units}
		}
		if !req.ReplicasMax {
			return planned{Level: l, Pool: sub, DP: want, Code: RefusalTooFewDevices, Needs: want * first.devices(), Reason: fmt.Sprintf(
				"%d replicas do not fit: one replica (batch %d) is %s over %s, and the %d identical %s %s (%s) hold only %d such %s",
				want, batch, first.Strategy, counted(first.devices(), "device"), n, sub.label(), nounOf(n, "device"), groupName(sub), len(units), nounOf(len(units), "replica"))}
		}
		want = min(want-1, len(units))
	}
}

// placeUnits places up to n more replicas of tp devices per stage and k
// stages on the pool's devices (the first replica's shape), best devices
// first. Each candidate list is sorted once and taken in order, so a pool of
// thousands of devices costs one sort, not one per replica: once a unit
// from the sorted list does not fit, none after it does.
func placeUnits(p *pool, c costs, tp, k, n int) [][]stage {
	c = c.on(p)
	var out [][]stage
	switch {
	case n <= 0:
	case k == 1 && tp == 1:
		need := c.stagePart(0, c.Layers, 1)
		for _, d := range bySpeed(p.Devices) {
			st := stage{Devices: []*device{d}, Start: 0, End: c.Layers, Part: need}
			if len(out) == n || !c.stageFits(st, 1) {
				break
			}
			out = append(out, []stage{st})
		}
	case k == 1:
		part := c.stagePart(0, c.Layers, tp)
		for _, dom := range p.Domains {
			// Units of the most usable devices first, each in domain
			// order (tensor-parallel ranks follow the domain, as
			// mostUsable's do).
			order := byUsable(dom)
			for i := 0; i+tp <= len(order) && len(out) < n; i += tp {
				st := stage{Devices: devicesAt(dom, order[i:i+tp]), Start: 0, End: c.Layers, Part: part}
				if !c.stageFits(st, 1) {
					break
				}
				out = append(out, []stage{st})
			}
		}
	default:
		groups := tpGroups(p, tp)
		room := make([]int, len(groups))
		idx := make([]int, len(groups))
		for i, g := range groups {
			idx[i] = i
			room[i] = maxLayers(&stage{Devices: g}, 1, 3, c) // a middle stage
		}
		sort.SliceStable(idx, func(a, b int) bool { return room[idx[a]] > room[idx[b]] })
		for i := 0; i+k <= len(idx) && len(out) < n && k <= c.Layers; i += k {
			pick := append([]int(nil), idx[i:i+k]...)
			sort.Ints(pick)
			stages := make([]stage, k)
			for s, g := range pick {
				stages[s] = stage{Devices: groups[g]}
			}
			if !assignLayers(stages, c, false) {
				break
			}
			out = append(out, stages)
		}
	}
	return out
}

// bySpeed orders devices as planSingle tries them: highest memory bandwidth
// first, then most usable memory.
func bySpeed(ds []*device) []*device {
	out := append([]*device(nil), ds...)
	sort.SliceStable(out, func(i, j int) bool { return fasterDevice(out[i], out[j]) })
	return out
}

// subPool is the pool restricted to devices g: its high-bandwidth domains
// cut to g (a domain left with one device is no domain).
func subPool(p *pool, g []*device) *pool {
	in := make(map[*device]bool, len(g))
	for _, d := range g {
		in[d] = true
	}
	return restrict(p, in, g)
}

// without is the pool less the used devices.
func without(p *pool, used map[*device]bool) *pool {
	keep := map[*device]bool{}
	var ds []*device
	for _, d := range p.Devices {
		if !used[d] {
			keep[d] = true
			ds = append(ds, d)
		}
	}
	return restrict(p, keep, ds)
}

func restrict(p *pool, in map[*device]bool, ds []*device) *pool {
	out := &pool{Kind: p.Kind, Vendor: p.Vendor, Budget: p.Budget, Devices: ds, InterNodeGBs: p.InterNodeGBs, root: p.origin(), byEngine: p.byEngine}
	for _, dom := range p.Domains {
		if kept := keptOf(dom, in); len(kept) > 1 {
			out.Domains = append(out.Domains, kept)
		}
	}
	out.setGPUs()
	return out
}

// keptOf is the devices of dom that are in in, in dom order (nil when
// none is).
func keptOf(dom []*device, in map[*device]bool) []*device {
	var kept []*device
	for _, d := range dom {
		if in[d] {
			if kept == nil {
				kept = make([]*device, 0, len(dom))
			}
			kept = append(kept, d)
		}
	}
	return kept
}

func markUsed(used map[*device]bool, stages []stage) {
	for _, s := range stages {
		for _, d := range s.Devices {
			used[d] = true
		}
	}
}

// groupName names a group of identical devices by its first device.
func groupName(p *pool) string {
	if len(p.Devices) == 0 {
		return "none"
	}
	d := p.Devices[0].Dev
	name := d.Name
	if name == "" {
		name = string(d.Kind)
	}
	return fmt.Sprintf("%s, %s", name, gib(d.MemoryBytes))
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
