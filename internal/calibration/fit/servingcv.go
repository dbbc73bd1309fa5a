package main

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// servingTerms are the optional terms of the vLLM decode model, each kept
// only where the leave-one-source-out cross-validation says it helps
// (servingVariants): parts charges the fixed time per sublayer (a mixer or
// a feed-forward block, plan.ServingBlocks) instead of per layer, so a
// hybrid block of one mixer pays one part, not a transformer layer;
// generation fits the per-part time apart for Hopper, Blackwell and CDNA3
// GPUs (plan.LaterServingGeneration) and for the Ampere and Ada ones;
// indexer charges DeepSeek Sparse Attention's indexer apart from the MLA
// layer it sits beside.
type servingTerms struct{ parts, generation, indexer bool }

// Columns of a servingCase's features and of a servingFit's constants: the
// weight and KV stream at the full datasheet bandwidth (its constant is 1 /
// the bandwidth fraction), then the fixed costs, counted per step, per unit
// (a layer, or a part with servingTerms.parts) on Ampere/Ada or on a later
// generation, per all-reduce, per MoE layer, per MLA layer and per indexer.
const (
	colStream = iota
	colStep
	colUnit
	colUnitLater
	colAllReduce
	colMoE
	colMLA
	colIndexer
	servingCols
)

// servingBounds are the ranges searched: the inverse bandwidth fraction
// (fractions 0.5-1) and the fixed costs in microseconds.
var servingBounds = [servingCols][2]float64{{1, 2}, {0, 3000}, {0, 300}, {0, 300}, {0, 100}, {0, 500}, {0, 1500}, {0, 1500}}

// features are a case's counts under terms: what each constant of a
// servingFit multiplies (seconds of stream at the full bandwidth, then
// counts; a fixed cost's constant is in microseconds).
func (sc servingCase) features(t servingTerms) [servingCols]float64 {
	var x [servingCols]float64
	x[colStream], x[colStep] = sc.stream, 1
	units, allReduces, moe := sc.layers, 2*sc.layers, sc.moeLayers
	if t.parts {
		units, allReduces, moe = sc.blocks.Parts, sc.blocks.Parts, sc.blocks.MoE
	}
	if t.generation && sc.later {
		x[colUnitLater] = float64(units)
	} else {
		x[colUnit] = float64(units)
	}
	if sc.row.TP > 1 {
		x[colAllReduce] = float64(allReduces)
	}
	x[colMoE], x[colMLA] = float64(moe), float64(sc.blocks.MLA)
	if t.indexer {
		x[colIndexer] = float64(sc.blocks.Indexer)
	}
	return x
}

// servingConstants are the constants of one fit: the inverse bandwidth
// fraction, then the fixed costs in microseconds.
type servingConstants [servingCols]float64

// seconds is a step's time under k for features x.
func (k servingConstants) seconds(x [servingCols]float64) float64 {
	t := x[colStream] * k[colStream]
	for j := colStep; j < servingCols; j++ {
		t += x[j] * k[j] / 1e6
	}
	return t
}

// rounded is k as the generated file holds it: the fraction in hundredths,
// the fixed costs in whole microseconds.
func (k servingConstants) rounded() servingConstants {
	r := k
	r[colStream] = 100 / math.Round(100/k[colStream])
	for j := colStep; j < servingCols; j++ {
		r[j] = math.Round(k[j])
	}
	return r
}

