package engine

import (
	"fmt"
	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/llamahf"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// llamaCPP is llama.cpp's llama-server
// (https://github.com/ggml-org/llama.cpp/tree/master/tools/server): GGUF
// weights, layers split over devices (never tensors), one process per
// replica.
type llamaCPP struct{}

// Name implements Engine.
func (llamaCPP) Name() string { return NameLlamaCPP }

// Title implements Engine.
func (llamaCPP) Title() string { return "llama.cpp" }

// llamaKinds are the device kinds llama.cpp runs on: CUDA, ROCm (HIP),
// Metal, Vulkan, SYCL (Intel GPUs), CPU.
var llamaKinds = map[registry.Kind]bool{
	registry.KindCUDA: true, registry.KindROCm: true, registry.KindMetal: true, registry.KindVulkan: true,
	registry.KindIntelGPU: true, registry.KindCPU: true,
}

// RunsOn implements Engine: llamaKinds.
func (llamaCPP) RunsOn(k registry.Kind) bool { return llamaKinds[k] }

// Preference: llama.cpp is the engine of the CPU, of GPUs that share host
// memory and of any GGUF model or quant type; elsewhere it is the default
// only where no primary engine (vLLM) runs: Metal, Vulkan.
func (llamaCPP) Preference(d Device) Preference {
	switch {
	case !llamaKinds[d.Kind]:
		return Never
	case d.GGUF || d.SharedMemory || d.Kind == registry.KindCPU:
		return Preferred
	}
	return Secondary
}

// llamaFitMarginBytes is the memory llama.cpp's --fit (on by default) leaves
// free on each GPU: fit_params_target, 1024 MiB per device, in
// common/common.h of ggml-org/llama.cpp
// (https://github.com/ggml-org/llama.cpp/blob/master/common/common.h; the
// flag is -fitt/--fit-target in common/arg.cpp). llama.cpp's own buffers,
// the backend context and the compute graph, are charged inside the rest as
// the estimate's runtime overhead and activations. A CPU gets no margin:
// --fit assumes system memory is unlimited (common/fit.h).
const llamaFitMarginBytes = 1 << 30

// llamaOverheadBytes is what a llama.cpp process holds on a GPU beyond its
// buffers, per backend: measured on CUDA only
// (calibration.LlamaCPPCUDAOverheadBytes, from llama.cpp's own memory
// table on an H200); the other backends take the planner's default.
var llamaOverheadBytes = map[registry.Kind]int64{registry.KindCUDA: calibration.LlamaCPPCUDAOverheadBytes}

// llamaFitOverheadBytes is the part of it --fit counts before placing
// (calibration.LlamaCPPCUDAFitOverheadBytes, from its own choices on
// imitated cards): --fit keeps its 1 GiB target free of its buffers beyond
// that, so at run time the rest of the overhead comes out of the target.
var llamaFitOverheadBytes = map[registry.Kind]int64{registry.KindCUDA: calibration.LlamaCPPCUDAFitOverheadBytes}

// Memory: the fraction asked, else the whole device, less the --fit margin.
// llama.cpp keeps the token embedding (token_embd) in host memory whatever
// -ngl says: llama_model::load_tensors assigns the input layer to the CPU
// (src/llama-model.cpp, "assign the input layer: there is very little
// benefit to offloading the input layer"; measured: the H200 logs of
// internal/calibration/data/llamacpp-cuda-h200-memory list 281 MiB of
// Llama-3.1-8B Q4_K_M as CPU_Mapped with -ngl 99, its token_embd).
func (llamaCPP) Memory(asked float64) Memory {
	if asked == 0 {
		asked = 1
	}
	return Memory{Fraction: asked, MarginBytes: llamaFitMarginBytes, OverheadBytes: llamaOverheadBytes,
		FitOverheadBytes: llamaFitOverheadBytes, HostTokenEmbeddings: true,
		ContextFloor: llamaFitMinContext}
}

// llamaFitMinContext is the smallest context llama.cpp's --fit reduces to
// when no -c is given: fit_params_min_ctx, 4096 (common/common.h; flag
// --fit-ctx in common/arg.cpp of https://github.com/ggml-org/llama.cpp).
// common_params_fit_impl (common/fit.cpp @ 6d0892ba,
// https://github.com/ggml-org/llama.cpp/blob/6d0892ba065b38ee790b825fdc8fb8e2c453e6dd/common/fit.cpp)
// first tries the trained context; when it does not fit it interpolates
// linearly between this floor and the trained context to the memory
// target, rounded down to a multiple of 256 ("round down context for CUDA
// backend"), and only then moves layers off the GPUs. Memory is linear in
// the context, so that is the largest multiple of 256 that fits.
const llamaFitMinContext = 4096

// LlamaFitContextStep is the multiple --fit rounds a reduced context down
// to (common/fit.cpp, llamaFitMinContext).
const LlamaFitContextStep = 256

// BudgetSource explains llama.cpp's budget: free memory less the --fit
// margin, within the fraction asked.
func (llamaCPP) BudgetSource(who string, m Memory) string {
	if m.Fraction < 1 {
		return fmt.Sprintf("%s plans each device within %s of its total memory and keeps %s free on it (llama.cpp --fit-target); llama.cpp has no flag for the fraction", who, fmtFraction(m.Fraction), gib(m.MarginBytes))
	}
	return fmt.Sprintf("%s plans each device within its free memory (Metal: the GPU working-set limit) less the %s llama.cpp's --fit keeps free per device; its context and compute buffers are charged inside", who, gib(m.MarginBytes))
}

// BudgetSetting: llama.cpp's share of a device is its free memory less
// --fit-target (MiB per device, common/arg.cpp), within the fraction a
// request asks for, which llama.cpp has no flag for (BudgetSource).
func (llamaCPP) BudgetSetting(m Memory) string {
	s := fmt.Sprintf("--fit-target %d", m.MarginBytes>>20)
	if m.Fraction < 1 {
		s = fmt.Sprintf("memory_fraction %s and %s", fmtFraction(m.Fraction), s)
	}
	return s
}

// KVRules are llama.cpp's sliding-window cache rules: a window layer's
// cache holds n_swa + n_ubatch cells padded to 256, at most the context
// (size_swa in src/llama-kv-cache-iswa.cpp,
// https://github.com/ggml-org/llama.cpp/blob/master/src/llama-kv-cache-iswa.cpp;
// Gemma-3-1B measured at 1024 cells for its 512 window), and Phi-3's window
// is disabled on load ("Phi SWA is currently disabled",
// https://github.com/ggml-org/llama.cpp/pull/13676; measured: full context
// in all 32 layers of Phi-3-mini: model.Arch LlamaCPPFullWindow).
// Measurements: internal/calibration/data/llamacpp_measurements.json.
//
// A one-byte cache (kv_cache_dtype int8 or fp8, CommonCacheTypes) is run as
// q8_0, llama.cpp's only one-byte type (Args), and sized as it: ggml's
// block_q8_0 holds 32 values in 34 bytes, an fp16 scale beside them
// (ggml/src/ggml-common.h), so a q8_0 cache is 1/16 larger than one byte
// an element.
func (llamaCPP) KVRules(o quant.KVOptions, m *model.Model) quant.KVOptions {
	if o.Bytes == 1 {
		o.Bytes = llamaQ8_0Bytes
	}
	o.SlidingExtra, o.SlidingPad = calibration.MicroBatchTokens, 256
	o.NoSlidingWindow = m != nil && m.Arch().LlamaCPPFullWindow
	// Its CUDA compute buffer is the allocator's peak (measured on an H200,
	// internal/calibration/data/llamacpp-cuda-h200-memory).
	o.GraphPeak = true
	return o
}

// llamaCacheTypes are llama.cpp's --cache-type-k/-v values beyond the
// common ones (kv_cache_types in common/arg.cpp of ggml-org/llama.cpp:
// https://github.com/ggml-org/llama.cpp/blob/master/common/arg.cpp); a
// quantized cache is stored in ggml blocks, q8_0 34 bytes per 32 values.
var llamaCacheTypes = []string{"f32", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}

// NeedsFlashAttention: llama.cpp refuses a quantized V cache without flash
// attention ("quantized V cache requires flash_attn to be enabled",
// src/llama-context.cpp of ggml-org/llama.cpp @ 34af94cd; with -fa auto it
// turns flash attention on instead). Its quantized types are every one of
// llamaCacheTypes but f32, and int8 and fp8, which its command writes as
// q8_0.
func (llamaCPP) NeedsFlashAttention(name string) bool {
	return name == "int8" || name == "fp8" || (name != "f32" && slices.Contains(llamaCacheTypes, name))
}

// CacheTypes are llamaCacheTypes, sized by their ggml blocks.
func (llamaCPP) CacheTypes() []CacheType {
	out := make([]CacheType, 0, len(llamaCacheTypes))
	for _, name := range llamaCacheTypes {
		out = append(out, CacheType{Name: name, BytesPerElement: ggmlBytesPerElement(name)})
	}
	return out
}

// llamaQ8_0Bytes is what one value of a q8_0 cache takes: 34 bytes per 32.
var llamaQ8_0Bytes = ggmlBytesPerElement("q8_0")

// ggmlBytesPerElement is one value's storage in ggml type name, its block's
// scales included.
func ggmlBytesPerElement(name string) float64 {
	t, ok := ggml.ParseType(name)
	if !ok {
		panic("engine: unknown ggml type " + name)
	}
	return float64(t.BlockBytes()) / float64(t.BlockSize())
}

// llamaRung is one GGUF type of the auto ladder with its mean KL divergence
// to FP16 on Llama-3-8B (lower is better).
type llamaRung struct {
	level quant.Level
	kld   float64
}

// llamaRungs is the GGUF types people download, in quality order: mean KL
// divergence against FP16 of Llama-3-8B in the "LLaMA 3 8b Scoreboard" of
// tools/perplexity/README.md of ggml-org/llama.cpp (CUDA, llama.cpp
// f364eb6f, https://github.com/ggml-org/llama.cpp/blob/master/tools/perplexity/README.md),
// with an importance matrix ("WT 10m") where the table has one, as
// published files of these types are made. Left out are the mixes both
// larger and worse than one listed (Q5_K_S and Q4_K_S sit between listed
// rungs of almost their size; Q3_K_S at 3.41 GiB and 0.200 is beaten by
// IQ3_XXS, 3.04 GiB and 0.184; Q2_K_S, 2.78 GiB and 0.403, by IQ2_M, 2.74
// GiB and 0.326; sizes from tools/quantize/README.md's Llama-3.1-8B table).
// Q2_K (0.332) follows IQ2_M (0.326) and is larger on Llama shapes, where
// planning drops it (a worse level that is not smaller is never planned);
// it stays for shapes where it is the smaller.
var llamaRungs = []llamaRung{
	{"q8_0", 0.0014}, {"q6_k", 0.0055}, {"q5_k_m", 0.0108}, {"q4_k_m", 0.0282}, {"iq4_xs", 0.0363},
	{"q3_k_m", 0.0844}, {"iq3_m", 0.1025}, {"iq3_s", 0.1113}, {"iq3_xs", 0.1387}, {"iq3_xxs", 0.1836},
	{"iq2_m", 0.3260}, {"q2_k", 0.3322}, {"iq2_s", 0.4392}, {"iq2_xs", 0.5463}, {"iq2_xxs", 0.8120},
	{"iq1_m", 1.3931}, {"iq1_s", 2.2546},
}

// llamaLadder is the levels of llamaRungs.
var llamaLadder = func() []quant.Level {
	out := make([]quant.Level, len(llamaRungs))
	for i, r := range llamaRungs {
		out[i] = r.level
	}
	return out
}()

// Levels maps levels to what llama.cpp runs: int8 and int4 are GGUF Q8_0
// and Q4_K_M there (quant.Level.LlamaCPPLevel), sized as those types. fp8,
// which llama.cpp has no type for, becomes Q8_0 in a list of several (its
// 8-bit type; llama.cpp's converter stores an FP8 checkpoint's weights as
// Q8_0 or wider); asked alone it stays, and is refused (CannotLoad). A
// level met twice is kept once. In a list of several (quant auto) that
// reaches int4, the integer levels are llamaLadder: from Q8_0 (or Q4_K_M
// when int8 is not in the list) down to IQ1_S, so "does not fit at any
// precision" means every type people download was tried.
func (e llamaCPP) Levels(levels []quant.Level) ([]quant.Level, []string) {
	out, notes := e.mapLevels(levels)
	if len(levels) < 2 || !slices.Contains(levels, quant.INT4) {
		return out, notes
	}
	from := slices.Index(llamaLadder, quant.INT4.LlamaCPPLevel())
	if slices.Contains(out, quant.INT8.LlamaCPPLevel()) {
		from = 0
	}
	var ladder []quant.Level
	for _, l := range out {
		if !slices.Contains(llamaLadder, l) {
			ladder = append(ladder, l)
		}
	}
	ladder = append(ladder, llamaLadder[from:]...)
	notes = append(notes, fmt.Sprintf("auto for llama.cpp walks the GGUF types %s in quality order (mean KL divergence to FP16 on Llama-3-8B, llama.cpp's perplexity scoreboard: %s)", joinLevels(llamaLadder[from:]), rungKLD(llamaRungs[from:])))
	return ladder, notes
}

// llamaLowQualityKLD is the mean KL divergence from which a plan's type is
// flagged: Q2_K's and IQ2_M's (0.33 on Llama-3-8B) and worse, where the
// scoreboard's perplexity is more than a third above FP16's (8.6 against
// 6.23).
const llamaLowQualityKLD = 0.3

// lowQualityNote warns about a plan at a rung of the ladder whose quality
// loss is large, "" otherwise; where the request already allowed
// cpu_offload (offloadFits not nil) it names only the quant to ask for,
// and only one that fits offloaded (offloadedFix), and where the GPU
// shares the host's memory (hostShared) only a larger machine: there
// q4_k_m with cpu_offload needs the same RAM the GPU already lacks.
func lowQualityNote(l quant.Level, offloadFits func(quant.Level) bool, hostShared bool) string {
	for _, r := range llamaRungs {
		if r.level == l && r.kld >= llamaLowQualityKLD {
			fix := "a larger GPU, or quant q4_k_m with cpu_offload, keeps more of it"
			switch {
			case hostShared:
				fix = "a machine with more memory keeps more of it (cpu_offload adds no memory here: the GPU shares the host's)"
			case offloadFits != nil:
				fix = offloadedFix(offloadFits)
			}
			return fmt.Sprintf("llama.cpp: %s loses much quality (mean KL divergence %.3g to FP16 on Llama-3-8B, against 0.028 for q4_k_m); %s", l, r.kld, fix)
		}
	}
	return ""
}

// offloadedFix is the quality hint of a plan with cpu_offload asked for:
// the best rung from q4_k_m down that this note does not warn of and that
// fits offloaded, or that none does. On the h200-vm fixture DeepSeek-R1's
// q4_k_m (377.4 GiB) is far beyond the H200 and the host together; the
// hint named it all the same.
func offloadedFix(fits func(quant.Level) bool) string {
	from := slices.IndexFunc(llamaRungs, func(r llamaRung) bool { return r.level == "q4_k_m" })
	last := from
	for i := from; i < len(llamaRungs) && llamaRungs[i].kld < llamaLowQualityKLD; i++ {
		if fits(llamaRungs[i].level) {
			return fmt.Sprintf("%q: %q keeps more of it, the layers that do not fit in host RAM (the cpu_offload asked for) running on the CPU", "quant", llamaRungs[i].level)
		}
		last = i
	}
	return fmt.Sprintf("of the types not warned of (%s and better) none fits, even with the cpu_offload asked for", llamaRungs[last].level)
}

// LevelsBelow: the rungs of llamaRungs below the GGUF type l is loaded
// as, down to the last better than llamaLowQualityKLD. A refusal points to
// the first that fits and says its divergence beside l's; it stops above
// the rungs whose loss lowQualityNote warns of (IQ2_M, Q2_K and below),
// which are no answer to "what fits" a user should be sent to unasked
// (quant auto with llama.cpp named still plans them, with that warning).
func (e llamaCPP) LevelsBelow(l quant.Level) []LowerLevel {
	from := slices.IndexFunc(llamaRungs, func(r llamaRung) bool { return r.level == e.WeightsLevel(l) })
	if from < 0 {
		return nil
	}
	var out []LowerLevel
	for _, r := range llamaRungs[from+1:] {
		if r.kld >= llamaLowQualityKLD {
			break
		}
		out = append(out, LowerLevel{Level: r.level, Quality: rungQuality(r, llamaRungs[from])})
	}
	return out
}

// QualityBelow: the divergence of lo's rung beside l's (as l is loaded,
// WeightsLevel); "" when either is not a rung.
func (e llamaCPP) QualityBelow(lo, l quant.Level) string {
	at := func(x quant.Level) int {
		return slices.IndexFunc(llamaRungs, func(r llamaRung) bool { return r.level == e.WeightsLevel(x) })
	}
	i, from := at(lo), at(l)
	if i < 0 || from < 0 {
		return ""
	}
	return rungQuality(llamaRungs[i], llamaRungs[from])
}

// rungQuality says what r costs against the refused rung from.
func rungQuality(r, from llamaRung) string {
	return fmt.Sprintf("mean KL divergence %.3g to FP16 on Llama-3-8B, against %.3g for %s, llama.cpp's perplexity scoreboard", r.kld, from.kld, from.level)
}

// rungKLD lists the rungs' divergences, "q8_0 0.0014, ...".
func rungKLD(rs []llamaRung) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprintf("%s %.4g", r.level, r.kld)
	}
	return strings.Join(s, ", ")
}

