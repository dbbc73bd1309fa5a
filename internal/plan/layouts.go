// Stage 4 of planning: candidate layouts of one level on one pool (see the
// package comment in request.go).

package plan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// strategyRank orders strategies from best (simplest, fastest) to worst; a
// plan that does not fit ranks after all.
var strategyRank = map[string]int{StrategyNone: 0, StrategyData: 0, StrategyTensor: 1, StrategyPipeline: 2, StrategyOffload: 3}

// stage is a pipeline stage: tp devices holding the same layers.
type stage struct {
	Devices    []*device
	Start, End int
	Part       part // per device
}

func (s *stage) budget() int64 {
	b := int64(math.MaxInt64)
	for _, d := range s.Devices {
		if d.Usable < b {
			b = d.Usable
		}
	}
	return b
}

// planned is the outcome of planning one level on one pool.
type planned struct {
	Fits     bool
	Strategy string
	Level    quant.Level
	Pool     *pool
	Stages   []stage
	TP       int
	Reason   string // why it does not fit
	Code     string // the Refusal* code of Reason
	Costs    costs
	// Needs is, for a too_few_devices refusal, the number of devices the
	// layout asked for needs (tensor_parallel_size, replicas times a
	// replica's devices): devices of unknown memory left out could make
	// it up only where there are that many in all (devicesWanted).
	Needs int
	// Offloaded is true when the last stage is host RAM (cpu_offload).
	Offloaded bool
	// CPUMoE > 0: the last stage holds only the routed experts of the
	// first CPUMoE layers (llama.cpp --n-cpu-moe, moeoffload.go) and,
	// CPUMoEPart > 0, that many expert tensors of layer CPUMoE (-ot); the
	// GPU stages hold every layer's other weights.
	CPUMoE, CPUMoEPart int
	// AllExpertsOnHost: a llama.cpp offload whose GPU stages hold only the
	// dense weights of their layers (the last ones, hostFirst), every
	// routed expert in host memory (--cpu-moe, moestep3.go).
	AllExpertsOnHost bool
	// DP is the number of replicas of a request with "replicas" (0 without);
	// Replicas holds each replica's stages (Stages is replica 0's), Unit
	// the strategy of one replica and Batch the sequences one replica
	// serves (replicas.go).
	DP       int
	Replicas [][]stage
	Unit     string
	Batch    int
	// Concurrent, when > 0, is how many of Batch's sequences one replica
	// runs at once: what its paged KV pool holds at full context, where
	// that is fewer (the speed model decodes that many).
	Concurrent int
}

func (p *planned) devices() int {
	n := 0
	for _, r := range p.replicas() {
		for _, s := range r {
			n += len(s.Devices)
		}
	}
	return n
}

// accelerators is the number of devices p places weights on other than
// host RAM (the CPU).
func (p *planned) accelerators() int {
	n := 0
	for _, r := range p.replicas() {
		for _, s := range r {
			for _, d := range s.Devices {
				if d.Dev.Kind != registry.KindCPU {
					n++
				}
			}
		}
	}
	return n
}

// planPool finds the best plan for one level on one pool: one device, else
// tensor parallel inside a high-bandwidth domain, else pipeline (with tensor
// parallel stages where domains allow), else not fitting. tp > 0 is the
// request's tensor_parallel_size: only layouts of that degree are tried.
// The pool's engine decides what is possible (an engine that splits layers
// only, llama.cpp: no tensor parallelism).
func planPool(p *pool, c costs, l quant.Level, tp int) planned {
	c = c.on(p)
	if tp > 0 {
		return planForcedTP(p, c, l, tp)
	}
	if pl, ok := planSingle(p, c, l); ok {
		return pl
	}
	if p.tensorParallel() {
		if pl, ok := planTensor(p, c, l); ok {
			return pl
		}
	}
	if pl, ok := planPipeline(p, c, l, 0); ok {
		return pl
	}
	pl := notFitting(p, c, l)
	if t := largestTP(p, c); t > 1 && c.VLLM != nil {
		// The one-device figure carries vLLM's single-GPU charge; a
		// tensor-parallel group is charged more (NCCL and all-reduce
		// buffers): say what its devices would need.
		need := c.stagePart(0, c.Layers, t)
		pl.Reason += fmt.Sprintf("; split %d ways (the largest tensor-parallel group) each device needs %s (%s)", t, gib(need.total()), needSplitCharged(need, c, t))
	}
	return pl
}

