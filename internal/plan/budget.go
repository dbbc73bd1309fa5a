// The memory budget of a plan: which engine the plan is made for, and how
// much of each device that engine lets the model, its KV cache and its own
// buffers use. A plan, its max_context_length and max_batch_size and its
// engine_args are all made on one budget (see the package comment in
// request.go).

package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// vllmMemoryUtilization is vLLM's default --gpu-memory-utilization: the
// fraction of a GPU's TOTAL memory one vLLM instance may use
// (https://docs.vllm.ai/en/latest/configuration/engine_args/). vLLM's worker
// requests total × utilization at start-up and refuses to start when less is
// free; inside it sit the weights, the activation peak of a profiling
// forward pass and the memory allocated outside torch (NCCL buffers,
// attention workspaces), and the KV cache gets what is left
// (Worker.init_device and determine_available_memory in
// vllm/v1/worker/gpu_worker.py, memory_profiling in vllm/utils/mem_utils.py;
// https://github.com/vllm-project/vllm/blob/35d5cda123ec28581759b6d34cde8052314fb1e6/vllm/v1/worker/gpu_worker.py).
// The planner charges those to each device as the estimate's activations and
// runtime overhead. CUDA graphs are captured after the KV cache is
// allocated, so they live in the (1 - utilization) left over
// (compile_or_warm_up_model in the same file).
const vllmMemoryUtilization = 0.9

// llamaFitMarginBytes is the memory llama.cpp's --fit (on by default) leaves
// free on each GPU: fit_params_target, 1024 MiB per device, in
// common/common.h of ggml-org/llama.cpp
// (https://github.com/ggml-org/llama.cpp/blob/master/common/common.h; the
// flag is -fitt/--fit-target in common/arg.cpp). llama.cpp's own buffers,
// the backend context and the compute graph, are charged inside the rest as
// the estimate's runtime overhead and activations. A CPU gets no margin:
// --fit assumes system memory is unlimited (common/fit.h).
const llamaFitMarginBytes = 1 << 30

// engineRule is what a request says about engines: the engine it names (""
// for none), the memory fraction it asks for (0: the engine's default) and
// whether it points at llama.cpp (a GGUF model file or GGUF quant type).
// It is comparable: pools built under one rule are shared (pools.go).
type engineRule struct {
	Engine      string
	Fraction    float64
	PreferLlama bool
}

// engineRule is the request's rule.
func (r *planning) engineRule() engineRule {
	if r.training {
		return engineRule{Engine: engineNone, Fraction: r.MemoryFraction}
	}
	prefer := quant.Level(r.Quant).IsGGUF() || (r.Model != nil && r.Model.Source == "gguf header")
	return engineRule{Engine: r.Engine, Fraction: r.MemoryFraction, PreferLlama: prefer}
}

// budget is the memory rule of one pool: the engine its plans are made for
// and the share of each device that engine may use.
type budget struct {
	Engine    string
	ByDefault bool    // the request named no engine: Engine is the default for the pool
	Fraction  float64 // of each accelerator's total memory (1: no cap)
	Margin    int64   // bytes left free on each accelerator
}

// budgetFor is the budget of a device's pool under rule e. With no engine
// named, data-center accelerators (CUDA, ROCm, TPU, Gaudi, Neuron, Intel
// GPUs) are planned for vLLM, the server those machines run; Metal, Vulkan,
// the CPU, GPUs that share host memory (iGPUs, APUs) and any GGUF model or
// GGUF quant type are planned for llama.cpp; devices neither engine runs on
// get no engine and their whole usable memory.
func (e engineRule) budgetFor(d *registry.Device) budget {
	b := budget{Engine: e.Engine}
	if b.Engine == "" {
		b.ByDefault = true
		switch {
		case llamaKinds[d.Kind] && (e.PreferLlama || d.MemoryShared || !vllmKinds[d.Kind] || d.Kind == registry.KindCPU):
			b.Engine = engineLlamaCPP
		case vllmKinds[d.Kind]:
			b.Engine = engineVLLM
		default:
			b.Engine = engineNone
		}
	}
	b.Fraction = e.Fraction
	switch {
	case d.Kind == registry.KindCPU:
		b.Fraction = 1
	case b.Engine == engineVLLM && b.Fraction == 0:
		b.Fraction = vllmMemoryUtilization
	case b.Engine == engineLlamaCPP:
		b.Margin = llamaFitMarginBytes
	}
	if b.Fraction == 0 {
		b.Fraction = 1
	}
	return b
}

// usable is the bytes a plan may place on d under b: its usable memory
// (free, else the runtime's limit such as Metal's working-set cap, else
// total; registry.Device.UsableMemory) less the engine's margin, at most
// the fraction of its total memory.
func (b budget) usable(d *registry.Device) int64 {
	u := d.UsableMemory()
	if d.Kind == registry.KindCPU {
		return u
	}
	u = max(u-b.Margin, 0)
	if b.Fraction < 1 && d.MemoryBytes > 0 {
		u = min(u, int64(float64(d.MemoryBytes)*b.Fraction))
	}
	return u
}

