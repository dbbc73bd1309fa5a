package engine

import (
	"fmt"
	"math"
	"strconv"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// sglang is SGLang (https://docs.sglang.ai/): a server for CUDA and ROCm
// GPUs that loads Hugging Face checkpoints, tensor, pipeline and data
// parallel, with one paged token pool (RadixAttention). It is planned for
// only when a request names it.
type sglang struct{ Base }

// NameSGLang is SGLang's name in requests and answers.
const NameSGLang = "sglang"

// Name implements Engine.
func (sglang) Name() string { return NameSGLang }

// Title implements Engine.
func (sglang) Title() string { return "SGLang" }

// RunsOn implements Engine: NVIDIA and AMD GPUs.
func (sglang) RunsOn(k registry.Kind) bool { return k == registry.KindCUDA || k == registry.KindROCm }

// The default --mem-fraction-static, by ServerArgs._handle_gpu_memory_settings
// in python/sglang/srt/server_args.py
// (https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py;
// read from a stored copy whose commit the library did not give): the
// fraction of a GPU's memory for the weights and the KV pool is (total -
// reserved) / total, rounded to 3 decimals, where reserved (MiB) is 512 for
// constant metadata, 1.5 x max(chunked_prefill_size, 2048) for the
// activations of a prefill chunk, 2 x cuda_graph_max_bs for CUDA graphs and
// tp_size x pp_size / 8 x 1024, at least 10 GiB on GPUs above 60 GiB; the
// chunk and graph batch grow with the GPU's memory (sglangTiers).
const (
	sglangMetadataMiB  = 512
	sglangPrefillMiB   = 1.5 // per token of the prefill chunk
	sglangGraphMiB     = 2   // per CUDA-graph batch entry
	sglangParallelMiB  = 1024.0 / 8
	sglangLargeGPUMiB  = 60 * 1024
	sglangLargeReserve = 10 * 1024
)

// sglangTier is the chunked_prefill_size and cuda_graph_max_bs (below TP 4)
// of GPUs with less than BelowMiB of memory.
type sglangTier struct {
	BelowMiB     float64
	Chunk, Graph int
}

// sglangTiers are _handle_gpu_memory_settings' tiers on CUDA and ROCm
// (T4/4080; A10/4090/5090; A100 40GB/L40; H100/A100 80GB; H20/H200; then
// B200/MI300).
var sglangTiers = []sglangTier{
	{20 * 1024, 2048, 8}, {35 * 1024, 2048, 24}, {60 * 1024, 4096, 32},
	{90 * 1024, 8192, 256}, {160 * 1024, 8192, 256}, {math.Inf(1), 16384, 512},
}

// sglangFraction is SGLang's default --mem-fraction-static for a GPU of
// totalBytes at tensor parallel size 1 (a plan's TP adds 128 MiB per rank
// to the reserve: the planner counts its own per-device overhead instead).
func sglangFraction(totalBytes int64) float64 {
	if totalBytes <= 0 {
		return 0.88 // SGLang's value when the GPU's memory is unknown
	}
	mib := float64(totalBytes) / (1 << 20)
	var t sglangTier
	for _, t = range sglangTiers {
		if mib < t.BelowMiB {
			break
		}
	}
	reserved := sglangMetadataMiB + sglangPrefillMiB*float64(max(t.Chunk, 2048)) + sglangGraphMiB*float64(t.Graph) + sglangParallelMiB
	if mib > sglangLargeGPUMiB {
		reserved = max(reserved, sglangLargeReserve)
	}
	return math.Round((mib-reserved)/mib*1000) / 1000
}

// Memory: the fraction asked, else SGLang's own by the GPU's memory
// (FractionOf); one paged pool shared by the running requests, which
// --max-running-requests caps.
func (sglang) Memory(asked float64) Memory {
	if asked > 0 {
		return Memory{Fraction: asked, PagedKV: true, WorkspaceOutside: true}
	}
	return Memory{Fraction: 0.88, PagedKV: true, FractionOf: sglangFraction, WorkspaceOutside: true}
}

// BudgetSource explains SGLang's budget.
func (sglang) BudgetSource(who string, m Memory) string {
	return fmt.Sprintf("%s plans each device within --mem-fraction-static %s of its total memory, SGLang's share for the weights and its KV pool (the rest is its reserve for prefill activations and CUDA graphs: ServerArgs._handle_gpu_memory_settings in python/sglang/srt/server_args.py)",
		who, fmtFraction(m.Fraction))
}

// CannotLoad: SGLang serves Hugging Face checkpoints, not GGUF files.
func (sglang) CannotLoad(l quant.Level) string {
	if l.IsGGUF() {
		return fmt.Sprintf("SGLang does not plan GGUF types (%s); ask for a Hugging Face precision (int4, fp8...)", l)
	}
	return ""
}

// Load is the checkpoint SGLang loads at p's level: a published one, else
// the 16-bit one for 16-bit levels and fp8 (quantized on load).
func (sglang) Load(p *Placement) (*Load, string) {
	m, l := p.Model, p.Level
	ck := checkpointFor(m, l, false)
	if need := givenWeightsNeed(m, l, l == quant.FP8, ck); need != "" {
		ld := &Load{Quant: string(l), Needs: need}
		if ck != nil {
			ld.Repo, ld.Method, ld.Source = ck.Repo, ck.Method, ck.Source
		}
		return ld, "SGLang: needs " + need + "; serving the given weights would run them as stored"
	}
	if ck == nil && (l == quant.FP16 || l == quant.BF16 || l == quant.FP32 || l == quant.FP8) {
		ck = checkpointFor(m, quant.BF16, false)
	}
	if ck != nil {
		return &Load{Quant: string(l), Repo: ck.Repo, Method: ck.Method, Source: ck.Source}, ""
	}
	if len(m.Checkpoints) == 0 {
		return nil, ""
	}
	return nil, fmt.Sprintf("SGLang: no %s checkpoint of %s is published in the catalog; SGLang reads the quantization method from a pre-quantized checkpoint (AWQ, GPTQ, compressed-tensors)", l, m.Name)
}

// Args are sglang.launch_server's flags for p
// (https://docs.sglang.ai/advanced_features/server_arguments.html): --tp,
// --pp-size, --dp-size, --mem-fraction-static, --context-length,
// --max-running-requests, --dtype or --quantization fp8, --kv-cache-dtype,
// --cpu-offload-gb.
func (e sglang) Args(p *Placement) ([]string, []string, bool) {
	var a, notes []string
	pp := len(p.Stages)
	if p.Offloaded {
		pp--
	}
	if p.TP > 1 {
		a = append(a, "--tp", strconv.Itoa(p.TP))
	}
	if pp > 1 {
		a = append(a, "--pp-size", strconv.Itoa(pp))
	}
	if p.DP > 1 {
		a = append(a, "--dp-size", strconv.Itoa(p.DP))
	}
	a = append(a, "--mem-fraction-static", strconv.FormatFloat(p.Memory.Fraction, 'f', -1, 64),
		"--context-length", strconv.Itoa(p.Context))
	if p.Batch > 1 {
		a = append(a, "--max-running-requests", strconv.Itoa(p.Batch))
	}
	ld, missing := e.Load(p)
	switch p.Level {
	case quant.BF16, quant.FP16, quant.FP32:
		a = append(a, "--dtype", torchDType[p.Level])
	case quant.FP8:
		if ld == nil || ld.Method == "" {
			a = append(a, "--quantization", "fp8")
		}
	}
	if missing != "" {
		notes = append(notes, missing)
	}
	if p.KVCacheDType == "fp8" || p.KVCacheDType == "int8" {
		// SGLang's one-byte KV cache types are fp8_e5m2 and fp8_e4m3; e5m2
		// needs no scales from the checkpoint.
		a = append(a, "--kv-cache-dtype", "fp8_e5m2")
	}
	if p.Offloaded {
		a = append(a, "--cpu-offload-gb", strconv.Itoa(int(math.Ceil(float64(p.OffloadedWeightBytes)/(1<<30)))))
	}
	if p.MultiNode {
		notes = append(notes, "SGLang: a plan over several nodes runs one launch_server per node with --nnodes, --node-rank and --dist-init-addr")
	}
	return a, notes, true
}

// Env: the plan's GPUs made visible in placement order (visibleDevicesEnv).
func (sglang) Env(p *Placement) map[string]string { return visibleDevicesEnv(p) }

// Command is `python3 -m sglang.launch_server --model-path MODEL`.
func (sglang) Command(s Served) []string {
	m, ok := servedModel(s)
	if !ok {
		return nil
	}
	if m == "" {
		m = "MODEL"
	}
	return []string{"python3", "-m", "sglang.launch_server", "--model-path", m}
}