// largestTP is the largest tensor-parallel size of identical devices
// inside one high-bandwidth domain of p that the model's heads allow (0:
// none).
func largestTP(p *pool, c costs) int {
	best := 0
	for _, g := range p.domainGroups() {
		for n := min(len(g), maxTPSize); n > best && n >= 2; n-- {
			if c.validTP(n) {
				best = n
				break
			}
		}
	}
	return best
}

// notFitting is the failed plan of a level on a pool, with the reason: what
// the level needs, part by part, against what the devices offer it (the
// engine's share of their free memory, budget.room).
func notFitting(p *pool, c costs, l quant.Level) planned {
	need := c.stagePart(0, c.Layers, 1)
	largest := p.Devices[0]
	for _, d := range p.Devices {
		if d.Usable > largest.Usable {
			largest = d
		}
	}
	pl := planned{Level: l, Pool: p, Costs: c, Code: RefusalMemory}
	if len(p.Devices) == 1 {
		// One device: there is no largest among several and nothing to
		// split over; say what it offers.
		pl.Reason = fmt.Sprintf("%s needs %s on one device (%s) and the one %s device has %s",
			l, gib(pl.oneDeviceBytes()), needSplitCharged(need, c, 1), p.label(), p.Budget.room(largest))
		if line := hostKVShortLine(p.Devices[0], c, need); line != "" {
			pl.Reason += "; " + line
		}
		if line := staticShareLine(largest, c, need); line != "" {
			pl.Reason += "; " + line
		}
		return pl
	}
	pl.Reason = fmt.Sprintf(
		"%s needs %s on one device (%s; the largest device has %s) and does not fit split over the %d %s devices (%s)",
		l, gib(pl.oneDeviceBytes()), needSplitCharged(need, c, 1), p.Budget.room(largest), len(p.Devices), p.label(), p.Budget.roomInAll(p))
	if line := staticShareLine(largest, c, need); line != "" {
		pl.Reason += "; on the largest device " + line
	}
	return pl
}

// needSplitCharged is needSplit with what the engine itself is charged on
// each device of a group of tp: vLLM's start-up charge where the plan is
// made for vLLM (vllmcharge.go), which is the part's activations and
// overhead, else the estimate's activations and runtime overhead, named
// as the answer's memory breakdown names them. The parts then add up to
// the need a refusal states: one said "needs 204.0 GiB (weights 200.7
// GiB, KV cache 2.0 GiB)".
func needSplitCharged(need part, c costs, tp int) string {
	if line := vllmChargeLine(c, tp); line != "" {
		return needSplit(need) + ", " + line
	}
	s := needSplit(need)
	if need.Activations > 0 {
		s += ", activations " + gib(need.Activations)
	}
	if need.Overhead > 0 {
		s += ", runtime overhead " + gib(need.Overhead)
	}
	return s
}

// needSplit says what a refused plan needs memory for, the larger of the
// weights and the KV cache first, so that a refusal caused by a long
// context or a large batch says so rather than blaming the weights.
func needSplit(need part) string {
	w := "weights " + gib(need.Weights)
	if need.KV <= need.Weights {
		if need.KV == 0 {
			return w
		}
		return w + ", KV cache " + gib(need.KV)
	}
	return "KV cache " + gib(need.KV) + ", weights " + gib(need.Weights)
}

