package modelio

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// resolveWithin resolves a model path, failing the test (instead of hanging
// it) when that takes longer than limit.
func resolveWithin(t *testing.T, path string, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Resolve(model.Spec{Path: path})
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("resolving %s still blocked after %v", path, limit)
		return nil
	}
}

// Issue 14 item 2: a FIFO, a device or a directory given where a model file
// is expected is refused at once; it used to block planning forever (open of
// a FIFO without a writer, endless reads). Issue 23 item 13: with model_file,
// the code of every other "not a model file" answer (was invalid_argument).
func TestSpecialFilesAsModelPathsAreRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := func(name string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, syscall.Mkfifo(p, 0o600))
		return p
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.Symlink(target, p))
		return p
	}
	modelDir := func(name string, files func(d string)) string {
		d := filepath.Join(dir, name)
		require.NoError(t, os.Mkdir(d, 0o700))
		files(d)
		return d
	}
	goodConfig := `{"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128}`
	paths := map[string]string{
		"fifo gguf":             fifo("m.gguf"),
		"fifo safetensors":      fifo("m.safetensors"),
		"/dev/zero gguf":        link("zero.gguf", "/dev/zero"),
		"/dev/zero safetensors": link("zero.safetensors", "/dev/zero"),
		"fifo config.json":      modelDir("d1", func(d string) { require.NoError(t, syscall.Mkfifo(filepath.Join(d, "config.json"), 0o600)) }),
		"/dev/zero config.json": modelDir("d2", func(d string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(d, "config.json")))
		}),
		"directory config.json": modelDir("d3", func(d string) { require.NoError(t, os.Mkdir(filepath.Join(d, "config.json"), 0o700)) }),
		"fifo shard": modelDir("d4", func(d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, "config.json"), []byte(goodConfig), 0o600))
			require.NoError(t, syscall.Mkfifo(filepath.Join(d, "model-00001.safetensors"), 0o600))
		}),
		"directory shard": modelDir("d5", func(d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, "config.json"), []byte(goodConfig), 0o600))
			require.NoError(t, os.Mkdir(filepath.Join(d, "model-00001.safetensors"), 0o700))
		}),
	}
	for name, p := range paths {
		err := resolveWithin(t, p, 5*time.Second)
		require.Error(t, err, name)
		assert.Equal(t, errs.ModelFile, errs.CodeOf(err), "%s: %v", name, err)
		assert.Contains(t, errs.MessageOf(err), "not a regular file", name)
	}
}

// A file growing while it is read is read up to the size it had when
// opened: bytes appended after the open (a download still in progress, a
// writer appending faster than the header is parsed) are never read, so a
// header length that the file grows into cannot keep the reader going.
func TestGrowingModelFileIsReadAsOpened(t *testing.T) {
	p := filepath.Join(t.TempDir(), "growing.safetensors")
	var head [8]byte
	binary.LittleEndian.PutUint64(head[:], 1<<20)
	require.NoError(t, os.WriteFile(p, append(head[:], '{'), 0o600))
	f, err := openModelFile(p, time.Now().Add(time.Minute))
	require.NoError(t, err)
	defer f.Close()
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = w.Write(make([]byte, 2<<20)) // grows past the claimed header
	require.NoError(t, err)
	require.NoError(t, w.Close())
	err = (&safetensorsSummary{byDType: map[string]int64{}}).add(f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "truncated: 1 of 1048576 bytes")
}

// Reading model files stops at the request's deadline (maxModelReadTime).
func TestModelReadDeadline(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, os.WriteFile(p, tinyLlama(), 0o600))
	_, err := fromPath(p, time.Now().Add(-time.Second))
	require.Error(t, err)
	assert.Equal(t, errs.ModelFile, errs.CodeOf(err))
	assert.Contains(t, errs.MessageOf(err), "took longer than")
	_, err = fromPath(p, time.Now().Add(time.Minute))
	assert.NoError(t, err)
}