func joinLevels(ls []quant.Level) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, " > ")
}

// WeightsLevel: llama.cpp loads int8 and int4 as the GGUF files Q8_0 and
// Q4_K_M (quant.Level.LlamaCPPLevel, the types its command's -hf tag
// names), so a level is sized as that file.
func (llamaCPP) WeightsLevel(l quant.Level) quant.Level { return l.LlamaCPPLevel() }

// SizedAsNote: the GGUF type llama.cpp loads for l, as WeightsLevel says.
func (e llamaCPP) SizedAsNote(l quant.Level, kinds string) string {
	s := e.WeightsLevel(l)
	what := s.GGUFType()
	if what == "" {
		what = string(s)
	}
	return fmt.Sprintf("%s is sized as the GGUF type %s, the file %s loads for it on %s devices (%.2f bits per weight on the reference model), not as generic %s weights",
		l, what, e.Title(), kinds, s.BitsPerWeight(), l)
}

// mapLevels is Levels without the ladder.
func (llamaCPP) mapLevels(levels []quant.Level) ([]quant.Level, []string) {
	var out []quant.Level
	var notes []string
	seen := map[quant.Level]bool{}
	for _, l := range levels {
		ll := l.LlamaCPPLevel()
		if l.GGUFType() == "" && len(levels) > 1 {
			if slices.Contains(levels, quant.INT8) {
				continue // int8 brings Q8_0, with its own note
			}
			ll = quant.INT8.LlamaCPPLevel()
		}
		if seen[ll] {
			continue
		}
		seen[ll] = true
		out = append(out, ll)
		if ll == l {
			continue
		}
		t := ll.GGUFType()
		if l.GGUFType() == "" {
			notes = append(notes, fmt.Sprintf("llama.cpp has no %s weight type: %s is planned instead", l, t))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s for llama.cpp means the GGUF type %s (sized as that type: %.2f bits per weight on the reference model)", l, t, ll.BitsPerWeight()))
	}
	return out, notes
}

// CannotLoad: llama.cpp has no fp8 weight type (Levels replaces fp8 in
// a list of several levels; asked alone it is refused here).
func (llamaCPP) CannotLoad(l quant.Level) string {
	if l.Native() == "fp8" {
		return "llama.cpp has no fp8 weight format"
	}
	return ""
}

// llamaCUDAFloor is the lowest compute capability llama.cpp's CUDA builds
// carry kernels for: with no CMAKE_CUDA_ARCHITECTURES given and a CUDA
// toolkit below 13 (the CUDA 12 builds llama.cpp publishes), its default
// architectures start at 50-virtual (Maxwell, "lowest CUDA 12 standard"),
// then 61-virtual and 70-virtual; a CUDA 13 build starts at 75-virtual
// (ggml/src/ggml-cuda/CMakeLists.txt lines 9-34 at ggml-org/llama.cpp
// 00a2d60921595ea66853568270b3060490040dea,
// https://github.com/ggml-org/llama.cpp/blob/00a2d60921595ea66853568270b3060490040dea/ggml/src/ggml-cuda/CMakeLists.txt#L9-L34).
// The planner follows the CUDA 12 builds; Kepler (3.x: the K80, the GT 640)
// is below every default, and CUDA 12 itself dropped it.
const llamaCUDAFloor capability = 50

// CannotRunDevice implements DeviceFloor: below llamaCUDAFloor no level
// runs, so the planner keeps such a GPU (a K80 beside H100s) out of the
// pool of those llama.cpp runs on, as it does under vLLM and SGLang,
// instead of letting it refuse every level for them.
func (llamaCPP) CannotRunDevice(d *registry.Device) string {
	cc, ok := cudaCapability(d)
	if !ok || cc >= llamaCUDAFloor {
		return ""
	}
	return fmt.Sprintf("llama.cpp's CUDA builds have no kernels below compute capability %s (default CMAKE_CUDA_ARCHITECTURES in ggml/src/ggml-cuda/CMakeLists.txt start at 50 with CUDA 12, 75 with CUDA 13); %s has %s",
		llamaCUDAFloor, deviceName(d), cc)
}

// CannotRunLevel implements LevelRule for llama.cpp's CUDA backend, which
// runs every GGUF weight type on any GPU it has kernels for
// (llamaCUDAFloor): its quantized matrix multiplication (MMQ) needs the
// __dp4a byte dot product, compute capability 6.1 (GGML_CUDA_CC_DP4A in
// ggml/src/ggml-cuda/common.cuh), and below that ggml_cuda_should_use_mmq
// (ggml/src/ggml-cuda/mmq.cu at 027ef8769913a5f665e287c5e1f13d9d633a9d57)
// answers false, so the weights are dequantized and multiplied by cuBLAS:
// slower, but every type runs, on a P100 (6.0) or a GTX 980 (5.2) as on a
// V100 (7.0) or a P40 (6.1), whose precision lists have no int4. fp16 and
// fp32 run everywhere above the floor. bf16 is left to the device's list
// (no source read here for BF16 matrix products before Ampere), fp8 to
// CannotLoad. Other backends (ROCm, Metal, Vulkan, SYCL, CPU) have no rule
// here: the device's precision list decides.
func (e llamaCPP) CannotRunLevel(d *registry.Device, _ *model.Model, l quant.Level) (string, bool) {
	if _, ok := cudaCapability(d); !ok {
		return "", false
	}
	if why := e.CannotRunDevice(d); why != "" {
		return why, true
	}
	switch {
	case l == quant.FP16, l == quant.FP32:
		return "", true
	case l.IsGGUF(), l.IsCheckpointFormat(), l == quant.INT8, l == quant.INT4:
		return "", true
	}
	return "", false
}

// Parallelism: llama.cpp splits layers over devices (--split-mode layer),
// not tensors; it runs the layers left in host memory on the CPU, keeps
// the first layers there (HostLayersFirst) and can keep only the routed
// experts there (--n-cpu-moe, --cpu-moe).
func (llamaCPP) Parallelism() Parallelism {
	return Parallelism{NoTensorWhy: "llama.cpp splits layers, not tensors, across devices", Instead: "engine " + NameVLLM, InsteadEngine: NameVLLM,
		OffloadOnHost: true, HostLayersFirst: true, ExpertsOnHost: true, ProcessPerReplica: true}
}

// Load is what llama.cpp loads: the GGUF type of the level, with the
// published GGUF repository and file when the catalog has one.
func (llamaCPP) Load(p *Placement) (*Load, string) {
	t := p.Level.GGUFType()
	if t == "" {
		return nil, ""
	}
	ld := &Load{Quant: string(p.Level), GGUFType: t, Method: "gguf"}
	// int8 and int4 planned for another engine's sake load the GGUF types
	// they mean here (Q8_0, Q4_K_M), published under those names.
	ck := checkpointFor(p.Model, p.Level.LlamaCPPLevel(), true)
	if ck != nil {
		ld.Repo, ld.File, ld.Source = ck.Repo, ck.File, ck.Source
		ld.Switch = releaseSwitch(p.Model, ck, p.Level.LlamaCPPLevel(), true)
	}
	// llama.cpp runs a GGUF file at the type it is stored in (no
	// conversion on load: llama-quantize writes another file), so given
	// weights of another level need the file of the plan's type.
	if need := givenWeightsNeed(p.Model, p.Level, false, ck); need != "" {
		if ck == nil {
			need = fmt.Sprintf("a GGUF file of this model of type %s (llama-quantize writes one)%s", t, need[strings.Index(need, ";"):])
		}
		ld.Needs = need
		return ld, "llama.cpp: needs " + need + "; serving the given weights would run them as stored"
	}
	return ld, ""
}

// llamaMaxSplit is how many --tensor-split entries llama.cpp accepts:
// fewer than llama_max_devices() (16), which common/arg.cpp checks with
// "got %d input configs, but system only has %d devices"
// (https://github.com/ggml-org/llama.cpp/blob/master/common/arg.cpp).
const llamaMaxSplit = 15

// Args are llama-server's flags for a plan: GPU layers, the layer split
// over devices or the main GPU, the total context of the slots and the slots,
// flash attention and the KV cache type; none for a multi-node plan, a
// tensor-parallel one or a split over more than llamaMaxSplit devices.
func (e llamaCPP) Args(p *Placement) ([]string, []string, bool) {
	if p.MultiNode {
		return nil, []string{"llama.cpp: a multi-node plan needs its RPC backend (--rpc); no flags are given"}, false
	}
	if p.TP > 1 {
		return nil, []string{"llama.cpp: this plan uses tensor parallelism, which llama.cpp does not do across devices; ask for engine llama.cpp to get a layer-split plan"}, false
	}
	var a, notes []string
	if p.DP > 1 {
		notes = append(notes, replicasNote(p))
	}
	gpuLayers := 0
	var split []string
	var last Stage
	for _, s := range p.Stages {
		if s.Devices[0].Dev.Kind == registry.KindCPU {
			continue
		}
		gpuLayers += s.End - s.Start
		split = append(split, strconv.Itoa(s.End-s.Start))
		last = s
	}
	moe := p.CPUMoE > 0 || p.CPUMoEPart > 0
	if len(split) > llamaMaxSplit {
		return nil, []string{fmt.Sprintf("llama.cpp: --tensor-split takes at most %d entries and this plan splits over %d devices; no flags are given", llamaMaxSplit, len(split))}, false
	}
	switch {
	case p.Kind == registry.KindCPU:
		gpuLayers = 0
	case !p.Offloaded || moe:
		// Every layer on the GPUs: llama.cpp counts the output layer as
		// layer n_layer, so all of them is n_layer + 1.
		gpuLayers = p.Layers + 1
	}
	a = append(a, "-ngl", strconv.Itoa(gpuLayers))
	if gpuLayers == p.Layers+1 && len(split) > 1 {
		// With -ngl n_layer+1 llama.cpp splits n_layer+1 slots (the
		// output layer is the last) by the --tensor-split fractions:
		// layer il goes to the first device whose cumulative share
		// exceeds il/(n_layer+1) (get_layer_buft_list in
		// src/llama-model.cpp of ggml-org/llama.cpp). Counting the output
		// on the last device makes each device's share exactly its
		// layers, as --fit writes them (common/fit.cpp); the layer counts
		// alone gave the first device one layer more than planned. With
		// fewer GPU layers the slots are those layers only and the
		// counts are already exact.
		split[len(split)-1] = strconv.Itoa(last.End - last.Start + 1)
	}
	if moe && p.Kind != registry.KindCPU {
		// --n-cpu-moe N keeps the expert tensors (ffn_*_exps) of the
		// first N layers in host memory (common/arg.cpp,
		// https://github.com/ggml-org/llama.cpp/pull/15077); -ot adds
		// to the same override list, so the two combine.
		if p.CPUMoE > max(p.Model.DenseLayers, 0) {
			a = append(a, "--n-cpu-moe", strconv.Itoa(p.CPUMoE))
		}
		if p.CPUMoEPart > 0 {
			a = append(a, "-ot", PartialExpertOverride(p.CPUMoE, p.CPUMoEPart))
		}
		notes = append(notes, cpuMoEOverride(p.CPUMoE, p.CPUMoEPart))
	}
	if p.AllExpertsOnHost && p.Kind != registry.KindCPU {
		// --cpu-moe keeps the expert tensors (ffn_*_exps) of every layer
		// in host memory, the same as -ot "exps=CPU" (common/arg.cpp,
		// added with --n-cpu-moe by
		// https://github.com/ggml-org/llama.cpp/pull/15077); -ngl K
		// already keeps the first layers' other weights there.
		a = append(a, "--cpu-moe")
		notes = append(notes, `llama.cpp builds without --cpu-moe take the same placement as -ot "exps=CPU"`)
	}
	if len(split) > 1 {
		a = append(a, "--split-mode", "layer", "--tensor-split", strings.Join(split, ","))
	} else if len(split) == 1 && p.Kind != registry.KindCPU {
		main := p.Stages[0].Devices[0].Dev.Index
		if p.DP > 1 || e.Env(p) != nil {
			// Each replica's server sees only its own device; a CUDA or
			// ROCm plan runs with CUDA_VISIBLE_DEVICES or
			// ROCR_VISIBLE_DEVICES listing its devices, which the process
			// numbers from 0 (Env).
			main = 0
		}
		a = append(a, "--split-mode", "none", "--main-gpu", strconv.Itoa(main))
	}
	// -c is the total context, n_ctx, and -np the slots, n_seq_max
	// (common/common.cpp: cparams.n_seq_max = params.n_parallel). With -np
	// given the KV cache is not unified (common/common.h: kv_unified =
	// false), so llama.cpp gives each slot its own stream of n_ctx / n_seq
	// cells, rounded up to 256 (src/llama-context.cpp: n_ctx_seq;
	// src/llama-kv-cache.cpp: n_stream = n_seq_max, each of n_ctx_seq
	// cells): -c is the planned context times the batch, every slot its
	// full planned context, the KV memory the batch's. -np is given for a
	// batch of one too: without it llama-server runs 4 slots sharing one
	// unified cache (tools/server/server.cpp: "n_parallel is set to auto,
	// using n_parallel = 4 and kv_unified = true"), where a sliding-window
	// model's cache holds 4 windows (src/llama-kv-cache-iswa.cpp:
	// n_swa * n_seq_max when unified) and a recurrent one 4 states
	// (src/llama-model.cpp: recurrent_rs_size = n_seq_max), not the plan's
	// one. All at ggml-org/llama.cpp 81ff7abe50b9 and 34af94cd, the builds
	// this library is calibrated on.
	a = append(a, e.ContextSetting(), strconv.Itoa(p.Context*p.Batch), e.SequencesSetting(), strconv.Itoa(max(p.Batch, 1)))
	switch {
	case p.NoFlashAttention && (llamaCPP{}).NeedsFlashAttention(p.KVCacheDType):
		// -fa off would be refused beside a quantized V cache
		// (NeedsFlashAttention); a request naming llama.cpp or its
		// cache types is refused before (plan.Validate), this is int8
		// under llama.cpp as the default engine. Its default, auto,
		// turns flash attention on instead (src/llama-context.cpp @
		// 34af94cd); the buffer stays sized without it, the larger.
		notes = append(notes, "llama.cpp: a quantized V cache needs flash attention, so -fa is left at auto, which turns it on (-fa off would be refused)")
	case p.NoFlashAttention:
		// -fa/--flash-attn takes on, off or auto (the default):
		// common/arg.cpp @ 145b6280,
		// https://github.com/ggml-org/llama.cpp/blob/145b6280d6aa1890e22457143dad0badb3fd6820/common/arg.cpp
		a = append(a, "-fa", "off")
	}
	switch k := p.KVCacheDType; {
	case k == "int8":
		a = append(a, "--cache-type-k", "q8_0", "--cache-type-v", "q8_0")
	case k == "fp8":
		// llama.cpp has no fp8 cache type (kv_cache_types in
		// common/arg.cpp); without a flag it allocates f16, nearly twice
		// the q8_0 cache the plan sized (KVRules), so it runs q8_0, as
		// int8 does.
		a = append(a, "--cache-type-k", "q8_0", "--cache-type-v", "q8_0")
		notes = append(notes, "llama.cpp has no fp8 KV cache: the command stores it as q8_0 (--cache-type-k q8_0 --cache-type-v q8_0), the nearest, and the plan sizes it so (34 bytes per 32 values)")
	case k == "bf16":
		// bf16 is one of llama.cpp's cache types (kv_cache_types in
		// common/arg.cpp @ 34af94cd); without the flags it allocates
		// f16, the same size but not the type the plan says. It is not a
		// quantized ggml type (ggml/src/ggml.c: is_quantized false), so
		// it needs no flash attention (src/llama-context.cpp checks
		// ggml_is_quantized(type_v)). The flash-attention kernels take
		// it (ggml-cuda/fattn.cu: ggml_cuda_fattn_kv_type_supported;
		// ggml-metal-device.m: on a GPU with bfloat; ggml-cpu/ops.cpp
		// through its bf16 vec_dot); where one does not, -fa auto turns
		// flash attention off (resolve_fused_ops, src/llama-context.cpp)
		// and the plain path's matrix products take bf16 (ggml-cuda.cu:
		// supports_op, GGML_OP_MUL_MAT).
		a = append(a, "--cache-type-k", "bf16", "--cache-type-v", "bf16")
	case slices.Contains(llamaCacheTypes, k):
		// The plan sized its cache at this type (CacheTypes); without the
		// flags llama-server allocates f16, its default.
		a = append(a, "--cache-type-k", k, "--cache-type-v", k)
	}
	if n := lowQualityNote(p.Level, p.OffloadFits, p.HostShared); n != "" {
		notes = append(notes, n)
	}
	ld, need := e.Load(p)
	ca, cn := companionArgs(p, ld)
	a, notes = append(a, ca...), append(notes, cn...)
	if p.Kind != registry.KindCPU {
		notes = append(notes, fitHandOff(p, a))
	}
	if l := p.Level; l.IsContract() && l != quant.FP16 && l != quant.BF16 && l != quant.FP32 {
		notes = append(notes, fmt.Sprintf("llama.cpp: %s means a GGUF of that width (int8 ~ Q8_0, int4 ~ Q4_K_M/Q4_0)", l))
	}
	if n := namedNotGGUFNote(p.Model, ld); n != "" {
		notes = append(notes, n)
	}
	if n := namedRepoLacksNote(p.Model, ld); n != "" {
		notes = append(notes, n)
	}
	if need != "" {
		notes = append(notes, need)
	} else if ld != nil && ld.Repo == "" {
		if n := unpublishedTypeNote(p.Model, p.Level, ld.GGUFType); n != "" {
			notes = append(notes, n)
		}
	}
	return a, notes, true
}

// namedNotGGUFNote says, when the request named a quantized Hugging Face
// checkpoint of m (Qwen/Qwen2.5-72B-Instruct-AWQ), that llama.cpp does not
// load it (it reads GGUF files only, tools/server/README.md of
// ggml-org/llama.cpp) and which GGUF the plan loads instead (ld), or that
// the catalog knows none of its type. "" when nothing, a GGUF repository
// or a 16-bit release was named: a catalog name resolves to its release
// (meta-llama/Llama-3.1-8B), which no one expects llama.cpp to load as is.
func namedNotGGUFNote(m *model.Model, ld *Load) string {
	i := m.NamedCheckpoint
	if ld == nil || i < 0 || i >= len(m.Checkpoints) || m.Checkpoints[i].IsGGUF() {
		return ""
	}
	named := m.Checkpoints[i]
	if l, err := quant.Parse(named.Quant); err != nil || isFloat(l) {
		return ""
	}
	format := named.Quant
	switch named.Method {
	case "":
	case "awq", "gptq", "fp8", "mxfp4":
		format = strings.ToUpper(named.Method)
	default:
		format = named.Method
	}
	head := fmt.Sprintf("llama.cpp: %s, the checkpoint named, is a Hugging Face %s checkpoint, which llama.cpp does not load", named.Repo, format)
	if ld.Repo != "" {
		return fmt.Sprintf("%s: it loads the %s GGUF of %s instead", head, ld.GGUFType, ld.Repo)
	}
	return fmt.Sprintf("%s: it loads a %s GGUF file, and the catalog knows none published of %s", head, ld.GGUFType, m.Name)
}

// namedGGUFRepo is the GGUF repository the request named (its first
// listed file, model.Model.NamedCheckpoint), nil when it named none.
func namedGGUFRepo(m *model.Model) *model.Checkpoint {
	i := m.NamedCheckpoint
	if i < 0 || i >= len(m.Checkpoints) || !m.Checkpoints[i].IsGGUF() {
		return nil
	}
	return &m.Checkpoints[i]
}

// namedRepoLacksNote says, when the request named a GGUF repository and
// the plan loads a file of another repository (ld: the catalog lists no
// file of the plan's type in the one named, and another repository of the
// release has one), which types the catalog knows in the repository named
// and whose file the plan loads instead. "" otherwise; a plan that finds
// no file of its type at all gets unpublishedTypeNote, which names the
// repository too.
func namedRepoLacksNote(m *model.Model, ld *Load) string {
	named := namedGGUFRepo(m)
	if named == nil || ld == nil || ld.Repo == "" || ld.Repo == named.Repo {
		return ""
	}
	own, _ := ggufTypesByRepo(m)
	var types []string
	for _, r := range own {
		if r.repo == named.Repo {
			types = r.types
		}
	}
	return fmt.Sprintf("llama.cpp: the catalog knows %s, the repository named, at %s, not %s: the plan loads the %s GGUF of %s instead",
		named.Repo, strings.Join(types, ", "), ld.GGUFType, ld.GGUFType, ld.Repo)
}

// unpublishedTypeNote says, for a model whose catalog entry lists GGUF
// repositories but none at type t, which types it lists and how to make t: a float type with convert_hf_to_gguf.py, a quantized
// one with llama-quantize from the 16-bit GGUF (quantizeCommand: an
// importance matrix where the level requires one, offered where it only
// improves the values, left out where it would change the file planned).
// Only the
// repositories a plan may load count (pickCheckpoint): those of the other
// release, whose config differs, are named as such, since they may well
// publish t (Qwen/Qwen2.5-32B-Instruct-GGUF for the base Qwen2.5-32B).
// "" for a model with no GGUF repository.
func unpublishedTypeNote(m *model.Model, l quant.Level, t string) string {
	own, other := ggufTypesByRepo(m)
	var head string
	switch {
	case len(own) > 0:
		// The catalog's list of a repository's types may be shorter
		// than the repository's (a listing read in part), so the note
		// says what the catalog knows, not what the repository lacks.
		var have []string
		named := namedGGUFRepo(m)
		for _, r := range own {
			what := r.repo
			if named != nil && r.repo == named.Repo {
				what += ", the repository named,"
			}
			have = append(have, fmt.Sprintf("%s at %s", what, strings.Join(r.types, ", ")))
		}
		head = fmt.Sprintf("llama.cpp: the catalog knows %s, not %s", strings.Join(have, "; "), t)
	case len(other) > 0:
		var repos []string
		for _, r := range other {
			repos = append(repos, r.repo)
		}
		what := "the GGUF repository"
		if len(repos) > 1 {
			what = "the GGUF repositories"
		}
		head = fmt.Sprintf("llama.cpp: the catalog knows no %s GGUF of this release; it knows %s, %s of the other release, whose config differs (name that release to plan it)",
			t, strings.Join(repos, ", "), what)
	default:
		return ""
	}
	name := m.Name
	if name == "" {
		name = "MODEL"
	}
	switch t {
	case "F32", "F16", "BF16":
		return fmt.Sprintf("%s: make the file with llama.cpp's convert_hf_to_gguf.py --outtype %s from the Hugging Face checkpoint and serve it with -m", head, strings.ToLower(t))
	}
	return fmt.Sprintf("%s: make the file with %s and serve it with -m", head, quantizeCommand(l, name, t))
}

// quantizeCommand is the llama-quantize line that writes level l (GGUF type
// t) of the model called name from its 16-bit GGUF, the file the plan sized:
// --pure for a plain type level (without it llama-quantize reads "Q4_K" as
// its Q4_K_M mix: QUANT_OPTIONS in tools/quantize/quantize.cpp), and an
// importance matrix as quant.ImatrixFor says it bears on the file.
func quantizeCommand(l quant.Level, name, t string) string {
	pure := ""
	if quant.IsPureType(l) {
		pure = "--pure "
	}
	cmd := fmt.Sprintf("llama-quantize %s%%s%s-F16.gguf %s-%s.gguf %s", pure, name, name, t, t)
	switch quant.ImatrixFor(l) {
	case quant.ImatrixRequired:
		return fmt.Sprintf(cmd, "--imatrix IMATRIX.gguf ") + fmt.Sprintf(" (from a 16-bit GGUF; llama-quantize refuses %s without an importance matrix, which llama-imatrix computes)", t)
	case quant.ImatrixOptional:
		return fmt.Sprintf(cmd, "") + " (from a 16-bit GGUF; --imatrix IMATRIX.gguf, which llama-imatrix computes, improves its quality at no larger size)"
	case quant.ImatrixGrows:
		raised := map[string]string{"Q4_0": "Q4_1", "Q5_0": "Q5_1"}[t]
		return fmt.Sprintf(cmd, "") + fmt.Sprintf(" (from a 16-bit GGUF, without --imatrix: with an importance matrix llama-quantize stores the ffn_down tensors of the first eighth of the layers as %s, a larger file than planned)", raised)
	}
	return fmt.Sprintf(cmd, "") + " (from a 16-bit GGUF; an importance matrix would change nothing: the type does not read one)"
}

// ggufRepo is a GGUF repository of a catalog entry and the GGUF types it
// publishes, in catalog order.
type ggufRepo struct {
	repo  string
	types []string
}

// ggufTypesByRepo lists m's GGUF repositories: own, those a plan may load
// (the named checkpoint's, the named release's, the other release's when
// the two share their config: pickCheckpoint's rule), and other, those of
// the other release whose config differs.
func ggufTypesByRepo(m *model.Model) (own, other []ggufRepo) {
	for i := range m.Checkpoints {
		ck := &m.Checkpoints[i]
		if !ck.IsGGUF() {
			continue
		}
		l, err := quant.Parse(ck.Quant)
		if err != nil {
			continue
		}
		list := &own
		if m.Releases.ConfigsDiffer && ck.Release != m.Releases.Named && !m.Named(i) {
			list = &other
		}
		*list = addGGUFType(*list, ck.Repo, l.GGUFType())
	}
	return own, other
}

// addGGUFType adds type t of repo to list.
func addGGUFType(list []ggufRepo, repo, t string) []ggufRepo {
	for i := range list {
		if list[i].repo == repo {
			list[i].types = append(list[i].types, t)
			return list
		}
	}
	return append(list, ggufRepo{repo: repo, types: []string{t}})
}

// GGUFFileMaker is the llama.cpp tool that writes a GGUF file of type t:
// convert_hf_to_gguf.py for the float types (from the Hugging Face
// checkpoint), llama-quantize for the others (from a 16-bit GGUF:
// tools/quantize/README.md of ggml-org/llama.cpp), as
// unpublishedTypeNote says.
func GGUFFileMaker(t string) string {
	switch t {
	case "F32", "F16", "BF16":
		return "convert_hf_to_gguf.py"
	}
	return "llama-quantize"
}

// companionArgs are llama-server's flags for the request's draft model and
// projector (common/arg.cpp of ggml-org/llama.cpp): -md FILE (or -hfd
// REPO:TYPE for a published GGUF) with -ngld all of its layers on the GPU
// (-ngld 0 on a CPU plan), and --mmproj FILE, with --no-mmproj-offload when
// the projector stays in host memory, or --no-mmproj for a multimodal model
// planned without one. A projector given by size is the one -hf downloads
// where the catalog knows the loaded checkpoint's (hfProjector); another
// companion with no file gets a placeholder and a note.
func companionArgs(p *Placement, ld *Load) ([]string, []string) {
	var a, notes []string
	if d := p.Draft; d != nil {
		t := d.Level.GGUFType()
		switch ck := checkpointFor(d.Model, d.Level, true); {
		case d.File != "":
			a = append(a, "-md", d.File)
		case ck != nil:
			a = append(a, hfArgs(Load{Repo: ck.Repo, File: ck.File, GGUFType: t}, "-hfd", "-md")...)
		default:
			name := d.Model.Name
			if name == "" {
				name = "DRAFT"
			}
			file := name + "-" + t + ".gguf"
			a = append(a, "-md", file)
			notes = append(notes, fmt.Sprintf("llama.cpp: no published GGUF of the draft model at %s is known; -md %s stands for one", t, file))
		}
		ngld := "99" // every layer, as -ngl counts them
		switch {
		case p.Kind == registry.KindCPU:
			ngld = "0"
		case d.Model.Layers > 0:
			ngld = strconv.Itoa(d.Model.Layers + 1)
		}
		a = append(a, "-ngld", ngld)
		notes = append(notes, "llama.cpp: the draft model's weights and KV cache (16-bit, the main context) are counted on the plan's first device")
	}
	if p.Projector == nil && p.Model != nil && p.Model.VisionParams > 0 {
		// -hf also fetches and loads the repository's mmproj when it holds
		// one ("mmproj is also downloaded automatically if available. to
		// disable, add --no-mmproj", -hf's help in common/arg.cpp of
		// ggml-org/llama.cpp): GPU memory this plan, made without
		// --mmproj, does not count.
		a = append(a, "--no-mmproj")
		notes = append(notes, "llama.cpp: --no-mmproj keeps the server text-only: -hf would also load the repository's vision projector (mmproj), which this plan does not count; plan with --mmproj FILE to count it and serve images")
	}
	if pr := p.Projector; pr != nil {
		switch mm := hfProjector(p.Model, ld); {
		case pr.File != "":
			a = append(a, "--mmproj", pr.File)
		case mm != "":
			notes = append(notes, fmt.Sprintf("llama.cpp: -hf also downloads the repository's vision projector and loads it (%s: llama.cpp takes the mmproj file whose type is nearest the weights', here %s beside %s weights), counted at the size given", mm, llamahf.Tag(mm), ld.GGUFType))
		default:
			notes = append(notes, "llama.cpp: the projector was given by size; --mmproj MMPROJ.gguf stands for its file")
			a = append(a, "--mmproj", "MMPROJ.gguf")
		}
		if pr.OnHost {
			a = append(a, "--no-mmproj-offload")
		}
	}
	return a, notes
}

// hfProjector is the vision projector file (mmproj) -hf downloads beside
// the weights the command loads: the MMProj of their checkpoint (the same
// repository and file, or type where the entry names no file), which the
// catalog records as llama.cpp's find_best_mmproj takes it
// (llamahf.PickProjector: the type nearest the weights', so a repository's
// Q4_K_M and Q8_0 weights may share the Q8_0 projector and its F16 weights
// take the F16 one); "" when the plan loads given weights (-m FILE) or the
// checkpoint names none. -hf fetches and loads a repository's mmproj by
// itself unless --no-mmproj, --mmproj or --mmproj-url is given:
// common_download_get_hf_plan in common/download.cpp and
// opts.download_mmproj in common/arg.cpp,
// https://github.com/unslothai/llama.cpp/blob/d32676d77426540327835040d5d3279728f0b4c8/common/download.cpp
// (synced from ggml-org/llama.cpp 82bb48500).
func hfProjector(m *model.Model, ld *Load) string {
	if m == nil || ld == nil || ld.Repo == "" || ld.Needs != "" || m.FileQuant != "" {
		return ""
	}
	for _, ck := range m.Checkpoints {
		if ck.IsGGUF() && ck.Repo == ld.Repo && ck.File == ld.File && (ld.File != "" || strings.EqualFold(ck.Quant, ld.Quant)) {
			return ck.MMProj
		}
	}
	return ""
}

// HostOffloadSettings implements HostOffloadNamer: -ngl for whole layers,
// -ngl K --cpu-moe for every expert, --n-cpu-moe N and -ot for the first
// layers' experts, the flags Args writes for them.
func (llamaCPP) HostOffloadSettings(o HostOffload) string {
	switch {
	case o.WholeLayers:
		return "-ngl"
	case o.AllExperts:
		return fmt.Sprintf("-ngl %d --cpu-moe", o.GPULayers)
	}
	var f []string
	if o.ExpertLayers > 0 {
		f = append(f, fmt.Sprintf("--n-cpu-moe %d", o.ExpertLayers))
	}
	if o.PartTensors > 0 {
		f = append(f, "-ot "+PartialExpertOverride(o.PartLayer, o.PartTensors))
	}
	return strings.Join(f, " ")
}

// HostOffloadAside implements HostOffloadNamer: --cpu-moe is -ot
// "exps=CPU" (common/arg.cpp, https://github.com/ggml-org/llama.cpp/pull/15077).
func (llamaCPP) HostOffloadAside(o HostOffload) string {
	if o.AllExperts {
		return `builds without --cpu-moe take -ot "exps=CPU"`
	}
	return ""
}

// cpuMoEOverride is the --override-tensor (-ot) form of --n-cpu-moe n, for
// llama.cpp builds older than the flag: the expert tensors of layers 0 to
// n-1 (blk.I.ffn_{up,down,gate}_exps) kept on the CPU buffer, and the part
// tensors of layer n a partial split keeps there too.
func cpuMoEOverride(n, part int) string {
	layers := make([]string, n)
	for i := range layers {
		layers[i] = strconv.Itoa(i)
	}
	ot := fmt.Sprintf(`-ot "blk\.(%s)\.ffn_(up|down|gate)_exps=CPU"`, strings.Join(layers, "|"))
	if part > 0 {
		ot += fmt.Sprintf(` -ot "%s"`, PartialExpertOverride(n, part))
	}
	return "llama.cpp builds without --n-cpu-moe take the same placement as " + ot
}

// PartialExpertOverride is the -ot value that keeps the first part (1 or 2)
// expert tensors of layer n on the CPU, in the order llama.cpp's --fit
// moves them out of a partly offloaded layer: ffn_down, then ffn_gate
// (LAYER_FRACTION_GATE and LAYER_FRACTION_UP in common/fit.cpp of
// ggml-org/llama.cpp @ 08033df0; its patterns also take the layer's shared
// expert, this one only the routed experts).
func PartialExpertOverride(n, part int) string {
	t := "down"
	if part >= 2 {
		t = "(gate|down)"
	}
	return fmt.Sprintf(`blk\.%d\.ffn_%s_exps=CPU`, n, t)
}

// fitHandOff is the hand-off form of a GPU plan whose command is args: the
// same launch with llama.cpp's own --fit placing the layers and choosing
// the context from its allocator (flags --fit, --fit-target in MiB per
// device, --fit-ctx, common/arg.cpp of https://github.com/ggml-org/llama.cpp).
// It names every flag to drop with which --fit gives up instead
// (common_params_fit_impl in common/fit.cpp of unslothai/llama.cpp at
// 34af94cd: "n_gpu_layers already set by user", "tensor_split already set
// by user", "tensor_buft_overrides already set by user", each "abort"):
// -ngl, of a MoE offload plan the overrides that keep experts on the host
// (fitAbortFlags), which --fit writes itself, and --tensor-split where
// the command has it: --fit checks the split only with more than one
// device ("if (nd > 1)", lines 380-394 there), and a one-GPU command has
// --split-mode none and no split to replace.
func fitHandOff(p *Placement, args []string) string {
	drop := []string{"-ngl"}
	for _, f := range fitAbortFlags {
		if slices.Contains(args, f) {
			drop = append(drop, f)
		}
	}
	return fmt.Sprintf("llama.cpp can finish this placement with its own allocator: replace %s and -c with --fit on --fit-target %s --fit-ctx %d",
		strings.Join(drop, ", "), fitTarget(p), fitContextFloor(p.Batch))
}

// fitAbortFlags are llama-server's flags beside -ngl with which --fit
// aborts where the command has them: those that add to its tensor buffer
// overrides (params.tensor_buft_overrides: --n-cpu-moe, --cpu-moe and
// -ot/--override-tensor in common/arg.cpp of unslothai/llama.cpp at
// 34af94cd) and --tensor-split.
var fitAbortFlags = []string{"--n-cpu-moe", "--cpu-moe", "-ot", "--tensor-split"}

// fitTarget is --fit-target for the hand-off, in MiB: the margin, or per
// device (FitTargetBytes) what the plan leaves free of it, rounded up so
// that --fit places no more than the plan did; one value where the devices
// agree (llama.cpp broadcasts it), else one per device in the order of
// --tensor-split ("MiB0,MiB1,...", common/arg.cpp of ggml-org/llama.cpp
// @ 34af94cd). Without it, a plan made within a memory fraction handed
// --fit the 1 GiB margin and so the whole device.
func fitTarget(p *Placement) string {
	if len(p.FitTargetBytes) == 0 {
		return strconv.FormatInt(p.Memory.MarginBytes>>20, 10)
	}
	mib := make([]string, len(p.FitTargetBytes))
	same := true
	for i, b := range p.FitTargetBytes {
		mib[i] = strconv.FormatInt((b+(1<<20)-1)>>20, 10)
		same = same && mib[i] == mib[0]
	}
	if same {
		return mib[0]
	}
	return strings.Join(mib, ",")
}

// fitContextFloor is the --fit-ctx that keeps llama.cpp's --fit from
// reducing the context below the planned floor (llamaFitMinContext tokens
// a sequence) with batch slots: --fit-ctx bounds the total context n_ctx,
// which the slots divide (common_params_fit_impl compares it with the
// whole n_ctx: common/fit.cpp @ 34af94cd, lines 310-331), so it is the
// floor times the slots.
func fitContextFloor(batch int) int {
	return llamaFitMinContext * max(batch, 1)
}

// replicasNote says how to run a data-parallel plan with llama.cpp, which
// has no data-parallel mode: one server per replica.
func replicasNote(p *Placement) string {
	var per []string
	named := true
	for i, r := range p.Replicas {
		var ids []string
		var devs []*registry.Device
		for _, s := range r {
			for _, d := range s.Devices {
				ids = append(ids, d.ID)
				if d.Dev != nil && d.Dev.Kind == p.Kind {
					devs = append(devs, d.Dev)
				}
			}
		}
		line := fmt.Sprintf("%d on %s", i, strings.Join(ids, ","))
		if env := replicaEnv(p.Kind, devs); env != nil {
			line += " (" + envWords(env) + ")"
		} else {
			named = false
		}
		per = append(per, line)
	}
	how := "each seeing only its replica's devices (its visibility variable, e.g. CUDA_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES)"
	if named {
		// The variables of the plan's own single-process command
		// (visibleDevicesEnv), one replica's devices each.
		how = "each seeing only its replica's devices (the variables given)"
	}
	return fmt.Sprintf("llama.cpp has no data-parallel mode: run %d llama-server processes, one per replica (%s), %s with these flags, behind a load balancer",
		p.DP, strings.Join(per, "; "), how)
}

// replicaEnv is the visibility variables of one replica's devices, by the
// rules of visibleDevicesEnv (cudaEnv, rocmEnv); nil where they cannot be
// named or the kind has none.
func replicaEnv(kind registry.Kind, devs []*registry.Device) map[string]string {
	switch kind {
	case registry.KindCUDA:
		return cudaEnvOf(devs)
	case registry.KindROCm:
		return rocmEnvOf(devs)
	}
	return nil
}

// Env: the plan's GPUs made visible in placement order
// (visibleDevicesEnv); nil for a plan with replicas, which runs one
// process per replica.
func (llamaCPP) Env(p *Placement) map[string]string {
	if p.DP > 1 {
		return nil
	}
	return visibleDevicesEnv(p)
}

// StartNotes implements Engine: none.
func (llamaCPP) StartNotes(*Placement) []string { return nil }

// Command is `llama-server -m FILE` for the file the user gave, else
// `llama-server -hf REPO[:TYPE]` for a published GGUF (llama.cpp
// tools/server/README.md); nil when neither is known: no placeholder file
// a user would copy.
func (llamaCPP) Command(s Served) []string {
	switch {
	case s.Load.Needs != "" && s.Load.Repo == "":
		return nil // no published file runs the plan (Load.Needs)
	case s.File != "" && s.Load.Needs == "":
		return []string{"llama-server", "-m", s.File}
	case s.Load.Repo != "":
		return append([]string{"llama-server"}, hfArgs(s.Load, "-hf", "--hf-file")...)
	}
	return nil
}

// hfArgs are llama.cpp's flags that download ld's GGUF file: repo, the
// -hf (or -hfd) flag, with ":TYPE" when that type picks the file
// (typePicksFile) or the catalog names no file (a repository of one file
// per type); else the repository with file, the flag that names the file
// (--hf-file; -md for the draft, which names the file to fetch from
// -hfd's repository: "will be used if --spec-draft-hf is set", common/arg.cpp).
// -hf REPO:TYPE picks the first model file whose path matches TYPE
// followed by "." or "-", case-insensitive, and a bare -hf REPO fetches
// Q4_K_M, else Q8_0, else the first file (find_best_model in
// common/download.cpp), so a file named without its type
// (Phi-3-mini-4k-instruct-q4.gguf) needs its name. Sources:
// common/arg.cpp and common/download.cpp of ggml-org/llama.cpp as synced
// at 82bb48500 (https://github.com/unslothai/llama.cpp/blob/d32676d77426540327835040d5d3279728f0b4c8/common/download.cpp),
// the same rule at ggml-org/llama.cpp@ec026579.
func hfArgs(ld Load, repo, file string) []string {
	if t := ld.GGUFType; t != "" && (ld.File == "" || typePicksFile(t, ld.File)) {
		return []string{repo, ld.Repo + ":" + t}
	}
	if ld.File == "" {
		return []string{repo, ld.Repo}
	}
	return []string{repo, ld.Repo, file, ld.File}
}

// typeSuffixOf maps a GGUF type name to the one that ends with it: a
// "-hf REPO:F16" also matches "...-BF16.gguf" (its pattern is not
// anchored), which sorts before "...-F16.gguf". These are the pairs among
// the type names llama-quantize writes (QUANT_OPTIONS in
// tools/quantize/quantize.cpp of llama.cpp, at the commit hfArgs cites).
var typeSuffixOf = map[string]string{"F16": "BF16", "Q1_0": "TQ1_0", "Q2_0": "TQ2_0"}

// typePicksFile reports whether "-hf REPO:t" picks file (a file name, or
// the folder of a split file, which llama.cpp's listing shows with its
// path, its parts named with "-" after the type) whatever other files the
// repository holds: file matches t by llama.cpp's rule (llamahf.Matches),
// t stands there as a type name of its own (not the tail of a longer one,
// as Q4_XS in IQ4_XS), and no other type's files can match t too
// (typeSuffixOf).
func typePicksFile(t, file string) bool {
	if _, ok := typeSuffixOf[t]; ok {
		return false
	}
	if !strings.HasSuffix(strings.ToLower(file), ".gguf") {
		file += "-"
	}
	return llamahf.Matches(t, file) && startsTypeName(t, file)
}

// startsTypeName reports whether t occurs in name at its start or after a
// character that is neither a letter nor a digit, in any case.
func startsTypeName(t, name string) bool {
	lt, ln := strings.ToLower(t), strings.ToLower(name)
	for i := strings.Index(ln, lt); i >= 0; {
		if i == 0 || !isAlnum(ln[i-1]) {
			return true
		}
		j := strings.Index(ln[i+1:], lt)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

func isAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// SpeedModel implements SpeedModeled: llama.cpp's runs are the speed
// rows.
func (llamaCPP) SpeedModel() SpeedModel { return SpeedKernels }

// ContextSetting implements CommandContextNamer: -c, the context every
// -np slot shares (Args).
func (llamaCPP) ContextSetting() string { return "-c" }

// SequencesSetting implements CommandContextNamer: -np, the slots -c is
// split over.
func (llamaCPP) SequencesSetting() string { return "-np" }

// SpeedRows implements SpeedRowsNamer: the rows of
// internal/calibration/data/offload_decode.json ran llama-server and
// llama-bench with -ngl below the layer count (whole layers on the CPU)
// and --n-cpu-moe (the first layers' routed experts), the flags Args
// writes for those placements; none keeps part of one layer's experts on
// the CPU, which Args writes as -ot (PartialExpertOverride).
func (llamaCPP) SpeedRows() SpeedRows {
	return SpeedRows{ExpertsOnHost: "--n-cpu-moe", LayersOnHost: "-ngl", PartOfLayerExperts: "-ot"}
}
