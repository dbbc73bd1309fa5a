package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// vllmKinds and llamaKinds are the device kinds each engine runs on (vLLM:
// CUDA, ROCm, TPU, Gaudi, Neuron, Intel GPU, CPU; llama.cpp: CUDA, ROCm
// (HIP), Metal, Vulkan, SYCL, CPU).
var vllmKinds = map[registry.Kind]bool{
	registry.KindCUDA: true, registry.KindROCm: true, registry.KindTPU: true, registry.KindGaudi: true,
	registry.KindNeuron: true, registry.KindIntelGPU: true, registry.KindCPU: true,
}

var llamaKinds = map[registry.Kind]bool{
	registry.KindCUDA: true, registry.KindROCm: true, registry.KindMetal: true, registry.KindVulkan: true,
	registry.KindIntelGPU: true, registry.KindCPU: true,
}

// engineCannotRun is why the named engine cannot run on devices of kind
// k, "" when it can or no engine was named.
func engineCannotRun(k registry.Kind, engine string) string {
	switch {
	case engine == engineVLLM && !vllmKinds[k]:
		return fmt.Sprintf("vLLM does not run on %s devices", k)
	case engine == engineLlamaCPP && !llamaKinds[k]:
		return fmt.Sprintf("llama.cpp does not run on %s devices", k)
	}
	return ""
}

// engineArgs writes the command-line flags that realise a fitting plan, for
// the engine its budget was made for (the requested one, else the pool's
// default: budget.go): flags of one engine never describe a plan made on
// another engine's budget. Notes explain what the flags cannot say.
func engineArgs(pl *planned, req *planning, cluster bool) (map[string][]string, []string) {
	out := map[string][]string{}
	var notes []string
	if !pl.Fits || pl.Pool == nil {
		return out, nil
	}
	kind := pl.Pool.Kind
	engine := pl.Pool.Budget.Engine
	wantV := engine == engineVLLM && vllmKinds[kind]
	wantL := engine == engineLlamaCPP && llamaKinds[kind]
	if r := engineCannotRun(kind, engine); r != "" {
		notes = append(notes, r)
	}
	if wantV {
		a, n := vllmArgs(pl, req, cluster)
		out[engineVLLM] = a
		notes = append(notes, n...)
	}
	if wantL {
		if a, n, ok := llamaArgs(pl, req, cluster); ok {
			out[engineLlamaCPP] = a
			notes = append(notes, n...)
		} else {
			notes = append(notes, n...)
		}
	}
	return out, notes
}

func vllmArgs(pl *planned, req *planning, cluster bool) ([]string, []string) {
	var a, notes []string
	pp := len(pl.Stages)
	if pl.Offloaded {
		pp = len(pl.Stages) - 1
	}
	if tp := vllmTensorParallel(pl); tp > 1 {
		a = append(a, "--tensor-parallel-size", strconv.Itoa(tp))
	}
	if pp > 1 {
		a = append(a, "--pipeline-parallel-size", strconv.Itoa(pp))
	}
	if pl.DP > 1 {
		// vLLM data-parallel deployment (docs/serving/data_parallel_deployment.md,
		// https://docs.vllm.ai/en/latest/serving/data_parallel_deployment/):
		// --data-parallel-size N runs N engine copies behind one endpoint,
		// each with --tensor-parallel-size GPUs; --max-num-seqs is per copy.
		a = append(a, "--data-parallel-size", strconv.Itoa(pl.DP))
		if m := req.Model; m.ActiveParams > 0 && m.ActiveParams < m.Params {
			notes = append(notes, "vLLM: for a mixture-of-experts model --data-parallel-size makes the expert layers one group across all replicas (dp_size x tp_size devices, synchronised every step); this plan counts full independent replicas, so its memory is an upper bound and decode_tokens_per_s_total an optimistic figure")
		}
	}
	a = append(a, "--max-model-len", strconv.Itoa(req.ContextLength))
	if pl.Pool.Kind != registry.KindCPU && pl.Pool.Kind != registry.KindNeuron { // Neuron: no such flag (vllmTensorParallel)
		a = append(a, "--gpu-memory-utilization", strconv.FormatFloat(pl.Pool.Budget.Fraction, 'f', -1, 64))
	}
	if batch := pl.batchOf(req); batch > 1 {
		a = append(a, "--max-num-seqs", strconv.Itoa(batch))
	}
	qa, qn := vllmQuantArgs(pl, req)
	a = append(a, qa...)
	notes = append(notes, qn...)
	if req.KVCacheDType == "fp8" || req.KVCacheDType == "int8" {
		a = append(a, "--kv-cache-dtype", "fp8")
	}
	if req.NoFlashAttention {
		notes = append(notes, "vLLM: no command-line flag turns flash attention off (vLLM chooses its attention backend); the memory figures assume attention without it")
	}
	if pl.Offloaded {
		host := pl.Stages[len(pl.Stages)-1]
		gb := int(math.Ceil(float64(host.Part.Weights) / (1 << 30)))
		a = append(a, "--cpu-offload-gb", strconv.Itoa(gb))
	}
	if cluster && multiNode(pl) {
		a = append(a, "--distributed-executor-backend", "ray")
		if pl.DP > 1 {
			notes = append(notes, "vLLM: replicas on several nodes need one vllm serve per node (--data-parallel-size-local, --data-parallel-start-rank, --data-parallel-address) or --data-parallel-backend ray; see vLLM's data parallel deployment guide")
		}
	}
	return a, notes
}

