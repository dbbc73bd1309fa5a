package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// servingEngines are the engines of data/serving_decode.json whose rows
// are replayed, each fitting its own constants on its "fit" rows.
//
// The fit selects rows by the engine their data names (the rows' engine
// field) here and in serving.go, servingcv.go and servingprefill.go: which
// rows fit which engine's constants is data selection, not a planning
// rule, so these compare engine names; the planner asks the engine instead
// (engine.ServingFitOf, internal/engine/doc.go).
var servingEngines = map[string]bool{engine.NameVLLM: true, engine.NameSGLang: true}

// SGLang's split of data/serving_decode.json, fixed before any SGLang row
// was replayed: a row measured on an NVIDIA B200 or an AMD MI300X is
// "fit", a row on any other GPU is "held_out", so the check is how the
// constants carry over to the GPUs they were not fitted on (the held-out
// rows: Llama-3.1-70B on 8 A100s, gemma-4 on H200s; the H100 row ran with
// --ep and is not replayed, nor is DeepSeek-V3 on 8 H200s of sglang issue
// 3196, whose figure is words over the whole request's time, not a decode
// rate: its why_not quotes the scripts).
// sglangFitGPUs is that rule, asserted on the rows
// (TestSGLangSplitFollowsTheRule).
var sglangFitGPUs = []string{"NVIDIA B200 SXM", "AMD Instinct MI300X"}

// sglangFitted reports whether the case is one SGLang's constants are
// fitted on.
func (sc servingCase) sglangFitted() bool {
	return sc.row.Engine == engine.NameSGLang && sc.row.Use == useFit
}

// sglangFit is SGLang's fitted batch-1 overhead: the constants of an
// NVIDIA GPU under the vLLM fit's terms (the bandwidth fraction, step,
// per-part times of both GPU generations, all-reduce and indexer times
// vLLM's, the MoE-layer and MLA-layer times SGLang's own: fitSGLang), the
// factor, in hundredths, of its fixed times on an AMD GPU (ROCm), and how
// they do on SGLang's fit and held-out rows.
type sglangFit struct {
	constants servingConstants
	terms     servingTerms
	rocmPct   int
	fitErrors
}

// decode is the constants of an NVIDIA GPU; zero before the fit (an
// SGLang plan pays vLLM's then).
func (f sglangFit) decode() calibration.ServingDecode {
	if f.constants[colStream] == 0 {
		return calibration.ServingDecode{}
	}
	return decode(f.constants, f.terms)
}

// decodeROCm is the constants of an AMD GPU: every fixed cost scaled by
// rocmPct and rounded to the microsecond, the bandwidth fraction the same.
func (f sglangFit) decodeROCm() calibration.ServingDecode {
	if f.constants[colStream] == 0 {
		return calibration.ServingDecode{}
	}
	return decode(f.rocm(), f.terms)
}

// rocm is the constants with the fixed costs scaled by rocmPct, rounded to
// the microsecond as the generated file holds them.
func (f sglangFit) rocm() servingConstants {
	k := f.constants
	for j := colStep; j < servingCols; j++ {
		k[j] = math.Round(k[j] * float64(f.rocmPct) / 100)
	}
	return k
}

