// Stage 5 of planning: the choice over levels and pools (see the package
// comment in request.go).

package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// autoLevels is what quant "auto" tries, best quality first. fp32 is never
// chosen by auto: checkpoints are published in 16-bit, so fp32 serving
// doubles memory and halves decode speed for no quality gain; ask for it
// explicitly to plan it.
var autoLevels = []quant.Level{quant.BF16, quant.FP16, quant.FP8, quant.INT8, quant.INT4}

// choice is the outcome of planning a request: the chosen plan (fitting or
// the best failure), the table of levels, and what the search found on the
// way, as facts; explainChoice turns them into the explanation.
type choice struct {
	Plan       planned
	Rows       []LevelRow
	InterStage float64 // bandwidth between pipeline stages, GB/s, 0 unknown
	Cluster    bool
	// Pools are the request's device pools (idle.go reads them).
	Pools []*pool
	// Spread is the serving placement's comparison when it spread the plan
	// over more devices than the fewest that hold it (placement.go); nil
	// when it did not. placement words it.
	Spread *spread
	// Llama is the llama.cpp placement's comparison when it used more
	// devices than the fewest that hold the model (llamaplacement.go);
	// nil when it did not. llamaPlacement words it.
	Llama *llamaSpread
	// SpeedWhy says how decode speed weighed in the level of a CPU-only
	// llama.cpp plan (cpuspeed.go); "" where it did not.
	SpeedWhy string
	// PublishedWhy names the better level that fits and that no
	// published checkpoint runs, where auto passed it over
	// (preferPublished, unpublishedLine); "" otherwise.
	PublishedWhy string
	// DroppedWhy says why a level the ladder leaves out (a worse level
	// that is not smaller than a better one) was planned: a published file
	// runs it and none runs the better, smaller level (droppedLine); ""
	// otherwise.
	DroppedWhy string
	// FileWhy says what the published file the plan's engine loads holds
	// beyond the weights derived from mainline llama.cpp's mix, where it
	// was made by other rules and the plan charges it (fileLine), or,
	// where nothing fits, the file the refusal's level would load; ""
	// otherwise.
	FileWhy string
	// OnDeviceWhy names the level that fits on the accelerators alone,
	// which no published checkpoint runs, passed over for a cpu_offload
	// plan a published checkpoint runs (offloadOverUnpublished,
	// onDeviceLine); "" otherwise.
	OnDeviceWhy string

	// UnknownMemory names, each with why, the available accelerators of
	// their own memory (and the CPU where host RAM is the only pool, or
	// include_cpu planned it once nothing fit the accelerators) the
	// planner left out because
	// their memory is unknown, beside devices whose memory is known
	// (unknownMemoryDevices); nil when there are none. Counted, they might
	// hold what the others do not: a refusal for memory is then unknown,
	// not no (fit), and a plan names them (unknownMemoryWarning).
	UnknownMemory []string
	// UnknownRuns is the levels tried that a pool the accelerators of
	// unknown memory join, counted, would run, and RunsNamed those of
	// them in such a pool (unknownRunning); nil where none would. Where
	// no device of known memory runs a level, the level is then unknown,
	// not no: on its row (levelRows) and, refused as unsupported, in the
	// answer (fit).
	UnknownRuns map[quant.Level]bool
	RunsNamed   []string
	// running is the ids of the accelerators of unknown memory that,
	// counted, would run a level tried, and counted whether unknownRunning
	// could tell (one registry): where it could, only they are named and
	// counted (unknownNamed).
	running map[string]bool
	counted bool
	// Known is the number of devices of known memory planned on (the
	// passes' pools): with UnknownMemory, the devices there are in all,
	// which a too_few_devices refusal's Needs is weighed against
	// (unknownCouldChange).
	Known int

	// LevelLeftOut is, by device id, why a device of the plan's pool
	// that does not run the plan's level was left out of it (levelPool:
	// a V100 under a bf16 plan made on the H100 beside it); the idle line
	// says it (splitByEngine). nil where none was.
	LevelLeftOut map[string]string

	// LevelsWhy says which levels were tried and why (levelsFor).
	LevelsWhy string
	// Devices is the devices the request restricted planning to.
	Devices []string
	// Outcome is how the plan was found.
	Outcome outcome
	// HostOnly: no available accelerator with known usable memory (an APU
	// whose shared memory was not reported counts as none), so host RAM was
	// planned on.
	HostOnly bool
	// OffloadWithReplicas: cpu_offload was asked with replicas, which are
	// not combined.
	OffloadWithReplicas bool
	// CouldOffload and CouldIncludeCPU: nothing fits, and the request did
	// not ask for cpu_offload or include_cpu, which the machine allows.
	CouldOffload, CouldIncludeCPU bool
	// HostAtPCIe says, for a fitting offloaded plan, not streamed, whose
	// host part (the layers or experts left in host RAM) does not run at
	// a known host memory bandwidth (hostRuns false), why: the decode step
	// then times what it reads at the GPU's PCIe bandwidth
	// (addUnknownHostStep) and throughput.bound is pcie, which the
	// explanation's cpu_offload: line says (hostBoundWords). "" otherwise.
	HostAtPCIe string
	// NoHostForOffload says why cpu_offload was asked and nothing fits, but
	// no host RAM could be planned on (hostMissing); "" otherwise.
	NoHostForOffload string
}

// outcome is how a choice's plan was found.
type outcome int

const (
	outcomeNothingFits   outcome = iota // no level fits anywhere
	outcomeNoDevices                    // no usable device at all
	outcomeFits                         // a level fits on accelerators (or on host RAM with no accelerator)
	outcomeFitsOnHost                   // include_cpu: nothing fits on accelerators, host RAM does
	outcomeFitsOffloaded                // cpu_offload: accelerators plus host RAM
)

// levelsFor lists the levels to try: the requested one, the model file's
// own type for a quantized model file under "auto", else autoLevels.
func levelsFor(req *planning) ([]quant.Level, string) {
	if req.Quant != "auto" {
		return []quant.Level{quant.Level(req.Quant)}, fmt.Sprintf("quant %s was requested", req.Quant)
	}
	if fq := req.Model.FileQuant; fq != "" {
		if l, err := quant.Parse(fq); err == nil {
			return []quant.Level{l}, fmt.Sprintf("the model file stores its weights as %s; auto plans that type", fq)
		}
	}
	if why, ok := ggufUnloaded(req); ok {
		return autoLevels, why
	}
	if ls, why := nativeLevels(req.Model); ls != nil {
		return ls, why
	}
	return autoLevels, "auto: the highest-quality level that fits (bf16 > fp16 > fp8 > int8 > int4; fp32 only when asked)"
}