// vllmTensorParallel is vLLM's --tensor-parallel-size for a plan: the TP
// degree in devices, except on AWS Neuron, where vLLM shards over
// NeuronCores, not chips, and has no --gpu-memory-utilization
// (tensor_parallel_size is "the number of NeuronCores" in the NxD Inference
// vLLM user guide,
// https://awsdocs-neuron.readthedocs-hosted.com/en/latest/libraries/nxd-inference/developer_guides/vllm-user-guide.html).
// A chip's cores are the detected count (neuron-ls), else its
// generation's: Inferentia2 and Trainium 2 NeuronCores-v2 each
// (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/inferentia2.html,
// .../trainium.html); Trainium2 8 NeuronCores-v3, which the runtime
// groups by 2 by default (logical NeuronCore config LNC=2,
// .../general/arch/neuron-features/logical-neuroncore-config.html), so 4
// cores to vLLM.
func vllmTensorParallel(pl *planned) int {
	if pl.Pool.Kind != registry.KindNeuron || len(pl.Stages) == 0 || len(pl.Stages[0].Devices) == 0 {
		return pl.TP
	}
	return max(pl.TP, 1) * neuronCores(pl.Stages[0].Devices[0].Dev)
}

// neuronCoresPerChip is the NeuronCores of one chip by architecture.
var neuronCoresPerChip = map[string]int{"inferentia": 4, "inferentia2": 2, "trainium": 2, "trainium2": 4}

func neuronCores(d registry.Device) int {
	if d.Cores > 0 {
		return d.Cores
	}
	if n := neuronCoresPerChip[d.Architecture]; n > 0 {
		return n
	}
	return 1
}

// vllmQuantArgs are the flags that make vLLM run the plan's level, and
// notes on what it must load (vllmLoad): a checkpoint that declares its
// quantization (FP8, MXFP4, AWQ, GPTQ) needs no flag, vLLM reads the method
// from its config; a 16-bit checkpoint is quantized to fp8 on load
// (--quantization fp8); on TPU int8 is vLLM's weight-only tpu_int8
// (vllm/model_executor/layers/quantization/tpu_int8.py,
// https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/tpu_int8.py),
// not a GPTQ/AWQ checkpoint.
func vllmQuantArgs(pl *planned, req *planning) ([]string, []string) {
	ld, missing := vllmLoad(req.Model, pl.Level, pl.Pool.Kind)
	declared := ld != nil && ld.Method != ""
	var a, notes []string
	switch pl.Level {
	case quant.BF16:
		a = append(a, "--dtype", "bfloat16")
	case quant.FP16:
		a = append(a, "--dtype", "float16")
	case quant.FP32:
		a = append(a, "--dtype", "float32")
	case quant.FP8:
		if !declared {
			a = append(a, "--quantization", "fp8")
		}
	case quant.MXFP4:
		if !declared {
			notes = append(notes, "vLLM: mxfp4 needs a checkpoint published in MXFP4 (gpt-oss); vLLM reads the method from the checkpoint")
		}
	case quant.INT8, quant.INT4:
		switch {
		case pl.Pool.Kind == registry.KindTPU && pl.Level == quant.INT8:
			a = append(a, "--quantization", "tpu_int8")
			return a, []string{"vLLM on TPU: int8 is the weight-only tpu_int8 method, applied on load to the 16-bit checkpoint"}
		case declared:
		case missing != "":
			notes = append(notes, missing)
		default:
			notes = append(notes, fmt.Sprintf("vLLM: %s needs a checkpoint quantized to it (e.g. GPTQ/AWQ/compressed-tensors); vLLM reads the method from the checkpoint", pl.Level))
		}
		return a, notes
	default:
		notes = append(notes, fmt.Sprintf("vLLM: %s is a GGUF type; vLLM's GGUF support is experimental", pl.Level))
		return a, notes
	}
	if missing != "" {
		notes = append(notes, missing)
	}
	return a, notes
}

