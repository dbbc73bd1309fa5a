// Under quant auto, the level choice prefers a level a published
// checkpoint runs (docs/requests.md, quant): a plan is worth acting on
// only when its command can run.

package plan

import (
	"fmt"
	"slices"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// preferPublished is, of fits (the fitting plans of the levels tried, best
// quality first), those a published checkpoint runs (runsPublished) when
// the preference applies (prefersPublished) and at least one does; else
// fits. skipped is fits[0] when it is left out: the best level that fits,
// which nothing published runs (unpublishedLine names it); nil otherwise.
// One rule for plan, suggest and fit, which all choose here
// (publishedFits, from choose and planOffloadLevels), before decode speed is weighed (chooseBySpeed,
// offloadBySpeed), so that speed picks among runnable levels too.
func preferPublished(req *planning, levels []quant.Level, fits []*planned) (kept []*planned, skipped *planned) {
	if len(fits) == 0 || !prefersPublished(req, levels) {
		return fits, nil
	}
	for _, pl := range fits {
		if runsPublished(req, pl) {
			kept = append(kept, pl)
		}
	}
	if len(kept) == 0 {
		return fits, nil
	}
	if kept[0] != fits[0] {
		skipped = fits[0]
	}
	return kept, skipped
}

// prefersPublished reports whether the level choice prefers published
// checkpoints: under quant auto with more than one level, for a model
// whose weights the catalog gives (by name or Hugging Face id: its
// checkpoints are listed). A model given as weights (a file, a folder, a
// fetched repository: FileQuant) runs as given, and one given by its size
// has no published checkpoint; both keep the best level that fits.
func prefersPublished(req *planning, levels []quant.Level) bool {
	m := req.Model
	return req.Quant == "auto" && len(levels) > 1 && len(m.Checkpoints) > 0 && m.FileQuant == ""
}

// runsPublished reports whether a published checkpoint runs pl under its
// engine: the test that decides whether the answer prints a command
// (engine.Load with a repository and no Needs: a GGUF file of the type
// for llama.cpp; for vLLM and SGLang a checkpoint at the level, or a float
// one converted or quantized on load). A checkpoint of the other release
// than the request named counts where the engine serves it (configs that
// do not differ, engine.checkpointFor): its command runs the same
// architecture at the planned memory, with the release-switch warning. A
// plan whose engine loads nothing of its own (engine none) counts too.
func runsPublished(req *planning, pl *planned) bool {
	ld := planLoad(req, pl)
	return ld == nil || ld.Needs == "" && ld.Repo != ""
}

// planLoad is what pl's engine loads to run it, nil when it names nothing.
func planLoad(req *planning, pl *planned) *engine.Load {
	e := pl.Pool.engine()
	if e == nil {
		return nil
	}
	ld, _ := e.Load(placementOf(pl, req, len(req.Cluster) > 0))
	return ld
}

// unpublishedLine is the explanation's line for skipped, the best level
// that fits, which no published checkpoint runs (preferPublished): its
// memory at the context planned (a context chosen afterwards for the
// published level may be longer: PlanSharding keeps this line), what is
// missing and how to plan and get it. "" for nil.
func unpublishedLine(req *planning, skipped *planned) string {
	if skipped == nil {
		return ""
	}
	l := skipped.Level
	what, how := unpublishedWhy(req, skipped)
	return fmt.Sprintf("published: %s (%s at %s) also fits but %s; %s plans it (%s); under quant auto a plan takes a level a published checkpoint runs where one fits, so that its command runs",
		l, gib(skipped.oneDeviceBytes()), sequencesHeld(req, skipped), what, HintQuant(string(l)), how)
}

// unpublishedWhy says of pl, which no published checkpoint runs, what is
// missing and how its plan is had ("llama-quantize writes the file",
// "without a command").
func unpublishedWhy(req *planning, pl *planned) (what, how string) {
	ld := planLoad(req, pl)
	what, how = "nothing published runs it", "without a command"
	switch {
	case ld == nil:
	case ld.GGUFType != "" && ld.Needs == "":
		what = fmt.Sprintf("no published %s GGUF of this model is known", ld.GGUFType)
		how = engine.GGUFFileMaker(ld.GGUFType) + " writes the file"
	case ld.Needs != "":
		what = "it needs " + ld.Needs
	}
	return what, how
}

// onDeviceLine is the explanation's line for passed, the plan on the
// accelerators alone that cpu_offload passed over for an offloaded level a
// published checkpoint runs (offloadOverUnpublished): its memory, what is
// missing, how to plan it there, and the rule.
func onDeviceLine(req *planning, passed *planned) string {
	l := passed.Level
	what, how := unpublishedWhy(req, passed)
	return fmt.Sprintf("published: %s (%s at %s) fits on the accelerators alone but %s; %s plans it there (%s); under quant auto with cpu_offload, where no level that fits on the accelerators alone has a published checkpoint the engine runs, the offloaded levels are candidates too and one a published checkpoint runs is taken, so that its command runs",
		l, gib(passed.oneDeviceBytes()), sequencesHeld(req, passed), what, HintQuant(string(l)), how)
}

// sequencesHeld says what KV cache pl's memory holds: "a context of 4096
// tokens", or where an unpaged engine reserves every sequence's cache
// (llama.cpp's -np slots) "4 sequences of 32768 tokens"; a paged pool's
// figure counts the one sequence it needs to start.
func sequencesHeld(req *planning, pl *planned) string {
	if n := pl.batchOf(req); n > 1 && pl.Pool != nil && !pl.Pool.Budget.Paged {
		return fmt.Sprintf("%d sequences of %d tokens", n, req.ContextLength)
	}
	return fmt.Sprintf("a context of %d tokens", req.ContextLength)
}

// ladderFor is the levels a request plans: levels (the ladder without the
// worse levels that are not smaller, levelWeights.monotone) and, where the
// level choice prefers published checkpoints, the levels monotone left out
// too, in ladder order: a worse, larger level is still the answer when a
// published file runs it and none runs the better, smaller ones
// (Qwen3-235B-A22B's Q2_K, larger than IQ2_M, is the one low GGUF type
// unsloth publishes; https://huggingface.co/unsloth/Qwen3-235B-A22B-GGUF).
// publishedFits decides which of them stay, once their plans are known.
func ladderFor(req *planning, levels []quant.Level) []quant.Level {
	if len(req.weights.levels) == len(levels) || !prefersPublished(req, levels) {
		return levels
	}
	return req.weights.levels
}

// publishedFits is the one place the level choice narrows fits, the
// fitting plans of the levels a request tried (ladderFor), best quality
// first, for the plans on the devices alone (choose) and the cpu_offload
// plans (planOffloadLevels) alike: a level the ladder leaves out stays only
// where a published checkpoint runs it and no better fitting level a
// published checkpoint runs comes before (keepDropped; dropped is the
// plans kept that way); of what stays, those a published checkpoint runs
// where one does (preferPublished, skipped the best level passed over).
func publishedFits(req *planning, levels []quant.Level, fits []*planned) (kept []*planned, skipped *planned, dropped []*planned) {
	fits, dropped = keepDropped(req, levels, fits)
	kept, skipped = preferPublished(req, levels, fits)
	return kept, skipped, dropped
}

// keepDropped is fits without the plans of levels beyond levels
// (ladderFor) that are not the answer: kept is such a level that fits,
// that a published checkpoint runs and that no better fitting level a
// published checkpoint runs comes before, so the filter of the ladder and
// the preference for published levels agree. dropped is the fitting plans
// of the levels kept that way.
func keepDropped(req *planning, levels []quant.Level, fits []*planned) (kept, dropped []*planned) {
	onLadder := map[quant.Level]bool{}
	for _, l := range levels {
		onLadder[l] = true
	}
	published := false // a better fitting level a published checkpoint runs
	for _, pl := range fits {
		runs := runsPublished(req, pl)
		switch {
		case onLadder[pl.Level]:
			kept = append(kept, pl)
		case runs && !published:
			kept = append(kept, pl)
			dropped = append(dropped, pl)
		}
		published = published || runs
	}
	return kept, dropped
}

// keptRows is rows without those of the levels planned beyond levels
// (ladderFor) but the ones of dropped (keepDropped).
func keptRows(levels []quant.Level, rows []LevelRow, dropped []*planned) []LevelRow {
	keep := map[quant.Level]bool{}
	for _, l := range levels {
		keep[l] = true
	}
	for _, pl := range dropped {
		keep[pl.Level] = true
	}
	var out []LevelRow
	for _, r := range rows {
		if keep[quant.Level(r.Quant)] {
			out = append(out, r)
		}
	}
	return out
}

// droppedLine is the explanation's line for a plan at a level the ladder
// leaves out (keepDropped): the better level before it that is
// not larger, which no published file runs. "" when best is not one of
// dropped.
func droppedLine(req *planning, best *planned, dropped []*planned) string {
	if !slices.Contains(dropped, best) {
		return ""
	}
	better := smallerBetter(req, best.Level)
	return fmt.Sprintf("%s: %s would be smaller and better but no published file runs it; the ladder leaves out a worse level that is not smaller, except where a published file runs it and none runs the better, smaller levels that fit",
		best.Level, better)
}

// smallerBetter is the last level before l in the request's ladder whose
// weights are not larger than l's: the one monotone left l out for.
func smallerBetter(req *planning, l quant.Level) quant.Level {
	w := req.weights
	var out quant.Level
	for i, x := range w.levels {
		if x == l {
			break
		}
		if w.bytes[i] <= w.at(req.Model, l) {
			out = x
		}
	}
	return out
}
