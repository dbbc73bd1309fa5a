package api

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// A "snapshot_out" that names a FIFO blocked the calling thread for good:
// the archive was opened for writing with a blocking open, which waits for
// a reader, whatever timeout_ms said (20 s with timeout_ms 1000, cut off).
// Like "snapshot", which refuses what is not a regular file, it is
// invalid_argument at once; a character device (/dev/null) is refused as
// well, and a regular file is still written.
func TestSnapshotOutRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	fixture := filepath.Join("..", "..", "testdata", "machines", "cpu-only", "root")
	root, err := filepath.Abs(fixture)
	require.NoError(t, err)
	for _, out := range []string{fifo, "/dev/null"} {
		done := make(chan []byte, 1)
		go func() {
			done <- Detect(context.Background(), []byte(`{"sysroot":"`+root+`","no_exec":true,"timeout_ms":1000,"snapshot_out":"`+out+`"}`), NoEnv)
		}()
		select {
		case ans := <-done:
			assert.Equal(t, errs.InvalidArgument, errorCode(t, ans), "%s: %s", out, ans)
			assert.Contains(t, string(ans), "not a regular file", out)
		case <-time.After(20 * time.Second):
			t.Fatalf("snapshot_out %s: no answer after 20 s", out)
		}
	}
	file := filepath.Join(dir, "m.tar.gz")
	ans := Detect(context.Background(), []byte(`{"sysroot":"`+root+`","no_exec":true,"snapshot_out":"`+file+`"}`), NoEnv)
	assert.NotContains(t, string(ans), `"error"`, "%s", ans)
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Positive(t, st.Size())
}
