// cpu_offload for an engine that streams offloaded weights to the GPU
// (vLLM's --cpu-offload-gb), as opposed to llama.cpp's layers run on the
// CPU (layouts.go offloadAt).

package plan

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// streamsWeights reports whether pool p's engine keeps offloaded weights in
// host memory for the GPU to read in every forward pass
// (engine.Parallelism StreamsOffloadedWeights: vLLM).
func streamsWeights(p *pool) bool {
	return p != nil && p.Budget.Engine != nil && p.Budget.Engine.Parallelism().StreamsOffloadedWeights
}

// streamed reports whether pl is a cpu_offload plan whose engine streams
// the offloaded weights (streamedOffloadAt): one GPU runs every layer and
// holds every layer's KV cache, the host stage only stores weights.
func (pl *planned) streamed() bool {
	return pl.Offloaded && len(pl.Stages) == 2 && streamsWeights(pl.Pool)
}

// streamedOffloadAt is the cpu_offload plan of level l on pool p for an
// engine that streams offloaded weights, as vLLM's --cpu-offload-gb N does:
// while the model is built, UVAOffloader takes the decoder layers'
// parameters in order, from the first layer, into pinned host memory until
// N GiB are taken, one parameter past at most (make_layers calls
// wrap_modules; _maybe_offload_to_cpu in
// vllm/model_executor/offloader/uva.py at vllm-project/vllm 00593fa7), and
// the GPU reads them there through UVA views "at the cost of PCIe
// bandwidth". The embeddings and the output head are not in the layer stack
// and stay on the GPU, as do every layer's KV cache, which vLLM sizes from
// the GPU memory its profile leaves (gpu_worker.py
// determine_available_memory): the offloaded weights are already in host
// memory then, so they count for nothing.
//
// The plan is one GPU, p's largest (largestDevice): the flag is per GPU
// (OffloadConfig.cpu_offload_gb, vllm/config/offload.py at 00593fa7), and
// tensor or pipeline parallelism with it is not planned. The GPU holds
// streamedGPUPart; the host the fewest tenths of a GiB of layer weights
// that make it fit (engine.CPUOffloadBytes, the command's flag). Its stages
// are the GPU's and the host's, the host's the layers those bytes cover,
// numbered from the first (hostFirst). false when the GPU holds the model
// without offload, or not even with every layer's weights in host memory,
// or the host cannot hold them.
func streamedOffloadAt(req *planning, p *pool, l quant.Level, host *device) (planned, bool) {
	b, sane := estimateSaneOn(req, p, l, req.ContextLength, fitBatch(p, req.BatchSize))
	if !sane || len(p.Devices) == 0 || req.Model.Layers < 2 {
		return planned{}, false
	}
	c := req.costsOf(b, p.sizedAs(l), req.ContextLength, req.BatchSize).on(p)
	if c.LayerWeights <= 0 {
		return planned{}, false // no layer weights to offload
	}
	gpu := largestDevice(p)
	off, ok := streamedOffload(c, gpu.Usable)
	if !ok || off > host.Usable {
		return planned{}, false
	}
	// The layers the offload covers, the last of them maybe in part; the
	// GPU keeps at least one of its own.
	k := min(int(math.Ceil(float64(off)/c.LayerWeights)), c.Layers-1)
	stages := []stage{
		{Devices: []*device{gpu}, Start: 0, End: c.Layers - k, Part: streamedGPUPart(c, off)},
		{Devices: []*device{host}, Start: c.Layers - k, End: c.Layers, Part: part{Weights: off}},
	}
	return planned{Fits: true, Strategy: StrategyOffload, Level: l, Pool: p, Stages: stages, TP: 1, Costs: c, Offloaded: true}, true
}

// largestDevice is the device of p with the most usable memory, the first
// of those.
func largestDevice(p *pool) *device {
	best := p.Devices[0]
	for _, d := range p.Devices[1:] {
		if d.Usable > best.Usable {
			best = d
		}
	}
	return best
}

// streamedOffload is the fewest bytes of layer weights, in the steps of
// engine.CPUOffloadBytes, whose offload makes the GPU part fit budget;
// false when the GPU part fits without offload or does not fit with every
// layer's weights offloaded.
func streamedOffload(c costs, budget int64) (int64, bool) {
	need := streamedGPUPart(c, 0).total() - budget
	if need <= 0 {
		return 0, false
	}
	stack := int64(float64(c.Layers) * c.LayerWeights)
	for off := engine.CPUOffloadBytes(need); off <= stack; {
		over := streamedGPUPart(c, off).total() - budget
		if over <= 0 {
			return off, true
		}
		// vLLM's charge follows the weights it loads: offload the excess.
		off = engine.CPUOffloadBytes(off + over)
	}
	return 0, false
}

