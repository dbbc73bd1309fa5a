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

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// setExperts sizes the routed experts of one MoE layer at level l (at the
// level's bits per weight, kept below the layer's weights so a shape that
// disagrees with the count cannot make the rest negative).
func (c *costs) setExperts(m *model.Model, l quant.Level) {
	p := m.RoutedExpertParams()
	if p <= 0 || l.BitsPerWeight() <= 0 || m.Experts <= 0 {
		return
	}
	c.ExpertLayerWeights = math.Min(float64(p)*l.BitsPerWeight()/8, 0.95*c.LayerWeights)
	c.ExpertActive = c.ActiveRatio
	if m.ExpertsPerToken > 0 {
		c.ExpertActive = float64(m.ExpertsPerToken) / float64(m.Experts)
	}
	c.DenseLayers = min(max(m.DenseLayers, 0), c.Layers)
}

// expertLayers is how many of the first n layers hold routed experts.
func (c *costs) expertLayers(n int) int {
	return max(0, min(n, c.Layers)-c.DenseLayers)
}

// expertBytes is the routed-expert weights of the first n layers.
func (c *costs) expertBytes(n int) float64 {
	return float64(c.expertLayers(n)) * c.ExpertLayerWeights
}

// moeOffloadable reports whether pool p's engine places MoE experts in
// host memory (llama.cpp) and the model has experts to place.
func moeOffloadable(p *pool, c costs) bool {
	return c.ExpertLayerWeights > 0 && len(p.Devices) == 1 &&
		p.Budget.Engine != nil && p.Budget.Engine.Name() == engine.NameLlamaCPP
}

// moeSplitParts is the memory of the GPU (every layer, less the experts of
// the first n) and of the host (those experts, its compute buffer and
// runtime overhead) under --n-cpu-moe n.
func moeSplitParts(c costs, n int) (gpu, host part) {
	gpu = c.stagePart(0, c.Layers, 1)
	off := int64(math.Ceil(c.expertBytes(n)))
	gpu.Weights -= off
	host = part{Weights: off, Activations: c.Breakdown.ActivationsBytes, Overhead: quant.HostOverheadBytes}
	return gpu, host
}

// moeSplit is the smallest --n-cpu-moe n whose split fits GPU g and host h,
// as a two-stage plan (the GPU holding layers [0, Layers), the host the
// experts of layers [0, n)); false when even all experts on the host leave
// the GPU too full, or the host cannot hold them.
func moeSplit(c costs, g, h *device) ([]stage, int, bool) {
	for n := c.DenseLayers + 1; n <= c.Layers; n++ {
		gp, hp := moeSplitParts(c, n)
		if gp.total() > g.Usable {
			continue
		}
		if hp.total() > h.Usable {
			return nil, 0, false
		}
		return []stage{
			{Devices: []*device{g}, Start: 0, End: c.Layers, Part: gp},
			{Devices: []*device{h}, Start: 0, End: n, Part: hp},
		}, n, true
	}
	return nil, 0, false
}

// moeRead is the weight bytes a decode step reads from stage i of a
// --n-cpu-moe plan: on the GPU, every non-expert weight and the active
// share of its layers' experts (weights is the stage's weights as
// estimateWith counts them); on the host, the active share of the
// offloaded experts.
func (pl *planned) moeRead(i int, weights float64) float64 {
	c := pl.Costs
	host := c.expertBytes(pl.CPUMoE)
	if i > 0 {
		return host * c.ExpertActive
	}
	gpuExperts := c.expertBytes(c.Layers) - host
	return weights - gpuExperts + gpuExperts*c.ExpertActive
}

// moeTransferSeconds is the PCIe time of a --n-cpu-moe decode step: each
// layer whose experts run on the CPU sends its hidden state to the host and
// the experts' output back (msg bytes each way) over the GPU's PCIe link;
// 0 when the link's bandwidth is unknown.
func moeTransferSeconds(pl *planned, msg float64) float64 {
	if len(pl.Stages) == 0 || len(pl.Stages[0].Devices) == 0 {
		return 0
	}
	pcie := pl.Stages[0].Devices[0].PCIeGBs
	if pcie <= 0 {
		return 0
	}
	return 2 * float64(pl.Costs.expertLayers(pl.CPUMoE)) * msg / (pcie * 1e9)
}

// handovers is how many times a decode step of an offloaded llama.cpp plan
// passes between the GPU and the CPU: once per layer whose experts run on
// the host (--n-cpu-moe), else once (-ngl: the step ends on the CPU).
func (pl *planned) handovers() int {
	if pl.CPUMoE > 0 {
		return pl.Costs.expertLayers(pl.CPUMoE)
	}
	return 1
}

// moeHostNote is the assumption of a --n-cpu-moe plan's host stage.
func moeHostNote(pl *planned, bw float64, e efficiency) string {
	c := pl.Costs
	return fmt.Sprintf("the routed experts of the first %d layers run on the CPU (llama.cpp --n-cpu-moe %d): a token reads %.1f%% of them (experts per token / experts), %.2f GB, from host memory (%.0f GB/s) at %.0f%%, or their matrix-vector work bounds them; attention, shared weights, the KV cache and the other layers' experts stream from the GPU; each offloaded layer hands the hidden state to the CPU and back (%.0f us, fitted on llama.cpp offload measurements)",
		pl.CPUMoE, pl.CPUMoE, c.ExpertActive*100, c.expertBytes(pl.CPUMoE)*c.ExpertActive/1e9, bw, e.DecodeBandwidthHost*100, e.OffloadHandoverSeconds*1e6)
}