// planForcedTP plans with exactly tp devices per stage: one group of tp
// identical devices inside a high-bandwidth domain (else, for vLLM, over
// PCIe), else pipeline stages of tp devices each.
func planForcedTP(p *pool, c costs, l quant.Level, tp int) planned {
	if tp == 1 {
		if pl, ok := planSingle(p, c, l); ok {
			return pl
		}
		if pl, ok := planPipeline(p, c, l, 1); ok {
			return pl
		}
		return notFitting(p, c, l)
	}
	if par := p.Budget.Engine.Parallelism(); !par.Tensor {
		return planned{Level: l, Pool: p, Costs: c, Code: RefusalTensorParallel, Reason: fmt.Sprintf(
			"tensor_parallel_size %d: %s; ask for tensor_parallel_size 1 or %s", tp, par.NoTensorWhy, par.Instead)}
	}
	if !c.validTP(tp) {
		return planned{Level: l, Pool: p, Costs: c, Code: RefusalTensorParallel, Reason: c.tpRefusal(tp)}
	}
	groups := tpGroups(p, tp)
	if len(groups) == 0 {
		// No high-bandwidth domain holds tp identical devices: engines still
		// run tensor parallelism over PCIe, slower.
		for _, g := range identicalGroups(p.Devices) {
			for i := 0; i+tp <= len(g); i += tp {
				groups = append(groups, g[i:i+tp])
			}
		}
	}
	if len(groups) == 0 {
		return planned{Level: l, Pool: p, Costs: c, Code: RefusalTooFewDevices, Needs: tp, Reason: fmt.Sprintf(
			"tensor_parallel_size %d needs %d identical %s devices; the pool has %d", tp, tp, p.label(), len(p.Devices))}
	}
	for _, g := range groups {
		st := stage{Devices: g, Start: 0, End: c.Layers, Part: c.stagePart(0, c.Layers, tp)}
		if c.stageFits(st, 1) {
			return planned{Fits: true, Strategy: StrategyTensor, Level: l, Pool: p, Stages: []stage{st}, TP: tp, Costs: c}
		}
	}
	if len(groups) > 1 {
		if stages, ok := fewestStages(groups, c); ok {
			return planned{Fits: true, Strategy: StrategyPipeline, Level: l, Pool: p, Stages: stages, TP: tp, Costs: c}
		}
	}
	pl := notFitting(p, c, l)
	pl.Reason = fmt.Sprintf("tensor_parallel_size %d: %s", tp, pl.Reason)
	if c.VLLM != nil {
		need := c.stagePart(0, c.Layers, tp)
		pl.Reason += fmt.Sprintf("; split %d ways each device needs %s (%s)", tp, gib(need.total()), needSplitCharged(need, c, tp))
	}
	if line := staticShortLine(groups[0], c); line != "" {
		pl.Reason += "; " + line
	}
	return pl
}

// planSingle puts the whole model on the fastest device that holds it
// (highest memory bandwidth; ties and unknown bandwidth: most usable memory),
// because decode speed is set by the device's bandwidth.
func planSingle(p *pool, c costs, l quant.Level) (planned, bool) {
	need := c.stagePart(0, c.Layers, 1)
	// The first device in bySpeed order that holds the model, found without
	// sorting: the fastest that fits, the earliest of equals.
	var best *device
	one := []*device{nil}
	for _, d := range p.Devices {
		if best != nil && !fasterDevice(d, best) {
			continue
		}
		one[0] = d
		if c.stageFits(stage{Devices: one, Start: 0, End: c.Layers, Part: need}, 1) {
			best = d
		}
	}
	if best == nil {
		return planned{}, false
	}
	st := stage{Devices: []*device{best}, Start: 0, End: c.Layers, Part: need}
	return planned{Fits: true, Strategy: StrategyNone, Level: l, Pool: p, Stages: []stage{st}, TP: 1, Costs: c}, true
}

// fasterDevice reports whether a comes before b in the order planSingle
// tries devices: higher memory bandwidth, then more usable memory.
func fasterDevice(a, b *device) bool {
	if a.BandwidthGBs != b.BandwidthGBs {
		return a.BandwidthGBs > b.BandwidthGBs
	}
	return a.Usable > b.Usable
}

// validTP reports whether n devices can split the attention heads (and KV
// heads: n divides them, or they divide n and are replicated) and, for a
// checkpoint stored in tiles, every FFN width into whole tiles a rank
// (splitsTiles).
func (c *costs) validTP(n int) bool {
	if n < 1 {
		return false
	}
	if c.Heads > 0 && c.Heads%n != 0 {
		return false
	}
	if c.KVHeads > 0 && c.KVHeads%n != 0 && n%c.KVHeads != 0 {
		return false
	}
	return c.brokenTile(n) == 0
}

// brokenTile is the first FFN width that n tensor-parallel ranks do not
// split into whole SplitBlock tiles each, 0 where every one splits (or
// the checkpoint stores no tiles).
func (c *costs) brokenTile(n int) int {
	if c.SplitBlock <= 0 || n <= 1 {
		return 0
	}
	for _, w := range c.SplitWidths {
		if w%n != 0 || (w/n)%c.SplitBlock != 0 {
			return w
		}
	}
	return 0
}

