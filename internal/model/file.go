package model

import (
	"io"
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
		return readModelFile(path, "gguf", ReadGGUF)
	case ".safetensors":
		return readModelFile(path, "safetensors", ReadSafetensors)
	}
	return nil, errs.New(errs.ModelFile, "model path %s: want a .gguf or .safetensors file or a directory with config.json", path)
}

// readModelFile reads one model file's header with read, the reader for
// format. The error names the file (its extension already says the format,
// so read's "format: " prefix is dropped) and a model without a name is
// named after the file.
func readModelFile(path, format string, read func(io.Reader) (*Model, error)) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, "model path")
	}
	defer f.Close()
	m, err := read(f)
	if err != nil {
		return nil, errs.New(errs.ModelFile, "%s: %s", path, strings.TrimPrefix(errs.MessageOf(err), format+": "))
	}
	if m.Name == "" {
		m.Name = strings.TrimSuffix(baseName(path), "."+format)
	}
	return m, nil
}
