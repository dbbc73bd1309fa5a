package model

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// FromPath reads a model file's header: a .gguf file, a .safetensors file, or
// a directory holding config.json and *.safetensors. Tensor data is never
// read.
func FromPath(path string) (*Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, "model path")
	}
	if st.IsDir() {
		return fromDir(path)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".gguf":
		return readGGUFFile(path)
	case ".safetensors":
		return readSafetensorsFile(path)
	}
	return nil, errs.New(errs.ModelFile, "model path %s: want a .gguf or .safetensors file or a directory with config.json", path)
}