// fitConstants are the constants of least squared log error on cases
// under terms, each row weighted by setupWeights (a setup counts once):
// coordinate descent, each constant in turn minimised by a
// golden-section search within servingBounds, from the fraction 0.87 and
// no fixed cost, until a sweep moves none by more than 1e-6 of its range
// (at most 2000 sweeps); a constant whose count is 0 on every case stays
// 0. The loss is smooth and, near the optimum, convex in each constant.
// The result is rounded as the generated file holds it.
func fitConstants(cases []servingCase, t servingTerms) servingConstants {
	xs := make([][servingCols]float64, len(cases))
	ys := make([]float64, len(cases))
	ws := setupWeights(cases)
	var used [servingCols]bool
	for i, sc := range cases {
		xs[i], ys[i] = sc.features(t), math.Log(1/sc.row.TokensPerS)
		for j, v := range xs[i] {
			used[j] = used[j] || v != 0
		}
	}
	loss := func(k servingConstants) float64 {
		l := 0.0
		for i, x := range xs {
			e := ys[i] - math.Log(k.seconds(x))
			l += ws[i] * e * e
		}
		return l
	}
	var k servingConstants
	k[colStream] = 1 / 0.87
	for range 2000 {
		moved := false
		for j := range servingCols {
			if !used[j] {
				continue
			}
			lo, hi := servingBounds[j][0], servingBounds[j][1]
			v := goldenMin(func(v float64) float64 { k2 := k; k2[j] = v; return loss(k2) }, lo, hi)
			if loss(servingWith(k, j, v)) < loss(k) {
				moved = moved || math.Abs(v-k[j]) > 1e-6*(hi-lo)
				k[j] = v
			}
		}
		if !moved {
			break
		}
	}
	return k.rounded()
}

// setupWeights are the least-squares weights of cases: each row 1 / the
// number of cases of its setup (servingSetup), so a setup a source
// measured under several engine versions, or on several copies of one
// page, weighs one row in all. The ROCm fork's README publishes
// Llama-3.1-70B and 405B FP8 on 8 MI300X under vLLM 0.6.6 to 0.10.0, 12
// rows of two setups: by row count that one source would weigh 12 of 33
// vLLM rows and pull every constant toward its two setups. Weighting each
// source as one row instead (1 / its rows) was tried and not kept: it also
// cuts tt-inference-server issue 340's four models on an A100, four
// measurements, to a quarter each, and the leave-one-source-out
// cross-validation got worse (12.2 % median, 46.6 % p90, against 9.8 % and
// 33.0 % by setup, on the 33 vLLM rows of the time).
func setupWeights(cases []servingCase) []float64 {
	n := map[string]int{}
	for _, sc := range cases {
		n[servingSetup(sc.row)]++
	}
	ws := make([]float64, len(cases))
	for i, sc := range cases {
		ws[i] = 1 / float64(n[servingSetup(sc.row)])
	}
	return ws
}

// servingSetup is what a row measures apart from the engine version: its
// source (servingGroup), model, precision, GPU and tensor-parallel degree.
func servingSetup(r servingRow) string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", servingGroup(r.Source), r.CatalogModel, r.Precision, r.Spec, r.TP)
}

// servingWith is k with constant j set to v.
func servingWith(k servingConstants, j int, v float64) servingConstants {
	k[j] = v
	return k
}

// goldenMin is the point of [lo, hi] a golden-section search for the
// minimum of f ends at (80 steps: the bracket shrinks below 1e-16 of it).
func goldenMin(f func(float64) float64, lo, hi float64) float64 {
	r := (math.Sqrt(5) - 1) / 2
	a, b := lo, hi
	c, d := b-r*(b-a), a+r*(b-a)
	fc, fd := f(c), f(d)
	for range 80 {
		if fc <= fd {
			b, d, fd = d, c, fc
			c = b - r*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + r*(b-a)
			fd = f(d)
		}
	}
	if v, fv := (a+b)/2, f((a+b)/2); fv <= f(lo) && fv <= f(hi) {
		return v
	} else if f(lo) <= f(hi) {
		return lo
	}
	return hi
}