// ggufUnloaded is auto's explanation, and true, when the request named a
// GGUF repository (its native checkpoint) for an engine that does not load
// GGUF types (vLLM, SGLang): auto then plans the Hugging Face levels of the
// release the GGUF was converted from (model.Releases: the float checkpoint
// of that release, google/gemma-3-27b-it for ggml-org/gemma-3-27b-it-GGUF),
// instead of the GGUF type the engine refuses.
func ggufUnloaded(req *planning) (string, bool) {
	ck, e := req.Model.NativeCheckpoint(), req.requestEngine()
	if ck == nil || !ck.IsGGUF() || e == nil {
		return "", false
	}
	// Any of the repository's types the engine refuses says it does not
	// load GGUF files: it may well take a float type's level (F16) from
	// the release's own checkpoint.
	if !slices.ContainsFunc(namedGGUFTypes(req.Model), func(l quant.Level) bool { return e.CannotLoad(l) != "" }) {
		return "", false
	}
	return fmt.Sprintf("auto: %s is a GGUF repository, which %s does not load; auto plans the Hugging Face levels of its release (bf16 > fp16 > fp8 > int8 > int4)", ck.Repo, e.Title()), true
}

// unsupportedReason says why a pool cannot run a level, "" when it can.
func unsupportedReason(req *planning, p *pool, l quant.Level) string {
	e := p.Budget.Engine
	native := l.Native()
	if native == "" {
		return fmt.Sprintf("%s is not a known level", l)
	}
	if r := engineCannotRunOn(p, e); r != "" {
		return r
	}
	if r := e.CannotLoad(l); r != "" {
		return r
	}
	return req.remembered().poolRefuses(p, req.Model, l)
}

// levelPool is the pool that plans level l of pool p, and why p refuses
// l: p itself where each of its devices runs l; where only some do (a V100,
// which runs no bf16, beside an H100 that does) a pool of those, the others
// left out (levelLeftOut names them), as a training run trains on the
// devices that run its precision (splitByPrecision); nil where none does or
// the refusal is the engine's, not a device's. The planner plans the fewest
// devices that hold the model (betterPlan), so a level the others do not
// run is planned where those that run it hold it, and auto, best quality
// first, takes a level every device runs only where they do not.
func levelPool(req *planning, p *pool, l quant.Level) (*pool, string) {
	why := unsupportedReason(req, p, l)
	if why == "" {
		return p, ""
	}
	if runs := req.remembered().runnersOf(req, p, l); runs != nil {
		return runs, why
	}
	return nil, why
}

// runnersOf is the pool of the devices of p that run level l, where some
// but not all do and the pool's engine loads l (levelPool); nil otherwise.
func runnersOf(req *planning, p *pool, l quant.Level) *pool {
	e := p.Budget.Engine
	if l.Native() == "" || engineCannotRunOn(p, e) != "" || e.CannotLoad(l) != "" {
		return nil
	}
	in := map[*device]bool{}
	var runs []*device
	for _, d := range p.Devices {
		if why, byList := deviceRefuses(e, &d.Dev, req.Model, l); why == "" && !byList {
			in[d] = true
			runs = append(runs, d)
		}
	}
	if len(runs) == 0 || len(runs) == len(p.Devices) {
		return nil
	}
	out := restrict(p, in, runs)
	out.setGroups()
	return out
}

// planOnLevelPool plans level l on p, the pool levelPool made of whole for
// it; a plan that does not fit where p leaves devices of whole out says
// which and why: "the one cuda_gpu (nvidia) device has 79.6 GiB" read as
// if the machine had one.
func planOnLevelPool(req *planning, whole, p *pool, b quant.Breakdown, l quant.Level) planned {
	pl := req.planOn(p, b, l)
	if pl.Fits || p == whole {
		return pl
	}
	var left []string
	for _, d := range whole.Devices {
		if why := deviceLevelRefusal(p.Budget.Engine, d, req.Model, l); why != "" {
			left = append(left, why)
		}
	}
	if len(left) > 0 {
		pl.Reason += "; left out: " + strings.Join(left, "; ")
	}
	return pl
}

// levelLeftOut is, by device id, why each device of pl's pool's origin
// that does not run pl's level was left out (deviceLevelRefusal), where
// the plan was made on those that do (levelPool); nil where none was.
func levelLeftOut(req *planning, pl *planned) map[string]string {
	if pl.Pool == nil || req.Model == nil {
		return nil
	}
	e := pl.Pool.Budget.Engine
	var out map[string]string
	for _, d := range pl.Pool.origin().Devices {
		if why := deviceLevelRefusal(e, d, req.Model, pl.Level); why != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[d.ID] = why
		}
	}
	return out
}

// deviceLevelRefusal says why engine e does not run level l of model m on
// d, naming d ("cuda:0 (Tesla V100-SXM2-32GB) does not run bf16: its
// precision list has no bf16"), "" where it runs it.
func deviceLevelRefusal(e engine.Engine, d *device, m *model.Model, l quant.Level) string {
	why, byList := deviceRefuses(e, &d.Dev, m, l)
	switch {
	case byList:
		why = fmt.Sprintf("its precision list has no %s", l.Native())
	case why == "":
		return ""
	}
	return fmt.Sprintf("%s does not run %s under %s: %s", idWithName(d.ID, d), l, e.Title(), why)
}

// betterPlan reports whether a beats b (both for the same level): fits, then
// simpler strategy, then fewer devices; ties keep b (pool order: the pool
// with the most usable memory first).
func betterPlan(a, b *planned) bool {
	if a.Fits != b.Fits {
		return a.Fits
	}
	if a.DP != b.DP {
		return a.DP > b.DP // replicas "max": the most replicas
	}
	if a.rank() != b.rank() {
		return a.rank() < b.rank()
	}
	return a.devices() < b.devices()
}

// rank is the strategy rank of a plan; of one replica for a data-parallel
// plan.
func (p *planned) rank() int {
	if p.Unit != "" {
		return strategyRank[p.Unit]
	}
	return strategyRank[p.Strategy]
}

