// MoE expert offload: llama.cpp's --n-cpu-moe N keeps the routed-expert
// tensors (ffn_{gate,up,down}_exps) of the first N layers in host memory
// and runs them on the CPU, while every layer's attention, norms, router,
// shared experts and KV cache stay on the GPU (-ngl past the layer count).
// The flag was added by https://github.com/ggml-org/llama.cpp/pull/15077
// and is defined in common/arg.cpp of https://github.com/ggml-org/llama.cpp;
// its --fit places MoE models the same way. A token reads only its
// experts_per_token experts of each layer, so the host streams a small
// share of the offloaded bytes per token, unlike a whole-layer split.

package plan

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// setExperts sizes the routed experts of one MoE layer at level l (at the
// level's bits per weight, kept below the layer's weights so a shape that
// disagrees with the count cannot make the rest negative) and the share of
// each expert tensor, from the tensors' own types where the model has a
// shape (quant.RoutedExpertBytes at the GGUF type llama.cpp runs for l).
// file is the routed experts of a published file larger than l's mix
// (quant.FileRoutedExperts, estimateFor), nil for the mix's own: the
// experts then hold their share of what the file holds beyond the mix, and
// the rest of a layer (what stays on the GPU under --n-cpu-moe) the rest.
func (c *costs) setExperts(m *model.Model, l quant.Level, file *quant.RoutedExperts) {
	p := m.RoutedExpertParams()
	if p <= 0 || l.BitsPerWeight() <= 0 || m.Experts <= 0 {
		return
	}
	e, ok := quant.RoutedExpertBytes(m, l.LlamaCPPLevel())
	// A file larger than the mix derived (file) holds its experts'
	// share of the extra in them: the experts are the file's, and the
	// average of a layer's grows as they do.
	grow := 1.0
	if ok && file != nil && e.Total() > 0 {
		grow = file.Total() / e.Total()
		e = *file
	}
	c.ExpertLayerWeights = math.Min(float64(p)*l.BitsPerWeight()/8*grow, 0.95*c.LayerWeights)
	c.ExpertActive = c.ActiveRatio
	if m.ExpertsPerToken > 0 {
		c.ExpertActive = float64(m.ExpertsPerToken) / float64(m.Experts)
	}
	c.DenseLayers = min(max(m.DenseLayers, 0), c.Layers)
	c.ExpertShares = [3]float64{1.0 / 3, 1.0 / 3, 1.0 / 3}
	if ok {
		t := e.Total()
		c.ExpertShares = [3]float64{e.Down / t, e.Gate / t, e.Up / t}
		c.setExpertsByLayer(e)
	}
}

// setExpertsByLayer sizes each layer's routed experts at the types
// llama-quant gives its tensors (e.ByLayer), where every layer holds
// routed experts: there the average layer is a MoE layer and the experts
// leave it exactly its attention, norms and router, so the 0.95 guard of
// the level's bits per weight is not needed. Routed experts are 97 % of a
// Qwen3-30B-A3B Q4_K_M layer, 348.75 MiB on average beside about 10.5 MiB
// (llama.cpp 34af94cd's CUDA0 model buffer on an H200 is 17500.43 MiB with
// --n-cpu-moe 0, 9130.43 with 24 and 760.42 with 48: the H200 run of
// 2026-11-28, TestMoEExpertBytesAgainstLlamaCPP), so the guard cut them to
// 342.6 MiB and charged the GPU 287 MiB of experts as weights --n-cpu-moe
// cannot move; and its ffn_down_exps are Q6_K in 24 of the 48 layers, six
// of them the first six, so the first N layers are not N times the
// average. Both made the plan keep one or two expert tensors more on the
// CPU than llama.cpp's --fit (TestLlamaCPPFitMoEReplay). With leading
// dense layers (DeepSeek-V3) the average layer understates a MoE layer,
// whose experts alone can exceed it, and the average under the guard
// stays.
func (c *costs) setExpertsByLayer(e quant.RoutedExperts) {
	if len(e.ByLayer) != c.Layers || c.DenseLayers > 0 {
		return
	}
	prefix := make([]float64, c.Layers+1)
	tensors := make([][3]float64, c.Layers)
	for i, l := range e.ByLayer {
		if l.Total() <= 0 {
			return // a layer without routed experts
		}
		prefix[i+1] = prefix[i] + l.Total()
		tensors[i] = [3]float64{l.Down, l.Gate, l.Up}
	}
	avg := prefix[c.Layers] / float64(c.Layers)
	if avg > c.LayerWeights {
		return
	}
	c.ExpertLayerWeights, c.ExpertPrefix, c.ExpertTensors = avg, prefix, tensors
}

