package modelio

import (
	"errors"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// ProjectorEncoder reads the header of a multimodal projector file (an
// mmproj GGUF, general.architecture "clip") and returns the vision encoder
// whose compute buffer llama.cpp's mtmd sizes from it
// (quant.ProjectorComputeBytes), or nil for a projector it warms up at
// another size. The read is bounded as a model file's is (openModelFile).
func ProjectorEncoder(path string) (*model.VisionEncoder, error) {
	f, err := openModelFile(path, time.Now().Add(maxModelReadTime))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadProjectorGGUF(f)
}

// ReadProjectorGGUF reads an mmproj GGUF header (ProjectorEncoder). The keys
// are clip.cpp's (tools/mtmd/clip-impl.h of ggml-org/llama.cpp):
// clip.projector_type (or clip.vision.projector_type in a file with audio
// too) and clip.vision.image_size, .patch_size, .embedding_length,
// .feed_forward_length, .attention.head_count, .block_count. Only the
// "gemma3" projector is warmed up on one image of image_size pixels (clip.cpp
// keeps warmup_image_size = image_size for PROJECTOR_TYPE_GEMMA3); the
// others choose a warm-up size per type and give nil.
func ReadProjectorGGUF(r io.Reader) (*model.VisionEncoder, error) {
	h, err := readGGUF(r)
	if err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, "mmproj")
	}
	if a := h.strs["general.architecture"]; a != "clip" {
		return nil, errs.New(errs.ModelFile, "mmproj: general.architecture is %q, not \"clip\"", a)
	}
	kind := h.strs["clip.vision.projector_type"]
	if kind == "" {
		kind = h.strs["clip.projector_type"]
	}
	if !strings.EqualFold(kind, "gemma3") {
		return nil, nil
	}
	num := func(key string) int {
		v := h.nums["clip.vision."+key]
		if v <= 0 || v >= model.MaxDim || v != math.Trunc(v) {
			return 0
		}
		return int(v)
	}
	e := &model.VisionEncoder{
		ImageSize: num("image_size"), PatchSize: num("patch_size"), Hidden: num("embedding_length"),
		Intermediate: num("feed_forward_length"), Heads: num("attention.head_count"), Layers: num("block_count"),
	}
	if e.ImageSize == 0 || e.PatchSize == 0 || e.Hidden == 0 || e.Heads == 0 || e.ImageSize/e.PatchSize > model.MaxPatchSide {
		return nil, errs.Wrap(errs.ModelFile, errors.New("a gemma3 projector without its image_size, patch_size, embedding_length and head_count"), "mmproj")
	}
	return e, nil
}
