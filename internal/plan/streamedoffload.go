// cpu_offload for an engine that keeps offloaded weights in host memory
// and runs every layer on the GPU (vLLM's and SGLang's --cpu-offload-gb),
// as opposed to llama.cpp's layers run on the CPU (layouts.go offloadAt).
// The two engines share the plan; where they differ (the flag's step, a
// per-pass copy on the GPU, SGLang's pool) engine.Parallelism says so, and
// the engine names its settings (engine.OffloadNamer, offloadWords).

package plan

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// streamsWeights reports whether pool p's engine keeps offloaded weights in
// host memory for the GPU to use in every forward pass
// (engine.Parallelism StreamsOffloadedWeights: vLLM, SGLang).
func streamsWeights(p *pool) bool {
	return p != nil && p.Budget.Engine != nil && p.Budget.Engine.Parallelism().StreamsOffloadedWeights
}

// streamed reports whether pl is a cpu_offload plan whose engine streams
// the offloaded weights (streamedOffloadAt): one GPU runs every layer and
// holds every layer's KV cache, the host stage only stores weights.
func (pl *planned) streamed() bool {
	return pl.Offloaded && len(pl.Stages) == 2 && streamsWeights(pl.Pool)
}

// offloadOf is how the engine of pl's pool offloads (engine.Parallelism).
func offloadOf(pl *planned) engine.Parallelism {
	return pl.Pool.Budget.Engine.Parallelism()
}

// offloadWords are the words of a streamed plan's sentences that belong to
// its engine: its title, the flag that sets the offload and the setting of
// the share its KV pool is sized within (engine.OffloadNamer), as the
// engine's command writes them.
type offloadWords struct {
	Engine, Flag, Share string
}

// offloadWordsOf are the words of pl's engine; an engine that names no
// settings gets plain words for them.
func offloadWordsOf(pl *planned) offloadWords {
	e := pl.Pool.Budget.Engine
	w := offloadWords{Engine: e.Title(), Flag: "offload setting", Share: "its share of the GPU"}
	if n, ok := e.(engine.OffloadNamer); ok {
		w.Flag, w.Share = n.OffloadSetting(), n.PoolSetting()
	}
	return w
}

// offloadStepWords says in what steps the engine's flag offloads
// (engine.Parallelism OffloadStep): "the fewest tenths of a GiB" (vLLM's
// float), "the fewest whole GiB (the flag is an integer)" (SGLang's).
func offloadStepWords(step float64) string {
	switch step {
	case 1 << 30:
		return "the fewest whole GiB (the flag is an integer)"
	case (1 << 30) / 10.0:
		return "the fewest tenths of a GiB"
	case 0:
		return "the fewest bytes"
	}
	return fmt.Sprintf("the fewest steps of %.2f GiB", step/(1<<30))
}

