// Package quant knows the precisions a model can be stored in, what each
// costs in bytes, and the inference memory model: weights, KV cache,
// working buffers and runtime overhead per device (docs/accuracy.md).
package quant

import (
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
)

// Level is a storage precision: a contract level (fp32 ... int4) or a GGUF
// quantization type or mix (q4_k_m ...). Lower case on the wire.
type Level string

// Contract levels: the contract's precision names (internal/precision).
const (
	FP32 = Level(precision.FP32)
	BF16 = Level(precision.BF16)
	FP16 = Level(precision.FP16)
	FP8  = Level(precision.FP8)
	INT8 = Level(precision.INT8)
	INT4 = Level(precision.INT4)
)

// MXFP4 is a checkpoint format, not a contract level: the OCP
// microscaling FP4 of OpenAI's gpt-oss checkpoints, in which the MoE expert
// weights are blocks of 32 E2M1 values sharing one E8M0 scale (4.25 bits
// per weight) and every other tensor (attention, router, embeddings, head)
// stays BF16 (gpt-oss model card, arXiv 2508.10925, section 2,
// https://arxiv.org/abs/2508.10925; OCP MX v1.0,
// https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf).
// In a dense model it applies to the linear layers. Engines run it as a
// 4-bit weight format dequantized in the kernels, so its device capability
// is int4 like GGUF's 4-bit types: vLLM's MXFP4 MoE kernels (weight-only,
// https://docs.vllm.ai/projects/recipes/en/latest/OpenAI/GPT-OSS.html) and
// llama.cpp, which stores the same split as GGUF type MXFP4_MOE and runs it
// on every backend (CUDA, Metal, Vulkan, CPU).
const MXFP4 Level = "mxfp4"

// levelInfo describes one level: its storage cost over the quantized
// tensors, and the native precision a device must offer to run it.
type levelInfo struct {
	bits   float64 // bits per weight of the level's base type, scales included
	native precision.Name
	// typ is the ggml type of a GGUF level (a mix's base type); isMix and
	// mix, for llama.cpp mixes, name the rule set that raises some tensors
	// to higher types (see mix.go).
	typ   ggml.Type
	isMix bool
	mix   ggml.FileType
	// format: a checkpoint format (MXFP4) with its own per-tensor rule
	// (tensorBits), neither a contract level nor a llama.cpp mix.
	format bool
	// raisedDown, set by levelFor for one model, is how many leading
	// layers have their ffn_down raised by a lowBitIQ mix
	// (raisedFFNDownLayers); lookup leaves it 0.
	raisedDown int
}

// Contract levels store every weight at the level's width. int4 is the
// packed 4-bit storage of GPTQ/AWQ-style kernels; their per-group fp16
// scales (group 128: 16/128 = 0.125 bit) are counted, as are int8's
// per-channel scales (negligible, not counted).
var levels = map[Level]levelInfo{
	FP32: {bits: 32, native: precision.FP32},
	BF16: {bits: 16, native: precision.BF16},
	FP16: {bits: 16, native: precision.FP16},
	FP8:  {bits: 8, native: precision.FP8},
	INT8: {bits: 8, native: precision.INT8},
	INT4: {bits: 4.125, native: precision.INT4},
}

// contractOrder is the contract levels in quality order, best first.
var contractOrder = []Level{FP32, BF16, FP16, FP8, INT8, INT4}

// Levels returns the contract levels in quality order, best first.
func Levels() []Level { return append([]Level(nil), contractOrder...) }

// Parse reads a level name in any case: a contract level, a ggml tensor
// type ("q8_0", "q6_k", "iq4_xs") or a llama.cpp quantization mix
// ("q4_k_m"). "f16"/"f32"/"bf16" GGUF spellings map to contract levels.
func Parse(s string) (Level, error) {
	l := Level(strings.ToLower(strings.TrimSpace(s)))
	switch l {
	case "f32", "float32":
		return FP32, nil
	case "f16", "float16", "half":
		return FP16, nil
	case "bfloat16":
		return BF16, nil
	}
	if _, ok := lookup(l); ok {
		return l, nil
	}
	known := knownNames()
	if near := closestName(string(l), known); near != "" {
		return "", errs.New(errs.InvalidArgument, "unknown quantization %q; did you mean %s? (known: %s)", s, near, strings.Join(known, ", "))
	}
	return "", errs.New(errs.InvalidArgument, "unknown quantization %q (known: %s)", s, strings.Join(known, ", "))
}

