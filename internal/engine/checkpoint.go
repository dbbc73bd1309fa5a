package engine

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// checkpointFor is the published checkpoint of m that stores level l for
// an engine: a GGUF repository for a GGUF engine (llama.cpp), another for
// the rest (vLLM); the one the request named first. nil when none is
// published.
func checkpointFor(m *model.Model, l quant.Level, gguf bool) *model.Checkpoint {
	var found *model.Checkpoint
	for i := range m.Checkpoints {
		ck := &m.Checkpoints[i]
		if ck.IsGGUF() != gguf {
			continue
		}
		if cl, err := quant.Parse(ck.Quant); err != nil || cl != l {
			continue
		}
		if i == m.NamedCheckpoint {
			return ck
		}
		if found == nil {
			found = ck
		}
	}
	return found
}

// floatCheckpoint is the published 16- or 32-bit float checkpoint of m a
// Hugging Face engine converts on load to another float level (--dtype) or
// quantizes to fp8: bf16 first, then fp16 (Llama 2's and other float16
// releases), then fp32; nil when none is published.
func floatCheckpoint(m *model.Model) *model.Checkpoint {
	for _, l := range []quant.Level{quant.BF16, quant.FP16, quant.FP32} {
		if ck := checkpointFor(m, l, false); ck != nil {
			return ck
		}
	}
	return nil
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
	return &Load{Quant: string(l), Needs: fmt.Sprintf("a checkpoint of %s stored at %s%s; the catalog knows none published", m.Name, l, formatsOf[l])}
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