// streamedGPUPart is the memory of the GPU of a streamed plan under c with
// off bytes of layer weights in host memory: every layer's KV cache, the
// embeddings and output head, the weights less off, and vLLM's start-up
// charge on the weights it loads on the GPU (its profile counts only
// those).
func streamedGPUPart(c costs, off int64) part {
	p := c.stagePart(0, c.Layers, 1)
	p.Weights -= off
	if c.VLLM != nil && len(c.VLLM.GPUs) > 0 {
		st, charge, _ := c.VLLM.chargeWith(1, p.Weights)
		p.Activations, p.Overhead = st.ActivationBytes, charge-st.ActivationBytes
	}
	return p
}

// streamedHolds reports whether costs c (a longer context, more sequences)
// fit the GPU of pl, a streamed plan, with the offload its command gives:
// the host's bytes are fixed by --cpu-offload-gb, so only the GPU's KV
// cache grows.
func streamedHolds(pl *planned, c costs) bool {
	return streamedGPUPart(c, pl.Stages[1].Part.Weights).total() <= pl.Stages[0].budget()
}

// offloadPCIeGBs is the PCIe bandwidth of a plan's offloading GPUs (the
// first stage's, the slowest), 0 when none is known.
func offloadPCIeGBs(pl *planned) float64 {
	pcie := 0.0
	for _, g := range pl.Stages[0].Devices {
		if g.PCIeGBs > 0 && (pcie == 0 || g.PCIeGBs < pcie) {
			pcie = g.PCIeGBs
		}
	}
	return pcie
}

// streamedStepSeconds is what a decode step of streamed plan pl pays for
// its offloaded weights, with the assumption saying so; ok false when the
// GPU's PCIe bandwidth is unknown. The GPU reads the weights a token uses
// (a mixture-of-experts model's active share) across the link every step:
// the link's bandwidth bounds the read, which UVA's zero-copy accesses do
// not exceed.
func streamedStepSeconds(pl *planned) (seconds float64, note string, ok bool) {
	pcie := offloadPCIeGBs(pl)
	if pcie <= 0 {
		return 0, "decode omitted: the PCIe bandwidth of the offloading device is unknown", false
	}
	host := float64(pl.Stages[1].Part.Weights)
	read := host * pl.Costs.ActiveRatio
	return read / (pcie * 1e9), fmt.Sprintf("vLLM --cpu-offload-gb: %s of layer weights stay in pinned host memory and the GPU reads them across PCIe at %.0f GB/s, the link's bandwidth, every step (%.1f ms), beside its own part; every layer runs on the GPU and its KV cache stays there. The link's bandwidth is an upper bound: the one published run of this offload decodes about half as fast (docs/accuracy.md, \"vLLM weight offload\")",
		gib(int64(host)), pcie, read/(pcie*1e9)*1e3), true
}

// streamedValidatedOn is validated_on of a streamed vLLM plan: nothing
// measured checks the PCIe term; serving says the GPU's part is vLLM's
// fitted decode (servingDecode), else the generic estimate.
func streamedValidatedOn(serving bool) string {
	gpu := "the generic estimate (no vLLM row on this device)"
	if serving {
		gpu = "vLLM's batch-1 fit (internal/calibration/data/serving_decode.json)"
	}
	return NotValidated + ": the weights vLLM's --cpu-offload-gb keeps in host memory cross PCIe at the link's bandwidth every step, which the one published run of this offload does not reach (it decodes about half as fast: docs/accuracy.md, \"vLLM weight offload\"); the GPU's part is " + gpu
}

// streamedExplanation is the cpu_offload line of streamed plan pl whose
// host stage covers layers [start, end) as vLLM numbers them.
func streamedExplanation(pl *planned, start, end int) string {
	line := fmt.Sprintf("cpu_offload: vLLM's --cpu-offload-gb keeps %s of layer weights, layers %d-%d's (the last maybe in part: vLLM offloads parameter by parameter from the first layer), in pinned host memory, the fewest tenths of a GiB with which %s holds the rest, the embeddings, every layer's KV cache and vLLM's start-up charge; the GPU runs every layer and reads the offloaded weights across PCIe in every forward pass",
		gib(pl.Stages[1].Part.Weights), start, end-1, pl.Stages[0].Devices[0].ID)
	if len(pl.Pool.Devices) > 1 {
		line += "; the flag is per GPU, and this plan does not combine it with tensor or pipeline parallelism, so it uses one GPU"
	}
	return line
}