// choose plans the request: accelerator pools over every level first; host
// RAM only when there is no accelerator, or include_cpu asks and no
// accelerator plan fits at any level; cpu_offload (GPU + host RAM) only when
// asked and nothing fits on the accelerators alone, or nothing published
// does where an offloaded level a published checkpoint runs fits
// (offloadOverUnpublished).
func choose(req *planning) (*choice, error) {
	if req.Model == nil {
		return nil, errs.New(errs.InvalidArgument, "request: model is required")
	}
	want, err := req.checkDevices()
	if err != nil {
		return nil, err
	}
	pools, inter := requestPools(req, want)
	ch := &choice{InterStage: inter, Cluster: len(req.Cluster) > 0, Devices: req.Devices, Pools: pools}
	accel, host := splitHostPools(pools)
	levels, tried, why := levelsToTry(req, accel, host)
	ch.LevelsWhy = why
	passes := poolPasses(req, accel, host)
	ch.HostOnly = len(accel) == 0 && len(host) > 0
	if len(pools) == 0 {
		ch.refuseWithoutDevices(req, levels)
		return ch, nil
	}
	// A device that shares host RAM is not counted: its memory is the
	// host's, not a size of its own that detection missed, and an iGPU or
	// a Neural Engine beside a discrete GPU or a Mac's GPU
	// (slimbook-hero-rtx4060-igpu, macbook-m3-pro) would make every
	// refusal there unknown. The CPU counts where host RAM is the plan's
	// only pool here, and with include_cpu once nothing fits the
	// accelerators (below).
	ch.UnknownMemory = unknownMemoryDevices(req, len(accel) == 0, false, nil)
	if len(ch.UnknownMemory) > 0 {
		ch.UnknownRuns, ch.running, ch.counted = unknownRunning(req, want, tried)
		ch.RunsNamed = unknownMemoryDevices(req, false, false, func(d *registry.Device) bool { return ch.running[d.ID] })
		ch.UnknownMemory = ch.unknownNamed(req, len(accel) == 0)
	}
	for _, p := range plannedPools(req, accel, host) {
		ch.Known += len(p.Devices)
	}
	deviceRows, found := ch.planOnDevices(req, passes, accel, levels, tried)
	if found {
		return ch, nil
	}
	// Nothing fits on devices alone.
	if req.IncludeCPU && len(accel) > 0 {
		// include_cpu planned host RAM after the accelerators: a CPU
		// whose RAM is unknown (no /proc/meminfo: the two-nvidia,
		// tpu-v5e and slimbook-hero-rtx4060-igpu fixtures) might hold
		// what they do not. Where they hold it, host RAM is not planned
		// whatever its size, and the CPU is not named.
		ch.UnknownMemory = ch.unknownNamed(req, true)
	}
	ch.OffloadWithReplicas = req.CPUOffload && len(accel) > 0 && req.dataParallel()
	if plansOffload(req, accel) {
		if oc := planOffloadLevels(req, accel, levels); oc.Best != nil {
			ch.takeOffload(req, levels, deviceRows, oc)
			return ch, nil
		}
		if ownMemory(accel) {
			// cpu_offload plans host RAM for what the accelerators do
			// not hold: a CPU whose RAM is unknown might hold it, as
			// with include_cpu (the refusal said no, naming no CPU,
			// beside "the registry does not report cpu:0's memory").
			// Accelerators that all share host RAM gain nothing from it
			// (hostShared).
			ch.UnknownMemory = ch.unknownNamed(req, true)
		}
	}
	ch.refuseNothingFits(req, passes, accel, host, levels, want)
	return ch, nil
}

// splitHostPools parts pools into the accelerators' and host RAM's, each
// in pool order.
func splitHostPools(pools []*pool) (accel, host []*pool) {
	for _, p := range pools {
		if p.Kind == registry.KindCPU {
			host = append(host, p)
		} else {
			accel = append(accel, p)
		}
	}
	return accel, host
}

// levelsToTry is the levels choose plans (levelsFor, as the request's
// engine runs them, or with the notes of how the pools size them), the
// ladder it tries of them (ladderFor; all of them for one level), and why
// those levels. It sets req.weights, every level's size, which every
// estimate after it reads.
func levelsToTry(req *planning, accel, host []*pool) (levels, tried []quant.Level, why string) {
	levels, why = levelsFor(req)
	if e := req.requestEngine(); e != nil {
		// The named engine runs its own levels (llama.cpp: int8 and int4
		// are GGUF types).
		var notes []string
		levels, notes = e.Levels(levels)
		why = strings.Join(append([]string{why}, notes...), "; ")
	} else {
		planned := plannedPools(req, accel, host)
		notes := sizedAsNotes(planned, levels)
		if n := ownLadderNote(req, planned, levels); n != "" {
			notes = append(notes, n)
		}
		if len(notes) > 0 {
			why = strings.Join(append([]string{why}, notes...), "; ")
		}
	}
	req.weights = weightsAt(req.Model, levels)
	tried = levels
	if len(levels) > 1 {
		// req.weights keeps every level's size: a level the ladder leaves
		// out is still planned where a published file may run it
		// (ladderFor).
		levels = req.weights.monotone().levels
		tried = ladderFor(req, levels)
	}
	return levels, tried, why
}

// poolPasses is the pools choose plans on, pass after pass: the
// accelerators; host RAM where there is no accelerator, or after them
// where include_cpu asks.
func poolPasses(req *planning, accel, host []*pool) [][]*pool {
	switch {
	case len(accel) == 0:
		return [][]*pool{host}
	case req.IncludeCPU:
		return [][]*pool{accel, host}
	}
	return [][]*pool{accel}
}

// refuseWithoutDevices is the choice where no device is usable: the
// lowest level refused for want of a device, every level's row sized
// without one.
func (ch *choice) refuseWithoutDevices(req *planning, levels []quant.Level) {
	ch.Plan = planned{Level: levels[len(levels)-1], Code: RefusalNoDevice, Reason: noDeviceReason + leftOutUnavailable(req) + memoryUnknown(req)}
	ch.Outcome = outcomeNoDevices
	ch.Rows = rowsWithoutDevices(req, levels)
}

// planOnDevices plans the levels tried on each pass of pools in turn and
// takes the first pass's plans where a level fits (takeFitting); it
// returns the accelerators' rows of every level tried and whether it took
// a plan.
func (ch *choice) planOnDevices(req *planning, passes [][]*pool, accel []*pool, levels, tried []quant.Level) ([]LevelRow, bool) {
	var deviceRows []LevelRow // the accelerators' rows of every level tried
	for pass, ps := range passes {
		if len(ps) == 0 {
			continue
		}
		orderPools(ps)
		allRows, fits := planLevels(req, ps, tried)
		fits, skipped, dropped := publishedFits(req, levels, fits)
		rows := keptRows(levels, allRows, dropped)
		if pass == 0 {
			deviceRows = allRows
		}
		if pass == 0 || len(fits) > 0 {
			ch.Rows = rows
		}
		if len(fits) > 0 {
			ch.takeFitting(req, pass, accel, levels, fitting{Plans: fits, Rows: allRows, Skipped: skipped, Dropped: dropped})
			return deviceRows, true
		}
	}
	return deviceRows, false
}

// fitting is what a pass of planOnDevices found: the plans that fit (of
// levels a published checkpoint runs, publishedFits), every level's row,
// the better level passed over as unpublished and the levels the ladder
// left out that were planned.
type fitting struct {
	Plans   []*planned
	Rows    []LevelRow
	Skipped *planned
	Dropped []*planned
}

// takeFitting takes the fastest plan of f (chooseBySpeed), found on pass
// (0: the accelerators; 1: host RAM, include_cpu), with the lines that say
// why; on the accelerators, an offloaded level a published checkpoint runs
// may be taken over it (offloadOverUnpublished).
func (ch *choice) takeFitting(req *planning, pass int, accel []*pool, levels []quant.Level, f fitting) {
	best, why := chooseBySpeed(req, levels, f.Plans)
	if pass == 0 && plansOffload(req, accel) && ch.offloadOverUnpublished(req, accel, levels, f.Plans, f.Rows, best) {
		ch.OnDeviceWhy = onDeviceLine(req, best)
		return
	}
	ch.Plan, ch.SpeedWhy, ch.PublishedWhy = *best, why, unpublishedLine(req, f.Skipped)
	ch.DroppedWhy, ch.FileWhy = droppedLine(req, best, f.Dropped), fileLine(req, best)
	ch.LevelLeftOut = levelLeftOut(req, best)
	ch.Outcome = outcomeFits
	if pass == 1 {
		ch.Outcome = outcomeFitsOnHost
	}
}

