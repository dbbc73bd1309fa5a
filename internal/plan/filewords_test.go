package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// The note that a published file's MTP layers are not charged said
// "which llama.cpp skips at load" whatever engine loads the file
// (engine.FileLoader); the planner leaves them out for every engine that
// loads a file (quant.FileExtraBytes), and the note now names the engine
// that loads it. llama.cpp's note is the old one (no golden holds it).
func TestMTPNoteNamesTheEngineThatLoadsTheFile(t *testing.T) {
	ck := &model.Checkpoint{Quant: "q4_k_m", Method: "gguf", FileMTP: "layer", SizeMix: "other rules"}
	l, ok := engine.Lookup("llama.cpp")
	require.True(t, ok)
	assert.Equal(t, ", less its MTP layers, which llama.cpp skips at load", mtpLeftOut(l, ck))
	assert.Equal(t, ", less its MTP layers, which HostServe skips at load", mtpLeftOut(hostServer{l}, ck))
	assert.Empty(t, mtpLeftOut(l, &model.Checkpoint{Quant: "q4_k_m", Method: "gguf"}))
}
