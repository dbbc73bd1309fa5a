package plan

import (
	"fmt"
	"math"
	"slices"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// estimateNoted is estimateWith; notes false leaves out the assumptions
// every estimate writes (the placement compares layouts by their figures
// alone, placement.go, and formatting them was most of its cost).
//
// It sums, stage by stage, the time of one decode step (streaming each
// stage's weights and KV cache, its fixed costs, its all-reduces, a
// serving engine's costs, layers offloaded to the host) and of one prompt
// token (prefill), then turns the sums into rates.
func estimateNoted(pl *planned, req *planning, interStageGBs float64, e efficiency, notes bool) Throughput {
	x := newEstimator(pl, req, e, notes)
	if notes {
		x.noteSpeedModels()
	}
	if x.isServing {
		x.addServingStep()
	}
	for i, s := range pl.Stages {
		x.addStage(i, s, interStageGBs)
	}
	x.step += x.hop
	x.noteBatch()
	var t Throughput
	t.DecodeTokensPerS, t.Bound = x.decodeRate()
	t.PrefillTokensPerS = x.prefillRate()
	if len(pl.Stages) > 1 && !x.streamed {
		x.note("pipeline stages run one after another within a decode step (sum of stage times)")
	}
	t.Assumptions = x.assumptions
	return t
}

// estimator is estimateNoted's running sums over the stages of one plan:
// the plan's fixed inputs, the decode step's and the prompt token's time
// so far, and what is known and noted.
type estimator struct {
	pl        *planned
	req       *planning
	e         efficiency
	withNotes bool // write the assumptions every estimate writes (estimateNoted's notes)

	m         *model.Model
	batch     int     // sequences one replica decodes at once (runningOf)
	kvSeqs    float64 // times a step reads a stage's KV cache (pagedSequences)
	serving   calibration.ServingDecode
	isServing bool // a serving engine's fitted costs apply (servingDecode)
	streamed  bool // a streamed offload (pl.streamed): the last stage is host memory the GPU reads
	absorbed  bool // prompts run multi-head latent attention absorbed (llamaCPPKernels; attentionHeadWidths)
	active    float64
	msg       float64 // one all-reduce or hand-off message: hidden × batch × 2 bytes

	step, arTotal, hop float64 // decode step seconds, of them all-reduces, and inter-stage hand-offs
	prefill            float64 // seconds per prompt token
	computeBound       bool    // a stage's matrix-vector work outlasts its streaming
	hostStage          bool    // offloaded layers run on the CPU at a known host bandwidth (hostRuns)
	decodeKnown        bool
	prefillKnown       bool
	expertsNoted       bool // a stage reads a batch's extra routed experts (batchExpertNote)
	assumptions        []string
}

func newEstimator(pl *planned, req *planning, e efficiency, notes bool) *estimator {
	m := req.Model
	batch := pl.runningOf(req)
	serving, isServing := e.servingDecode(planEngine(pl, req), pl)
	active := float64(m.ActiveParams)
	if active <= 0 {
		active = float64(m.Params)
	}
	return &estimator{pl: pl, req: req, e: e, withNotes: notes, m: m, batch: batch, kvSeqs: pagedSequences(pl, batch),
		serving: serving, isServing: isServing, streamed: pl.streamed(), absorbed: llamaCPPKernels(pl, req), active: active,
		msg: float64(m.Hidden) * float64(batch) * 2, decodeKnown: true, prefillKnown: true}
}

func (x *estimator) note(s string) { x.assumptions = append(x.assumptions, s) }

// older reports whether the run is not of today's llama.cpp CUDA build
// (planning.todaysCUDA), whose decode constants then do not apply.
func (x *estimator) older() bool { return !x.req.todaysCUDA() }

// noteSpeedModels writes the first two assumptions: how decode and how
// prefill are modelled on the plan's first device.
func (x *estimator) noteSpeedModels() {
	pl, req, e := x.pl, x.req, x.e
	x.assumptions = []string{
		e.decodeNote(pl, req, x.batch, e.servingFractionOf(x.isServing, planEngine(pl, req), pl), x.older()),
		e.prefillNote(pl, req),
	}
	if cpuOnly(pl) && pl.Stages[0].Devices[0].Dev.Cores > 0 {
		x.assumptions[1] = "prefill runs the matmul FLOPs on the CPU cores at a per-core rate for each type the weights are stored in, by its share of the weights (fitted on " + ofRuns(runsEngine(planEngine(pl, req)), "CPU runs") + ", internal/calibration/data/host_harness.json)"
	}
}

// addServingStep charges a serving engine's fixed time per decode step
// and notes its prefill model and fixed costs.
func (x *estimator) addServingStep() {
	x.step += x.serving.StepSeconds
	if x.withNotes {
		x.assumptions[1] = x.e.servingPrefillNoteOf(x.pl, x.req, x.serving)
		x.note(x.e.servingNoteOf(planEngine(x.pl, x.req), x.pl, x.serving))
	}
}

// addStage adds stage i's share of the decode step and of a prompt token.
func (x *estimator) addStage(i int, s stage, interStageGBs float64) {
	pl, c := x.pl, &x.pl.Costs
	last := i == len(pl.Stages)-1
	if x.streamed && last {
		x.addStreamedHost()
		return
	}
	if x.streamed {
		s.Start, s.End = 0, c.Layers // the GPU runs every layer
	}
	tp := len(s.Devices)
	r := x.stageRates(s.Devices)
	weights := x.stageWeightBytes(s, tp)
	reads := stageReads{Weights: x.stageWeightReads(i, s, tp, weights), KV: c.VLLM.readKV(float64(s.Part.KV), tp, c.kvSplit(tp)) * x.kvReadShare() * x.kvSeqs}
	cpuStage := pl.Offloaded && last
	if cpuStage && hostRuns(pl, x.req, r.Bandwidth) {
		x.addHostRunStep(r.Bandwidth)
	} else if cpuStage {
		x.addUnknownHostStep(reads.total())
		return
	}
	if r.Bandwidth <= 0 {
		x.decodeKnown = false
	} else {
		x.addStageDecode(i, s, r, reads)
	}
	x.addStagePrefill(s, r, weights)
	if i > 0 && interStageGBs > 0 {
		x.hop += x.msg / (interStageGBs * 1e9)
	}
}

// addStreamedHost adds the host stage of a streamed offload: vLLM's or
// SGLang's --cpu-offload-gb, where the host stores weights that cross
// PCIe to the GPU and its layers run on the GPU (the GPU's stage).
func (x *estimator) addStreamedHost() {
	seconds, note, ok := streamedStepSeconds(x.pl, x.batch)
	x.step += seconds
	x.decodeKnown = x.decodeKnown && ok
	x.prefillKnown = false
	x.note(note)
}

// stageRates are the rates a stage's slowest devices set for a decode
// step.
type stageRates struct {
	Bandwidth    float64 // datasheet (or detected) memory bandwidth, GB/s
	WeightGBs    float64 // rate weights stream at: bandwidth × decodeFraction (a serving engine's fraction)
	KVGBs        float64 // rate the KV cache is read at: bandwidth × kvFraction (likewise)
	LinkGBs      float64 // tensor-parallel link (tpLinkGBs)
	LayerSeconds float64 // fixed time per layer (layerLatency), a serving engine's per part (servingPartSeconds)
}

// stageRates is the slowest device's of devs, each rate on its own.
func (x *estimator) stageRates(devs []*device) stageRates {
	tp := len(devs)
	r := stageRates{Bandwidth: math.Inf(1), WeightGBs: math.Inf(1), KVGBs: math.Inf(1), LinkGBs: math.Inf(1)}
	partSeconds := 0.0
	for _, d := range devs {
		r.Bandwidth = math.Min(r.Bandwidth, d.BandwidthGBs)
		weightFrac, kvFrac := x.e.decodeFraction(d, x.pl.Level, x.older()), x.e.kvFraction(d)
		if x.isServing && x.serving.BandwidthFraction > 0 {
			weightFrac, kvFrac = x.serving.BandwidthFraction, x.serving.BandwidthFraction
		}
		r.WeightGBs = math.Min(r.WeightGBs, d.BandwidthGBs*weightFrac)
		r.KVGBs = math.Min(r.KVGBs, d.BandwidthGBs*kvFrac)
		r.LayerSeconds = math.Max(r.LayerSeconds, x.e.layerLatency(d, x.older()))
		partSeconds = math.Max(partSeconds, servingPartSeconds(x.serving, d))
		r.LinkGBs = math.Min(r.LinkGBs, d.tpLinkGBs(tp))
	}
	if x.isServing {
		r.LayerSeconds = partSeconds
	}
	return r
}

// stageWeightBytes is the weights one device of stage s (of tp devices)
// holds that a step can read: its part less the input embedding and
// vLLM's rotary table, plus a tied output head, less an untied one a step
// without logits does not read.
func (x *estimator) stageWeightBytes(s stage, tp int) float64 {
	c := &x.pl.Costs
	weights := float64(s.Part.Weights)
	if s.Start == 0 {
		weights -= c.EmbedIn / float64(tp) // the input embedding is a lookup, not read
	}
	// vLLM's rotary table is looked up at the step's positions, not
	// read whole (costs.vllmRopeCache).
	weights -= float64(c.vllmRopeCache())
	if s.End == c.Layers && x.m.TieEmbeddings && !x.req.noLogits {
		// Tied embeddings: the output head is the embedding matrix, and
		// the last stage reads all of it every token (Qwen2.5-0.5B fp16:
		// 988 MB per token, not 716).
		weights += c.EmbedIn / float64(tp)
	}
	if s.End == c.Layers && !x.m.TieEmbeddings && x.req.noLogits {
		weights -= c.EmbedOut / float64(tp) // a step without logits reads no output head
	}
	return weights
}

// stageWeightReads is the weight bytes one device of stage i reads a
// step: the active share of weights, the experts a MoE offload
// (--n-cpu-moe, or every expert on the host) leaves on the stage, or the
// active share plus the extra experts a batch routes to.
func (x *estimator) stageWeightReads(i int, s stage, tp int, weights float64) float64 {
	pl, c := x.pl, &x.pl.Costs
	readWeights := weights * c.ActiveRatio
	if pl.moeOffload() {
		readWeights = pl.moeRead(i, weights)
	} else if pl.AllExpertsOnHost {
		readWeights = pl.step3Read(i, weights)
	} else if extra := c.batchExpertReads(s.Start, s.End, tp, x.batch); extra > 0 {
		if x.streamed {
			// The offloaded experts' reads cross PCIe in the host's
			// term (streamedStepSeconds), not here.
			extra = streamedGPUExpertReads(pl, x.batch)
		}
		readWeights += extra
		x.expertsNoted = true
	}
	return readWeights
}

// stageReads is what one device of a stage reads from memory in a decode
// step.
type stageReads struct {
	Weights float64
	KV      float64
}

func (r stageReads) total() float64 { return r.Weights + r.KV }

// kvReadShare is the share of a stage's KV cache a decode step reads at
// the request's context (poolReadShare: where the pool's engine sizes its
// pools by its own rules, SGLang), on the plan's pool's
// engine (the request's engine where the plan names no pool: a replay).
func (x *estimator) kvReadShare() float64 {
	var e engine.Engine
	if x.pl.Pool != nil {
		e = x.pl.Pool.Budget.Engine
	}
	return poolReadShare(x.req.Model, x.req.ContextLength, x.req.kvOptionsFor(e))
}

// addHostRunStep adds the hand-over to the CPU of layers llama.cpp does not
// offload (-ngl), which run on the CPU and stream from host memory (bw
// GB/s) like a CPU plan's, and notes it.
func (x *estimator) addHostRunStep(bw float64) {
	pl, e := x.pl, x.e
	x.hostStage = true
	x.step += float64(pl.handovers()) * e.OffloadHandoverSeconds
	if pl.moeOffload() {
		x.step += moeTransferSeconds(pl, x.msg)
		x.note(moeHostNote(pl, bw, e))
	} else if pl.AllExpertsOnHost {
		x.step += step3TransferSeconds(pl, x.msg)
		x.note(step3HostNote(pl, bw, e))
	} else {
		x.note(fmt.Sprintf("offloaded layers run on the CPU (%s): their weights and KV cache stream from host memory (%.0f GB/s) at %.0f%%, or their matrix-vector work bounds them; the step hands over from the GPU to the CPU once (%.0f us)", hostOffloadWords(pl), bw, e.DecodeBandwidthHost*100, e.OffloadHandoverSeconds*1e6))
	}
	x.prefillKnown = false
}

// addUnknownHostStep adds offloaded layers with the host's memory
// bandwidth unknown: llama.cpp runs them on the CPU at host memory
// bandwidth, usually of the same order as the GPU's PCIe link, whose
// figure times the read bytes instead.
func (x *estimator) addUnknownHostStep(read float64) {
	pl := x.pl
	x.prefillKnown = false
	pcie := 0.0
	for _, g := range pl.Stages[0].Devices {
		if g.PCIeGBs > 0 && (pcie == 0 || g.PCIeGBs < pcie) {
			pcie = g.PCIeGBs
		}
	}
	if pcie <= 0 {
		x.decodeKnown = false
		x.note("decode omitted: the PCIe bandwidth of the offloading device is unknown")
		return
	}
	x.step += read / (pcie * 1e9)
	if pl.moeOffload() || pl.AllExpertsOnHost {
		x.note(moeUnknownHostNote(pl, pcie))
		return
	}
	// The layers run on the CPU where they lie (the explanation's
	// cpu_offload line): PCIe is only the figure their reads are timed
	// at, as moeUnknownHostNote says of a MoE split's experts. Beside a
	// host of known bandwidth the reason is the engine's (hostAtPCIe:
	// engine none runs nothing on the CPU), not an unknown bandwidth.
	if why := hostAtPCIe(x.req, pl); why != "" && why != hostBandwidthUnknown {
		x.note(fmt.Sprintf("offloaded layers stay in host RAM, and %s: what they read a step, %.2f GB, is timed at the GPU's PCIe bandwidth (%.0f GB/s)", why, read/1e9, pcie))
		return
	}
	x.note(fmt.Sprintf("offloaded layers run on the CPU, but the host's memory bandwidth is unknown: what they read a step, %.2f GB, is timed at the GPU's PCIe bandwidth (%.0f GB/s) instead", read/1e9, pcie))
}

// addStageDecode adds stage i's decode time at rates r: streaming its
// reads, its fixed times and its all-reduces (stageDecodeSeconds), and for
// a serving engine the batch's matmul time.
func (x *estimator) addStageDecode(i int, s stage, r stageRates, reads stageReads) {
	tp := len(s.Devices)
	if tp > 1 && r.LinkGBs <= 0 {
		x.note(fmt.Sprintf("stage %d: tensor-parallel link bandwidth unknown; all-reduce time not counted", i))
	}
	in := x.stageDecodeInputs(s, r, reads)
	st, ar := stageDecodeSeconds(in)
	x.step += st
	if x.isServing {
		layers, c := s.End-s.Start, &x.pl.Costs
		x.step += x.e.servingBatchSeconds(x.batch, layers, 2*matmulParams(x.m, x.active)*float64(layers)/float64(c.Layers)/float64(tp),
			x.e.requestPrefillPath(s.Devices, x.pl, x.req).PeakTFLOPS)
	}
	x.arTotal += ar
	if in.ComputeSeconds > in.streamingSeconds() {
		x.computeBound = true
	}
}

// stageDecodeInputs are stage s's decodeInputs: by layer (llama.cpp's
// kernels, two all-reduces a layer), or for a serving engine by the parts
// of its layers with the engine's fixed costs (CountServingBlocks).
func (x *estimator) stageDecodeInputs(s stage, r stageRates, reads stageReads) decodeInputs {
	layers, tp, c := s.End-s.Start, len(s.Devices), &x.pl.Costs
	head := s.End == c.Layers && !x.req.noLogits
	in := decodeInputs{WeightBytes: reads.Weights, KVBytes: reads.KV, WeightGBs: r.WeightGBs, KVGBs: r.KVGBs,
		Layers: layers, LayerSeconds: r.LayerSeconds, TP: tp, AllReduces: 2 * layers, AllReduceBytes: x.msg, LinkGBs: r.LinkGBs,
		ComputeSeconds: hostComputeSeconds(s.Devices, reads.Weights, stageHostMix(x.pl, x.req, s, head), x.e)}
	if x.isServing {
		b, sv := CountServingBlocks(x.m, s.Start, s.End), x.serving
		in.Layers, in.AllReduces = b.Parts, b.Parts
		in.AllReduceSeconds, in.MoELayerSeconds, in.MoELayers = sv.AllReduceSeconds, sv.MoELayerSeconds, b.MoE
		in.MLALayerSeconds, in.MLALayers = sv.MLALayerSeconds, b.MLA
		in.IndexerSeconds, in.IndexerLayers = sv.IndexerSeconds, b.Indexer
	}
	return in
}

// addStagePrefill adds stage s's time per prompt token: on one CPU its
// cores' matmul time (hostPrefillSeconds), for a serving engine its
// chunked prompt passes (servingPromptSeconds), else llama.cpp's matmuls
// at the path's fraction of peak plus the passes' fixed costs. A stage of
// unknown peak or bandwidth, or offloaded layers run on the host, leaves
// prefill unknown.
func (x *estimator) addStagePrefill(s stage, r stageRates, weights float64) {
	pl, req, m, e := x.pl, x.req, x.m, x.e
	layers, tp := s.End-s.Start, len(s.Devices)
	frac := float64(layers) / float64(pl.Costs.Layers)
	attention := promptAttentionFLOPs(m, x.absorbed, s.Start, s.End, req.ContextLength)
	if hp := e.hostPrefillSeconds(s.Devices, stageHostMix(pl, req, s, false), x.active*frac, attention); hp > 0 && !pl.Offloaded {
		x.prefill += hp
	} else if path := e.requestPrefillPath(s.Devices, pl, req); path.PeakTFLOPS <= 0 || math.IsInf(path.PeakTFLOPS, 1) || r.Bandwidth <= 0 || x.hostStage {
		x.prefillKnown = false
	} else if x.isServing {
		x.prefill += servingPromptSeconds(servingPromptInputs{MatmulParams: matmulParams(m, x.active) * frac, Attention: attention,
			WeightBytes: weights, Prompt: req.ContextLength, Chunk: servingChunkTokens(planEngine(pl, req), s.Devices),
			PeakTFLOPS: path.PeakTFLOPS, TP: tp, MFU: e.ServingPromptMFU, WeightGBs: r.WeightGBs,
			AllReduces: CountServingBlocks(m, s.Start, s.End).Parts, AllReduceSeconds: x.serving.AllReduceSeconds, Hidden: float64(m.Hidden), LinkGBs: r.LinkGBs,
			RoutedMatmulShare: ServingBatchRoutedShare(m), RoutedByteShare: routedByteShare(m), Experts: m.Experts, ExpertsPerToken: m.ExpertsPerToken,
			MoEMFU: e.ServingMoEPromptMFU})
	} else {
		x.prefill += prefillSeconds(matmulParams(m, x.active)*frac, attention, path.PeakTFLOPS, tp, path.MFU)
		x.prefill += prefillPassSeconds(prefillPassInputs{WeightBytes: weights, Params: float64(m.Params) * frac / float64(tp),
			Layers: layers, Prompt: req.ContextLength, Dequantized: path.Dequantized, BandwidthGBs: r.Bandwidth,
			LayerSeconds: path.LayerSeconds}, e)
	}
}

// noteBatch notes what a batch of sequences changes: a MoE stage's extra
// expert reads, a serving engine's batched matmuls.
func (x *estimator) noteBatch() {
	if x.expertsNoted && x.withNotes {
		x.note(x.pl.Costs.batchExpertNote(x.batch))
	}
	if note := x.e.servingBatchNote(x.batch); x.isServing && x.withNotes && note != "" {
		x.note(note)
	}
}

// decodeRate is the decode rate of the summed step and what bounds it, or
// 0 with a note where a stage's bandwidth is unknown.
func (x *estimator) decodeRate() (float64, string) {
	pl := x.pl
	if x.decodeKnown && x.step > 0 {
		bound := BoundBandwidth
		if pl.Offloaded && !x.hostStage {
			bound = BoundPCIe
		} else if x.arTotal > x.step/2 {
			bound = BoundInterconnect
		} else if x.computeBound {
			bound = BoundCompute
		}
		return round3(float64(x.batch) / x.step), bound
	} else if !pl.Offloaded || x.decodeKnown {
		x.note("decode omitted: memory bandwidth unknown for " + unknownBandwidth(pl))
	}
	return 0, ""
}

// prefillRate is the prompt rate of the summed prompt-token time (a
// serving engine's per-request cost added), or 0 with a note saying why
// none is estimated.
func (x *estimator) prefillRate() float64 {
	if x.isServing && x.prefillKnown && x.prefill > 0 {
		x.prefill += servingRequestSeconds(x.e.promptRequestSeconds(planEngine(x.pl, x.req)), x.req.ContextLength)
	}
	if x.prefillKnown && x.prefill > 0 {
		return round3(1 / x.prefill)
	}
	if x.pl.Offloaded {
		if x.withNotes {
			// The prefill model written first does not apply: say only
			// why prefill is omitted.
			x.assumptions = slices.Delete(x.assumptions, 1, 2)
		}
		x.note(offloadPrefillOmitted)
		return 0
	}
	x.note("prefill omitted: no peak tensor throughput or memory bandwidth known for the device (datasheet table) or part of the model runs from host memory")
	return 0
}