// refuseNothingFits is the choice where nothing fits: the last level's
// failure (naming the devices of unknown memory it left out), and the
// hints of the refusal: why cpu_offload, asked, found no host, and
// whether cpu_offload or include_cpu, not asked, would fit.
func (ch *choice) refuseNothingFits(req *planning, passes [][]*pool, accel, host []*pool, levels []quant.Level, want map[string]bool) {
	ch.Plan = lastFailure(req, passes, levels)
	if len(ch.UnknownMemory) > 0 {
		ch.Plan.Reason += ch.leftOutClause()
	}
	ch.Outcome = outcomeNothingFits
	ch.FileWhy = fileLine(req, &ch.Plan)
	if plansOffload(req, accel) {
		ch.NoHostForOffload = noHostForOffload(req, accel, want)
		ch.Plan.Reason += offloadCopyShortClause(req, accel, ch.Plan.Level)
	}
	ch.CouldOffload = !req.CPUOffload && !req.dataParallel() && len(accel) > 0 && len(host) > 0 && hostShared(req, accel, want) == "" &&
		offloadWouldFit(req, accel, levels)
	ch.CouldIncludeCPU = !req.IncludeCPU && len(accel) > 0 && len(host) > 0 && hostWouldFit(req, host, levels)
}

// noHostForOffload says why cpu_offload, asked for, found no host RAM to
// offload to (hostMissing, hostShared, hostTooSmall, the first that says);
// "" when none does.
func noHostForOffload(req *planning, accel []*pool, want map[string]bool) string {
	if why := hostMissing(req, want); why != "" {
		return why
	}
	if why := hostShared(req, accel, want); why != "" {
		return why
	}
	return hostTooSmall(req, accel, want)
}

// hostWouldFit reports whether a level of levels fits on host RAM alone
// (the host pools), which include_cpu, not asked for, would plan: the
// refusal's hint names it only then (Qwen3-30B-A3B at q8_0, 31.6 GiB, does
// not fit a 32 GB Mac's RAM either).
func hostWouldFit(req *planning, host []*pool, levels []quant.Level) bool {
	_, fits := planLevels(req, host, levels)
	return len(fits) > 0
}

// hostTooSmall says why cpu_offload, asked for, found no plan where host
// RAM lies beside the accelerators: no level fits them and that RAM
// together; "" where no pool has RAM beside it (hostMissing, hostShared
// say why).
func hostTooSmall(req *planning, accel []*pool, want map[string]bool) string {
	h := hostDevice(req, want)
	if h == nil {
		return ""
	}
	for _, p := range accel {
		if beside := hostBeside(h, p); beside != nil {
			ids := make([]string, len(p.Devices))
			for i, d := range p.Devices {
				ids[i] = d.ID
			}
			return fmt.Sprintf("cpu_offload: no level tried fits %s and the host RAM beside it together (%s of %s)", strings.Join(ids, ", "), gib(beside.Usable), h.ID)
		}
	}
	return ""
}

// offloadWouldFit reports whether cpu_offload, which req did not ask for,
// would find a plan on accel at one of levels: the refusal's hint names it
// only then (a 32 GB M2 Max keeps about 11 GiB beside Metal's working set,
// too little for Qwen3-30B-A3B at q8_0).
func offloadWouldFit(req *planning, accel []*pool, levels []quant.Level) bool {
	return planOffloadLevels(req, accel, levels).Best != nil
}

// plansOffload reports whether the request plans cpu_offload on accel: it
// asks for it, there are accelerators, and no replicas (which are not
// combined with it).
func plansOffload(req *planning, accel []*pool) bool {
	return req.CPUOffload && len(accel) > 0 && !req.dataParallel()
}

// takeOffload makes oc.Best, the cpu_offload plan planOffloadLevels chose,
// the choice's plan; deviceRows is the levels table on the accelerators
// alone.
func (ch *choice) takeOffload(req *planning, levels []quant.Level, deviceRows []LevelRow, oc offloadChoice) {
	off := oc.Best
	ch.Plan, ch.SpeedWhy, ch.PublishedWhy = *off, oc.Why, unpublishedLine(req, oc.Skipped)
	ch.DroppedWhy, ch.FileWhy = droppedLine(req, off, oc.Dropped), fileLine(req, off)
	ch.LevelLeftOut = levelLeftOut(req, off)
	if len(oc.Dropped) > 0 {
		// The table shows why the left-out level kept offloaded does
		// not fit on the accelerators alone.
		ch.Rows = keptRows(levels, deviceRows, oc.Dropped)
	}
	ch.Rows = markOffloaded(ch.Rows, oc.Fitting)
	ch.Outcome = outcomeFitsOffloaded
	ch.HostAtPCIe = hostAtPCIe(req, off)
}

// hostBandwidthUnknown is hostAtPCIe's reason where the host stage's
// memory bandwidth is unknown.
const hostBandwidthUnknown = "the host's memory bandwidth is not known"

// hostAtPCIe says why the host part of offloaded plan pl is timed at PCIe
// rather than at the host's memory bandwidth (hostRuns): that bandwidth is
// not known, or the plan's engine does not run that part on the CPU; ""
// where it runs at the host's bandwidth, or the plan streams its weights
// across PCIe by design (streamed).
func hostAtPCIe(req *planning, pl *planned) string {
	bw := hostStageBandwidth(pl)
	switch {
	case pl.streamed() || hostRuns(pl, req, bw):
		return ""
	case bw <= 0 || math.IsInf(bw, 1):
		return hostBandwidthUnknown
	}
	if e := planEngine(pl, req); e != nil {
		return "engine " + e.Name() + " is not taken to run the host part on the CPU"
	}
	return "no engine that runs the host part on the CPU is named"
}

// hostStageBandwidth is the memory bandwidth of an offloaded plan's host
// stage, its last (the slowest device's, as stageRates takes it); 0 where
// unknown.
func hostStageBandwidth(pl *planned) float64 {
	if len(pl.Stages) == 0 {
		return 0
	}
	bw := math.Inf(1)
	for _, d := range pl.Stages[len(pl.Stages)-1].Devices {
		bw = math.Min(bw, d.BandwidthGBs)
	}
	return bw
}