// fitSGLang fits calibration.Throughput.SGLang and SGLangROCm on the
// SGLang rows marked "fit", in the form of vLLM's (fitServing: the weight
// and KV stream at a fraction f of the datasheet bandwidth plus the step,
// per-part, all-reduce, MoE-layer, MLA-layer and indexer times, under the
// terms vLLM's cross-validation kept) with one term more, a factor on the
// fixed times on AMD GPUs: the fit rows ran the same architecture about
// 2.6 times slower per layer on MI300X than on B200 (DeepSeek-V3.1, 23.9
// ms a token over 61 layers, against DeepSeek-R1, 9.15 ms). Fewer terms
// are free than vLLM's: nine of SGLang's ten fit rows are MoE steps, most
// on 8 GPUs (their weight stream is under 1.5 ms of a 2-24 ms step), and
// one a dense model on one GPU, so they do not tell the bandwidth fraction
// from the per-part time (left free, a grid traded one for the other down
// to f 0.46 and 0 us a layer, which would put a small dense model on one
// GPU several times faster than vLLM's rows of such models measure). The
// fraction, step, per-part (both generations), all-reduce and indexer
// times are therefore vLLM's (vllm, fitted on every vLLM row), and the
// grid fits the MoE-layer and MLA-layer times and the ROCm factor: coarse
// (MoE layer 0-300 by 25, MLA layer 0-1000 by 50 us, factor 1.00-3.00 by
// 0.10), then fine within one coarse step of the best point (MoE by 5, MLA
// by 10 us, factor by 0.02); least squares of the log error, each setup
// weighing one row (setupWeights), the first minimum wins. Every fit row is of an HBM GPU, where an SGLang plan pays
// these constants (internal/plan/sglangspeed.go). The stream time of each
// row at the full bandwidth is fitServing's (servingCase.stream).
func fitSGLang(cases []servingCase, c calibration.Throughput, vllm servingFit) (sglangFit, error) {
	var fitRows []servingObs
	var fitCases, heldCases []servingCase
	for _, sc := range cases {
		if sc.row.Engine != engine.NameSGLang {
			continue
		}
		if !sc.sglangFitted() {
			heldCases = append(heldCases, sc)
			continue
		}
		if sc.replay.MemoryClass() != plan.MemoryClassHBM {
			return sglangFit{}, fmt.Errorf("serving_decode.json: %s / %s: an SGLang fit row must be of an HBM GPU, where SGLang's constants apply", sc.row.Model, sc.row.GPU)
		}
		if sc.stream <= 0 {
			return sglangFit{}, fmt.Errorf("serving_decode.json: %s / %s: no estimate", sc.row.Model, sc.row.GPU)
		}
		fitRows = append(fitRows, servingObs{x: sc.features(vllm.cv.terms), target: 1 / sc.row.TokensPerS, amd: strings.HasPrefix(sc.row.Spec, "AMD ")})
		fitCases = append(fitCases, sc)
	}
	if len(fitRows) == 0 {
		return sglangFit{}, fmt.Errorf("serving_decode.json: no SGLang row to fit on")
	}
	for i, w := range setupWeights(fitCases) {
		fitRows[i].weight = w
	}
	borrowed := sglangFit{constants: vllm.constants, terms: vllm.cv.terms}
	best := searchSGLang(fitRows, borrowed)
	c.SGLang, c.SGLangROCm = best.decode(), best.decodeROCm()
	best.fitErrors = scoreFit(fitCases, heldCases, c)
	return best, nil
}

// servingObs is a fit row of a serving engine: its features
// (servingCase.features: the stream time at the full datasheet bandwidth,
// then the counts of the fixed costs), its measured time per token in
// seconds, whether it ran on an AMD GPU, and its least-squares weight
// (setupWeights: each setup counts once).
type servingObs struct {
	x      [servingCols]float64
	target float64
	amd    bool
	weight float64
}

// sglangLoss is the weighted sum of squared log errors of the constants f
// on rows.
func sglangLoss(rows []servingObs) func(sglangFit) float64 {
	return func(f sglangFit) float64 {
		l := 0.0
		for _, o := range rows {
			fixed := 0.0
			for j := colStep; j < servingCols; j++ {
				fixed += o.x[j] * f.constants[j] / 1e6
			}
			if o.amd {
				fixed *= float64(f.rocmPct) / 100
			}
			e := math.Log(o.target / (o.x[colStream]*f.constants[colStream] + fixed))
			l += o.weight * e * e
		}
		return l
	}
}

// sglangGrid is a grid of SGLang's free constants: from, to, step (us for
// the MoE and MLA layer times, hundredths for the ROCm factor).
type sglangGrid struct{ moe, mla, rocm [3]int }

// search is the grid point of least loss (the first one on ties), the
// constants not on the grid those of base.
func (g sglangGrid) search(base sglangFit, loss func(sglangFit) float64) sglangFit {
	best, bestLoss := sglangFit{}, math.Inf(1)
	for m := g.moe[0]; m <= g.moe[1]; m += g.moe[2] {
		for x := g.mla[0]; x <= g.mla[1]; x += g.mla[2] {
			for r := g.rocm[0]; r <= g.rocm[1]; r += g.rocm[2] {
				p := base
				p.rocmPct = r
				p.constants[colMoE], p.constants[colMLA] = float64(m), float64(x)
				if v := loss(p); v < bestLoss {
					best, bestLoss = p, v
				}
			}
		}
	}
	return best
}

