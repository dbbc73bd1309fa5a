// Stage 6 of planning: the explanation, written from the choice (see the
// package comment in request.go).

package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// explainChoice is the explanation of a choice, written from what the
// search recorded (choose): which levels were tried, where the plan was
// found, why better levels were not taken, and what the request could ask
// for when nothing fits. The lines about the plan itself (describe,
// describeReplicas, engine notes) are added by each answer.
func explainChoice(ch *choice) []string {
	out := []string{ch.LevelsWhy}
	out = append(out, budgetLines(ch)...)
	if ch.HostOnly {
		out = append(out, "no available accelerator with known usable memory: planning on host RAM")
	}
	switch ch.Outcome {
	case outcomeNoDevices:
		// The answer adds the refusal's own "does not fit:" line.
		if len(ch.Devices) > 0 {
			out = append(out, "requested devices: "+strings.Join(ch.Devices, ", "))
		}
		return out
	case outcomeFits, outcomeFitsOnHost:
		if ch.Outcome == outcomeFitsOnHost {
			out = append(out, "include_cpu: no accelerator plan fits, so host RAM is used")
		}
		out = append(out, explainRejected(ch.Rows, string(ch.Plan.Level))...)
		return append(out, choiceWhys(ch)...)
	}
	if ch.OffloadWithReplicas {
		out = append(out, "cpu_offload is not combined with replicas: the replicas would share one host's RAM and PCIe")
	}
	if ch.Outcome == outcomeFitsOffloaded {
		out = append(out, explainRejected(ch.Rows, string(ch.Plan.Level))...)
		out = append(out, choiceWhys(ch)...)
		why := "no level fits on the accelerators alone"
		if ch.OnDeviceWhy != "" {
			why = "no level a published checkpoint runs fits on the accelerators alone"
		}
		if ch.Plan.streamed() {
			return append(out, "cpu_offload: "+why+", so the weights that do not fit stay in host RAM; decode is bound by PCIe")
		}
		// llama.cpp runs the layers (or experts) it keeps in host RAM on
		// the CPU (-ngl, --n-cpu-moe): they stream from host memory, not
		// across PCIe; where they do not run at a known host bandwidth
		// (hostRuns), their reads are timed at PCIe and the throughput's
		// bound is pcie, which the line says, with why (choice.HostAtPCIe).
		part := "the layers that do not fit stay in host RAM and run on the CPU"
		if ch.Plan.moeOffload() || ch.Plan.AllExpertsOnHost {
			part = "the experts that do not fit stay in host RAM"
		}
		return append(out, "cpu_offload: "+why+", so "+part+"; "+hostBoundWords(ch.HostAtPCIe))
	}
	out = append(out, explainRejected(ch.Rows, "")...)
	if ch.FileWhy != "" {
		out = append(out, ch.FileWhy) // the file the refusal's level loads
	}
	if ch.NoHostForOffload != "" {
		out = append(out, ch.NoHostForOffload)
	}
	if ch.CouldOffload {
		out = append(out, HintCPUOffload+" would keep the layers that do not fit in host RAM ("+offloadHintWhy()+")")
	}
	if ch.CouldIncludeCPU {
		out = append(out, HintIncludeCPU+" would plan on host RAM (the CPU) when no accelerator has room")
	}
	return out
}

