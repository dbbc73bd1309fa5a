// MoE dense-only offload, llama.cpp --fit's step 3 (common_params_fit_impl
// in common/fit.cpp of https://github.com/ggml-org/llama.cpp @ 08033df0):
// when even every layer's dense weights (attention, norms, router, shared
// experts) and KV cache do not fit the GPUs with all routed experts in host
// memory, --fit fills the GPUs from the back with the dense weights of as
// many layers as fit, keeps the first layers whole in host memory and
// every routed expert there too, and stops. People run it by hand as
// -ngl K --cpu-moe (or -ot "exps=CPU"): --cpu-moe keeps the ffn_*_exps
// tensors of every layer in host memory (common/arg.cpp), -ngl K puts the
// last K layers' other weights on the GPUs.

package plan

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// step3ExpertLayersIn is how many of layers [a, b), numbered as llama.cpp
// numbers them (the leading dense layers first), hold routed experts.
func (c *costs) step3ExpertLayersIn(a, b int) int {
	return max(0, min(b, c.Layers)-max(a, c.DenseLayers))
}

// step3GPUPart is the memory of a GPU stage [s, e) (planning order: the
// GPUs first) of a dense-only offload with k layers on the GPUs: the
// stage's layers without their routed experts. The stage holds llama.cpp's
// layers [L-k+s, L-k+e) (hostFirst).
func step3GPUPart(c costs, k, s, e int) part {
	p := c.stagePart(s, e, 1)
	off := c.Layers - k
	p.Weights -= int64(math.Ceil(float64(c.step3ExpertLayersIn(off+s, off+e)) * c.ExpertLayerWeights))
	return p
}

// step3HostPart is the host memory of a dense-only offload with k layers on
// the GPUs: the first L-k layers whole (and the output layer) and the
// routed experts of the GPUs' layers, in the GPU's host buffer, not
// repacked (as moeHostPart).
func step3HostPart(c costs, k int) part {
	p := c.stagePart(k, c.Layers, 1)
	p.Weights += int64(math.Ceil(float64(c.step3ExpertLayersIn(c.Layers-k, c.Layers)) * c.ExpertLayerWeights))
	return p
}

// step3Split is --fit's step 3 on gpus and host: the GPUs, filled from the
// back (the last GPU takes the last layers), each hold the dense weights of
// as many layers as fit; false when no GPU holds one layer's, every layer's
// fit (then moeSplit applies), or the host cannot hold the rest.
func step3Split(c costs, gpus []*device, host *device) ([]stage, bool) {
	counts := make([]int, len(gpus))
	k := 0
	for i := len(gpus) - 1; i >= 0; i-- {
		for k+counts[i] < c.Layers {
			// Charged as the GPU holding the lowest GPU layer (the
			// input-side extras) until the split is known; checked
			// exactly below.
			if step3GPUPart(c, k+counts[i]+1, 0, counts[i]+1).total() > gpus[i].Usable {
				break
			}
			counts[i]++
		}
		k += counts[i]
	}
	if k == 0 || k >= c.Layers {
		return nil, false
	}
	var stages []stage
	s := 0
	for i, g := range gpus {
		if counts[i] == 0 {
			continue
		}
		p := step3GPUPart(c, k, s, s+counts[i])
		if p.total() > g.Usable {
			return nil, false
		}
		stages = append(stages, stage{Devices: []*device{g}, Start: s, End: s + counts[i], Part: p})
		s += counts[i]
	}
	hp := step3HostPart(c, k)
	if hp.total() > host.Usable {
		return nil, false
	}
	return append(stages, stage{Devices: []*device{host}, Start: k, End: c.Layers, Part: hp}), true
}

// step3GPULayers is how many layers a dense-only offload keeps on the GPUs.
func (pl *planned) step3GPULayers() int { return pl.Stages[len(pl.Stages)-1].Start }

// step3Read is the weight bytes a decode step of a dense-only offload reads
// from stage i (weights as estimateWith counts them): a GPU stage reads all
// of its dense weights; the host reads its layers' dense weights and the
// active share of every routed expert.
func (pl *planned) step3Read(i int, weights float64) float64 {
	if i < len(pl.Stages)-1 {
		return weights
	}
	c := &pl.Costs
	e := c.expertBytes(c.Layers)
	return weights - e + e*c.ExpertActive
}

// step3Handovers is how many times a decode step of a dense-only offload
// passes between the GPU and the CPU: once after the host's whole layers,
// and once for each GPU layer whose experts run on the CPU.
func (pl *planned) step3Handovers() int {
	c := &pl.Costs
	k := pl.step3GPULayers()
	return 1 + c.step3ExpertLayersIn(c.Layers-k, c.Layers)
}

// step3TransferSeconds is the PCIe time of a dense-only offload's decode
// step: each hand-over sends the hidden state (msg bytes) one way and back
// over the slowest PCIe link of the plan's GPUs; 0 when unknown.
func step3TransferSeconds(pl *planned, msg float64) float64 {
	pcie := math.Inf(1)
	for _, s := range pl.Stages[:len(pl.Stages)-1] {
		for _, d := range s.Devices {
			pcie = math.Min(pcie, d.PCIeGBs)
		}
	}
	if pcie <= 0 || math.IsInf(pcie, 1) {
		return 0
	}
	return 2 * float64(pl.step3Handovers()) * msg / (pcie * 1e9)
}

// step3HostNote is the assumption of a dense-only offload's host stage.
func step3HostNote(pl *planned, bw float64, e efficiency) string {
	c := &pl.Costs
	k := pl.step3GPULayers()
	return fmt.Sprintf("%s and every layer's routed experts run on the CPU (%s): a token reads their dense weights and %.1f%% of the experts (experts per token / experts), %.2f GB, from host memory (%.0f GB/s) at %.0f%%, or their matrix-vector work bounds them; the dense weights and KV cache of the last %d layers stream from the GPU; the step hands the hidden state between the GPU and the CPU %d times (%.0f us each, fitted on %s)",
		layerRange(0, c.Layers-k), hostOffloadWords(pl), c.ExpertActive*100, c.expertBytes(c.Layers)*c.ExpertActive/1e9, bw, e.DecodeBandwidthHost*100, k, pl.step3Handovers(), e.OffloadHandoverSeconds*1e6,
		ofRuns(runsEngine(pl.Pool.engine()), "offload measurements"))
}

// step3Explanation is the placement line of a dense-only offload.
func step3Explanation(pl *planned) string {
	c := &pl.Costs
	k := pl.step3GPULayers()
	h := pl.Stages[len(pl.Stages)-1]
	where := "the GPU"
	if len(pl.Stages) > 2 {
		where = "the GPUs"
	}
	so := "so"
	if n, ok := pl.Pool.Budget.Engine.(engine.FitNamer); ok {
		so = "so, " + n.FitDenseOnly() + ","
	}
	return fmt.Sprintf("cpu_offload: not every layer's dense weights fit %s with all routed experts in host RAM, %s %s %s whole in host RAM, the attention, shared weights and KV cache of %s are on %s, and every layer's routed experts (%s in all in host RAM) run on the CPU (%s%s)",
		where, so, layerRange(0, c.Layers-k), stayOrStays(c.Layers-k), layerRange(c.Layers-k, c.Layers), where, gib(h.Part.Weights), hostOffloadWords(pl), hostOffloadAside(pl))
}

// layerRange names layers [a, b): "layer 0" or "layers 0-4".
func layerRange(a, b int) string {
	if b-a == 1 {
		return fmt.Sprintf("layer %d", a)
	}
	return fmt.Sprintf("layers %d-%d", a, b-1)
}
