package engine

import (
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
