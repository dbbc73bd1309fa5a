package plan

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// Replay is one published llama.cpp speed measurement laid out as
// llama.cpp ran it, so that the calibration fit
// (internal/calibration/fit) can evaluate the speed model on it under any
// constants: the model's layers split evenly over Devices GPUs of one
// datasheet record, one sequence, no memory check (the measurement shows
// the layout ran). The caller names the engine the run is replayed as
// (its KV rules and speed model, engine.SpeedModelOf): the planner itself
// names no engine.
type Replay struct {
	decodePlan, prefillPlan *planned
	decodeReq, prefillReq   *planning
}

// NewReplay lays out a measured run of the engine named engineName:
// decode at decodeContext tokens (the average context of the generation)
// and, when prompt > 0, prefill of a prompt of that many tokens.
func NewReplay(engineName string, m *model.Model, l quant.Level, s specs.Spec, devices, prompt, decodeContext int) *Replay {
	return newReplay(func(context int) (*planned, *planning) { return replayPlan(engineName, m, l, s, devices, context) }, prompt, decodeContext)
}

// newReplay lays out the decode at decodeContext tokens and, when
// prompt > 0, the prefill of a prompt of that many tokens with layout.
func newReplay(layout func(context int) (*planned, *planning), prompt, decodeContext int) *Replay {
	r := &Replay{}
	r.decodePlan, r.decodeReq = layout(decodeContext)
	if prompt > 0 {
		r.prefillPlan, r.prefillReq = layout(prompt)
	}
	return r
}

func replayPlan(engineName string, m *model.Model, l quant.Level, s specs.Spec, n, context int) (*planned, *planning) {
	req := &planning{Request: &Request{Model: m, Quant: string(l), ContextLength: context, BatchSize: 1, Engine: engineName}}
	b := quant.Estimate(m, l, context, 1, req.kvOptions())
	cs := newCosts(m, b, l)
	stages := make([]stage, n)
	even := make([]int, n)
	for i := range stages {
		d := &device{ID: "gpu", Dev: registry.Device{Name: s.Name}, BandwidthGBs: s.BandwidthGBs, Spec: &s}
		stages[i].Devices = []*device{d}
		even[i] = cs.Layers // equal weights; proportional caps a count at its weight
	}
	counts := proportional(even, cs.Layers)
	start := 0
	for i := range stages {
		stages[i].Start, stages[i].End = start, start+counts[i]
		start += counts[i]
		stages[i].Part = cs.stagePart(stages[i].Start, stages[i].End, 1)
	}
	return &planned{Fits: true, Strategy: StrategyPipeline, Level: l, Stages: stages, TP: 1, Costs: cs}, req
}

// BuiltBeforeMMQ marks the replayed run as one of a llama.cpp build before
// June 2024 (https://github.com/ggml-org/llama.cpp/pull/8075), whose CUDA
// backend dequantized integer weights into 16 bits for cuBLAS in prompt
// passes, and returns r.
func (r *Replay) BuiltBeforeMMQ() *Replay {
	r.decodeReq.preMMQ = true
	if r.prefillReq != nil {
		r.prefillReq.preMMQ = true
	}
	return r
}

// BuiltIn2023 marks the replayed run as a ./main run of a 2023 llama.cpp
// build (before MMQ, and before the May 2024 build whose pass time plans
// take: calibration.Throughput.PrefillLayerLatency2023), and returns r.
func (r *Replay) BuiltIn2023() *Replay {
	r.BuiltBeforeMMQ()
	if r.prefillReq != nil {
		r.prefillReq.main2023 = true
	}
	return r
}

// OnOtherBackend marks the replayed run as one of llama.cpp's Vulkan (or
// another non-CUDA GPU) backend, whose decode today's CUDA constants are not
// measured on, and returns r.
func (r *Replay) OnOtherBackend() *Replay {
	r.decodeReq.otherBackend = true
	if r.prefillReq != nil {
		r.prefillReq.otherBackend = true
	}
	return r
}

// WithoutOutputHead marks the replayed decode steps as steps that compute
// no logits, and so read no output head: llama-bench's pp test at a
// micro-batch size of 1 (-ub 1) runs the prompt one token per step, a
// batch-1 decode step each, with only the prompt's last token an output
// (llama_batch_get_one; the graph's output rows are the outputs only), and
// returns r.
func (r *Replay) WithoutOutputHead() *Replay {
	r.decodeReq.noLogits = true
	return r
}

// WithComputeCapability sets the compute capability the replayed GPUs
// reported (nvidia-smi's compute_cap), for a record that does not state
// its architecture, and returns r.
func (r *Replay) WithComputeCapability(cc string) *Replay {
	r.eachDevice(func(d *registry.Device) { d.ComputeCapability = cc })
	return r
}