// perRank is w split n ways as a rank's share: "192 columns", or "1/n
// of 1000 columns" where n does not divide w.
func perRank(w, n int) string {
	if w%n != 0 {
		return fmt.Sprintf("1/%d of %d columns", n, w)
	}
	return fmt.Sprintf("%d columns", w/n)
}

// tpRefusal says why n is not a tensor-parallel size of the model
// (validTP false).
func (c *costs) tpRefusal(n int) string {
	if w := c.brokenTile(n); w > 0 && (c.Heads <= 0 || c.Heads%n == 0) {
		why := fmt.Sprintf("tensor_parallel_size %d gives each rank %s of the model's %d-wide FFN, not whole %dx%d blocks of the checkpoint's fp8 weights; %s",
			n, perRank(w, n), w, c.SplitBlock, c.SplitBlock, c.SplitWhy)
		for m := n - 1; m >= 2; m-- {
			if c.validTP(m) {
				return why + fmt.Sprintf("; tensor_parallel_size %d splits it whole", m)
			}
		}
		return why
	}
	return fmt.Sprintf("tensor_parallel_size %d does not divide the model's %d attention heads (%d KV heads)", n, c.Heads, c.KVHeads)
}

// identicalGroups splits devices into groups of the same name and memory
// size (tensor parallel ranks must be interchangeable), largest group first.
func identicalGroups(ds []*device) [][]*device {
	idx := map[identity]int{}
	var out [][]*device
	for _, d := range ds {
		k := identityOf(d)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], d)
	}
	slices.SortStableFunc(out, func(a, b []*device) int { return len(b) - len(a) })
	return out
}

// identity is what makes devices interchangeable ranks of a
// tensor-parallel group (identicalGroups): the name and the memory size.
type identity struct {
	name   string
	memory int64
}

func identityOf(d *device) identity { return identity{d.Dev.Name, d.Dev.MemoryBytes} }

// mostUsable returns the n devices of ds with the most usable memory, in ds
// order.
func mostUsable(ds []*device, n int) []*device {
	return devicesAt(ds, byUsable(ds)[:n])
}

// byUsable is the positions of ds, the most usable memory first; equal
// devices keep their order in ds.
func byUsable(ds []*device) []int {
	pos := make([]int, len(ds))
	for i := range pos {
		pos[i] = i
	}
	slices.SortStableFunc(pos, func(a, b int) int { return cmp.Compare(ds[b].Usable, ds[a].Usable) })
	return pos
}

// devicesAt is the devices of ds at positions pos, in ds order (it sorts
// pos).
func devicesAt(ds []*device, pos []int) []*device {
	slices.Sort(pos)
	out := make([]*device, len(pos))
	for i, k := range pos {
		out[i] = ds[k]
	}
	return out
}

// maxTPSize bounds tensor-parallel groups (planreq.MaxTensorParallel).
const maxTPSize = planreq.MaxTensorParallel

// planTensor finds the fewest identical devices inside one high-bandwidth
// domain that hold the model split tensor-parallel.
func planTensor(p *pool, c costs, l quant.Level) (planned, bool) {
	var best *planned
	for _, g := range p.domainGroups() {
		for n := 2; n <= len(g) && n <= maxTPSize; n++ {
			if !c.validTP(n) {
				continue
			}
			if best != nil && n >= best.TP {
				break
			}
			ds := mostUsable(g, n)
			st := stage{Devices: ds, Start: 0, End: c.Layers, Part: c.stagePart(0, c.Layers, n)}
			if c.stageFits(st, 1) {
				best = &planned{Fits: true, Strategy: StrategyTensor, Level: l, Pool: p, Stages: []stage{st}, TP: n, Costs: c}
				break
			}
		}
	}
	if best == nil {
		return planned{}, false
	}
	return *best, true
}

// tpGroups cuts the pool into candidate stages of t identical devices inside
// one domain (t = 1: every device is a stage).
func tpGroups(p *pool, t int) [][]*device {
	var out [][]*device
	if t == 1 {
		for _, d := range p.Devices {
			out = append(out, []*device{d})
		}
		return out
	}
	for _, g := range p.domainGroups() {
		for i := 0; i+t <= len(g); i += t {
			out = append(out, g[i:i+t:i+t])
		}
	}
	return out
}