// streamedOffloadAt is the cpu_offload plan of level l on pool p for an
// engine that streams offloaded weights, as --cpu-offload-gb N does:
//   - vLLM: while the model is built, UVAOffloader takes the decoder
//     layers' parameters in order, from the first layer, into pinned host
//     memory until N GiB are taken, one parameter past at most
//     (make_layers calls wrap_modules; _maybe_offload_to_cpu in
//     vllm/model_executor/offloader/uva.py at vllm-project/vllm 00593fa7),
//     and the GPU reads them there through UVA views "at the cost of PCIe
//     bandwidth".
//   - SGLang: OffloaderV1 does the same from the first layer, parameter by
//     parameter, into pinned CPU tensors, and copies each offloaded layer's
//     state_dict to the GPU in that layer's forward pass
//     (python/sglang/srt/utils/offloader.py at sgl-project/sglang
//     046a9e40): the GPU holds one layer's copy while it runs
//     (streamedGPUPart).
//
// The embeddings and the output head are not in the layer stack and stay
// on the GPU, as do every layer's KV cache, which vLLM sizes from the GPU
// memory its profile leaves (gpu_worker.py determine_available_memory) and
// SGLang from what --mem-fraction-static leaves once the weights are
// loaded (staticPool): the offloaded weights are already in host memory
// then, so they count for nothing.
//
// The plan is one GPU, p's largest (largestDevice): the flag is per GPU
// (OffloadConfig.cpu_offload_gb, vllm/config/offload.py at 00593fa7;
// SGLang's offloader is a module singleton of each rank's process, counting
// that rank's parameters), and tensor or pipeline parallelism with it is
// not planned. The GPU holds streamedGPUPart; the host the fewest steps of
// the flag (engine.Parallelism OffloadBytes: tenths of a GiB for vLLM,
// whole GiB for SGLang) of layer weights that make it fit. Its stages are
// the GPU's and the host's, the host's the layers those bytes cover,
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
	off, ok := streamedOffload(c, gpu, p.Budget.Engine.Parallelism())
	if !ok || off > host.Usable {
		return planned{}, false
	}
	// The layers the offload covers, the last of them maybe in part; the
	// GPU keeps at least one of its own.
	k := min(int(math.Ceil(float64(off)/c.LayerWeights)), c.Layers-1)
	stages := []stage{
		{Devices: []*device{gpu}, Start: 0, End: c.Layers - k, Part: streamedGPUPart(c, off, p.Budget.Engine.Parallelism())},
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
// the engine's flag (par.OffloadBytes), whose offload makes the GPU part
// fit gpu (streamedFits); false when the GPU part fits without offload or
// does not fit with every layer's weights offloaded.
func streamedOffload(c costs, gpu *device, par engine.Parallelism) (int64, bool) {
	if streamedFits(c, gpu, 0, par) {
		return 0, false
	}
	need := max(streamedGPUPart(c, 0, par).total()-gpu.Usable, 1)
	stack := int64(float64(c.Layers) * c.LayerWeights)
	for off := par.OffloadBytes(need); off <= stack; {
		if streamedFits(c, gpu, off, par) {
			return off, true
		}
		// The engine's charge follows the weights it loads: offload the
		// excess, at least one step more (SGLang's pool may be short
		// while the part fits).
		over := streamedGPUPart(c, off, par).total() - gpu.Usable
		off = par.OffloadBytes(off + max(over, 1))
	}
	return 0, false
}

// streamedFits reports whether the GPU gpu holds its part of a streamed
// plan under c with off bytes offloaded: the part within its budget and,
// for SGLang, its pool holding one sequence and the rest the activations
// (stageFits).
func streamedFits(c costs, gpu *device, off int64, par engine.Parallelism) bool {
	s := stage{Devices: []*device{gpu}, Start: 0, End: c.Layers, Part: streamedGPUPart(c, off, par)}
	return c.stageFits(s, 1)
}

// streamedGPUPart is the memory of the GPU of a streamed plan under c with
// off bytes of layer weights in host memory: every layer's KV cache, the
// embeddings and output head, the weights less off, and vLLM's start-up
// charge on the weights it loads on the GPU (its profile counts only
// those). An engine that copies an offloaded layer to the GPU in its
// forward pass (par.OffloadCopiedPerPass: SGLang) holds that copy of one
// layer, up to off, beside its working memory: counted with the
// activations, outside SGLang's KV pool, which SGLang sizes from the
// memory free once the model is loaded, before any forward pass makes a
// copy (post_model_load_memory and init_backends in
// python/sglang/srt/model_executor/model_runner.py at sgl-project/sglang
// 0005834c), so the copy comes from the rest outside
// --mem-fraction-static, with the activations and CUDA graphs (restHolds).
func streamedGPUPart(c costs, off int64, par engine.Parallelism) part {
	p := c.stagePart(0, c.Layers, 1)
	p.Weights -= off
	if c.VLLM != nil && len(c.VLLM.GPUs) > 0 {
		st, charge, _ := c.VLLM.chargeWith(1, p.Weights)
		p.Activations, p.Overhead = st.ActivationBytes, charge-st.ActivationBytes
	}
	if par.OffloadCopiedPerPass {
		p.Activations += min(off, int64(c.LayerWeights))
	}
	return p
}

// streamedHolds reports whether costs c (a longer context, more sequences)
// fit the GPU of pl, a streamed plan, with the offload its command gives:
// the host's bytes are fixed by --cpu-offload-gb, so only the GPU's KV
// cache grows.
func streamedHolds(pl *planned, c costs) bool {
	return streamedFits(c, pl.Stages[0].Devices[0], pl.Stages[1].Part.Weights, offloadOf(pl))
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

// streamedStepSeconds is what a decode step of batch sequences of streamed
// plan pl pays for its offloaded weights, with the assumption saying so;
// ok false when the GPU's PCIe bandwidth is unknown. Under vLLM the GPU's
// kernels read the offloaded parameters in host memory through UVA views
// (UVAOffloader, the offloader --cpu-offload-gb gets: create_offloader in
// vllm/model_executor/offloader/base.py at vllm-project/vllm 03584c33,
// _maybe_offload_to_cpu in offloader/uva.py at 00593fa7), so the link
// carries what they touch: a token's active share, and of a MoE model's
// offloaded experts those any of the step's sequences route to
// (streamedHostExpertReads), as in GPU memory (costs.batchExpertReads).
// The link's bandwidth bounds the read, which UVA's zero-copy accesses do
// not exceed. SGLang copies every offloaded byte to the GPU in each forward
// pass (OffloadCopiedPerPass), whatever experts the tokens use, at most at
// the link's bandwidth (as does vLLM's offloader with UVA disabled,
// VLLM_WEIGHT_OFFLOADING_DISABLE_UVA, which the plan does not set).
func streamedStepSeconds(pl *planned, batch int) (seconds float64, note string, ok bool) {
	pcie := offloadPCIeGBs(pl)
	if pcie <= 0 {
		return 0, "decode omitted: the PCIe bandwidth of the offloading device is unknown", false
	}
	host := float64(pl.Stages[1].Part.Weights)
	w := offloadWordsOf(pl)
	if offloadOf(pl).OffloadCopiedPerPass {
		return host / (pcie * 1e9), fmt.Sprintf("%s %s: %s of layer weights stay in host memory and %s copies each offloaded layer's to the GPU in its forward pass, all of it whatever experts a token uses, across PCIe at %.0f GB/s, the link's bandwidth, every step (%.1f ms), beside the GPU's own part; every layer runs on the GPU and its KV cache stays there. The link's bandwidth is an upper bound: the one published run of a per-pass copy of this kind decodes about half as fast (%s)",
			w.Engine, w.Flag, gib(int64(host)), w.Engine, pcie, host/(pcie*1e9)*1e3, calibration.WeightOffloadRun), true
	}
	read := host*pl.Costs.ActiveRatio + streamedHostExpertReads(pl, batch)
	// A MoE model's offloaded experts are read as the step's tokens route
	// (one sequence: a token's share), so the time is of that share, not
	// of the bytes the note names; a dense model's are all read.
	what := "the GPU reads them"
	if share := pl.Costs.batchExpertShare(batch); streamedHostExperts(pl) > 0 && share > 0 {
		what = fmt.Sprintf("the GPU reads what its kernels touch of them (at %s a step, %.0f%% of each offloaded layer's experts under uniform routing, as in GPU memory)", counted(batch, "sequence"), share*100)
	}
	return read / (pcie * 1e9), fmt.Sprintf("%s %s: %s of layer weights stay in pinned host memory and %s across PCIe at %.0f GB/s, the link's bandwidth, every step (%.1f ms), beside its own part; every layer runs on the GPU and its KV cache stays there. The link's bandwidth is an upper bound: the one published run of this offload decodes about half as fast (%s)",
		w.Engine, w.Flag, gib(int64(host)), what, pcie, read/(pcie*1e9)*1e3, calibration.WeightOffloadRun), true
}

// streamedHostExperts is the routed-expert bytes among the weights streamed
// plan pl keeps in host memory: the experts of the layers the offload
// covers (the first ones as the engine numbers them, costs.expertsIn), in
// proportion to the host's bytes where the last of them is offloaded in
// part; 0 for a dense model.
func streamedHostExperts(pl *planned) float64 {
	c := &pl.Costs
	k := pl.Stages[1].End - pl.Stages[1].Start
	span := c.expertsIn(0, k)
	if span <= 0 || k <= 0 || c.LayerWeights <= 0 {
		return 0
	}
	return min(span, float64(pl.Stages[1].Part.Weights)*span/(float64(k)*c.LayerWeights))
}

// streamedHostExpertReads is the offloaded expert bytes a decode step of
// batch sequences reads beyond one token's share (in host memory's part of
// ActiveRatio): batchExpertReads's rule on the host's experts. 0 for a
// dense model, one sequence, or SGLang's copy of every byte.
func streamedHostExpertReads(pl *planned, batch int) float64 {
	if offloadOf(pl).OffloadCopiedPerPass {
		return 0
	}
	return streamedHostExperts(pl) * pl.Costs.batchExtraShare(batch)
}

// streamedGPUExpertReads is the extra expert bytes (batchExpertReads) the
// GPU of streamed plan pl reads in its own memory in a decode step of
// batch sequences: every layer's runs there, but under vLLM the offloaded
// experts are read in host memory (streamedHostExpertReads), not here;
// SGLang reads its per-pass copies in GPU memory.
func streamedGPUExpertReads(pl *planned, batch int) float64 {
	c := &pl.Costs
	return max(c.batchExpertReads(0, c.Layers, 1, batch)-streamedHostExpertReads(pl, batch), 0)
}

// streamedValidatedOn is validated_on of a streamed plan: nothing measured
// checks the PCIe term; gpu says what the GPU's part is (the engine's
// fitted decode, else the generic estimate).
func streamedValidatedOn(pl *planned, gpu string) string {
	w := offloadWordsOf(pl)
	if offloadOf(pl).OffloadCopiedPerPass {
		return NotValidated + ": the weights " + w.Engine + "'s " + w.Flag + " keeps in host memory are copied across PCIe at the link's bandwidth every step, which the one published run of such per-pass copies does not reach (" + calibration.WeightOffloadCopyRun + " decodes about half as fast: " + calibration.WeightOffloadRun + "); the GPU's part is " + gpu
	}
	return NotValidated + ": the weights " + w.Engine + "'s " + w.Flag + " keeps in host memory cross PCIe at the link's bandwidth every step, which the one published run of this offload does not reach (it decodes about half as fast: " + calibration.WeightOffloadRun + "); the GPU's part is " + gpu
}

// streamedExplanation is the cpu_offload line of streamed plan pl whose
// host stage covers layers [start, end) as the engine numbers them.
func streamedExplanation(pl *planned, start, end int) string {
	w, gpu, par := offloadWordsOf(pl), pl.Stages[0].Devices[0].ID, offloadOf(pl)
	rest := "the embeddings and every layer's KV cache"
	if pl.Pool.Budget.ProfiledStartup {
		rest = "the embeddings, every layer's KV cache and " + w.Engine + "'s start-up charge"
	}
	line := fmt.Sprintf("cpu_offload: %s's %s keeps %s of layer weights, layers %d-%d's (the last maybe in part: %s offloads parameter by parameter from the first layer), in pinned host memory, %s with which %s holds the rest, %s; the GPU runs every layer and reads the offloaded weights across PCIe in every forward pass",
		w.Engine, w.Flag, gib(pl.Stages[1].Part.Weights), start, end-1, w.Engine, offloadStepWords(par.OffloadStep), gpu, rest)
	if par.OffloadCopiedPerPass {
		// The engine sizes its pool before any forward pass, so the copy
		// a pass makes comes from what the pool leaves (streamedGPUPart
		// counts it with the activations, restHolds checks it there).
		line = fmt.Sprintf("cpu_offload: %s's %s keeps %s of layer weights, layers %d-%d's (the last maybe in part: %s offloads parameter by parameter from the first layer), in host memory, %s with which %s holds the rest and the embeddings with a KV pool of at least one sequence within %s, and a copy of one offloaded layer beside the activations outside it; the GPU runs every layer, %s copying each offloaded layer's weights to it across PCIe in that layer's forward pass",
			w.Engine, w.Flag, gib(pl.Stages[1].Part.Weights), start, end-1, w.Engine, offloadStepWords(par.OffloadStep), gpu, w.Share, w.Engine)
	}
	if len(pl.Pool.Devices) > 1 {
		line += "; the flag is per GPU, and this plan does not combine it with tensor or pipeline parallelism, so it uses one GPU"
	}
	return line
}
