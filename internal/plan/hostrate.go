// A CPU plan's compute terms by the types its weights are stored in
// (docs/accuracy.md, "CPU decode").

package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// hostRateType is the type whose per-core rate (rates:
// calibration.Throughput.HostWeightsPerCore or HostPrefillFLOPSPerCore)
// a weight stored in type t is charged: t's own where it has one, else
// the measured type of its kernel family. BF16 and F32 take F16's (16-bit
// float kernels; as before rates were per type, one rate per weight for
// every float width); Q4_1 and IQ4_NL take Q4_0's and Q5_1 Q5_0's (the
// legacy 32-weight blocks: the same layout with a minimum or a
// non-linear table, dotted against Q8 activations alike); every other type
// (k-quants, IQ, ternary, MXFP4) takes Q4_K's, the rate every sub-8-bit
// type took before rates were per type. A type the family rule does not
// reach either takes Q4_K's.
func hostRateType(rates map[ggml.Type]float64, t ggml.Type) ggml.Type {
	if rates[t] > 0 {
		return t
	}
	family := ggml.Q4_K
	switch t {
	case ggml.BF16, ggml.F32:
		family = ggml.F16
	case ggml.Q4_1, ggml.IQ4_NL:
		family = ggml.Q4_0
	case ggml.Q5_1:
		family = ggml.Q5_0
	}
	if rates[family] > 0 {
		return family
	}
	return ggml.Q4_K
}

// hostMix is the stored types of what a CPU stage multiplies per token:
// the share frac of the layer stack's matrices (the stage's layers over
// all) and, with head, the output matrix (quant.MatmulTypes).
type hostMix struct {
	parts []quant.TypeWeights
}

// newHostMix is the mix of m at level l for a stage holding frac of the
// layers, with or without the output head; ok is false for an unknown
// level.
func newHostMix(m *model.Model, l quant.Level, frac float64, head bool) (hostMix, bool) {
	mw, ok := quant.MatmulTypes(m, l)
	if !ok {
		return hostMix{}, false
	}
	var h hostMix
	for _, tw := range mw.Layers {
		if tw.Weights*frac > 0 {
			h.parts = append(h.parts, quant.TypeWeights{Type: tw.Type, Weights: tw.Weights * frac})
		}
	}
	if head && mw.Head.Weights > 0 {
		h.parts = append(h.parts, mw.Head)
	}
	return h, len(h.parts) > 0
}

// secondsPerWeight is the mix's mean time per weight on one core at the
// per-type rates: Σ weights_t / rate_t over Σ weights_t. 0 when a type has
// no rate (not even Q4_K's).
func (h hostMix) secondsPerWeight(rates map[ggml.Type]float64) float64 {
	var secs, n float64
	for _, p := range h.parts {
		r := rates[hostRateType(rates, p.Type)]
		if r <= 0 {
			return 0
		}
		secs += p.Weights / r
		n += p.Weights
	}
	if n <= 0 {
		return 0
	}
	return secs / n
}

// bytesPerWeight is the mix's mean storage per weight.
func (h hostMix) bytesPerWeight() float64 {
	var b, n float64
	for _, p := range h.parts {
		b += p.Weights * p.Type.BitsPerWeight() / 8
		n += p.Weights
	}
	if n <= 0 {
		return 0
	}
	return b / n
}

// describe lists the mix's types by share of its weights, largest first,
// with each type's decode rate per core from rates ("Q5_0 51 % at 20.1 G/s,
// Q8_0 28 % at 14.3 G/s"); types under 1 % are left out.
func (h hostMix) describe(rates map[ggml.Type]float64) string {
	var n float64
	byType := map[ggml.Type]float64{}
	for _, p := range h.parts {
		byType[p.Type] += p.Weights
		n += p.Weights
	}
	var types []ggml.Type
	for t := range byType {
		types = append(types, t)
	}
	sortTypesByShare(types, byType)
	var parts []string
	for _, t := range types {
		if share := byType[t] / n; share >= 0.01 {
			rt := hostRateType(rates, t)
			s := fmt.Sprintf("%s %.0f%% at %.1f G/s", t, share*100, rates[rt]/1e9)
			if rt != t {
				s += " (" + rt.String() + "'s rate)"
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// sortTypesByShare orders types by their weights, largest first, ties by
// type id.
func sortTypesByShare(types []ggml.Type, w map[ggml.Type]float64) {
	slices.SortFunc(types, func(a, b ggml.Type) int {
		switch {
		case w[a] > w[b]:
			return -1
		case w[a] < w[b]:
			return 1
		}
		return int(a) - int(b)
	})
}