// markOffloaded gives each row of rows that does not fit on the
// accelerators alone but whose level fits offloaded (fitting) the strategy
// cpu_offload, keeping the reason it does not fit without: the table
// marked only the level chosen, while the explanation's published: line
// said another one "also fits" (DeepSeek-R1 under llama.cpp with
// cpu_offload on the h200-vm fixture: q2_k chosen, iq3_xs "also fits",
// its row plain "no"). rows is copied, not changed in place: the rows on
// the accelerators alone are shared with the choice's other passes.
func markOffloaded(rows []LevelRow, fitting []quant.Level) []LevelRow {
	out := slices.Clone(rows)
	for i := range out {
		if !out[i].Fits.Yes() && slices.Contains(fitting, quant.Level(out[i].Quant)) {
			out[i].Strategy = StrategyOffload
		}
	}
	return out
}

// offloadOverUnpublished plans cpu_offload where levels fit on the
// accelerators alone (fits, their plans narrowed by publishedFits; rows
// their table) but no published checkpoint runs any of them, under quant
// auto's preference for published checkpoints (prefersPublished): the
// offloaded plans are candidates too, and the plan planOffloadLevels
// chooses among them (the best level a published checkpoint runs, as on
// the devices alone) is taken, and true returned, when a published
// checkpoint runs it, so that a request that asked for offload gets a
// command. On the h200-vm fixture llama.cpp's auto planned DeepSeek-R1 at
// iq1_s on the H200 alone (no published IQ1_S GGUF, mean KL divergence
// 2.255) while unsloth's Q2_K
// (https://huggingface.co/unsloth/DeepSeek-R1-GGUF) fits offloaded. It is
// false, and ch unchanged, where a fit on the accelerators alone is
// published (that fit stays the answer: offload is planned only when
// nothing fits there) or no published level fits offloaded.
//
// The offloaded plan is taken only where it runs on as many accelerators as
// the plan on the devices alone (onDevice): vLLM's and SGLang's offload runs
// on one GPU, so on 8 H100s DeepSeek-R1 went from int4 over all eight (no
// published checkpoint) to fp8 on one with 560 GiB in host RAM, 1.8 tokens/s,
// seven GPUs idle; that answer stays the one on the devices alone, whose
// explanation names the engine that runs a published checkpoint.
func (ch *choice) offloadOverUnpublished(req *planning, accel []*pool, levels []quant.Level, fits []*planned, rows []LevelRow, onDevice *planned) bool {
	if !prefersPublished(req, levels) || slices.ContainsFunc(fits, func(pl *planned) bool { return runsPublished(req, pl) }) {
		return false
	}
	oc := planOffloadLevels(req, accel, levels)
	if oc.Best == nil || !runsPublished(req, oc.Best) || oc.Best.accelerators() < onDevice.accelerators() {
		return false
	}
	ch.takeOffload(req, levels, rows, oc)
	return true
}

// plannedPools is the pools a request's levels are planned on: the
// accelerators, and host RAM where there are none or include_cpu asks
// (choose's passes).
func plannedPools(req *planning, accel, host []*pool) []*pool {
	if len(accel) == 0 || req.IncludeCPU {
		return append(slices.Clone(accel), host...)
	}
	return accel
}

// planLevels plans every level on every pool; it returns the table rows and
// the best plan of each level that fits, best quality first (none when no
// level fits).
func planLevels(req *planning, ps []*pool, levels []quant.Level) ([]LevelRow, []*planned) {
	var rows []LevelRow
	var fits []*planned
	for _, l := range levels {
		kv := req.kvOptionsAt(nil, l)
		b, sane := estimateSane(req, l, req.ContextLength, req.rowBatch())
		row := LevelRow{Quant: string(l), TotalBytes: b.TotalBytes}
		var best *planned
		var reasons poolReasons
		if !sane {
			row.TotalBytes = 0
			row.Reason = "needs more than 1 EiB"
			rows = append(rows, row)
			continue
		}
		paged := pagedBytes(req, ps, l)
		var refused int64 // what the first refusal for memory says the level needs
		var refusedOn *pool
		row.unrun = true
		for _, whole := range ps {
			p, r := levelPool(req, whole, l)
			if p == nil {
				reasons.add(r, whole)
				continue
			}
			row.unrun = false
			bp := b
			if req.kvOptionsAt(p.Budget.Engine, l) != kv || fitBatch(p, req.rowBatch()) != req.rowBatch() || p.sizedAs(l) != engine.WeightsLevel(req.requestEngine(), l) {
				// The pool's engine has other KV cache rules, serves
				// the batch from one paged pool, or loads the level as
				// a file of another size (llama.cpp's GGUF types).
				bp, _ = estimateSaneOn(req, p, l, req.ContextLength, fitBatch(p, req.rowBatch()))
			}
			pl := planOnLevelPool(req, whole, p, bp, l)
			if !pl.Fits {
				reasons.add(LevelMisfitPrefix+pl.Reason, p)
				if w := pl.devicesWanted(); w > 0 && (row.wants == 0 || w < row.wants) {
					row.wants = w
				}
				if need, ok := pl.memoryRefusal(); ok && refused == 0 {
					refused, refusedOn = need.total(), p
				}
				continue
			}
			if best == nil || betterPlan(&pl, best) {
				cp := pl
				best = &cp
			}
		}
		if best != nil {
			row.Fits, row.Strategy = FitYes, best.Strategy
			row.TotalBytes, row.pool = best.oneDeviceBytes(), best.Pool
			row.Reason = fileRowNote(req, best)
			fits = append(fits, best)
		} else {
			row.Reason = reasons.String()
			switch {
			case refused > 0:
				// The figure its reason states (notFitting), counted as
				// the pool's engine counts a device (vLLM's start-up
				// charge where it plans for vLLM), not the estimate's.
				row.TotalBytes, row.pool = refused, refusedOn
			case paged > 0:
				row.TotalBytes = paged // what the paged pools were asked to hold
			}
		}
		rows = append(rows, row)
	}
	return rows, fits
}

// poolReasons is why each pool refused a level, each reason once with the
// pools that gave it (pools of identical devices, MIG slices of one
// profile, refuse for the same reason).
type poolReasons struct {
	reasons []string
	pools   [][]*pool
}

// add records pool p's reason r.
func (pr *poolReasons) add(r string, p *pool) {
	if i := slices.Index(pr.reasons, r); i >= 0 {
		pr.pools[i] = append(pr.pools[i], p)
		return
	}
	pr.reasons = append(pr.reasons, r)
	pr.pools = append(pr.pools, []*pool{p})
}

// String is the level row's reason: the one reason all pools gave, or,
// where they differ (an A100 under vLLM and a P40 under llama.cpp, MIG
// slices of two sizes), each named by its pools' devices and engine, "cuda:0
// (NVIDIA A100-PCIE-40GB) under vLLM: fp16 needs ...; cuda:1 (Tesla P40)
// under llama.cpp: fp16 needs ...": two figures for one level read as one
// contradicting the other without it. A reason that starts with its pool's
// devices (a precision list's refusal) is not named twice.
func (pr *poolReasons) String() string {
	if len(pr.reasons) < 2 {
		return strings.Join(pr.reasons, "; ")
	}
	out := make([]string, len(pr.reasons))
	for i, r := range pr.reasons {
		r = strings.TrimPrefix(r, LevelMisfitPrefix)
		if strings.HasPrefix(r, poolDevices(pr.pools[i][0])) {
			out[i] = r
			continue
		}
		who := devicesByName(pr.pools[i])
		if e := pr.pools[i][0].engine(); e != nil {
			who += " under " + e.Title()
		}
		out[i] = who + ": " + r
	}
	return strings.Join(out, "; ")
}