// WithGPUCores sets the GPU core count the replayed GPUs have (an Apple
// chip name is sold with several; the source states which), as detection
// reports it (registry.Device.Cores), and returns r.
func (r *Replay) WithGPUCores(n int) *Replay {
	r.eachDevice(func(d *registry.Device) { d.Cores = n })
	return r
}

// WithCPUFeatures sets the instruction-set extensions the replayed CPU
// has (registry.Device.CPUFeatures, as detection reads them from
// /proc/cpuinfo), for a row whose source names its CPU, and returns r.
func (r *Replay) WithCPUFeatures(fs ...registry.CPUFeature) *Replay {
	r.eachDevice(func(d *registry.Device) { d.CPUFeatures = fs })
	return r
}

// eachDevice calls f on the registry device of every replayed device, in the
// decode plan and the prompt plan.
func (r *Replay) eachDevice(f func(*registry.Device)) {
	for _, pl := range []*planned{r.decodePlan, r.prefillPlan} {
		if pl == nil {
			continue
		}
		for _, s := range pl.Stages {
			for _, d := range s.Devices {
				f(&d.Dev)
			}
		}
	}
}

// Decode is the decode tokens/s the speed model gives under the constants
// c, 0 when it cannot estimate one.
func (r *Replay) Decode(c calibration.Throughput) float64 {
	return estimateWith(r.decodePlan, r.decodeReq, 0, efficiency(c)).DecodeTokensPerS
}

// Prefill is the prefill tokens/s the speed model gives under the
// constants c, 0 when it cannot estimate one or the replay has no prompt.
func (r *Replay) Prefill(c calibration.Throughput) float64 {
	if r.prefillPlan == nil {
		return 0
	}
	return estimateWith(r.prefillPlan, r.prefillReq, 0, efficiency(c)).PrefillTokensPerS
}

// MemoryClass is the memory class whose decode fractions apply to the
// replayed device (memoryClass: MemoryClassGDDR, …).
func (r *Replay) MemoryClass() string {
	return memoryClass(r.decodePlan.Stages[0].Devices[0])
}

// WeightFamily is the weight type family of the replayed level
// (weightFamily: WeightsFloat, WeightsQ8 or WeightsKQuant).
func (r *Replay) WeightFamily() string { return weightFamily(r.decodePlan.Level) }

// NewServingReplay lays out a published batch-1 run of the serving engine
// named engineName (vLLM, SGLang: its constants, engine.ServingFitOf): the
// model tensor-parallel over tp GPUs of one datasheet record (one stage;
// the link is the record's interconnect, per direction), decoding one
// sequence at decodeContext tokens.
func NewServingReplay(engineName string, m *model.Model, l quant.Level, s specs.Spec, tp, decodeContext int) *Replay {
	return NewServingPromptReplay(engineName, m, l, s, tp, 0, decodeContext)
}

// NewServingPromptReplay is NewServingReplay with, when prompt > 0, the
// prefill of a prompt of that many tokens laid out the same way (the
// time to first token of a single request is prompt / Prefill).
func NewServingPromptReplay(engineName string, m *model.Model, l quant.Level, s specs.Spec, tp, prompt, decodeContext int) *Replay {
	return newReplay(func(context int) (*planned, *planning) { return servingPlan(engineName, m, l, s, tp, 1, context) }, prompt, decodeContext)
}

// NewServingBatchReplay is NewServingReplay of a published run at a fixed
// concurrency: batch sequences decoding together at decodeContext tokens
// each, planned as a request of batch_size batch (every sequence's KV
// cache held and read each step). Decode is then the plan's
// decode_tokens_per_s, batch over the step time; a sequence's time per
// token is the step time.
func NewServingBatchReplay(engineName string, m *model.Model, l quant.Level, s specs.Spec, tp, batch, decodeContext int) *Replay {
	return newReplay(func(context int) (*planned, *planning) { return servingPlan(engineName, m, l, s, tp, batch, context) }, 0, decodeContext)
}

// servingPlan is one stage of tp GPUs of the record s holding all of m,
// tensor-parallel, planned for the engine named engineName at context
// tokens for batch sequences.
func servingPlan(engineName string, m *model.Model, l quant.Level, s specs.Spec, tp, batch, context int) (*planned, *planning) {
	req := &planning{Request: &Request{Model: m, Quant: string(l), ContextLength: context, BatchSize: batch, Engine: engineName}}
	b := quant.Estimate(m, l, context, batch, req.kvOptions())
	cs := newCosts(m, b, l)
	st := stage{Start: 0, End: cs.Layers}
	for range tp {
		st.Devices = append(st.Devices, &device{ID: "gpu", Dev: registry.Device{Name: s.Name}, BandwidthGBs: s.BandwidthGBs, LinkGBs: s.InterconnectGBs / 2,
			MeshLinkGBs: specs.XGMIPerLinkGBs(s) / 2, Spec: &s})
	}
	st.Part = cs.stagePart(0, cs.Layers, tp)
	return &planned{Fits: true, Strategy: StrategyTensor, Level: l, Stages: []stage{st}, TP: tp, Costs: cs}, req
}