// servingGroup is the source a row belongs to for the cross-validation:
// its URL without the parts that name a revision of the same page — the
// commit of a GitHub blob URL (the ROCm fork's README at two commits), the
// locale of an amd.com page (its English, French and Chinese copies were
// captured at three revisions) — and without a fragment. Rows of one
// issue, pull request, page or setup share a group.
func servingGroup(source string) string {
	u, err := url.Parse(source)
	if err != nil {
		return source
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case u.Host == "github.com" && len(segs) > 3 && segs[2] == "blob":
		segs = slices.Delete(segs, 3, 4)
	case strings.HasSuffix(u.Host, "amd.com") && len(segs) > 0 && amdLocale.MatchString(segs[0]):
		segs = segs[1:]
	}
	return u.Host + "/" + strings.Join(segs, "/")
}

// amdLocale is the locale segment leading an amd.com path ("en", "fr",
// "zh-cn").
var amdLocale = regexp.MustCompile(`^[a-z]{2}(-[a-z]{2})?$`)

// servingCV is the leave-one-source-out cross-validation of the vLLM
// constants under terms: for each source group (servingGroup), the
// constants fitted on every other vLLM row predict its rows. estimates are
// the out-of-sample estimates by case index (0 for a non-vLLM case),
// errors their |error| in case order, weights those rows' setupWeights,
// groups the number of groups.
type servingCV struct {
	terms     servingTerms
	estimates []float64
	errors    []float64
	weights   []float64
	groups    int
}

// median and p90 of the out-of-sample |errors|, every row counted once:
// the figures the terms are chosen by and the ratchets hold, since a row
// is a setup a plan may be asked about.
func (cv servingCV) median() float64 { return quantile(cv.errors, 0.5) }
func (cv servingCV) p90() float64    { return quantile(cv.errors, 0.9) }

// setupMedian and setupP90 are the same with each row weighted as the fit
// weighs it (setupWeights: every setup one row in all), reported beside
// them: how the model does per setup rather than per row.
func (cv servingCV) setupMedian() float64 { return weightedQuantile(cv.errors, cv.weights, 0.5) }
func (cv servingCV) setupP90() float64    { return weightedQuantile(cv.errors, cv.weights, 0.9) }