// llama.cpp's --fit moves the expert tensors of a partly offloaded layer in
// this order: ffn_down first (LAYER_FRACTION_GATE keeps attention, up and
// gate on the device), then ffn_gate (LAYER_FRACTION_UP keeps attention and
// up): get_overflow_pattern in common/fit.cpp of ggml-org/llama.cpp
// @ 08033df0. expertTensorNames are those tensors' names, in that order.
var expertTensorNames = [3]string{"down", "gate", "up"}

// moeHost is what a llama.cpp MoE offload keeps in host memory: the routed
// experts of the first Layers layers (--n-cpu-moe Layers, which counts the
// leading dense layers too) and the first Part (0-2) expert tensors of layer
// Layers, in --fit's order (-ot "blk\.N\.ffn_down_exps=CPU").
type moeHost struct{ Layers, Part int }

// partial reports whether h moves part of one more layer's experts: a
// layer that exists and has experts.
func (h moeHost) partial(c *costs) bool {
	return h.Part > 0 && h.Layers >= c.DenseLayers && h.Layers < c.Layers
}

// next is the host placement one expert tensor larger than h: the next
// tensor of the partial layer, or, after two, the whole layer.
func (h moeHost) next() moeHost {
	if h.Part < 2 {
		return moeHost{h.Layers, h.Part + 1}
	}
	return moeHost{h.Layers + 1, 0}
}

// partBytes is the bytes of the expert tensors h keeps of its partial layer.
func (c *costs) partBytes(h moeHost) float64 {
	if !h.partial(c) {
		return 0
	}
	var s float64
	if c.ExpertTensors != nil {
		for _, x := range c.ExpertTensors[h.Layers][:h.Part] {
			s += x
		}
		return s
	}
	for _, x := range c.ExpertShares[:h.Part] {
		s += x
	}
	return s * c.ExpertLayerWeights
}

// hostExperts is the expert bytes h keeps in host memory.
func (c *costs) hostExperts(h moeHost) float64 {
	return c.expertBytes(h.Layers) + c.partBytes(h)
}

// hostExpertsIn is the expert bytes of layers [start, end) that h keeps in
// host memory.
func (c *costs) hostExpertsIn(h moeHost, start, end int) float64 {
	lo, hi := max(start, c.DenseLayers), min(end, h.Layers, c.Layers)
	b := c.expertsIn(lo, hi)
	if h.partial(c) && h.Layers >= start && h.Layers < end {
		b += c.partBytes(h)
	}
	return b
}

// offloadedLayers is how many layers run some of their experts on the CPU
// under h: each hands its hidden state to the CPU and back every token.
func (c *costs) offloadedLayers(h moeHost) int {
	n := c.expertLayers(h.Layers)
	if h.partial(c) {
		n++
	}
	return n
}

// expertLayers is how many of the first n layers hold routed experts.
func (c *costs) expertLayers(n int) int {
	return max(0, min(n, c.Layers)-c.DenseLayers)
}

// expertBytes is the routed-expert weights of the first n layers.
func (c *costs) expertBytes(n int) float64 {
	return c.expertsIn(0, n)
}

// expertsIn is the routed-expert weights of layers [a, b): each layer's
// own where known (ExpertPrefix), else ExpertLayerWeights a MoE layer.
func (c *costs) expertsIn(a, b int) float64 {
	a, b = max(a, 0), min(b, c.Layers)
	if b <= a {
		return 0
	}
	if c.ExpertPrefix != nil {
		return c.ExpertPrefix[b] - c.ExpertPrefix[a]
	}
	return float64(c.expertLayers(b)-c.expertLayers(a)) * c.ExpertLayerWeights
}

// moeOffloadable reports whether pool p's engine places MoE experts in
// host memory (engine.Parallelism ExpertsOnHost: llama.cpp) and the model
// has experts to place.
func moeOffloadable(p *pool, c costs) bool {
	return c.ExpertLayerWeights > 0 && len(p.Devices) >= 1 &&
		p.Budget.Engine != nil && p.Budget.Engine.Parallelism().ExpertsOnHost
}

