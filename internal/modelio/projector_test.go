package modelio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// gemma3Projector writes the header of a Gemma 3 mmproj with the keys and
// values clip.cpp logged when it loaded the measured medgemma-27b-it
// projector (internal/calibration/data/llamacpp_mmproj.json: "projector:
// gemma3", "n_embd: 1152", "n_ff: 4304", "n_layer: 27", "image_size: 896",
// "patch_size: 14"; head count 16), and one tensor.
func gemma3Projector(kind string) []byte {
	var w ggufWriter
	w.header(3, 1, 9)
	w.kvString("general.architecture", "clip")
	w.kvString("clip.projector_type", kind)
	w.kvU32("clip.vision.image_size", 896)
	w.kvU32("clip.vision.patch_size", 14)
	w.kvU32("clip.vision.embedding_length", 1152)
	w.kvU32("clip.vision.feed_forward_length", 4304)
	w.kvU32("clip.vision.attention.head_count", 16)
	w.kvU32("clip.vision.block_count", 27)
	w.kvU32("clip.vision.projection_dim", 5376)
	w.tensor("mm.input_projection.weight", ggml.F16, 5376, 1152)
	return w.Bytes()
}

func TestReadProjectorGGUF(t *testing.T) {
	e, err := ReadProjectorGGUF(bytes.NewReader(gemma3Projector("gemma3")))
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, model.VisionEncoder{ImageSize: 896, PatchSize: 14, Hidden: 1152, Intermediate: 4304, Heads: 16, Layers: 27}, *e)

	// Another projector type is warmed up at a size of its own: no encoder.
	e, err = ReadProjectorGGUF(bytes.NewReader(gemma3Projector("qwen2.5vl_merger")))
	require.NoError(t, err)
	assert.Nil(t, e)

	// A language model's GGUF is not a projector.
	_, err = ReadProjectorGGUF(bytes.NewReader(tinyLlama()))
	require.Error(t, err)
	assert.Equal(t, errs.ModelFile, errs.CodeOf(err))
	assert.Contains(t, err.Error(), `not "clip"`)

	// Nor is a file that is not a GGUF.
	_, err = ReadProjectorGGUF(bytes.NewReader([]byte("not a gguf file at all")))
	require.Error(t, err)
}

func TestProjectorEncoderFromAFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mmproj-model-f16.gguf")
	require.NoError(t, os.WriteFile(p, gemma3Projector("gemma3"), 0o600))
	e, err := ProjectorEncoder(p)
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Equal(t, 4096, e.Patches())

	_, err = ProjectorEncoder(t.TempDir())
	require.Error(t, err, "a directory is not a projector file")
}
