// A published GGUF file made by rules other than mainline llama.cpp's
// (model.Checkpoint.SizeMix) can be larger than the weights the planner
// derives from mainline's mix: a plan that loads it charges the file.

package plan

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// loadedFile is the published GGUF checkpoint engine e loads to run level
// l (engine.FileLoader: llama.cpp's -hf REPO:TYPE), nil for an engine that
// loads no such file, a level no published file stores, or a model given
// as weights (FileQuant: they are sized as given).
func (r *planning) loadedFile(e engine.Engine, l quant.Level) *model.Checkpoint {
	f, ok := e.(engine.FileLoader)
	if !ok || r.Model.FileQuant != "" {
		return nil
	}
	return f.LoadedFile(r.Model, l)
}

// fileExtra is what the file e loads at level l holds beyond the weights
// derived from mainline llama.cpp's mix (quant.FileExtraBytes): a file
// made by other rules (the checkpoint's size_mix) is charged as published,
// the extra spread over the layers with the rest of their weights
// (newCosts), the routed experts' share of it in the experts (fileExperts).
// 0 where the derived weights are what loads.
func (r *planning) fileExtra(e engine.Engine, l quant.Level) int64 {
	ck := r.loadedFile(e, l)
	if ck == nil {
		return 0
	}
	return quant.FileExtraBytes(r.Model, l.LlamaCPPLevel(), *ck)
}

// fileExperts is the routed experts of the file e loads at level l where
// it holds more than the weights derived (quant.FileRoutedExperts: the
// extra in the experts where the rules that made the file put it there),
// nil where the level's mix is what loads or the model has no experts.
func (r *planning) fileExperts(e engine.Engine, l quant.Level) *quant.RoutedExperts {
	ck := r.loadedFile(e, l)
	if ck == nil {
		return nil
	}
	x, ok := quant.FileRoutedExperts(r.Model, l.LlamaCPPLevel(), *ck)
	if !ok {
		return nil
	}
	return &x
}

// fileLine is the explanation's line for a plan whose engine loads a
// published file larger than the weights derived (fileExtra): which file,
// its size, how much more than mainline llama.cpp's mix of the type and
// which rules made it. A refusal (pl does not fit) says the same of the
// file it tried, whose size its "needs" figure counts: without it the
// weights read tens of GB above the type's usual size with no cause
// (Laguna-S-2.1's Q4_K_M, 96 GB where mainline's mix is 70.8 GB), and a
// file of mainline's mix (llama-quantize's) may fit where this one does
// not. "" for any other plan.
func fileLine(req *planning, pl *planned) string {
	f, ok := fileOf(req, pl)
	if !ok {
		return ""
	}
	charged := "the plan charges the file"
	if !pl.Fits {
		charged = "the memory it needs counts the file"
	}
	return fmt.Sprintf("weights: %s is %.2f GB, %.1f GB more than %s of this shape: %s; %s%s",
		f.name, float64(f.ck.SizeBytes)/1e9, float64(f.extra)/1e9, f.mix, f.ck.SizeMix, charged, mtpLeftOut(pl.Pool.engine(), f.ck))
}

// fileRowNote is the levels table's reason for a fitting row whose plan pl
// loads a published file larger than mainline llama.cpp's mix of its type
// (fileExtra): its figure counts the file, so it may exceed a better
// level's. Laguna-S-2.1 on dgx-h100 under llama.cpp listed q4_k_m at 102.2
// GiB beside q5_k_m at 90.1 GiB with no word why (Poolside's Q4_K_M keeps
// its signal path at Q8_0: 96 GB); fileLine said so only of the level
// chosen. "" for any other plan.
func fileRowNote(req *planning, pl *planned) string {
	f, ok := fileOf(req, pl)
	if !ok {
		return ""
	}
	return fmt.Sprintf("sized as the published %s (%.2f GB, %.1f GB more than %s: %s)%s",
		f.name, float64(f.ck.SizeBytes)/1e9, float64(f.extra)/1e9, f.mix, f.ck.SizeMix, mtpLeftOut(pl.Pool.engine(), f.ck))
}

// publishedFile is the published GGUF file a plan loads where it holds
// more than mainline llama.cpp's mix of its type: the checkpoint, its name
// in words (repository and file), the bytes beyond the mix and the type.
type publishedFile struct {
	ck    *model.Checkpoint
	name  string
	extra int64
	// mix names the mix of the file's type the derived weights follow, in
	// the engine's words (engine.FileLoader.MainlineMix).
	mix string
}

// fileOf is the published file pl's engine loads where it is larger than
// the weights derived (fileExtra); ok false for any other plan.
func fileOf(req *planning, pl *planned) (publishedFile, bool) {
	if pl == nil || pl.Pool == nil {
		return publishedFile{}, false
	}
	e := pl.Pool.engine()
	l := engine.WeightsLevel(e, pl.Level)
	extra := req.fileExtra(e, l)
	if extra <= 0 {
		return publishedFile{}, false
	}
	ck := req.loadedFile(e, l)
	t := l.LlamaCPPLevel().GGUFType()
	name := ck.Repo + ":" + t
	if ck.File != "" {
		name = ck.Repo + " " + ck.File
	}
	// loadedFile found ck through the engine's FileLoader.
	return publishedFile{ck: ck, name: name, extra: extra, mix: e.(engine.FileLoader).MainlineMix(t)}, true
}

// mtpLeftOut says that a file's MTP layers (model.Checkpoint.FileMTP),
// which engine e, loading the file, skips at load (llama.cpp does;
// quant.FileExtraBytes leaves them out for every engine that loads a
// file), are not charged: "" for a file without them.
func mtpLeftOut(e engine.Engine, ck *model.Checkpoint) string {
	if ck.FileMTP == "" {
		return ""
	}
	return ", less its MTP layers, which " + e.Title() + " skips at load"
}