// Budget is the memory budget of an answer: the engine the plan was made
// for and how much of each device it counts on.
type Budget struct {
	// Engine is "vllm", "llama.cpp" or "none".
	Engine string `json:"engine"`
	// EngineDefault is true when the request named no engine and Engine is
	// the default for the chosen devices.
	EngineDefault bool `json:"engine_default"`
	// MemoryFraction is the fraction of each device's total memory the
	// engine may use (vLLM's --gpu-memory-utilization; 1: no cap).
	MemoryFraction float64 `json:"memory_fraction"`
	// MarginBytes is the memory left free on each device (llama.cpp --fit).
	MarginBytes int64 `json:"margin_bytes"`
	// EngineReservedBytes is what the engine itself holds on each device of
	// the plan, inside the budget: its runtime context and the peak of its
	// working buffers (the answer's overhead and activations, per device).
	EngineReservedBytes int64 `json:"engine_reserved_bytes"`
	// Source says where the rule comes from.
	Source string `json:"source"`
}

// budgetOf is the Budget of a plan (nil without a pool).
func budgetOf(pl *planned) *Budget {
	if pl.Pool == nil {
		return nil
	}
	b := pl.Pool.Budget
	c := pl.Costs.on(pl.Pool.Kind)
	out := &Budget{Engine: b.Engine, EngineDefault: b.ByDefault, MemoryFraction: b.Fraction, MarginBytes: b.Margin,
		EngineReservedBytes: c.Activations + c.Overhead}
	out.Source = budgetSource(b, pl.Pool.Kind)
	return out
}

// budgetSource explains a budget in one line.
func budgetSource(b budget, k registry.Kind) string {
	who := "engine " + b.Engine
	if b.ByDefault {
		who = fmt.Sprintf("no engine named: %s, the default for %s devices,", b.Engine, k)
	}
	switch {
	case k == registry.KindCPU:
		return fmt.Sprintf("%s plans within the host's available memory", who)
	case b.Engine == engineVLLM:
		return fmt.Sprintf("%s plans each device within --gpu-memory-utilization %s of its total memory, which must hold the weights, the KV cache, the activation peak of vLLM's profiling run and its memory outside torch (vllm/v1/worker/gpu_worker.py determine_available_memory); CUDA graphs use the rest",
			who, fmtFraction(b.Fraction))
	case b.Engine == engineLlamaCPP && b.Fraction < 1:
		return fmt.Sprintf("%s plans each device within %s of its total memory and keeps %s free on it (llama.cpp --fit-target); llama.cpp has no flag for the fraction", who, fmtFraction(b.Fraction), gib(b.Margin))
	case b.Engine == engineLlamaCPP:
		return fmt.Sprintf("%s plans each device within its free memory (Metal: the GPU working-set limit) less the %s llama.cpp's --fit keeps free per device; its context and compute buffers are charged inside", who, gib(b.Margin))
	case b.Fraction < 1:
		return fmt.Sprintf("%s plans each device within %s of its total memory", who, fmtFraction(b.Fraction))
	}
	return fmt.Sprintf("%s plans each device within its usable memory (free, else total)", who)
}

// fmtFraction writes a fraction as the engines take it: 0.9, 0.95.
func fmtFraction(f float64) string {
	return fmt.Sprintf("%g", f)
}

// vllmStartNote warns when a device of a vLLM plan has less free memory than
// memory_fraction of its total: vLLM's worker refuses to start then ("Free
// memory on device ... is less than desired GPU memory utilization",
// Worker.init_device in vllm/v1/worker/gpu_worker.py, commit 35d5cda1
// above). The plan itself fits the free memory; the flag must be lowered.
func vllmStartNote(pl *planned) string {
	if !pl.Fits || pl.Pool == nil || pl.Pool.Budget.Engine != engineVLLM || pl.Pool.Kind == registry.KindCPU {
		return ""
	}
	f := pl.Pool.Budget.Fraction
	var short []string
	lowest := f
	for _, r := range pl.replicas() {
		for _, s := range r {
			for _, d := range s.Devices {
				free, total := d.Dev.MemoryFreeBytes, d.Dev.MemoryBytes
				if free == nil || total <= 0 || float64(*free) >= f*float64(total) {
					continue
				}
				short = append(short, fmt.Sprintf("%s has %s free of %s", d.ID, gib(*free), gib(total)))
				lowest = min(lowest, math.Floor(float64(*free)/float64(total)*100)/100)
			}
		}
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("vLLM: refuses to start when less than --gpu-memory-utilization %s of a GPU's total memory is free, and %s; free those devices, or ask memory_fraction %s and plan again",
		fmtFraction(f), strings.Join(short, ", "), fmtFraction(lowest))
}