// moeGPUPart is the memory of a GPU holding layers [start, end) whose
// experts under h are in host memory.
func moeGPUPart(c costs, h moeHost, start, end int) part {
	p := c.stagePart(start, end, 1)
	if c.ExpertPrefix != nil {
		// stagePart charges each layer the average layer: the layers'
		// own experts differ from the average by their tensors' types.
		p.Weights += int64(math.Round(c.expertsIn(start, end) - float64(c.expertLayers(end)-c.expertLayers(start))*c.ExpertLayerWeights))
	}
	p.Weights -= int64(math.Ceil(c.hostExpertsIn(h, start, end)))
	return p
}

// moeHostPart is the host memory of h: the experts (mapped from the GGUF
// file), its compute buffer and runtime overhead. No CPU_REPACK copy: with
// a GPU backend llama.cpp stores the weights it keeps on the CPU in that
// GPU's host buffer type, which comes before the CPU's extra (repack)
// types in the CPU's list ("CPU: ACCEL -> GPU host -> CPU extra -> CPU",
// make_cpu_buft_list in src/llama-model.cpp of ggml-org/llama.cpp @
// 34af94cd; an override to the CPU picks from that list,
// src/llama-model-loader.cpp), unless --no-host ("bypass host buffer
// allowing extra buffers to be used", common/arg.cpp), which these plans
// do not pass. The H200 logs of Qwen3-30B-A3B Q4_K_M with --n-cpu-moe 24
// and 48 and -ot (data/llamacpp-cuda-h200-memory) list only CUDA0 and
// Host, no CPU_REPACK row. A CPU-only build does repack them
// (quant.RoutedExperts.Repacked).
func moeHostPart(c costs, h moeHost) part {
	w := c.hostExperts(h)
	return part{Weights: int64(math.Ceil(w)), Activations: c.Breakdown.ActivationsBytes,
		Overhead: quant.HostOverheadBytes}
}

// moeSplitParts is the memory of one GPU (every layer, less the experts of
// the first n) and of the host under --n-cpu-moe n.
func moeSplitParts(c costs, n int) (gpu, host part) {
	h := moeHost{Layers: n}
	return moeGPUPart(c, h, 0, c.Layers), moeHostPart(c, h)
}

// moeSplit is the smallest host placement of experts whose split fits the
// GPUs gpus (layers split over them in order, each holding at least one,
// as llama.cpp's --tensor-split does) and host h, one expert tensor at a
// time: --fit's order, which moves single tensors of a partly offloaded
// layer before a whole one. Its stages are one per GPU and the host's
// last, holding the experts of layers [0, Layers) and the partial layer;
// false when even all experts on the host leave a GPU too full, or the host
// cannot hold them.
//
// More experts on the host never make a GPU fuller, so whether the split
// fits only turns from false to true along the placements: the first that
// fits is found by bisection over them (moeHostAt), not by trying each, which
// for a model of many layers was three placements a layer, each a split of
// its own (minutes at 16384 layers, TestDeepMoEIsBounded).
func moeSplit(c costs, gpus []*device, host *device) ([]stage, moeHost, bool) {
	if len(gpus) == 0 || len(gpus) > c.Layers {
		return nil, moeHost{}, false
	}
	n := moeHostCount(c)
	first := sort.Search(n, func(k int) bool {
		_, ok := moeLayerSplit(c, moeHostAt(c, k), gpus)
		return ok
	})
	if first < n {
		h := moeHostAt(c, first)
		stages, _ := moeLayerSplit(c, h, gpus)
		hp := moeHostPart(c, h)
		if hp.total() > host.Usable {
			return nil, moeHost{}, false
		}
		end := h.Layers
		if h.partial(&c) {
			end++
		}
		return append(stages, stage{Devices: []*device{host}, Start: 0, End: end, Part: hp}), h, true
	}
	return nil, moeHost{}, false
}

// moeHostCount is how many host placements moeSplit tries: from the first
// expert tensor of the first MoE layer, one tensor at a time (moeHost.next),
// to every expert on the host. A placement naming tensors of a layer that
// has no experts, or of one past the last, is not one.
func moeHostCount(c costs) int {
	return 3 * max(c.Layers-c.DenseLayers, 0)
}

// moeHostAt is the k-th placement moeHostCount counts: the sequence
// moeHost{DenseLayers, 1}.next().next()... without the placements that are
// not partial, i.e. {D, 1}, {D, 2}, {D+1, 0}, {D+1, 1}, ..., {Layers, 0}.
func moeHostAt(c costs, k int) moeHost {
	k++
	return moeHost{Layers: c.DenseLayers + k/3, Part: k % 3}
}