// weightedQuantile is the smallest of xs at which the weights of the xs
// up to it reach q of their total.
func weightedQuantile(xs, ws []float64, q float64) float64 {
	idx := make([]int, len(xs))
	total := 0.0
	for i := range idx {
		idx[i] = i
		total += ws[i]
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	sum := 0.0
	for _, i := range idx {
		if sum += ws[i]; sum >= q*total*(1-1e-12) {
			return xs[i]
		}
	}
	return math.NaN()
}

// crossValidate is the servingCV of the vLLM cases under terms.
func crossValidate(cases []servingCase, t servingTerms) servingCV {
	cv := servingCV{terms: t, estimates: make([]float64, len(cases))}
	var groups []string
	for _, sc := range cases {
		if g := servingGroup(sc.row.Source); sc.row.Engine == engine.NameVLLM && !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	cv.groups = len(groups)
	for _, g := range groups {
		var train []servingCase
		for _, sc := range cases {
			if sc.row.Engine == engine.NameVLLM && servingGroup(sc.row.Source) != g {
				train = append(train, sc)
			}
		}
		k := fitConstants(train, t)
		for i, sc := range cases {
			if sc.row.Engine == engine.NameVLLM && servingGroup(sc.row.Source) == g {
				cv.estimates[i] = 1 / k.seconds(sc.features(t))
			}
		}
	}
	var vllm []servingCase
	for i, sc := range cases {
		if sc.row.Engine == engine.NameVLLM {
			cv.errors = append(cv.errors, math.Abs(cv.estimates[i]/sc.row.TokensPerS-1))
			vllm = append(vllm, sc)
		}
	}
	cv.weights = setupWeights(vllm)
	return cv
}

// servingCandidates are the term sets the selection evaluates: every
// combination of the optional terms but those with the generation split
// and no per-part time (the split divides the per-part time by GPU
// generation, servingTerms), each after every set it extends; the first
// is the base model, no optional term. Six sets: few enough that each is
// cross-validated in full rather than reached by a path of single terms.
var servingCandidates = []servingTerms{
	{},
	{parts: true},
	{indexer: true},
	{parts: true, generation: true},
	{parts: true, indexer: true},
	{parts: true, generation: true, indexer: true},
}

// within reports whether every term of t is in u.
func (t servingTerms) within(u servingTerms) bool {
	return (!t.parts || u.parts) && (!t.generation || u.generation) && (!t.indexer || u.indexer)
}

// servingVariants is the cross-validation of every candidate term set
// (servingCandidates), whether each is accepted, and the one chosen
// (chooseTerms). The shipped constants use the chosen set.
func servingVariants(cases []servingCase) (tried []servingCV, accepted []bool, chosen servingCV) {
	return chooseTerms(func(t servingTerms) servingCV { return crossValidate(cases, t) })
}

// chooseTerms runs the selection of servingVariants with cv as the
// cross-validation of a set of terms. The base set is accepted; a larger
// set is accepted only if keepTerm holds against every accepted set it
// extends (each accepted proper subset, the base always among them), so
// every term it adds must improve the error distribution over each
// smaller accepted model, and a term that adds nothing to an accepted set
// is not accepted with it. Of the accepted sets the chosen one has the
// lowest out-of-sample median (then the lowest p90, then the fewest
// terms).
//
// The rule does not depend on an order of the terms. Until issue 22's
// rows of Red Hat's DeepSeek-R1-Distill-Llama-70B card, each term was tried
// once, in a fixed order, on top of those kept so far: on those 38 rows the
// per-part time alone no longer lowered the median (13.5 -> 13.7 %, p90
// 46.5 -> 37.0 %), so it was dropped, and the generation split, which
// only exists on top of it, was never tried with it, though the two
// together lower both (9.1 %, 34.8 %). Evaluating every allowed set finds
// such a joint set while keeping the rule's bar: a set is accepted only
// where it improves on every smaller accepted set.
func chooseTerms(cv func(servingTerms) servingCV) (tried []servingCV, accepted []bool, chosen servingCV) {
	candidates := servingCandidates
	for i, t := range candidates {
		with := cv(t)
		ok := true
		for j := range i {
			if accepted[j] && candidates[j].within(t) {
				ok = ok && keepTerm(with, tried[j])
			}
		}
		tried, accepted = append(tried, with), append(accepted, ok)
	}
	best := -1
	for i, cv := range tried {
		if accepted[i] && (best < 0 || betterVariant(cv, tried[best])) {
			best = i
		}
	}
	return tried, accepted, tried[best]
}

// betterVariant reports whether a is chosen over b among accepted sets:
// the lower out-of-sample median, then the lower p90 (a set with fewer
// terms comes first in servingCandidates, so a tie keeps it).
func betterVariant(a, b servingCV) bool {
	if a.median() != b.median() {
		return a.median() < b.median()
	}
	return a.p90() < b.p90()
}

// keepTerm is the rule a term is kept by: with the term (with) the
// out-of-sample median |error| is lower than without it (without) AND
// the out-of-sample p90 is not higher. A term must improve the error
// distribution, not one statistic of it: a term that lowers the median
// while it raises the p90 trades the rows it fits for those it misses,
// and a term that helps neither is a constant the rows do not support.
// The rule was fixed before the rows added after it were replayed (until
// then a term was kept on the median alone, and one added row flipped
// the DSA indexer term in at 12.1 % against 12.4 % while its p90 went
// from 32.9 % to 40.0 %).
func keepTerm(with, without servingCV) bool {
	return with.median() < without.median() && with.p90() <= without.p90()
}

// servingTermsText names the terms t holds.
func servingTermsText(t servingTerms) string {
	names := []string{"per-layer time"}
	if t.parts {
		names[0] = "per-part time"
	}
	if t.generation {
		names = append(names, "by GPU generation")
	}
	names = append(names, "all-reduce, MoE, MLA")
	if t.indexer {
		names = append(names, "DSA indexer")
	}
	return strings.Join(names, ", ")
}