// planPipeline splits the layers over stages: with the largest tensor
// parallel size every stage can use (engines need one size for all stages),
// and the fewest stages whose memory holds the model. maxTP > 0 bounds the
// tensor parallel size; an engine that splits layers only gets stages of
// one device.
func planPipeline(p *pool, c costs, l quant.Level, maxTP int) (planned, bool) {
	maxT := 1
	if p.tensorParallel() && maxTP != 1 {
		for _, g := range p.domainGroups() {
			if len(g) > maxT {
				maxT = min(len(g), maxTPSize)
			}
		}
	}
	if maxTP > 0 {
		maxT = min(maxT, maxTP)
	}
	for t := maxT; t >= 1; t-- {
		if !c.validTP(t) {
			continue
		}
		groups := tpGroups(p, t)
		if len(groups) < 2 {
			continue
		}
		if stages, ok := fewestStages(groups, c); ok {
			strategy := StrategyPipeline
			return planned{Fits: true, Strategy: strategy, Level: l, Pool: p, Stages: stages, TP: t, Costs: c}, true
		}
	}
	return planned{}, false
}

// fewestStages takes the k largest candidate stages, in pool order, for the
// smallest k whose layer capacity can hold the model (found from prefix sums
// of what each stage holds without the embeddings), then a few larger k if
// the embeddings or rounding need them.
func fewestStages(groups [][]*device, c costs) ([]stage, bool) {
	idx := make([]int, len(groups))
	room := make([]int, len(groups))
	for i, g := range groups {
		idx[i] = i
		room[i] = maxLayers(&stage{Devices: g}, 1, 3, c) // a middle stage
	}
	sort.SliceStable(idx, func(a, b int) bool { return room[idx[a]] > room[idx[b]] })
	k0, sum := 0, 0
	for k, g := range idx {
		sum += room[g]
		if sum >= c.Layers {
			k0 = k + 1
			break
		}
	}
	if k0 == 0 {
		return nil, false
	}
	k0 = max(k0, 2)
	for k := k0; k <= len(groups) && k <= c.Layers && k < k0+maxExtraStages; k++ {
		pick := append([]int(nil), idx[:k]...)
		sort.Ints(pick)
		stages := make([]stage, k)
		for i, g := range pick {
			stages[i] = stage{Devices: groups[g]}
		}
		// One KV pool for every stage where the engine names it on host
		// memory (costs.hostKVHoldsTogether).
		if assignLayers(stages, c, false) && c.hostKVHoldsTogether(stages) {
			return stages, true
		}
	}
	return nil, false
}

// maxExtraStages bounds how many stage counts beyond the capacity estimate
// are tried (the embeddings on the first and last stage rarely need more
// than one extra).
const maxExtraStages = 8