// closestName is the known level name nearest to a mistyped one, "" when
// none is within two edits: compared without '_' and '-', so that a GGUF
// type written as ollama tags and file names often spell it ("q4km",
// "Q4-K-M") finds q4_k_m.
func closestName(typed string, known []string) string {
	bare := func(s string) string { return strings.NewReplacer("_", "", "-", "", ".", "").Replace(s) }
	t := bare(typed)
	best, bestD := "", 3
	for _, k := range known {
		if d := model.EditDistance(t, bare(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// lookup returns the description of a level: contract levels, mixes, then
// plain ggml types that store weights (by the lowercase name where no mix
// has it, "q4_k", or by the ggml name, "Q5_0": PureLevel).
func lookup(l Level) (levelInfo, bool) {
	if i, ok := levels[l]; ok {
		return i, true
	}
	if l == MXFP4 {
		return levelInfo{bits: ggml.MXFP4.BitsPerWeight(), native: nativeForBits(ggml.MXFP4.BitsPerWeight()), typ: ggml.MXFP4, format: true}, true
	}
	if ft, ok := mixes[l]; ok {
		base, _ := ft.Base()
		b := base.BitsPerWeight()
		return levelInfo{bits: b, native: nativeForBits(b), typ: base, isMix: true, mix: ft}, true
	}
	if t, ok := ggml.ParseType(string(l)); ok && t.IsWeightFormat() {
		b := t.BitsPerWeight()
		return levelInfo{bits: b, native: nativeForBits(b), typ: t}, true
	}
	return levelInfo{}, false
}

// levelFor is lookup(l) with the model-specific part of a lowBitIQ mix
// filled in (raisedDown), computed once per model and level rather than per
// tensor: per tensor it was quadratic in the depth, minutes for a hostile
// 60000-layer request (TestHostileShapesAreBounded in internal/plan).
func levelFor(m *model.Model, l Level) (levelInfo, bool) {
	info, ok := lookup(l)
	if ok && info.isMix && lowBitIQ(info.mix) {
		info.raisedDown = raisedFFNDownLayers(m)
	}
	return info, ok
}

// nativeForBits maps a GGUF block type to the device precision its kernels
// need: up to 4.5 bits per weight is a 4-bit format, above that up to 8.5
// an 8-bit one (llama.cpp dequantizes to, or dots in, int8).
func nativeForBits(b float64) precision.Name {
	if b <= 4.5 {
		return precision.INT4
	}
	return precision.INT8
}

func knownNames() []string {
	var out []string
	for _, l := range contractOrder {
		out = append(out, string(l))
	}
	var ggufs []string
	for l := range mixes {
		ggufs = append(ggufs, string(l))
	}
	ggufs = append(ggufs, "q4_k", "q5_k", "q3_k", "mxfp4")
	sort.Strings(ggufs)
	return append(out, ggufs...)
}

// BitsPerWeight is the average storage cost of one weight at this level
// over a whole model, block scales included: the type's bits for a uniform
// level, and for a llama.cpp mix the figure its per-tensor rules give on the
// reference model (mix.go, ReferenceModel). WeightsBytes is more precise
// when the model's shape is known. 0 for an unknown level.
func (l Level) BitsPerWeight() float64 {
	info, ok := lookup(l)
	if !ok {
		return 0
	}
	if info.isMix {
		return effectiveBits(l)
	}
	return info.bits
}

// Native is the device-capability precision the level needs: one of fp32,
// fp16, bf16, fp8, int8, int4; "" for an unknown level.
func (l Level) Native() string {
	info, _ := lookup(l)
	return string(info.native)
}

// IsContract reports whether l is one of the six contract levels.
func (l Level) IsContract() bool { _, ok := levels[l]; return ok }

// IsGGUF reports whether l is a GGUF type or mix rather than a contract
// level or a checkpoint format.
func (l Level) IsGGUF() bool {
	info, ok := lookup(l)
	return ok && !l.IsContract() && !info.format
}

// IsCheckpointFormat reports whether l is a published checkpoint format
// with its own tensor rule (MXFP4).
func (l Level) IsCheckpointFormat() bool {
	info, ok := lookup(l)
	return ok && info.format
}

// GGUFType is the GGUF file type (llama-quantize's name) that stores a
// model at level l for llama.cpp: the mix or type itself for a GGUF level;
// for a contract level the type llama.cpp users mean by it: int8 is Q8_0
// (8.5 bits), int4 is Q4_K_M (the default 4-bit mix of llama-quantize's
// table, tools/quantize/README.md of ggml-org/llama.cpp,
// https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/README.md),
// 16/32-bit levels their float types; MXFP4_MOE for gpt-oss's format. ""
// where llama.cpp has no such type (fp8).
func (l Level) GGUFType() string {
	switch l {
	case FP32:
		return "F32"
	case FP16:
		return "F16"
	case BF16:
		return "BF16"
	case INT8:
		return "Q8_0"
	case INT4:
		return "Q4_K_M"
	case MXFP4:
		return ggml.MostlyMXFP4MoE.String()
	}
	info, ok := lookup(l)
	if !ok || l.IsContract() {
		return ""
	}
	if info.isMix {
		return info.mix.String()
	}
	return info.typ.String()
}

// LlamaCPPLevel is the GGUF level llama.cpp runs for level l: int8 and int4
// become the GGUF types they mean there (GGUFType: q8_0, q4_k_m), sized by
// that type's per-tensor rules; other levels are themselves.
func (l Level) LlamaCPPLevel() Level {
	switch l {
	case INT8:
		return "q8_0"
	case INT4:
		return "q4_k_m"
	}
	return l
}