// moeLayerSplit splits the layers over gpus in order under host placement
// h, each GPU taking as many as fit and the last the rest; false when one
// cannot take a layer or the last cannot take the rest.
func moeLayerSplit(c costs, h moeHost, gpus []*device) ([]stage, bool) {
	var stages []stage
	start := 0
	for i, g := range gpus {
		left := len(gpus) - 1 - i
		end := c.Layers
		if left > 0 {
			// A GPU's part only grows with its layers, so the most it
			// takes is found by bisection (a layer at a time was
			// quadratic in the layers, TestDeepMoEIsBounded).
			end = start + sort.Search(c.Layers-left-start, func(k int) bool {
				return moeGPUPart(c, h, start, start+k+1).total() > g.Usable
			})
			if end == start {
				return nil, false
			}
		}
		p := moeGPUPart(c, h, start, end)
		if p.total() > g.Usable {
			return nil, false
		}
		stages = append(stages, stage{Devices: []*device{g}, Start: start, End: end, Part: p})
		start = end
	}
	return stages, true
}

// moeRead is the weight bytes a decode step reads from stage i of a
// llama.cpp MoE offload: on a GPU, every non-expert weight of its layers
// and the active share of the experts it holds (weights is the stage's
// weights as estimateWith counts them); on the host (the last stage), the
// active share of the experts it holds.
func (pl *planned) moeRead(i int, weights float64) float64 {
	c := pl.Costs
	h := pl.moeHost()
	if i == len(pl.Stages)-1 {
		return c.hostExperts(h) * c.ExpertActive
	}
	s := pl.Stages[i]
	onGPU := c.expertBytes(s.End) - c.expertBytes(s.Start) - c.hostExpertsIn(h, s.Start, s.End)
	return weights - onGPU + onGPU*c.ExpertActive
}

// moeHost is the plan's host placement of experts.
func (pl *planned) moeHost() moeHost { return moeHost{Layers: pl.CPUMoE, Part: pl.CPUMoEPart} }

// moeTransferSeconds is the PCIe time of a MoE offload's decode step: each
// layer whose experts run (in part) on the CPU sends its hidden state to the
// host and the experts' output back (msg bytes each way) over the slowest
// PCIe link of the plan's GPUs; 0 when a link's bandwidth is unknown.
func moeTransferSeconds(pl *planned, msg float64) float64 {
	pcie := math.Inf(1)
	for _, s := range pl.Stages[:max(len(pl.Stages)-1, 0)] {
		for _, d := range s.Devices {
			pcie = math.Min(pcie, d.PCIeGBs)
		}
	}
	if pcie <= 0 || math.IsInf(pcie, 1) {
		return 0
	}
	return 2 * float64(pl.Costs.offloadedLayers(pl.moeHost())) * msg / (pcie * 1e9)
}

// handovers is how many times a decode step of an offloaded llama.cpp plan
// passes between the GPU and the CPU: once per layer whose experts run (in
// part) on the host, else once (-ngl: the step ends on the CPU).
func (pl *planned) handovers() int {
	if pl.CPUMoE > 0 || pl.CPUMoEPart > 0 {
		return pl.Costs.offloadedLayers(pl.moeHost())
	}
	if pl.AllExpertsOnHost {
		return pl.step3Handovers()
	}
	return 1
}

// hostOffloadOf is the plan's host placement, for its engine to name
// (engine.HostOffloadNamer): the routed experts of the first layers and
// part of one more, every layer's experts (moestep3.go), or whole layers.
func hostOffloadOf(pl *planned) engine.HostOffload {
	switch {
	case pl.AllExpertsOnHost:
		return engine.HostOffload{AllExperts: true, GPULayers: pl.step3GPULayers()}
	case !pl.moeOffload():
		return engine.HostOffload{WholeLayers: true}
	}
	h := pl.moeHost()
	var o engine.HostOffload
	if pl.Costs.expertLayers(h.Layers) > 0 {
		o.ExpertLayers = h.Layers
	}
	if h.partial(&pl.Costs) {
		o.PartLayer, o.PartTensors = h.Layers, h.Part
	}
	return o
}

// hostOffloadWords names the plan's host placement in its engine's words,
// for notes: the engine's title and the settings it names the placement
// by ("llama.cpp --n-cpu-moe 24"), its title alone for an engine that
// names none (engine.HostOffloadNamer).
func hostOffloadWords(pl *planned) string {
	if pl.Pool == nil || pl.Pool.Budget.Engine == nil {
		return "the engine"
	}
	e := pl.Pool.Budget.Engine
	n, ok := e.(engine.HostOffloadNamer)
	if !ok {
		return e.Title()
	}
	if f := n.HostOffloadSettings(hostOffloadOf(pl)); f != "" {
		return e.Title() + " " + f
	}
	return e.Title()
}