// devicesByName names the devices of pools, each run of one name once:
// "cuda:1, cuda:2 (NVIDIA A100-SXM4-80GB MIG 1g.20gb), cuda:5 (NVIDIA
// A100-SXM4-80GB)".
func devicesByName(pools []*pool) string {
	var groups []string
	var ids []string
	name := ""
	flush := func() {
		switch {
		case len(ids) > 0 && name == "":
			// A device with no name in the registry (a CPU whose model
			// name was not read) is its id alone.
			groups = append(groups, strings.Join(ids, ", "))
		case len(ids) > 0:
			groups = append(groups, fmt.Sprintf("%s (%s)", strings.Join(ids, ", "), name))
		}
	}
	for _, p := range pools {
		for _, d := range p.Devices {
			if len(ids) > 0 && d.Dev.Name != name {
				flush()
				ids = nil
			}
			ids, name = append(ids, d.ID), d.Dev.Name
		}
	}
	flush()
	return strings.Join(groups, ", ")
}

// oneDeviceBytes is what the plan's model (one replica, at its share of the
// batch, for data parallel) needs as on one device, counted as the plan
// counts each device (the engine's activations and overhead, the token
// embedding where the engine keeps it): the figure of a fitting level's row
// and of describe's "needs". A plan on one device holds exactly this, so
// its row equals its memory total; a plan on n devices totals n devices'
// overhead and activations (issue 24). A refused plan's reason states the
// same figure (notFitting), and so does its level's row.
func (pl *planned) oneDeviceBytes() int64 {
	return pl.oneDevicePart().total()
}

// oneDevicePart is oneDeviceBytes by component: under vLLM its start-up
// charge as the activations (the profile's peak) and the overhead (the
// rest), as a fitting plan's parts count it (costs.stagePart).
func (pl *planned) oneDevicePart() part {
	return pl.Costs.stagePart(0, pl.Costs.Layers, 1)
}

// memoryRefusal is what a plan refused for memory says it needs
// (oneDevicePart), and whether it was: false for a refusal of another
// code and for one made on no costs (a replica layout restates its unit's
// reason and keeps none), whose need has no parts.
func (pl *planned) memoryRefusal() (part, bool) {
	if pl.Fits || pl.Code != RefusalMemory || pl.Costs.Layers <= 0 {
		return part{}, false
	}
	need := pl.oneDevicePart()
	return need, need.total() > 0
}

// refusedMemory is the memory breakdown of an answer nothing fits: what
// the plan reported (lastFailure) needs as on one device where it was
// refused for memory, the figure its refusal text and its level's row
// state, in the parts the pool's engine charges (a vLLM refusal's
// memory.total_bytes was the plain estimate, 3 GiB under the start-up
// charge its text and row stated); else the request's estimate at the
// plan's level on its pool's engine.
func refusedMemory(req *planning, pl *planned) Memory {
	if need, ok := pl.memoryRefusal(); ok {
		var m Memory
		m.add(need)
		return m
	}
	return memoryOf(req.estimateFor(pl.Pool.engine(), pl.Level, req.ContextLength, fitBatch(pl.Pool, req.rowBatch())))
}

// pagedBytes is the estimate at level l when every pool's engine serves
// the batch from a paged KV cache (one full-context sequence), 0 otherwise:
// a level row that fits nowhere says what those pools were asked to hold,
// as a fitting row does.
func pagedBytes(req *planning, ps []*pool, l quant.Level) int64 {
	for _, p := range ps {
		if !p.Budget.Paged {
			return 0
		}
	}
	b, _ := estimateSaneOn(req, ps[0], l, req.ContextLength, fitBatch(ps[0], req.rowBatch()))
	return b.TotalBytes
}

// lastFailure is the plan reported when nothing fits: the lowest level
// tried that some pool runs, on the first pool that runs it. A lower level
// no pool runs is passed over: on a TPU, where bf16 and int8 run but do
// not fit and int4 does not run, the answer is int8's misfit, the nearest
// the model came, not "int4 is not supported".
func lastFailure(req *planning, passes [][]*pool, levels []quant.Level) planned {
	for i := len(levels) - 1; i >= 0; i-- {
		l := levels[i]
		for _, ps := range passes {
			for _, whole := range ps {
				p, _ := levelPool(req, whole, l)
				if p == nil {
					continue
				}
				b, sane := estimateSaneOn(req, p, l, req.ContextLength, fitBatch(p, req.rowBatch()))
				if !sane {
					return planned{Level: l, Code: RefusalTooLarge, Reason: "needs more than 1 EiB"}
				}
				return planOnLevelPool(req, whole, p, b, l)
			}
		}
	}
	l := levels[len(levels)-1]
	// No pool runs any level: say why for the first (an engine that does
	// not run on the devices says that, not "no device supports").
	for _, ps := range passes {
		for _, p := range ps {
			if r := engineCannotRunOn(p, req.requestEngine()); r != "" {
				return planned{Level: l, Code: RefusalUnsupported, Reason: r}
			}
		}
	}
	// Else the first pool's own reason, as its Levels row states it: an
	// engine's compute-capability floor (a K80 under llama.cpp) refuses
	// every level, and "no device supports int4" read as if int4 were why.
	for _, ps := range passes {
		for _, p := range ps {
			if r := unsupportedReason(req, p, l); r != "" {
				return planned{Level: l, Code: RefusalUnsupported, Reason: r}
			}
		}
	}
	return planned{Level: l, Code: RefusalUnsupported, Reason: fmt.Sprintf("no available device supports %s", l)}
}

// noDeviceReason is why no level can be planned where no available
// device's memory is known: the start of the no_device refusal and each
// level row's reason (the devices may well be there, their memory unknown).
const noDeviceReason = "no available device with known memory"

// rowsWithoutDevices are the level rows where no available device's memory
// is known: each level's estimate; whether it fits cannot be told
// (FitUnknown, null in JSON).
func rowsWithoutDevices(req *planning, levels []quant.Level) []LevelRow {
	var rows []LevelRow
	for _, l := range levels {
		b := req.estimate(l, req.ContextLength, req.BatchSize)
		rows = append(rows, LevelRow{Quant: string(l), TotalBytes: b.TotalBytes, Fits: FitUnknown, Reason: noDeviceReason})
	}
	return rows
}