// OffloadHost is the host of an offloaded run: its memory bandwidth
// (GB/s) and the cores llama.cpp's threads run on.
type OffloadHost struct {
	BandwidthGBs float64
	Cores        int
}

// NewOffloadReplay lays out a published run of the engine named
// engineName (llama.cpp's rows) with part of the model in host memory, one
// GPU (the record gpu, its PCIe link pcieGBs per
// direction) and the host: with cpuMoE > 0 every layer on the GPU and the
// routed experts of the first cpuMoE layers on the host (--n-cpu-moe),
// else the first gpuLayers layers on the GPU and the rest, output head
// included, on the host (-ngl gpuLayers). One sequence decoding at
// decodeContext tokens.
func NewOffloadReplay(engineName string, m *model.Model, l quant.Level, gpu specs.Spec, pcieGBs float64, host OffloadHost, gpuLayers, cpuMoE, decodeContext int) *Replay {
	req := &planning{Request: &Request{Model: m, Quant: string(l), ContextLength: decodeContext, BatchSize: 1, Engine: engineName}}
	b := quant.Estimate(m, l, decodeContext, 1, req.kvOptions())
	c := newCosts(m, b, l)
	g := &device{ID: "gpu", Dev: registry.Device{Kind: registry.KindCUDA, Name: gpu.Name}, BandwidthGBs: gpu.BandwidthGBs, Spec: &gpu, PCIeGBs: pcieGBs}
	h := &device{ID: "cpu", Dev: registry.Device{Kind: registry.KindCPU, Cores: host.Cores}, BandwidthGBs: host.BandwidthGBs}
	pl := &planned{Fits: true, Strategy: StrategyOffload, Level: l, TP: 1, Costs: c, Offloaded: true}
	if cpuMoE > 0 {
		gp, hp := moeSplitParts(c, cpuMoE)
		pl.Stages = []stage{{Devices: []*device{g}, Start: 0, End: c.Layers, Part: gp}, {Devices: []*device{h}, Start: 0, End: cpuMoE, Part: hp}}
		pl.CPUMoE = cpuMoE
	} else {
		n := min(max(gpuLayers, 0), c.Layers)
		pl.Stages = []stage{{Devices: []*device{g}, Start: 0, End: n, Part: c.stagePart(0, n, 1)}, {Devices: []*device{h}, Start: n, End: c.Layers, Part: c.stagePart(n, c.Layers, 1)}}
	}
	return &Replay{decodePlan: pl, decodeReq: req}
}

// NewHostReplay lays out a measured CPU-only run of the engine named
// engineName (llama.cpp's CPU backend): the whole model on one CPU of cores cores (the threads the run
// used) whose memory streams bandwidthGBs, one sequence, decode at
// decodeContext tokens and, when prompt > 0, prefill of a prompt of that
// many tokens.
func NewHostReplay(engineName string, m *model.Model, l quant.Level, cores int, bandwidthGBs float64, prompt, decodeContext int) *Replay {
	r := &Replay{}
	r.decodePlan, r.decodeReq = hostReplayPlan(engineName, m, l, cores, bandwidthGBs, decodeContext)
	if prompt > 0 {
		r.prefillPlan, r.prefillReq = hostReplayPlan(engineName, m, l, cores, bandwidthGBs, prompt)
	}
	return r
}

func hostReplayPlan(engineName string, m *model.Model, l quant.Level, cores int, bandwidthGBs float64, context int) (*planned, *planning) {
	req := &planning{Request: &Request{Model: m, Quant: string(l), ContextLength: context, BatchSize: 1, Engine: engineName}}
	b := quant.Estimate(m, l, context, 1, req.kvOptions())
	c := newCosts(m, b, l)
	h := &device{ID: "cpu", Dev: registry.Device{Kind: registry.KindCPU, Cores: cores}, BandwidthGBs: bandwidthGBs}
	return &planned{Fits: true, Strategy: StrategyNone, Level: l, TP: 1, Costs: c,
		Stages: []stage{{Devices: []*device{h}, Start: 0, End: c.Layers, Part: c.stagePart(0, c.Layers, 1)}}}, req
}
