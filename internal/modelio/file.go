package modelio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// maxModelReadTime bounds the time spent reading one request's model files
// (every header of a directory together). A regular file on a local disk
// gives its largest accepted header (1 GiB of GGUF) in a few seconds; a
// hung network file system must not hold a planning call forever.
const maxModelReadTime = 30 * time.Second

// FromPath reads a model file's header: a .gguf file, a .safetensors file, or
// a directory holding config.json and *.safetensors. Tensor data is never
// read.
func FromPath(path string) (*model.Model, error) {
	return fromPath(path, time.Now().Add(maxModelReadTime))
}

func fromPath(path string, deadline time.Time) (*model.Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, "model path")
	}
	if st.IsDir() {
		return fromDir(path, deadline)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".gguf":
		return readModelFile(path, "gguf", ReadGGUF, deadline)
	case ".safetensors":
		return readModelFile(path, "safetensors", ReadSafetensors, deadline)
	}
	return nil, errs.New(errs.ModelFile, "model path %s: want a .gguf or .safetensors file or a directory with config.json", path)
}

// readModelFile reads one model file's header with read, the reader for
// format. The error names the file (its extension already says the format,
// so read's "format: " prefix is dropped) and a model without a name is
// named after the file.
func readModelFile(path, format string, read func(io.Reader) (*model.Model, error), deadline time.Time) (*model.Model, error) {
	f, err := openModelFile(path, deadline)
	if err != nil {
		return nil, err
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

// modelFile reads a regular file up to the size it had when opened, and
// fails once the request's read deadline has passed.
type modelFile struct {
	f        *os.File
	left     int64
	deadline time.Time
}

// errReadTimeout: the model files of one request took longer than
// maxModelReadTime to read.
var errReadTimeout = fmt.Errorf("reading the model header took longer than %v", maxModelReadTime)

// openModelFile opens path for reading a header, refusing anything but a
// regular file with model_file, the one code for "this path is not a model
// file" (issue 23 item 13: a device answered invalid_argument, every other
// non-model file model_file). O_NONBLOCK makes the open itself
// return at once for a FIFO without a writer (open(2)); fstat on the opened
// descriptor (not a stat of the name, which could be swapped in between)
// then refuses FIFOs, devices (/dev/zero), sockets and directories, whose
// reads could block or never end. Reads stop at the size fstat gave, so a
// file growing while it is read is read as it was (issue 14 item 2).
func openModelFile(path string, deadline time.Time) (*modelFile, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, "model path")
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errs.Wrap(errs.ModelFile, err, "model path")
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, errs.New(errs.ModelFile, "model path %s is %s, not a regular file", path, fileKind(st.Mode()))
	}
	return &modelFile{f: f, left: st.Size(), deadline: deadline}, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

func (m *modelFile) Read(p []byte) (int, error) {
	if m.left <= 0 {
		return 0, io.EOF
	}
	if time.Now().After(m.deadline) {
		return 0, errReadTimeout
	}
	if int64(len(p)) > m.left {
		p = p[:m.left]
	}
	n, err := m.f.Read(p)
	m.left -= int64(n)
	if errors.Is(err, io.EOF) && m.left > 0 {
		// Shrunk while read: the bytes fstat promised are not there.
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func (m *modelFile) Close() error { return m.f.Close() }

// Len is how many bytes are left to read.
func (m *modelFile) Len() int { return int(m.left) }

// baseName is what follows the last slash of a path, the name a model
// without one gets from its file (the rule of baseName in
// internal/model/catalog.go, where it drops a Hugging Face organisation).
func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}