// hostMissing says why there is no host RAM for cpu_offload to plan on
// (hostDevice finds none): a cluster, a device list without the CPU, or a
// CPU whose memory the registry does not report (a container or fixture
// without /proc/meminfo); "" when there is one.
func hostMissing(req *planning, want map[string]bool) string {
	if hostDevice(req, want) != nil {
		return ""
	}
	if len(req.Cluster) > 0 {
		return "cpu_offload is not planned over a cluster"
	}
	if req.Registry == nil {
		return ""
	}
	for _, d := range req.Registry.Devices {
		if d.Kind != registry.KindCPU {
			continue
		}
		switch {
		case want != nil && !want[d.ID]:
			return fmt.Sprintf("cpu_offload: devices leaves out %s, whose RAM would hold the layers that do not fit; add it to devices", d.ID)
		case !d.Available:
			return fmt.Sprintf("cpu_offload: %s is not available, so no host RAM can hold the layers that do not fit", d.ID)
		case d.UsableMemory() <= 0:
			return fmt.Sprintf("cpu_offload: the registry does not report %s's memory (memory_bytes; /proc/meminfo was not readable), so no host RAM can be planned for the layers that do not fit; give a registry that has it", d.ID)
		}
	}
	return "cpu_offload: the registry has no cpu device, so no host RAM can hold the layers that do not fit"
}

// hostShared says why cpu_offload adds no memory where there is host RAM:
// every accelerator pool shares it (hostBeside leaves nothing beside it);
// "" otherwise.
func hostShared(req *planning, accel []*pool, want map[string]bool) string {
	h := hostDevice(req, want)
	if h == nil || len(accel) == 0 {
		return ""
	}
	var ids []string
	for _, p := range accel {
		if hostBeside(h, p) != nil {
			return ""
		}
		for _, d := range p.Devices {
			ids = append(ids, d.ID)
		}
	}
	return fmt.Sprintf("cpu_offload: %s uses %s's memory (unified memory), so host RAM holds nothing beyond what it can already use", strings.Join(ids, ", "), h.ID)
}

// memoryUnknown names, for a request left with no device, the available
// devices it could not plan on because the registry gives no memory size
// for them (an RX 7900 XT seen through amdgpu sysfs without
// mem_info_vram_total, a host whose /proc/meminfo was not readable), so
// that "no available device with known memory" does not read as a machine
// without devices. "" when there are none.
func memoryUnknown(req *planning) string {
	named := unknownMemoryDevices(req, true, true, nil)
	if len(named) == 0 {
		return ""
	}
	return "; available but their memory is unknown: " + strings.Join(named, ", ") + "; a registry with their memory_bytes plans on them"
}

// unknownMemoryDevices names, each with why, the available devices of the
// request (its devices list, when it has one) whose memory the registry
// does not give, so the planner left them out; the CPU among them only
// withCPU, devices that share host RAM (an iGPU, an APU, a Neural Engine)
// only withShared, and only those keep accepts where it is not nil (a
// training run counts only devices that run its precision).
func unknownMemoryDevices(req *planning, withCPU, withShared bool, keep func(*registry.Device) bool) []string {
	regs := req.Cluster
	if len(regs) == 0 && req.Registry != nil {
		regs = []*registry.Registry{req.Registry}
	}
	var named []string
	for i, reg := range regs {
		for _, d := range reg.Devices {
			id := d.ID
			if len(req.Cluster) > 0 {
				id = nodePrefix(i) + id
			}
			if !d.Available || d.MemoryBytes > 0 || d.MemoryUsableBytes > 0 || d.MemoryFreeBytes != nil || len(req.Devices) > 0 && !slices.Contains(req.Devices, id) ||
				!withCPU && d.Kind == registry.KindCPU || !withShared && d.MemoryShared || keep != nil && !keep(&d) {
				continue
			}
			why := "no memory size was detected: no vendor tool or driver file gave one"
			switch {
			case d.Kind == registry.KindCPU:
				why = "host RAM: /proc/meminfo was not readable"
			case d.MemoryShared:
				why = "it shares host RAM, whose size is unknown"
			}
			if d.Kind != registry.KindCPU && d.Name != "" {
				why = d.Name + ": " + why
			}
			named = append(named, fmt.Sprintf("%s (%s)", id, why))
		}
	}
	return named
}

// unknownRunning is what the available accelerators of unknown memory
// (as unknownMemoryDevices counts them) would run, counted: the levels of
// levels that a pool they join runs, and the ids of those of them in such
// a pool. A pool runs a level only where
// each of its devices does (poolRefuses), so an H100 of unknown memory
// beside a V100 runs no bf16 there, as with its memory known. Memory is
// not asked: the devices are counted at a size of 1 GiB, which no
// support rule reads. One registry only (a cluster's nodes are not
// counted: ok false).
func unknownRunning(req *planning, want map[string]bool, levels []quant.Level) (runs map[quant.Level]bool, running map[string]bool, ok bool) {
	if req.Registry == nil || len(req.Cluster) > 0 {
		return nil, nil, false
	}
	all := *req.Registry
	all.Devices = slices.Clone(req.Registry.Devices)
	left := map[string]bool{}
	for i := range all.Devices {
		d := &all.Devices[i]
		if d.Available && d.Kind != registry.KindCPU && !d.MemoryShared && d.MemoryBytes <= 0 && d.MemoryUsableBytes <= 0 && d.MemoryFreeBytes == nil {
			d.MemoryBytes = 1 << 30
			left[d.ID] = true
		}
	}
	runs, running = map[quant.Level]bool{}, map[string]bool{}
	for _, p := range buildPools(&all, 0, "", req.engineRule(), want) {
		for _, l := range levels {
			lp, _ := levelPool(req, p, l)
			if lp == nil {
				continue
			}
			for _, d := range lp.Devices {
				if left[d.ID] {
					runs[l], running[d.ID] = true, true
				}
			}
		}
	}
	if len(running) == 0 {
		return nil, nil, true
	}
	return runs, running, true
}

// unknownNamed is the devices of unknown memory a refusal counts and
// names, or a plan's warning names (unknownMemoryDevices): the CPU where
// withCPU, and the accelerators that, counted, would run a level tried
// (unknownRunning), every one where that could not be told (a cluster).
// One that runs none whatever its memory (a K80 below vLLM's
// compute-capability floor) is not left out for its memory, and counted
// it would lift no refusal.
func (ch *choice) unknownNamed(req *planning, withCPU bool) []string {
	return unknownMemoryDevices(req, withCPU, false, func(d *registry.Device) bool {
		return d.Kind == registry.KindCPU || !ch.counted || ch.running[d.ID]
	})
}

// ownMemory reports whether some accelerator of accel has memory of its
// own, not the host's (registry.Device.MemoryShared).
func ownMemory(accel []*pool) bool {
	for _, p := range accel {
		for _, d := range p.Devices {
			if !d.Dev.MemoryShared {
				return true
			}
		}
	}
	return false
}

