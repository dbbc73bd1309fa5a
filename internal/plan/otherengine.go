package plan

import (
	"fmt"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// otherEngineFits is the explanation's line for a refused request that named
// no engine, when another engine that also runs on the refused pool's
// devices (engine.Alternatives: llama.cpp beside vLLM on a CUDA GPU) holds
// the model: a refusal under the default engine alone told the owner of an
// 8 GiB GPU that an 8B model does not fit, where llama.cpp runs it in a
// 4-bit GGUF. The other engine's plan is the request with that engine named
// and the last level the default engine was refused at (int4, or a model's
// published format), one level rather than the other engine's whole ladder
// (then, under quant auto, named as the hint's command plans it):
// llama.cpp's reaches iq1_s, a quality nobody should be pointed to, and
// each level walked is one more plan of the request. (Walking it is no
// longer slow on a hostile shape: the i-quant levels' raised ffn_down layers
// are counted once per model and level since 164581ef, and
// TestHostileShapesAreBounded plans llama.cpp at 60000 layers on 4096
// devices within its time bound.)
//
// Where no engine fits at that level and the request asked for quant auto,
// the line names the best level of an engine's own ladder below it that
// fits (lowerLevelFits): on a DGX Spark, where llama.cpp is the default,
// Qwen3-235B-A22B's Q4_K_M file outweighs the GPU and Q3_K_M fits; the
// line names what "engine": "llama.cpp" with quant auto plans there, the
// published Q2_K where no Q3_K_M file is published.
func otherEngineFits(r *planning, ch *choice) (string, bool) {
	pl := &ch.Plan
	if r.Engine != "" || pl.Pool == nil || len(pl.Pool.Devices) == 0 || !pl.Pool.Budget.ByDefault || len(ch.Rows) == 0 {
		return "", false
	}
	last := quant.Level(ch.Rows[len(ch.Rows)-1].Quant)
	alternatives := otherEngines(r.engineRule(), &pl.Pool.Devices[0].Dev)
	for _, e := range alternatives {
		a, ok := fitsNamed(r.Request, e, last)
		if !ok {
			continue
		}
		if r.Quant == "auto" {
			// The hint's command names the engine only, so quant auto:
			// the line names what that plans (Llama-3.1-8B on an 8 GiB
			// laptop GPU: llama.cpp's published Q5_K_M, not the Q4_K_M
			// of int4), which fits since the level refused last does.
			if b, ok := fitsNamed(r.Request, e, "auto"); ok {
				a = b
			}
		}
		return fmt.Sprintf("engine %s fits it: %s on %s; plan it with %s",
			e.Name(), a.Quant, whereFits(a), HintEngine(e.Name())), true
	}
	return lowerLevelFits(r.Request, ch, last, append([]engine.Engine{pl.Pool.engine()}, alternatives...))
}

// lowerLevelFits is otherEngineFits's line for a level below the last
// refused one, tried on engines in order (the default first) down their
// own ladders (engine.LevelsBelow), best first. Only under quant auto over
// several levels: a level the request named (or a model file's own type)
// is the answer asked for, and a refusal of it says so. Where one fits,
// the line names what the engine's own plan under quant auto chooses
// (autoBelow), so the line and that plan agree.
func lowerLevelFits(r *Request, ch *choice, last quant.Level, engines []engine.Engine) (string, bool) {
	if r.Quant != "auto" || len(ch.Rows) < 2 {
		return "", false
	}
	for _, e := range engines {
		for _, lo := range engine.LevelsBelow(e, last) {
			a, ok := fitsNamed(r, e, lo.Level)
			if !ok {
				continue
			}
			a, quality, also := autoBelow(r, e, last, lo, a)
			return fmt.Sprintf("engine %s fits it at a lower level: %s on %s (%s)%s; plan it with %s and %s",
				e.Name(), a.Quant, whereFits(a), quality, also, HintEngine(e.Name()), HintQuant(a.Quant)), true
		}
	}
	return "", false
}

// autoBelow is the plan of r with engine e named under quant auto, which
// fits where lo (a level below last) does, with its level's quality
// against last, where it chooses another level than lo because no
// published file runs lo (quant auto prefers a level a published file
// runs, preferPublished): Qwen3-235B-A22B on a DGX Spark fits q3_k_m, of
// which no GGUF is published, and llama.cpp plans unsloth's Q2_K. also
// then says that lo fits without one. Else a (lo's plan) with lo's
// quality.
func autoBelow(r *Request, e engine.Engine, last quant.Level, lo engine.LowerLevel, a *ShardingAnswer) (*ShardingAnswer, string, string) {
	if ld, ok := a.Load[e.Name()]; ok && ld.Repo != "" && ld.Needs == "" {
		return a, lo.Quality, ""
	}
	b, ok := fitsNamed(r, e, "auto")
	if !ok || b.Quant == a.Quant {
		return a, lo.Quality, ""
	}
	quality := engine.QualityBelow(e, quant.Level(b.Quant), last)
	if quality == "" {
		return a, lo.Quality, ""
	}
	return b, quality, fmt.Sprintf("; %s also fits but no published file runs it", a.Quant)
}

// fitsNamed plans r with engine e named at level l; ok when it fits.
func fitsNamed(r *Request, e engine.Engine, l quant.Level) (*ShardingAnswer, bool) {
	named := *r
	named.Engine, named.Quant = e.Name(), string(l)
	a, err := PlanSharding(&named)
	if err != nil || !a.Fits.Yes() {
		return nil, false
	}
	return a, true
}

// whereFits is the devices of a fitting answer and its strategy when it has
// one: "cuda:0", "cuda:0, cuda:1, pipeline parallel".
func whereFits(a *ShardingAnswer) string {
	var ids []string
	for _, s := range a.Shards {
		ids = append(ids, s.DeviceID)
	}
	how := ""
	if a.Strategy != "" && a.Strategy != "none" {
		how = ", " + strings.ReplaceAll(a.Strategy, "_", " ")
	}
	return strings.Join(ids, ", ") + how
}

// publishedElsewhere is the explanation's line for a fitting plan that no
// published checkpoint runs under the default engine, where the request
// named no engine and asked for quant auto, when another engine on the
// plan's devices (engine.Alternatives) plans it, named with quant auto, at
// a level a published checkpoint runs: on a DGX H100 vLLM fits DeepSeek-R1
// only at int4, of which nothing is published (its FP8 release needs more
// than the 8 GPUs), while llama.cpp runs unsloth's Q6_K GGUF. The line
// names what the hint's command plans, as otherEngineFits does for a
// refusal.
func publishedElsewhere(r *planning, ch *choice) (string, bool) {
	pl := &ch.Plan
	if r.Engine != "" || !pl.Fits || pl.Pool == nil || len(pl.Pool.Devices) == 0 || !pl.Pool.Budget.ByDefault {
		return "", false
	}
	if !prefersPublished(r, rowLevels(ch.Rows)) || runsPublished(r, pl) {
		return "", false
	}
	for _, e := range otherEngines(r.engineRule(), &pl.Pool.Devices[0].Dev) {
		a, ok := fitsNamed(r.Request, e, "auto")
		if !ok {
			continue
		}
		ld, ok := a.Load[e.Name()]
		if !ok || ld.Repo == "" || ld.Needs != "" {
			continue
		}
		ref := ld.Repo
		if ld.GGUFType != "" {
			ref += ":" + ld.GGUFType
		}
		return fmt.Sprintf("no published checkpoint runs it under %s; engine %s runs %s on %s; plan it with %s",
			pl.Pool.engine().Title(), e.Name(), ref, whereFits(a), HintEngine(e.Name())), true
	}
	return "", false
}

// rowLevels is the levels of the levels table's rows.
func rowLevels(rows []LevelRow) []quant.Level {
	out := make([]quant.Level, len(rows))
	for i, row := range rows {
		out[i] = quant.Level(row.Quant)
	}
	return out
}
