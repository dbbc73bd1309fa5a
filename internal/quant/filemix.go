// Where a GGUF file made by other rules than mainline llama.cpp's holds
// the bytes it has beyond the derived weights (FileExtraBytes): in the
// routed experts, which llama.cpp's --n-cpu-moe keeps in host memory, or in
// the rest, which stays on the GPU.

package quant

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// What a checkpoint's size_mix_experts says of its routed experts
// (model.Checkpoint.SizeMixExperts).
const (
	// MixExpertsMainline: the file's rules type the routed experts as
	// mainline llama.cpp's mix of the type does; the extra lies elsewhere.
	MixExpertsMainline = "mainline"
	// MixExpertsQuantTypes: bartowski's quant_types branch of llama.cpp
	// types them (quantTypesExpertType).
	MixExpertsQuantTypes = "quant_types"
)

// FileRoutedExperts is the routed experts of the GGUF file ck of m at level
// l where the file is larger than the weights derived (FileExtraBytes > 0),
// sized by where the rules that made it put the extra:
//
//   - size_mix_experts "mainline" or "quant_types": the experts at the
//     types those rules give them, the rest of the extra in the other
//     tensors;
//   - else size_mix_other, the type the rules give every other tensor (a
//     publisher's "signal path"): the other tensors at that mix's types, the
//     rest of the extra in the experts;
//   - else (the rules not known by part) the extra in proportion to the
//     derived bytes of the experts and of the rest.
//
// Where the experts take a share of the extra without known types (the
// last two cases) every layer's experts grow by the same factor. false for
// a file of mainline's rules, a dense model, or a level no mix replays.
func FileRoutedExperts(m *model.Model, l Level, ck model.Checkpoint) (RoutedExperts, bool) {
	extra := FileExtraBytes(m, l, ck)
	if extra <= 0 {
		return RoutedExperts{}, false
	}
	derived, ok := RoutedExpertBytes(m, l)
	if !ok {
		return RoutedExperts{}, false
	}
	switch ck.SizeMixExperts {
	case MixExpertsMainline:
		return derived, true
	case MixExpertsQuantTypes:
		return quantTypesExperts(m, l)
	}
	weights := float64(WeightsBytes(m, l))
	expertExtra := float64(extra) * derived.Total() / weights
	if o := Level(ck.SizeMixOther); o != "" {
		if oe, ok := RoutedExpertBytes(m, o); ok {
			otherExtra := float64(WeightsBytes(m, o)) - oe.Total() - (weights - derived.Total())
			expertExtra = float64(extra) - min(max(otherExtra, 0), float64(extra))
		}
	}
	return derived.scaled((derived.Total() + expertExtra) / derived.Total()), true
}

// scaled is r with every tensor's bytes times f.
func (r RoutedExperts) scaled(f float64) RoutedExperts {
	s := RoutedExperts{Gate: r.Gate * f, Up: r.Up * f, Down: r.Down * f, Repacked: r.Repacked * f, ByLayer: make([]LayerExperts, len(r.ByLayer))}
	for i, l := range r.ByLayer {
		s.ByLayer[i] = LayerExperts{Gate: l.Gate * f, Up: l.Up * f, Down: l.Down * f}
	}
	return s
}

// quantTypesExperts is m's routed experts at mix l as the quant_types
// branch of bartowski1182/llama.cpp types them (src/llama-quant.cpp at
// 0af41bf15, llama_tensor_get_type_impl; proposed as ggml-org/llama.cpp
// PR 12727, not merged): see quantTypesExpertType. false for a level that
// is not a llama.cpp mix.
func quantTypesExperts(m *model.Model, l Level) (RoutedExperts, bool) {
	var r RoutedExperts
	info, ok := levelFor(m, l)
	if !ok || !info.isMix || !m.IsMoE() || m.Layers <= 0 {
		return r, false
	}
	in, inter := routedDims(m)
	e, h, I := float64(m.Experts), float64(in), float64(inter)
	var moe []int
	for i := max(m.DenseLayers, 0); i < m.Layers; i++ {
		if f := m.LayerAt(i).FFN; f != model.FFNNone && f != model.FFNDense {
			moe = append(moe, i)
		}
	}
	r.ByLayer = make([]LayerExperts, m.Layers)
	at := func(t ggml.Type, elements float64, cols, rows int) float64 {
		t = fallback(t, cols)
		b := elements * t.BitsPerWeight() / 8
		if RepacksOnCPU(t, rows) {
			r.Repacked += b
		}
		return b
	}
	for j, i := range moe {
		x := &r.ByLayer[i]
		x.Up = at(info.typ, e*h*I, in, inter)
		x.Down = at(quantTypesExpertType(info.mix, info.typ, j, len(moe)), e*I*h, inter, in)
		if !plainMLP(m) {
			x.Gate = at(info.typ, e*h*I, in, inter)
		}
		r.Up += x.Up
		r.Down += x.Down
		r.Gate += x.Gate
	}
	return r, r.Total() > 0
}

// quantTypesExpertType is the type the quant_types branch (0af41bf15)
// gives the ffn_down_exps tensor that is the j-th of n in the file, for
// mix ft of base type base. ffn_gate_exps and ffn_up_exps fall in
// categories no rule of the branch names (FFN_GATE_EXPS, FFN_UP_EXPS) and
// keep the base type. The low-bit IQ mixes raise the first and last eighth
// (get_exps_type_low_bpw_bump); the others raise use_more_bits of the
// index among the ffn_down_exps tensors, not of the layer
// (get_exps_type_high_bpw_bump; Q4_0/Q5_0 with an importance matrix go to
// Q4_1/Q5_1 instead, not replayed: no such file is in the catalog). The
// branch at a312ac950 (December 2025) has the same rule for the K-quant
// mixes Q4_K_M and Q5_K_M, and lacks Q6_K's raise to Q8_0.
func quantTypesExpertType(ft ggml.FileType, base ggml.Type, j, n int) ggml.Type {
	if lowBitIQ(ft) {
		if j < n/8 || j > 7*n/8 {
			switch ft {
			case ggml.MostlyIQ2_M:
				return ggml.IQ3_S
			case ggml.MostlyIQ2_S:
				return ggml.IQ3_XXS
			case ggml.MostlyIQ2_XS:
				return ggml.IQ2_S
			case ggml.MostlyIQ2_XXS:
				return ggml.IQ2_XS
			case ggml.MostlyIQ1_M:
				return ggml.IQ2_XXS
			case ggml.MostlyIQ1_S:
				return ggml.IQ1_M
			}
		}
		return base
	}
	if !useMoreBits(j, n) {
		return base
	}
	switch ft {
	case ggml.MostlyQ2_K:
		return ggml.Q3_K
	case ggml.MostlyQ3_K_M, ggml.MostlyIQ3_XS, ggml.MostlyIQ3_XXS:
		return ggml.Q4_K
	case ggml.MostlyQ3_K_L, ggml.MostlyQ4_K_S, ggml.MostlyIQ3_S, ggml.MostlyIQ3_M:
		return ggml.Q5_K
	case ggml.MostlyQ4_K_M, ggml.MostlyQ5_K_M:
		return ggml.Q6_K
	case ggml.MostlyQ6_K:
		return ggml.Q8_0
	case ggml.MostlyIQ4_NL, ggml.MostlyIQ4_XS:
		// without an importance matrix; bartowski's files carry one
		return base
	}
	return base
}