// around is the fine range of one constant: within one coarse step of v,
// clipped to the coarse range, by step.
func around(v int, coarse [3]int, step int) [3]int {
	return [3]int{max(coarse[0], v-coarse[2]), min(coarse[1], v+coarse[2]), step}
}

// searchSGLang is fitSGLang's grid search on rows: the coarse grid, then
// the fine one within one coarse step of its best point.
func searchSGLang(rows []servingObs, base sglangFit) sglangFit {
	loss := sglangLoss(rows)
	coarse := sglangGrid{moe: [3]int{0, 300, 25}, mla: [3]int{0, 1000, 50}, rocm: [3]int{100, 300, 10}}
	best := coarse.search(base, loss)
	fine := sglangGrid{
		moe:  around(int(best.constants[colMoE]), coarse.moe, 5),
		mla:  around(int(best.constants[colMLA]), coarse.mla, 10),
		rocm: around(best.rocmPct, coarse.rocm, 2),
	}
	return fine.search(base, loss)
}

// sglangSummary is the line under the serving table naming SGLang's
// constants and how they fare on the fit and held-out rows.
func sglangSummary(f sglangFit) string {
	d := f.decode()
	return fmt.Sprintf("SGLang constants fitted on %d rows (NVIDIA B200 and AMD MI300X): %.0f us per MoE layer, %.0f us per MLA layer and the fixed times x %s on AMD GPUs; vLLM's bandwidth fraction (%s), step (%.0f us), per-part (%.0f us on Ampere and Ada, %.0f us on Hopper, Blackwell and CDNA3), all-reduce (%.0f us) and indexer (%.0f us) times; fit rows median |error| %s, largest %s; %d held-out SGLang rows (other GPUs) median %s, largest %s.\n",
		f.n, d.MoELayerSeconds*1e6, d.MLALayerSeconds*1e6, hundredths(f.rocmPct), pct(d.BandwidthFraction), d.StepSeconds*1e6, d.PartSeconds*1e6, d.PartSecondsLater*1e6, d.AllReduceSeconds*1e6, d.IndexerSeconds*1e6,
		pct(f.medianError), pct(f.maxError), f.heldOut, pct(f.heldOutMedian), pct(f.heldOutMax))
}

// sglangConstant is the generated lines of calibration.Fitted.SGLang and
// SGLangROCm, with the comment naming their rows.
func sglangConstant(f sglangFit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// SGLang batch-1 decode, fitted on the %d SGLang rows of data/serving_decode.json\n", f.n)
	fmt.Fprintf(&b, "// marked \"fit\" (NVIDIA B200 and AMD MI300X; median |error| %.3f, largest %.3f;\n", f.medianError, f.maxError)
	fmt.Fprintf(&b, "// the %d held-out SGLang rows, other GPUs: median %.3f, largest %.3f): the\n", f.heldOut, f.heldOutMedian, f.heldOutMax)
	b.WriteString("// MoE-layer time on a 5 us grid, MLA-layer time on a 10 us grid, on AMD GPUs the fixed times x\n")
	fmt.Fprintf(&b, "// %s (0.02 grid); the bandwidth fraction, step, per-part, all-reduce and\n", hundredths(f.rocmPct))
	b.WriteString("// indexer times are vLLM's (fitSGLang in internal/calibration/fit/sglang.go says why).\n")
	b.WriteString(servingLiteral("SGLang", f.decode()) + "\n")
	b.WriteString(servingLiteral("SGLangROCm", f.decodeROCm()))
	return b.String()
}

// servingLiteral is the generated field name: ServingDecode{...} line of d.
func servingLiteral(name string, d calibration.ServingDecode) string {
	return fmt.Sprintf("%s: ServingDecode{BandwidthFraction: %s, StepSeconds: %.0fe-6, PartSeconds: %.0fe-6, PartSecondsLater: %.0fe-6, AllReduceSeconds: %.0fe-6, MoELayerSeconds: %.0fe-6, MLALayerSeconds: %.0fe-6, IndexerSeconds: %.0fe-6},",
		name, hundredths(int(math.Round(d.BandwidthFraction*100))), d.StepSeconds*1e6, d.PartSeconds*1e6, d.PartSecondsLater*1e6, d.AllReduceSeconds*1e6, d.MoELayerSeconds*1e6, d.MLALayerSeconds*1e6, d.IndexerSeconds*1e6)
}
