package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// sglangStepParts are the parts of an SGLang row's predicted decode step,
// in milliseconds: the weight and KV stream at the fitted bandwidth
// fraction, the per-part time, the all-reduces, the MoE-layer and
// MLA-layer times and the rest (the step and indexer times).
type sglangStepParts struct{ stream, parts, allReduce, moe, mla, rest float64 }

// total is the predicted step in milliseconds.
func (p sglangStepParts) total() float64 {
	return p.stream + p.parts + p.allReduce + p.moe + p.mla + p.rest
}

// sglangParts splits the predicted step of sc under SGLang's fitted
// constants f (the ROCm ones on an AMD GPU) into its parts.
func sglangParts(f sglangFit, sc servingCase) sglangStepParts {
	x, k := sc.features(f.terms), f.constants
	if sc.row.Spec == "AMD Instinct MI300X" {
		k = f.rocm()
	}
	ms := func(j int) float64 { return x[j] * k[j] / 1e3 }
	return sglangStepParts{stream: x[colStream] * k[colStream] * 1e3, parts: ms(colUnit) + ms(colUnitLater),
		allReduce: ms(colAllReduce), moe: ms(colMoE), mla: ms(colMLA), rest: ms(colStep) + ms(colIndexer)}
}

// TestSGLangStepParts prints, for every replayed SGLang row, the measured
// and predicted time a token and the parts of the prediction (issue 22: what
// the misses share), and checks that the parts add up to the planner's
// replay of the row, so the breakdown is the model the plans pay.
func TestSGLangStepParts(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	for _, sc := range sglangCases(t) {
		p := sglangParts(r.sglangFit, sc)
		x := sc.features(r.sglangFit.terms)
		measured, planned := 1000/sc.row.TokensPerS, 1000/sc.replay.Decode(c)
		t.Logf("%-8s %-34s %-21s TP%d measured %6.2f ms predicted %6.2f ms (tok/s %+4.0f%%): stream %5.2f, %3.0f parts %5.2f, %3.0f all-reduces %4.2f, %2.0f MoE %4.2f, %2.0f MLA %4.2f; measured-minus-stream per part %5.1f us",
			sc.row.Use, sc.row.Model, sc.row.Spec, sc.row.TP, measured, p.total(), 100*(measured/p.total()-1),
			p.stream, x[colUnit]+x[colUnitLater], p.parts, x[colAllReduce], p.allReduce, x[colMoE], p.moe, x[colMLA], p.mla,
			1e3*(measured-p.stream)/(x[colUnit]+x[colUnitLater]))
		assert.InDelta(t, planned, p.total(), 0.01*planned, "%s on %s: the parts are the planner's step", sc.row.Model, sc.row.GPU)
		assert.False(t, math.IsNaN(p.total()))
	}
}
