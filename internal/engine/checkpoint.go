package engine

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// checkpointFor is the published checkpoint of m that stores level l for
// an engine: a GGUF repository for a GGUF engine (llama.cpp), another for
// the rest (vLLM): the one the request named, else the first of the
// release it named (model.Model.Releases), else the first of the
// entry's other release, which the Load serves only with its warning
// (releaseSwitch): Llama-3.1-405B-Instruct at fp8 loads
// meta-llama/Llama-3.1-405B-Instruct-FP8, not the pretrained
// meta-llama/Llama-3.1-405B-FP8 listed before it. nil when none is
// published.
func checkpointFor(m *model.Model, l quant.Level, gguf bool) *model.Checkpoint {
	return pickCheckpoint(m, func(ck *model.Checkpoint) bool {
		return ck.IsGGUF() == gguf && storesLevel(ck, l)
	})
}

// pickCheckpoint is the checkpoint of m that match accepts: the named one
// (any type's file of a named GGUF repository: model.Model.Named), else
// the first of the named release, else the first of the other when
// the two releases share their config (model.Releases.ConfigsDiffer: the
// command of a base Qwen2.5-72B plan at 131072 tokens must not load the
// instruct AWQ, whose config.json allows 32768, which vLLM would refuse).
func pickCheckpoint(m *model.Model, match func(*model.Checkpoint) bool) *model.Checkpoint {
	for i := range m.Checkpoints {
		if m.Named(i) && match(&m.Checkpoints[i]) {
			return &m.Checkpoints[i]
		}
	}
	var other *model.Checkpoint
	for i := range m.Checkpoints {
		ck := &m.Checkpoints[i]
		switch {
		case !match(ck):
		case ck.Release == m.Releases.Named:
			return ck
		case other == nil && !m.Releases.ConfigsDiffer:
			other = ck
		}
	}
	return other
}

// storesLevel reports whether ck stores level l.
func storesLevel(ck *model.Checkpoint, l quant.Level) bool {
	cl, err := quant.Parse(ck.Quant)
	return err == nil && cl == l
}

// floatLevels are the float levels a Hugging Face engine converts between
// on load, in the order floatCheckpoint prefers them.
var floatLevels = []quant.Level{quant.BF16, quant.FP16, quant.FP32}

// floatCheckpoint is the published 16- or 32-bit float checkpoint of m a
// Hugging Face engine converts on load to another float level (--dtype) or
// quantizes to fp8: of the release the request named first (its
// repository is listed, model.nameRelease), then of the other; bf16
// first, then fp16 (Llama 2's and other float16 releases), then fp32; nil
// when none is published.
func floatCheckpoint(m *model.Model) *model.Checkpoint {
	for _, own := range []bool{true, false} {
		for _, l := range floatLevels {
			ck := pickCheckpoint(m, func(ck *model.Checkpoint) bool {
				return !ck.IsGGUF() && storesLevel(ck, l) && (ck.Release == m.Releases.Named) == own
			})
			if ck != nil {
				return ck
			}
		}
	}
	return nil
}

// preferNamed is, for a level a Hugging Face engine also reaches on load
// from a float checkpoint (the float levels by --dtype, fp8 by quantizing),
// the checkpoint it serves: the one stored at the level (atLevel), unless
// it is of the other release than the request named and the float one is
// of the named release (meta-llama/Llama-3.1-8B-Instruct, not the
// pretrained model's FP8, for the instruct release at fp8).
func preferNamed(m *model.Model, atLevel, float *model.Checkpoint) *model.Checkpoint {
	if atLevel == nil || (float != nil && float.Release == m.Releases.Named) {
		return float
	}
	return atLevel
}

// releaseSwitch is the warning of a Load that serves ck, a checkpoint of
// the other release of m's entry than the request named, at level l
// (model.Model.ReleaseSwitch); "" when ck is of the named release. An
// instruction-tuned release and its pretrained model share the
// architecture, so the plan's memory holds; unlike unpublishedNeed's level
// that no checkpoint stores, a command can serve this one, and the answer
// says whose weights they are.
func releaseSwitch(m *model.Model, ck *model.Checkpoint, l quant.Level, gguf bool) string {
	what := fmt.Sprintf("%s checkpoint", l)
	switch {
	case gguf:
		what = fmt.Sprintf("%s GGUF", l)
	case ck != nil && !storesLevel(ck, l):
		// Served by converting on load (--dtype, fp8).
		what = fmt.Sprintf("%s or 16- or 32-bit float checkpoint", l)
	}
	return m.ReleaseSwitch(ck, what)
}

