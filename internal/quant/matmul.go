package quant

import (
	"slices"
	"sync"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// TypeWeights is a count of weights stored in one ggml type.
type TypeWeights struct {
	Type    ggml.Type
	Weights float64
}

// MatmulWeights is what one decode step of a model at one level multiplies,
// by the type each tensor is stored in: a CPU's matrix-vector kernels run
// at a rate per type (llama.cpp's vec_dot of each type), so a file whose
// tensors fell back from Q4_K to Q5_0 (tensor_type_fallback) decodes at
// Q5_0's rate, not Q4_K's (data/host_harness.json of internal/calibration).
// Layers is sorted by type, so that sums over it add in the same order
// every time.
type MatmulWeights struct {
	// Layers are the matrices of the layer stack; a MoE layer's routed
	// experts count at the share a token uses (ExpertsPerToken of
	// Experts). Norms and the router (F32 vectors and a small matrix) are
	// left out.
	Layers []TypeWeights
	// Head is the output matrix (the token embedding where the model ties
	// them); the input embedding is a lookup and is not multiplied. Zero
	// where the tensors are not enumerated.
	Head TypeWeights
}

// MatmulTypes is m's MatmulWeights at level l: with m's shape, tensor by
// tensor at the type ggufTensorType gives it (a mix's per-tensor rules and
// the row fallback), or at the level's width for fp32, fp16 and bf16;
// otherwise (no shape, or a level that is not llama.cpp's per-tensor
// typing: fp8, int8, int4, MXFP4) every weight at the level's own type
// (StoredType), counted as one weight, for its share only. false for an
// unknown level.
func MatmulTypes(m *model.Model, l Level) (MatmulWeights, bool) {
	k := matmulKey{level: l}
	if m != nil {
		k.shape = shapeOf(m)
	}
	matmulMemo.RLock()
	v, ok := matmulMemo.m[k]
	matmulMemo.RUnlock()
	if ok {
		return v.w, v.ok
	}
	w, ok := matmulTypes(m, l)
	matmulMemo.Lock()
	if matmulMemo.m == nil || len(matmulMemo.m) >= maxRemembered {
		matmulMemo.m = map[matmulKey]matmulAnswer{}
	}
	matmulMemo.m[k] = matmulAnswer{w, ok}
	matmulMemo.Unlock()
	return w, ok
}

// matmulKey and matmulMemo remember MatmulTypes per shape and level as
// weights_cache.go remembers WeightsBytes: a CPU plan's estimate asks it
// for every layout the placement weighs, and the walk is over every
// tensor.
type matmulKey struct {
	shape shapeKey
	level Level
}

type matmulAnswer struct {
	w  MatmulWeights
	ok bool
}

var matmulMemo struct {
	sync.RWMutex
	m map[matmulKey]matmulAnswer
}

// matmulTypes is MatmulTypes without the memo.
func matmulTypes(m *model.Model, l Level) (MatmulWeights, bool) {
	var mw MatmulWeights
	base, ok := StoredType(l)
	if !ok {
		return mw, false
	}
	var info levelInfo
	perTensor := hasShape(m) && (!l.IsContract() || l == FP32 || l == FP16 || l == BF16)
	if perTensor {
		info, ok = levelFor(m, l)
		perTensor = ok && !info.format
	}
	if !perTensor {
		mw.Layers = []TypeWeights{{base, 1}}
		return mw, true
	}
	ts, _ := tensors(m)
	active := 1.0
	if m.IsMoE() && m.Experts > 0 && m.ExpertsPerToken > 0 {
		active = float64(m.ExpertsPerToken) / float64(m.Experts)
	}
	counts := map[ggml.Type]float64{}
	for _, t := range ts {
		if t.cat == catF32 || (t.cat == catTokenEmbd && !m.TieEmbeddings) {
			continue
		}
		typ := base
		if !l.IsContract() {
			typ = ggufTensorType(m, info, t)
		}
		if t.cat == catTokenEmbd || t.cat == catOutput {
			mw.Head = TypeWeights{typ, t.elements}
			continue
		}
		n := t.elements
		if t.part == partRoutedExperts {
			n *= active
		}
		counts[typ] += n
	}
	for typ, n := range counts {
		mw.Layers = append(mw.Layers, TypeWeights{typ, n})
	}
	slices.SortFunc(mw.Layers, func(a, b TypeWeights) int { return int(a.Type) - int(b.Type) })
	return mw, true
}

// StoredType is the ggml type most of level l's weights are stored in: a
// plain GGUF type itself, a llama.cpp mix its base type (q4_k_m: Q4_K),
// fp32, fp16 and bf16 their float type, int8 and int4 the GGUF types
// llama.cpp loads for them (Q8_0; Q4_K_M's Q4_K), fp8 F16 (llama.cpp has
// no fp8 weight type; a float kernel), MXFP4 MXFP4. false for an unknown
// level.
func StoredType(l Level) (ggml.Type, bool) {
	switch l {
	case FP32:
		return ggml.F32, true
	case FP16, FP8:
		return ggml.F16, true
	case BF16:
		return ggml.BF16, true
	case INT8:
		return ggml.Q8_0, true
	case INT4:
		return ggml.Q4_K, true
	}
	info, ok := lookup(l)
	if !ok {
		return 0, false
	}
	return info.typ, true
}

// PureLevel is the level of a GGUF whose every matrix is stored in type t
// (llama-quantize --pure: llama_model_quantize_params.pure, no per-tensor
// rules; tensor_type_fallback still applies): fp32, fp16 or bf16 for the
// float types, otherwise the ggml type by its ggml name ("Q5_0"), which
// lookup reads as the plain type. Parse lowercases what users type, and
// the lowercase name of a type that is also a mix ("q5_0", "q6_k") is the
// mix, as llama-quantize's Q5_0 is: a pure file is what the CPU harness
// measures one type's kernel on (internal/calibration/data/host_harness.json),
// not a file people download. false for a type that stores no weights.
func PureLevel(t ggml.Type) (Level, bool) {
	switch t {
	case ggml.F32:
		return FP32, true
	case ggml.F16:
		return FP16, true
	case ggml.BF16:
		return BF16, true
	}
	if !t.IsWeightFormat() {
		return "", false
	}
	return Level(t.String()), true
}