// choiceWhys are the lines on how a fitting level was chosen among those
// that fit: the level on the accelerators alone passed over for an
// offloaded one a published checkpoint runs (OnDeviceWhy), the better level
// passed over for one a published checkpoint runs (PublishedWhy), then how
// decode speed weighed (SpeedWhy), then what the file loaded holds beyond
// the derived weights (FileWhy).
func choiceWhys(ch *choice) []string {
	var out []string
	for _, s := range []string{ch.OnDeviceWhy, ch.PublishedWhy, ch.DroppedWhy, ch.SpeedWhy, ch.FileWhy} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// budgetLines are the explanation's "budget:" lines: the chosen pool's
// engine and memory budget, by device kind; where the default engines
// split one kind between them (vLLM on an H200, llama.cpp on a P40 below
// vLLM's floor) one line per pool of that kind, naming its devices, the
// chosen pool's first, since the levels' rows were planned on each.
func budgetLines(ch *choice) []string {
	chosen := ch.Plan.Pool
	if chosen == nil {
		return nil
	}
	if !chosen.byEngine {
		return []string{"budget: " + budgetSource(planBudget(&ch.Plan), chosen.Kind)}
	}
	out := []string{"budget: " + budgetSourceFor(planBudget(&ch.Plan), chosen.Kind, poolDevices(chosen.origin()))}
	seen := map[*pool]bool{chosen.origin(): true}
	for _, p := range ch.Pools {
		p = p.origin()
		if seen[p] || !p.byEngine || p.Kind != chosen.Kind {
			continue
		}
		seen[p] = true
		out = append(out, "budget: "+budgetSourceFor(p.Budget, p.Kind, poolDevices(p)))
	}
	return out
}

// poolDevices names a pool's devices: "cuda:1 (Tesla P40)".
func poolDevices(p *pool) string { return devicesInWords(p.Devices) }

// devicesInWords names devices by id and name: "cuda:1 (Tesla P40)".
func devicesInWords(ds []*device) string {
	names := make([]string, 0, len(ds))
	for _, d := range ds {
		names = append(names, fmt.Sprintf("%s (%s)", d.ID, d.Dev.Name))
	}
	return strings.Join(names, ", ")
}

// explainRejected is one line per level better than the chosen one (all
// levels when chosen is "") saying why it was not taken, and one for the
// chosen level.
func explainRejected(rows []LevelRow, chosen string) []string {
	var out []string
	for _, r := range rows {
		if chosen != "" && r.Quant == chosen {
			if r.Fits.Yes() {
				out = append(out, fitsLine(r))
			} else {
				out = append(out, fmt.Sprintf("%s chosen with cpu_offload (%s as on one device)", r.Quant, gib(r.TotalBytes)))
			}
			return out
		}
		if !r.Fits.Yes() {
			out = append(out, RejectedLine(r.Quant, r.Reason))
		}
	}
	return out
}

// fitsLine is the chosen level's line: the strategy named as a name
// ("strategy none" reads as "fits nothing" without it), and what "none"
// means, one device.
func fitsLine(r LevelRow) string {
	if r.Strategy == StrategyNone {
		return fmt.Sprintf("%s fits on one device (strategy none; %s)", r.Quant, gib(r.TotalBytes))
	}
	return fmt.Sprintf("%s fits (strategy %s; %s as on one device)", r.Quant, r.Strategy, gib(r.TotalBytes))
}

// describe explains the strategy of a fitting plan; placed says the
// serving placement spread it over more devices than the fewest
// (placement.go), which its own line explains.
func describe(pl *planned, placed bool) []string {
	need := pl.oneDeviceBytes()
	var out []string
	strategy := pl.Strategy
	if pl.Unit != "" {
		strategy = pl.Unit // a data-parallel plan: describe one replica
	}
	switch strategy {
	case StrategyNone:
		d := pl.Stages[0].Devices[0]
		if placed {
			out = append(out, fmt.Sprintf("none: the model needs %s and fits on one device (%s: %s usable; memory bandwidth %s)",
				gib(need), d.ID, gib(d.Usable), bwText(d)))
			break
		}
		out = append(out, fmt.Sprintf("none: the model needs %s and fits on %s (%s usable); chosen as the fastest device that fits (memory bandwidth %s)",
			gib(need), d.ID, gib(d.Usable), bwText(d)))
	case StrategyTensor:
		if placed {
			out = append(out, fmt.Sprintf("tensor_parallel: the model needs %s; %d identical devices joined by a high-bandwidth link hold %s each (the placement line says why %d)",
				gib(need), pl.TP, gib(pl.Stages[0].Part.total()), pl.TP))
			break
		}
		out = append(out, fmt.Sprintf("tensor_parallel: %s does not fit on one device; %d identical devices joined by a high-bandwidth link hold %s each",
			gib(need), pl.TP, gib(pl.Stages[0].Part.total())))
	case StrategyPipeline:
		if pl.TP > 1 {
			out = append(out, fmt.Sprintf("pipeline_parallel: %d stages of tensor_parallel %d (tensor parallel inside each high-bandwidth domain, pipeline across them)", len(pl.Stages), pl.TP))
		} else if placed {
			out = append(out, fmt.Sprintf("pipeline_parallel: the model needs %s; %d stages of whole layers, split in proportion to each device's usable memory (the placement line says why %d)", gib(need), len(pl.Stages), len(pl.Stages)))
		} else {
			out = append(out, fmt.Sprintf("pipeline_parallel: %s does not fit on one device and no high-bandwidth domain holds it; %d stages of whole layers, split in proportion to each device's usable memory", gib(need), len(pl.Stages)))
		}
	case StrategyOffload:
		h := pl.Stages[len(pl.Stages)-1]
		if pl.moeOffload() {
			out = append(out, moeExplanation(pl, h))
			break
		}
		if pl.AllExpertsOnHost {
			out = append(out, step3Explanation(pl))
			break
		}
		start, end := pl.layerSpan(h)
		if pl.streamed() {
			out = append(out, streamedExplanation(pl, start, end))
			break
		}
		out = append(out, fmt.Sprintf("cpu_offload: layers %d-%d (%s) stay in host RAM", start, end-1, gib(h.Part.Weights)))
	}
	if l := tileLine(pl); l != "" {
		out = append(out, l)
	}
	return out
}

// tileLine says which tensor-parallel sizes the plan's devices allow and
// the checkpoint's fp8 blocks rule out (costs.brokenTile), so a plan of
// fewer ranks than the high-bandwidth domain holds is not read as a
// choice of speed; "" where none is ruled out.
func tileLine(pl *planned) string {
	c := &pl.Costs
	if c.SplitBlock <= 0 || pl.Pool == nil || !pl.Pool.tensorParallel() {
		return ""
	}
	largest := 0
	for _, g := range pl.Pool.domainGroups() {
		largest = max(largest, len(g))
	}
	var sizes, shares []string
	for n := 2; n <= min(largest, maxTPSize); n++ {
		if c.Heads > 0 && c.Heads%n != 0 || c.KVHeads > 0 && c.KVHeads%n != 0 && n%c.KVHeads != 0 {
			continue
		}
		if w := c.brokenTile(n); w > 0 {
			sizes = append(sizes, strconv.Itoa(n))
			shares = append(shares, fmt.Sprintf("%s of the model's %d-wide FFN (size %d)", perRank(w, n), w, n))
		}
	}
	if len(sizes) == 0 {
		return ""
	}
	if len(sizes) == 1 {
		for i := range shares {
			shares[i] = shares[i][:strings.LastIndex(shares[i], " (size")]
		}
	}
	return fmt.Sprintf("tensor parallel: %s not planned: a rank would hold %s, not whole %dx%d blocks of the checkpoint's fp8 weights, which %s; expert parallelism (%s) keeps routed experts whole, and is not planned here",
		pluralVerb(len(sizes), "size ", "sizes ")+wordList(sizes), wordList(shares), c.SplitBlock, c.SplitBlock, strings.Replace(c.SplitWhy, " refuses to load it", " refuses to load", 1), c.SplitEP)
}

func bwText(d *device) string {
	if d.BandwidthGBs <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f GB/s, %s", d.BandwidthGBs, d.BandwidthSource)
}

// describeReplicas explains a data-parallel plan.
func describeReplicas(pl *planned, req *planning, placed bool) []string {
	if pl.DP < 2 {
		return nil
	}
	var lists []string
	for i, r := range pl.Replicas {
		lists = append(lists, fmt.Sprintf("replica %d: %s", i, replicaDeviceIDs(r)))
	}
	how := fmt.Sprintf("replicas %d was requested", pl.DP)
	if req.ReplicasMax {
		how = "replicas max: as many as the group of identical devices holds"
	}
	layout := replicaLayout(pl.Unit, len(pl.Replicas[0][0].Devices)*len(pl.Replicas[0]))
	if placed {
		return []string{fmt.Sprintf("data_parallel: the serving placement (the placement line says why); %d copies of the model, each %s (tp_size %d, pp_size %d), the batch of %d split over them, %s each at most (%s)",
			pl.DP, layout, pl.TP, len(pl.Stages), req.BatchSize, counted(pl.batchOf(req), "sequence"), strings.Join(lists, "; "))}
	}
	return []string{fmt.Sprintf("data_parallel: %s; %d copies of the model, each %s (tp_size %d, pp_size %d) serving %d of the %d sequences (%s)",
		how, pl.DP, layout, pl.TP, len(pl.Stages), pl.batchOf(req), req.BatchSize, strings.Join(lists, "; "))}
}

// replicaLayout says in words how one replica of strategy unit lies on its
// n devices: "on 1 device", "tensor parallel over 2 devices", rather than
// the strategy code ("none over 1 device" read as no replica at all).
func replicaLayout(unit string, n int) string {
	switch unit {
	case StrategyNone:
		return "on " + counted(n, "device")
	case StrategyTensor:
		return "tensor parallel over " + counted(n, "device")
	case StrategyPipeline:
		return "pipeline parallel over " + counted(n, "device")
	}
	return unit + " over " + counted(n, "device")
}

// modelWarnings turns what the model resolution noted into warnings.
func modelWarnings(req *planning) []string {
	w := []string{}
	m := req.Model
	if m.ShapeEstimated {
		w = append(w, "model shape (layers, hidden size, heads) estimated from the parameter count; KV cache and layer split are approximate")
	}
	w = append(w, m.Notes...)
	if req.ContextCapped {
		w = append(w, fmt.Sprintf("context_length defaults to the model's maximum context of %d tokens (below the default %d)", req.ContextLength, DefaultContextLength))
	}
	return w
}

// replicaDeviceIDs lists the answer ids of one replica's devices, stage by
// stage, comma-separated.
func replicaDeviceIDs(r []stage) string {
	var ids []string
	for _, s := range r {
		for _, d := range s.Devices {
			ids = append(ids, d.ID)
		}
	}
	return strings.Join(ids, ",")
}

// offloadHintWhy says how the registered engines offload, each named by
// its title in its group (engine.Parallelism): "llama.cpp runs them on the
// CPU; vLLM and SGLang read their weights across PCIe every step". An
// engine that offloads neither way (none) is left out.
func offloadHintWhy() string {
	var onHost, streams []string
	for _, e := range engine.All() {
		switch par := e.Parallelism(); {
		case par.OffloadOnHost:
			onHost = append(onHost, e.Title())
		case par.StreamsOffloadedWeights:
			streams = append(streams, e.Title())
		}
	}
	var parts []string
	if len(onHost) > 0 {
		parts = append(parts, wordList(onHost)+pluralVerb(len(onHost), " runs", " run")+" them on the CPU")
	}
	if len(streams) > 0 {
		parts = append(parts, wordList(streams)+pluralVerb(len(streams), " reads", " read")+" their weights across PCIe every step")
	}
	return strings.Join(parts, "; ")
}

// wordList joins words as a sentence lists them: "a", "a and b", "a, b
// and c".
func wordList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// pluralVerb is one when n is 1, else many.
func pluralVerb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// hostBoundWords says what bounds the decode of an offloaded plan whose
// host part stays in host RAM: host memory bandwidth, or PCIe where that
// part is timed at the GPU's PCIe bandwidth instead (atPCIe says why:
// choice.HostAtPCIe), as throughput.bound says.
func hostBoundWords(atPCIe string) string {
	if atPCIe != "" {
		return "decode is bound by PCIe: " + atPCIe + ", so what the host part reads a step is timed at the GPU's PCIe bandwidth"
	}
	return "decode is bound by host memory bandwidth"
}