// leftOutUnavailable names, for a request left with no device, the devices
// with known memory it left out as unavailable, by reason: a registry
// written by hand without "available" (it reads false) planned as if the
// machine had no memory at all. "" when there are none.
func leftOutUnavailable(req *planning) string {
	regs := req.Cluster
	if len(regs) == 0 && req.Registry != nil {
		regs = []*registry.Registry{req.Registry}
	}
	var reasons []string
	ids := map[string][]string{}
	for i, reg := range regs {
		for _, d := range reg.Devices {
			id := d.ID
			if len(req.Cluster) > 0 {
				id = nodePrefix(i) + id
			}
			if d.Available || d.MemoryBytes <= 0 && d.MemoryUsableBytes <= 0 || len(req.Devices) > 0 && !slices.Contains(req.Devices, id) {
				continue
			}
			why := d.UnavailableReason
			if why == "" {
				// A given registry must say "available" (regjson refuses one
				// without it), so only an explicit false gets here.
				why = `the registry's "available" is false, and it gives no unavailable_reason`
			}
			if _, ok := ids[why]; !ok {
				reasons = append(reasons, why)
			}
			ids[why] = append(ids[why], id)
		}
	}
	if len(reasons) == 0 {
		return ""
	}
	parts := make([]string, len(reasons))
	for i, why := range reasons {
		parts[i] = fmt.Sprintf("%s (%s)", strings.Join(ids[why], ", "), why)
	}
	return "; left out as unavailable: " + strings.Join(parts, "; ")
}

// devicesWanted is the fewest devices in all with which a refusal might be
// lifted by devices of unknown memory left out: 1 for a refusal for memory
// (any of them might hold it), the layout's Needs for too_few_devices; 0
// for a refusal that no count of devices lifts (unsupported, a tensor
// parallel size that does not divide the heads, too_large).
func (pl *planned) devicesWanted() int {
	switch {
	case pl.Fits:
		return 0
	case pl.Code == RefusalMemory || pl.Code == "":
		return 1 // refusalOf reads no code as insufficient_memory
	case pl.Code == RefusalTooFewDevices:
		return max(pl.Needs, 1)
	}
	return 0
}

// unknownCouldChange reports whether a refusal that wants (devicesWanted)
// devices might be lifted by counting the devices of unknown memory left
// out (UnknownMemory): there are some, and enough of them and the known
// ones together.
func (ch *choice) unknownCouldChange(wants int) bool {
	return len(ch.UnknownMemory) > 0 && wants > 0 && ch.Known+len(ch.UnknownMemory) >= wants
}

// leftOutClause is what a refusal adds beside devices of unknown memory
// (leftOutUnknown): what counting them might do, or, for too_few_devices
// where even all the devices are too few, that they do not make up the
// number; "" for a refusal no count of devices lifts.
func (ch *choice) leftOutClause() string {
	wants := ch.Plan.devicesWanted()
	switch {
	case ch.unknownWouldRun():
		return leftOutUnknown(ch.RunsNamed, theyRunIt)
	case wants == 0:
		return ""
	case ch.Plan.Code == RefusalTooFewDevices && ch.unknownCouldChange(wants):
		return leftOutUnknown(ch.UnknownMemory, mightMakeUpTheNumber)
	case ch.Plan.Code == RefusalTooFewDevices:
		return leftOutUnknown(ch.UnknownMemory, tooFewEvenCounted(ch.Known+len(ch.UnknownMemory), wants))
	}
	return leftOutUnknown(ch.UnknownMemory, mightHoldIt)
}

// fit is the answer's fits: fitOf the plan, except that a refusal counting
// the devices of unknown memory left out might lift (unknownCouldChange) is
// unknown (null), not no: one for memory (the devices of known memory do
// not hold the model, and whether all of them do cannot be told), or
// too_few_devices where they would make up the number. The refusal keeps
// its code, and its text names them (leftOutClause).
func (ch *choice) fit() Fit {
	if ch.unknownCouldChange(ch.Plan.devicesWanted()) || ch.unknownWouldRun() {
		return FitUnknown
	}
	return fitOf(ch.Plan.Fits, ch.Plan.Code)
}

// unknownWouldRun reports whether the plan is refused as unsupported (no
// device of known memory runs a level tried) and accelerators of unknown
// memory left out would run one (UnknownRuns): counted, they might run
// and hold it.
func (ch *choice) unknownWouldRun() bool {
	return ch.Plan.Code == RefusalUnsupported && len(ch.UnknownRuns) > 0
}

// levelRows are the answer's level rows: ch.Rows, where a row whose
// refusal counting the devices of unknown memory might lift (its wants,
// unknownCouldChange), or a row no device of known memory runs at a level
// they would run (UnknownRuns), says fits unknown (null), as fit says of
// the answer.
func (ch *choice) levelRows() []LevelRow {
	if len(ch.UnknownMemory) == 0 {
		return ch.Rows
	}
	rows := slices.Clone(ch.Rows)
	for i := range rows {
		if rows[i].Fits == FitNo && (ch.unknownCouldChange(rows[i].wants) || rows[i].unrun && ch.UnknownRuns[quant.Level(rows[i].Quant)]) {
			rows[i].Fits = FitUnknown
		}
	}
	return rows
}

// unknownMemoryWarning is the warning of a plan made on the devices of known
// memory beside available devices of unknown memory, which it names: the
// plan does not use them, and a machine of 8 GPUs planned on 4 should say
// why. "" when there are none.
func unknownMemoryWarning(ch *choice) string {
	if !ch.Plan.Fits || len(ch.UnknownMemory) == 0 {
		return ""
	}
	return leftOutWarning("planned", ch.UnknownMemory)
}

// mightHoldIt is what counting the devices of unknown memory a refusal
// for memory names might do (leftOutUnknown).
const mightHoldIt = "counted, they might hold it"

// theyRunIt is what counting the devices of unknown memory named in an
// unsupported refusal might do: they run a level the others do not.
const theyRunIt = "they run what the others do not: counted, they might hold it"

// mightMakeUpTheNumber is what counting them might do for a too_few_devices
// refusal where there are enough devices in all.
const mightMakeUpTheNumber = "counted, they might make up the number"

// tooFewEvenCounted says that all n devices, those of unknown memory
// counted, are fewer than the wants a too_few_devices refusal needs.
func tooFewEvenCounted(n, wants int) string {
	return fmt.Sprintf("even counted, the %d devices in all are fewer than %d", n, wants)
}

// leftOutUnknown is the clause a refusal adds that names the available
// devices of unknown memory left out (unknownMemoryDevices) and what
// counting them might do: it is why its fits is null, not false.
func leftOutUnknown(named []string, counted string) string {
	return "; left out because their memory is unknown (" + counted + "): " + strings.Join(named, ", ") +
		"; a registry with their memory_bytes plans on them"
}

// leftOutWarning is the warning of an answer made (done: "planned",
// "estimated") on the devices of known memory that fits, naming the
// devices of unknown memory it left out.
func leftOutWarning(done string, named []string) string {
	return done + " on the devices whose memory is known; left out because their memory is unknown: " +
		strings.Join(named, ", ") + "; a registry with their memory_bytes plans on them"
}