// maxLayers is how many layers stage i (of n) can hold in its budget,
// counting what the stage really holds beside them (stagePart): the input
// embedding on the first stage only, the output head on the last only,
// and the start-up charge at those weights. Each stage of several holds
// at most the layers the others leave it (one each); a single stage holds
// every layer or none.
func maxLayers(s *stage, i, n int, c costs) int {
	t := len(s.Devices)
	fits := func(k int) bool {
		start, end := stageSpan(i, n, k, c.Layers)
		return c.stagePart(start, end, t).total() <= s.budget()
	}
	if n <= 1 {
		if fits(c.Layers) {
			return c.Layers
		}
		return 0
	}
	// The largest k in [0, hi] that fits: the stage's memory grows with
	// its layers.
	lo, hi := 0, c.Layers-(n-1)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// stageSpan is the layers [start, end) stage i of n holds when it holds k
// of layers: the first from layer 0, the last up to the final layer, one
// between from layer 1 (touching neither embedding).
func stageSpan(i, n, k, layers int) (start, end int) {
	switch {
	case i == 0:
		return 0, k
	case i == n-1:
		return layers - k, layers
	default:
		return 1, 1 + k
	}
}

// assignLayers gives every stage a contiguous run of whole layers, covering
// each layer exactly once, in proportion to what each stage can hold (so
// headroom is spread evenly), or greedily (fill each stage in order, for
// offloading where the last stage is slow host memory). Every stage gets at
// least one layer. Afterwards each stage is checked against its budget and
// layers are moved off a stage that rounding overfilled; false when no
// assignment fits.
func assignLayers(stages []stage, c costs, greedy bool) bool {
	n := len(stages)
	if n == 0 || n > c.Layers {
		return false
	}
	maxK := make([]int, n)
	sum := 0
	for i := range stages {
		maxK[i] = maxLayers(&stages[i], i, n, c)
		if maxK[i] < 1 {
			return false
		}
		sum += maxK[i]
	}
	if sum < c.Layers {
		return false
	}
	counts := make([]int, n)
	if greedy {
		used := 0
		for i := range counts {
			if i == n-1 {
				counts[i] = c.Layers - used
			} else {
				counts[i] = min(maxK[i], c.Layers-used-(n-1-i))
			}
			used += counts[i]
		}
	} else {
		counts = proportional(maxK, c.Layers)
	}
	for iter := 0; iter < 4*c.Layers+4; iter++ {
		start := 0
		over := -1
		for i := range stages {
			stages[i].Start, stages[i].End = start, start+counts[i]
			start += counts[i]
			stages[i].Part = c.stagePart(stages[i].Start, stages[i].End, len(stages[i].Devices))
			if over < 0 && !c.stageFits(stages[i], n) {
				over = i
			}
		}
		if over < 0 {
			return true
		}
		// Move one layer from the overfilled stage to the nearest stage with
		// room for it.
		if counts[over] <= 1 || !moveOne(stages, counts, over, c) {
			return false
		}
	}
	return false
}

func sumInts(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// proportional splits total into integer counts proportional to weights
// (largest remainder), each at least 1 and at most its weight.
func proportional(weights []int, total int) []int {
	n := len(weights)
	sum := sumInts(weights)
	counts := make([]int, n)
	rem := make([]float64, n)
	given := 0
	for i, w := range weights {
		exact := float64(total) * float64(w) / float64(sum)
		counts[i] = int(exact)
		if counts[i] < 1 {
			counts[i] = 1
		}
		if counts[i] > w {
			counts[i] = w
		}
		rem[i] = exact - float64(counts[i])
		given += counts[i]
	}
	for given != total {
		best := -1
		for i := range counts {
			if given < total && counts[i] < weights[i] && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
			if given > total && counts[i] > 1 && (best < 0 || rem[i] < rem[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		if given < total {
			counts[best]++
			rem[best]--
			given++
		} else {
			counts[best]--
			rem[best]++
			given--
		}
	}
	return counts
}

// moveOne moves a layer from stage from to the closest stage whose budget
// takes one more layer; false when none can.
func moveOne(stages []stage, counts []int, from int, c costs) bool {
	for dist := 1; dist < len(stages); dist++ {
		for _, to := range []int{from - dist, from + dist} {
			if to < 0 || to >= len(stages) {
				continue
			}
			counts[from]--
			counts[to]++
			if fitsWith(stages, counts, to, c) {
				return true
			}
			counts[from]++
			counts[to]--
		}
	}
	return false
}

// fitsWith reports whether stage i fits under counts.
func fitsWith(stages []stage, counts []int, i int, c costs) bool {
	start := sumInts(counts[:i])
	s := stages[i]
	s.Part = c.stagePart(start, start+counts[i], len(s.Devices))
	return c.stageFits(s, len(stages))
}

// hostDevice returns the host RAM as a planning device for cpu_offload, nil
// when the registry has no usable CPU entry or devices excludes it.
func hostDevice(req *planning, want map[string]bool) *device {
	if len(req.Cluster) > 0 || req.Registry == nil {
		return nil
	}
	for _, d := range req.Registry.Devices {
		if d.Kind == registry.KindCPU && d.Available && d.UsableMemory() > 0 && (want == nil || want[d.ID]) {
			return newDevice(d, d.ID, 0, req.engineRule().budgetFor(&d), nil)
		}
	}
	return nil
}

// planOffloadLevels plans cpu_offload: every accelerator of a pool holds as
// many whole layers as fits (filled in order), the rest stay in host RAM as
// the last stage; a llama.cpp MoE plan moves experts first (moeSplit, else
// step3Split), as llama.cpp's --fit does. Each level tried (ladderFor:
// levels and, where a published file may run them, the levels the ladder
// leaves out) that fits this way gets its plan (offloadAt); publishedFits
// narrows them as it does the plans on the devices alone (skipped the
// better level passed over, dropped the left-out levels kept),
// offloadBySpeed then weighs their decode speeds, and where it cannot, the
// highest-quality level that keeps at least half of the layers on
// accelerators wins (offloaded layers cost PCIe time every token), a MoE
// plan at the first level it splits, and when none does, the level
// keeping the most layers on accelerators. Why is offloadBySpeed's line,
// "" where it did not decide; Best is nil when no level fits.
func planOffloadLevels(req *planning, accel []*pool, levels []quant.Level) offloadChoice {
	want, _ := req.checkDevices()
	host := hostDevice(req, want)
	if host == nil {
		return offloadChoice{}
	}
	var fits []*planned
	var oc offloadChoice
	for _, l := range ladderFor(req, levels) {
		if p, ok := offloadAt(req, accel, host, l); ok {
			fits = append(fits, &p)
			oc.Fitting = append(oc.Fitting, l)
		}
	}
	if len(fits) == 0 {
		return offloadChoice{}
	}
	fits, oc.Skipped, oc.Dropped = publishedFits(req, levels, fits)
	var ok bool
	if oc.Best, oc.Why, ok = offloadBySpeed(req, levels, fits); ok {
		return oc
	}
	bestOn := -1
	for _, p := range fits {
		if p.moeOffload() || p.AllExpertsOnHost {
			oc.Best = p
			return oc
		}
		on := p.Stages[len(p.Stages)-1].Start
		if 2*on >= p.Costs.Layers {
			oc.Best = p
			return oc
		}
		if on > bestOn {
			oc.Best, bestOn = p, on
		}
	}
	return oc
}

// offloadChoice is what planOffloadLevels found: the plan chosen (Best, nil
// where no level fits offloaded), offloadBySpeed's line (Why), the better
// level publishedFits passed over (Skipped) and the left-out levels it kept
// (Dropped), and every level tried that fits offloaded (Fitting, best
// quality first), which the levels table marks as such.
type offloadChoice struct {
	Best    *planned
	Why     string
	Skipped *planned
	Dropped []*planned
	Fitting []quant.Level
}

// hostBeside is host as a cpu_offload plan on pool p may use it: its
// memory less what p's devices may use of it where they share it (a DGX
// Spark's GB10, an Apple GPU, an APU: MemoryShared), nil when nothing is
// left. Such a GPU's part of the plan lives in the same RAM the host's
// part would, so moving layers or experts to the host frees none of it:
// counted twice, DeepSeek-R1 "fit" a 128 GB DGX Spark offloaded at q2_k,
// 117.7 GiB on cuda:0 beside 111.2 GiB on cpu:0.
func hostBeside(host *device, p *pool) *device {
	var shared int64
	for _, d := range p.Devices {
		if d.Dev.MemoryShared {
			shared += d.Dev.SharedUsableMemory()
		}
	}
	if shared == 0 {
		return host
	}
	if host.Usable <= shared {
		return nil
	}
	h := *host
	h.Usable -= shared
	return &h
}

// offloadAt is the cpu_offload plan of level l on the first pool that
// holds it with host RAM: weights read across PCIe where the pool's engine
// streams them (streamedOffloadAt, vLLM and SGLang), a MoE split where it moves
// experts (moeOffloadable), else whole layers; of dense plans, the first
// keeping at least half of the layers on the pool, else the one keeping
// the most.
func offloadAt(req *planning, accel []*pool, host *device, l quant.Level) (planned, bool) {
	if _, sane := estimateSane(req, l, req.ContextLength, req.BatchSize); !sane {
		return planned{}, false
	}
	// The host computes what it holds, except under an engine that only
	// stores weights there.
	hostComputes := supported(&host.Dev, l.Native())
	var best *planned
	bestOn := -1
	all := host
	for _, whole := range accel {
		p, _ := levelPool(req, whole, l)
		if p == nil {
			continue
		}
		if host = hostBeside(all, p); host == nil {
			continue
		}
		if streamsWeights(p) {
			// vLLM, SGLang: weights to host memory, every layer on
			// the GPU.
			if pl, ok := streamedOffloadAt(req, p, l, host); ok {
				return pl, true
			}
			continue
		}
		if !hostComputes {
			continue
		}
		b, _ := estimateSaneOn(req, p, l, req.ContextLength, fitBatch(p, req.BatchSize))
		c := newCosts(req.Model, b, p.sizedAs(l)).on(p)
		if moeOffloadable(p, c) {
			// Experts to the host before whole layers, as llama.cpp's
			// --fit does: every layer keeps its attention and KV
			// cache on a GPU.
			if stages, h, ok := moeSplit(c, p.Devices, host); ok {
				return planned{Fits: true, Strategy: StrategyOffload, Level: l, Pool: p, Stages: stages, TP: 1, Costs: c, Offloaded: true, CPUMoE: h.Layers, CPUMoEPart: h.Part}, true
			}
			// Not every layer's dense weights fit: --fit's step 3
			// keeps the dense weights of the last layers that fit on
			// the GPUs, every expert in host memory.
			if stages, ok := step3Split(c, p.Devices, host); ok {
				return planned{Fits: true, Strategy: StrategyOffload, Level: l, Pool: p, Stages: stages, TP: 1, Costs: c, Offloaded: true, AllExpertsOnHost: true}, true
			}
		}
		var stages []stage
		for _, d := range p.Devices {
			if maxLayers(&stage{Devices: []*device{d}}, 1, 3, c) >= 1 {
				stages = append(stages, stage{Devices: []*device{d}})
			}
		}
		if len(stages) == 0 {
			continue
		}
		stages = append(stages, stage{Devices: []*device{host}})
		if len(stages) > c.Layers || !assignLayers(stages, c, true) {
			continue
		}
		pl := planned{Fits: true, Strategy: StrategyOffload, Level: l, Pool: p, Stages: stages, TP: 1, Costs: c, Offloaded: true}
		on := stages[len(stages)-1].Start
		if 2*on >= c.Layers {
			return pl, true
		}
		if on > bestOn {
			best, bestOn = &pl, on
		}
	}
	if best == nil {
		return planned{}, false
	}
	return *best, true
}

// hostFirst reports whether pl is a dense plan with layers in host memory
// whose engine keeps the first layers on the host (engine.Parallelism
// HostLayersFirst: llama.cpp; a streamed plan, whose engine offloads the
// first layers' weights: vLLM, SGLang, streamedOffloadAt, whose parts are its
// own). It is planned with the GPUs first, but
// llama.cpp puts the last -ngl layers on the GPUs and the first ones on
// the CPU (i_gpu_start = n_layer - n_gpu_layers in load_tensors,
// src/llama-model.cpp of ggml-org/llama.cpp). The memory is the same, as every layer is costed
// alike and the output layer stays on the CPU either way (it is on a GPU
// only with -ngl above n_layer), so only the layer numbers and the order
// of the stages differ: the host holds [0, L-n) and runs first, the GPUs
// [L-n, L) in their order (layerSpan, inLayerOrder).
func (pl *planned) hostFirst() bool {
	if !pl.Offloaded || pl.moeOffload() || len(pl.Stages) < 2 || pl.Pool == nil ||
		pl.Pool.Budget.Engine == nil || !pl.Pool.Budget.Engine.Parallelism().HostLayersFirst && !pl.streamed() {
		return false
	}
	return pl.Stages[len(pl.Stages)-1].End == pl.Costs.Layers
}

// layerSpan is the layers stage s of pl holds as the engine numbers them.
func (pl *planned) layerSpan(s stage) (start, end int) {
	if !pl.hostFirst() {
		return s.Start, s.End
	}
	host := pl.Stages[len(pl.Stages)-1]
	shift := pl.Costs.Layers - host.Start
	if s.Start == host.Start && s.End == host.End {
		return 0, shift
	}
	return s.Start + shift, s.End + shift
}

// inLayerOrder is stages in the order the engine runs them.
func (pl *planned) inLayerOrder(stages []stage) []stage {
	if !pl.hostFirst() || len(stages) < 2 {
		return stages
	}
	n := len(stages)
	return append([]stage{stages[n-1]}, stages[:n-1]...)
}