// llamaMaxSplit is how many --tensor-split entries llama.cpp accepts:
// fewer than llama_max_devices() (16), which common/arg.cpp checks with
// "got %d input configs, but system only has %d devices"
// (https://github.com/ggml-org/llama.cpp/blob/master/common/arg.cpp).
const llamaMaxSplit = 15

func llamaArgs(pl *planned, req *planning, cluster bool) ([]string, []string, bool) {
	if cluster && multiNode(pl) {
		return nil, []string{"llama.cpp: a multi-node plan needs its RPC backend (--rpc); no flags are given"}, false
	}
	if pl.TP > 1 {
		return nil, []string{"llama.cpp: this plan uses tensor parallelism, which llama.cpp does not do across devices; ask for engine llama.cpp to get a layer-split plan"}, false
	}
	var a, notes []string
	batch := pl.batchOf(req)
	if pl.DP > 1 {
		notes = append(notes, llamaReplicasNote(pl))
	}
	gpuLayers := 0
	var split []string
	for _, s := range pl.Stages {
		if s.Devices[0].Dev.Kind == registry.KindCPU {
			continue
		}
		gpuLayers += s.End - s.Start
		split = append(split, strconv.Itoa(s.End-s.Start))
	}
	if len(split) > llamaMaxSplit {
		return nil, []string{fmt.Sprintf("llama.cpp: --tensor-split takes at most %d entries and this plan splits over %d devices; no flags are given", llamaMaxSplit, len(split))}, false
	}
	switch {
	case pl.Pool.Kind == registry.KindCPU:
		gpuLayers = 0
	case !pl.Offloaded:
		// Every layer on the GPUs: llama.cpp counts the output layer as
		// layer n_layer, so all of them is n_layer + 1.
		gpuLayers = pl.Costs.Layers + 1
	}
	a = append(a, "-ngl", strconv.Itoa(gpuLayers))
	if len(split) > 1 {
		a = append(a, "--split-mode", "layer", "--tensor-split", strings.Join(split, ","))
	} else if len(split) == 1 && pl.Pool.Kind != registry.KindCPU {
		main := pl.Stages[0].Devices[0].Dev.Index
		if pl.DP > 1 || engineEnv(pl, engineLlamaCPP, cluster) != nil {
			// Each replica's server sees only its own device; a CUDA or
			// ROCm plan runs with CUDA_VISIBLE_DEVICES or
			// ROCR_VISIBLE_DEVICES listing its devices, which the process
			// numbers from 0 (engineEnv).
			main = 0
		}
		a = append(a, "--split-mode", "none", "--main-gpu", strconv.Itoa(main))
	}
	// llama.cpp's -c is the context shared by all parallel sequences.
	a = append(a, "-c", strconv.Itoa(req.ContextLength*batch))
	if batch > 1 {
		a = append(a, "-np", strconv.Itoa(batch))
	}
	if req.NoFlashAttention {
		// -fa/--flash-attn takes on, off or auto (the default):
		// common/arg.cpp @ 145b6280,
		// https://github.com/ggml-org/llama.cpp/blob/145b6280d6aa1890e22457143dad0badb3fd6820/common/arg.cpp
		a = append(a, "-fa", "off")
	}
	switch req.KVCacheDType {
	case "int8":
		a = append(a, "--cache-type-k", "q8_0", "--cache-type-v", "q8_0")
	case "fp8":
		notes = append(notes, "llama.cpp: no fp8 KV cache; q8_0 (--cache-type-k q8_0 --cache-type-v q8_0) is the nearest")
	}
	if pl.Level.IsContract() && pl.Level != quant.FP16 && pl.Level != quant.BF16 && pl.Level != quant.FP32 {
		notes = append(notes, fmt.Sprintf("llama.cpp: %s means a GGUF of that width (int8 ~ Q8_0, int4 ~ Q4_K_M/Q4_0)", pl.Level))
	}
	return a, notes, true
}

// llamaReplicasNote says how to run a data-parallel plan with llama.cpp,
// which has no data-parallel mode: one server per replica.
func llamaReplicasNote(pl *planned) string {
	var per []string
	for i, r := range pl.Replicas {
		per = append(per, fmt.Sprintf("%d on %s", i, replicaDeviceIDs(r)))
	}
	return fmt.Sprintf("llama.cpp has no data-parallel mode: run %d llama-server processes, one per replica (%s), each seeing only its replica's devices (e.g. CUDA_VISIBLE_DEVICES) with these flags, behind a load balancer",
		pl.DP, strings.Join(per, "; "))
}

func multiNode(pl *planned) bool {
	node := -1
	for _, r := range pl.replicas() {
		for _, s := range r {
			for _, d := range s.Devices {
				if node >= 0 && d.Node != node {
					return true
				}
				node = d.Node
			}
		}
	}
	return false
}