// givenWeightsNeed is, for a Hugging Face engine (vLLM, SGLang), the
// checkpoint a plan at level l needs when the weights the user gave are
// stored at another level (m.FileQuant, read from the folder's, file's or
// fetched repository's tensor dtypes): those files hold that level, and
// serving them runs it, not the plan's (a bf16 folder planned at int4
// would load 16-bit weights into an int4 budget, issue 21 item 5). A
// 16-bit or 32-bit float folder still serves the float levels (--dtype
// converts) and onLoad (fp8, or int8 on TPU, quantized by the engine on
// load). ck is the catalog's checkpoint at l, named when there is one.
// "" when the given weights serve l, or when no weights were given or
// their level is not one the planner names (packed integer storage).
func givenWeightsNeed(m *model.Model, l quant.Level, onLoad bool, ck *model.Checkpoint) string {
	if m.FileQuant == "" {
		return ""
	}
	own, err := quant.Parse(m.FileQuant)
	if err != nil || own == l {
		return ""
	}
	if isFloat(own) && (isFloat(l) || onLoad) {
		return ""
	}
	if ck != nil {
		return fmt.Sprintf("%s (%s); the given weights are stored as %s", ck.Repo, l, own)
	}
	return fmt.Sprintf("a checkpoint of this model stored at %s%s; the given weights are stored as %s", l, formatsOf[l], own)
}

// unpublishedNeed is what an engine that loads pre-quantized checkpoints
// needs to run catalog model m at level l when none of m's published
// checkpoints is stored at l and the engine does not quantize to l on
// load: the answer names that checkpoint (Load.Needs) instead of a command
// that would load the wrong weights or a placeholder.
func unpublishedNeed(m *model.Model, l quant.Level) *Load {
	none := "the catalog knows none published"
	if ck := otherReleaseAt(m, l); ck != nil {
		none = fmt.Sprintf("the catalog knows %s, a checkpoint of the other release, whose config differs (name that release to plan it)", ck.Repo)
	}
	return &Load{Quant: string(l), Needs: fmt.Sprintf("a checkpoint of %s stored at %s%s; %s", m.Name, l, formatsOf[l], none)}
}

// otherReleaseAt is the first Hugging Face checkpoint of the other release
// of m's entry than the request named that stores level l, which
// pickCheckpoint does not serve because the releases' configs differ
// (model.Releases.ConfigsDiffer); nil otherwise.
func otherReleaseAt(m *model.Model, l quant.Level) *model.Checkpoint {
	if !m.Releases.ConfigsDiffer {
		return nil
	}
	for i := range m.Checkpoints {
		ck := &m.Checkpoints[i]
		if !ck.IsGGUF() && storesLevel(ck, l) && ck.Release != m.Releases.Named {
			return ck
		}
	}
	return nil
}

// formatsOf names the published formats that store a level, for Needs.
var formatsOf = map[quant.Level]string{
	quant.INT4: " (AWQ, GPTQ or compressed-tensors)", quant.INT8: " (GPTQ or compressed-tensors W8A16/W8A8)",
	quant.FP8: " (FP8)", quant.MXFP4: " (MXFP4)",
}

// isFloat reports whether l is a 16- or 32-bit float level.
func isFloat(l quant.Level) bool {
	return l == quant.BF16 || l == quant.FP16 || l == quant.FP32
}

// servedModel is the model a Hugging Face engine's command serves: the
// directory or name the user gave, unless the plan needs another
// checkpoint (Load.Needs), then that one's repository; ok is false when
// it needs one that is not published, and no command can run the plan.
func servedModel(s Served) (m string, ok bool) {
	if s.Load.Needs == "" {
		if s.Dir != "" {
			return s.Dir, true
		}
		return s.Load.Repo, true
	}
	return s.Load.Repo, s.Load.Repo != ""
}

// FileLoader is implemented by an engine that loads a published GGUF file
// by itself (llama.cpp's -hf REPO:TYPE), so that the planner can charge what
// that file holds (model.Checkpoint.SizeMix) without naming the engine.
type FileLoader interface {
	// LoadedFile is the published GGUF checkpoint the engine loads to run
	// m at level l, nil when none is published.
	LoadedFile(m *model.Model, l quant.Level) *model.Checkpoint
	// MainlineMix names the mix of GGUF type t that the weights the
	// planner derives follow (quant.FileExtraBytes), against which a
	// published file of other rules is larger: "mainline llama.cpp's
	// Q4_K_M mix".
	MainlineMix(t string) string
}

// MainlineMix implements FileLoader: the planner's GGUF sizes follow the
// mix llama-quantize of mainline llama.cpp writes for each type.
func (llamaCPP) MainlineMix(t string) string { return "mainline llama.cpp's " + t + " mix" }

// LoadedFile is the published GGUF checkpoint llama.cpp's command loads
// to run m at level l (Load: the file of the GGUF type l means there,
// Q4_K_M for int4), nil when none is published.
func (llamaCPP) LoadedFile(m *model.Model, l quant.Level) *model.Checkpoint {
	if m == nil {
		return nil
	}
	return checkpointFor(m, l.LlamaCPPLevel(), true)
}
