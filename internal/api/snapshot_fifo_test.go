package api

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// A "snapshot" that names a FIFO held the calling thread for good: the
// archive was opened with a blocking open, which waits for a writer before
// the check that refuses what is not a regular file could run, whatever
// timeout_ms said (found by a hand-made probe while seeding the request
// members' fuzz target: no answer after 20 s with timeout_ms 1000). It is
// invalid_argument at once, from hwaccel_detect_json and from a planning
// request's detect options alike; a character device (/dev/null) too.
func TestSnapshotRefusesAFIFOAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.tar.gz")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, tc := range []struct {
		name string
		call func(context.Context, []byte, Env) []byte
		in   string
	}{
		{"detect", Detect, `{"snapshot":"` + fifo + `","timeout_ms":1000}`},
		{"plan", PlanSharding, `{"model":"llama-3.1-8b","detect":{"snapshot":"` + fifo + `","timeout_ms":1000}}`},
		{"detect /dev/null", Detect, `{"snapshot":"/dev/null","timeout_ms":1000}`},
	} {
		done := make(chan []byte, 1)
		go func() { done <- tc.call(context.Background(), []byte(tc.in), NoEnv) }()
		select {
		case ans := <-done:
			assert.Equal(t, errs.InvalidArgument, errorCode(t, ans), "%s: %s", tc.name, ans)
			assert.Contains(t, string(ans), "not a regular file", tc.name)
		case <-time.After(20 * time.Second):
			t.Errorf("%s: no answer after 20 s", tc.name)
		}
	}
}