// hostOffloadAside is what builds of the plan's engine without the
// settings hostOffloadWords names take instead, "; " and the engine's
// words, "" when it says nothing (engine.HostOffloadNamer).
func hostOffloadAside(pl *planned) string {
	if pl.Pool == nil {
		return ""
	}
	if n, ok := pl.Pool.Budget.Engine.(engine.HostOffloadNamer); ok {
		if a := n.HostOffloadAside(hostOffloadOf(pl)); a != "" {
			return "; " + a
		}
	}
	return ""
}

// moeHostNote is the assumption of a MoE offload's host stage.
func moeHostNote(pl *planned, bw float64, e efficiency) string {
	c := pl.Costs
	h := pl.moeHost()
	what := fmt.Sprintf("the routed experts of the first %d layers", h.Layers)
	if h.partial(&c) {
		what += fmt.Sprintf(" and the %s expert tensors of layer %d", strings.Join(expertTensorNames[:h.Part], " and "), h.Layers)
	}
	return fmt.Sprintf("%s run on the CPU (%s): a token reads %.1f%% of them (experts per token / experts), %.2f GB, from host memory (%.0f GB/s) at %.0f%%, or their matrix-vector work bounds them; attention, shared weights, the KV cache and the other experts stream from the GPUs, one after another; each offloaded layer hands the hidden state to the CPU and back (%.0f us, fitted on %s)",
		what, hostOffloadWords(pl), c.ExpertActive*100, c.hostExperts(h)*c.ExpertActive/1e9, bw, e.DecodeBandwidthHost*100, e.OffloadHandoverSeconds*1e6,
		ofRuns(runsEngine(pl.Pool.engine()), "offload measurements"))
}

// moeOffload reports whether the plan keeps MoE experts, and only them, in
// host memory.
func (pl *planned) moeOffload() bool { return pl.CPUMoE > 0 || pl.CPUMoEPart > 0 }

// moeExplanation is the placement line of a MoE offload whose host stage
// is h: what stays on the GPUs and which experts stay in host RAM.
func moeExplanation(pl *planned, h stage) string {
	c := &pl.Costs
	mh := pl.moeHost()
	gpus := "the GPU"
	if n := len(pl.Stages) - 1; n > 1 {
		var split []string
		for _, s := range pl.Stages[:n] {
			split = append(split, fmt.Sprintf("%s layers %d-%d", s.Devices[0].ID, s.Start, s.End-1))
		}
		gpus = fmt.Sprintf("%d GPUs (%s)", n, strings.Join(split, ", "))
	}
	what := "no whole layer's routed experts"
	switch {
	case mh.Layers == 1 && c.expertLayers(1) > 0:
		what = "the routed experts of layer 0"
	case c.expertLayers(mh.Layers) > 0:
		what = fmt.Sprintf("the routed experts of layers 0-%d", mh.Layers-1)
	}
	if mh.partial(c) {
		what += fmt.Sprintf(" and the ffn_%s_exps tensors of layer %d (part of a layer frees the bytes still missing with less CPU work than a whole one)", strings.Join(expertTensorNames[:mh.Part], "_exps and ffn_"), mh.Layers)
	}
	return fmt.Sprintf("cpu_offload: every layer's attention, shared weights and KV cache stay on %s; %s (%s) stay in host RAM and run on the CPU (%s)", gpus, what, gib(h.Part.Weights), hostOffloadWords(pl))
}

// moeUnknownHostNote is the assumption of a MoE offload's host stage when
// the host's memory bandwidth is unknown: the experts the CPU runs are
// timed as if their active share crossed the GPUs' PCIe link, the one
// bandwidth known on that path.
func moeUnknownHostNote(pl *planned, pcie float64) string {
	c := pl.Costs
	active := c.hostExperts(pl.moeHost()) * c.ExpertActive
	if pl.AllExpertsOnHost {
		active = pl.step3Read(len(pl.Stages)-1, float64(pl.Stages[len(pl.Stages)-1].Part.Weights))
	}
	return fmt.Sprintf("the experts kept in host memory run on the CPU (%s), but the host's memory bandwidth is unknown: the share a token reads, %.2f GB, is timed at the GPU's PCIe bandwidth (%.0f GB/s) instead",
		hostOffloadWords(pl), active/1e9, pcie)
}
