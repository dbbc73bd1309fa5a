package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/snapshot"
)

// replayOf writes rec and reads it back.
func replayOf(t *testing.T, rec *snapshot.Recorder) *snapshot.Snapshot {
	t.Helper()
	var buf bytes.Buffer
	_, err := rec.WriteTo(&buf)
	require.NoError(t, err)
	s, err := snapshot.Read(&buf, snapshot.DefaultLimits)
	require.NoError(t, err)
	return s
}

// Every kind of run a Runner reports replays to the same warning (code,
// message, exit code) and the same kind of error; a tool that was missing
// is missing on replay, and a tool only looked up is found.
func TestRecordedRunsReplayTheSameWarnings(t *testing.T) {
	const resolved = "/home/someone/tools/nvidia-smi"
	results := map[string]Result{
		"ok":         {Path: resolved, Stdout: []byte("GPU 0: NVIDIA H100\n")},
		"exit":       {Path: resolved, Stderr: []byte("NVIDIA-SMI has failed\n"), ExitCode: 9, Err: fmt.Errorf("exit status 9: %w", ErrExit)},
		"start":      {Path: resolved, ExitCode: -1, Err: fmt.Errorf("fork/exec %s: permission denied: %w", resolved, ErrExit)},
		"timeout":    {Path: resolved, ExitCode: -1, Err: fmt.Errorf("killed after 5s: %w", ErrTimeout)},
		"large":      {Path: resolved, ExitCode: -1, Err: fmt.Errorf("printed more than %d bytes: %w", MaxToolOutput, ErrTooLarge)},
		"incomplete": {Path: resolved, Stdout: []byte("partial"), Err: fmt.Errorf("stdout still open: %w", ErrOutputIncomplete)},
		"missing":    {Err: fmt.Errorf("nvidia-smi: %w", ErrToolMissing)},
	}
	live := &countingRunner{has: map[string]bool{"nvidia-smi": true, "system_profiler": true},
		fn: func(_ context.Context, _ string, args []string) Result { return results[args[0]] }}
	src, err := SysrootSource(filepath.Join("..", "..", "..", "testdata", "machines", "cpu-only", "root"))
	require.NoError(t, err)
	rec := snapshot.NewRecorder(src, snapshot.Options{Created: time.Unix(0, 0), KeepIDs: true})
	recording := RecordingRunner(live, rec)
	for arg := range results {
		recording.Run(context.Background(), "nvidia-smi", arg)
	}
	assert.True(t, recording.(interface{ Has(string) bool }).Has("system_profiler"))
	assert.False(t, recording.(interface{ Has(string) bool }).Has("rocm-smi"))

	s := replayOf(t, rec)
	replay := SnapshotRunner(s)
	for arg, want := range results {
		got := replay.Run(context.Background(), "nvidia-smi", arg)
		if arg == "missing" {
			assert.ErrorIs(t, got.Err, ErrToolMissing)
			continue
		}
		assert.Equal(t, string(want.Stdout), string(got.Stdout), arg)
		assert.Equal(t, want.ExitCode, got.ExitCode, arg)
		for _, kind := range []error{ErrExit, ErrTimeout, ErrTooLarge, ErrOutputIncomplete} {
			assert.Equal(t, errors.Is(want.Err, kind), errors.Is(got.Err, kind), "%s: %v", arg, kind)
		}
		if want.Err == nil {
			assert.NoError(t, got.Err, arg)
			continue
		}
		ww, gw := ToolWarning("cuda", "nvidia-smi", []string{arg}, want), ToolWarning("cuda", "nvidia-smi", []string{arg}, got)
		assert.Equal(t, ww.Code, gw.Code, arg)
		assert.Equal(t, ww.ExitCode, gw.ExitCode, arg)
		assert.Equal(t, strings.ReplaceAll(ww.Message, resolved, "nvidia-smi"), gw.Message, arg)
		assert.NotContains(t, gw.Message, "/home/someone", "the resolved path is not kept")
	}
	has := replay.(interface{ Has(string) bool })
	assert.True(t, has.Has("nvidia-smi"), "ran")
	assert.True(t, has.Has("system_profiler"), "looked up and found")
	assert.False(t, has.Has("rocm-smi"), "looked up, not found")
	_, ran := s.Tool("nvidia-smi", "missing")
	assert.False(t, ran, "a missing tool is not recorded")
}

// A capture reads each file whole, and the view applies its limits as on
// the live tree: a head read gets the first bytes, a read of a longer file
// fails, and the replay answers both the same way.
func TestRecordedSourceKeepsReadLimits(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "proc"), 0o755))
	long := strings.Repeat("processor\t: 0\n", 10000) // 140 KB, over MaxFileBytes
	require.NoError(t, os.WriteFile(filepath.Join(dir, "proc", "cpuinfo"), []byte(long), 0o644))
	live, err := New(Config{Sysroot: dir})
	require.NoError(t, err)
	src, err := SysrootSource(dir)
	require.NoError(t, err)
	rec := snapshot.NewRecorder(src, snapshot.Options{Created: time.Unix(0, 0)})
	captured, err := New(Config{Source: rec})
	require.NoError(t, err)
	_, liveErr := live.ReadFile("proc/cpuinfo")
	require.Error(t, liveErr)
	_, capErr := captured.ReadFile("proc/cpuinfo")
	assert.Equal(t, liveErr.Error(), capErr.Error())
	assert.Equal(t, live.ReadHead("proc/cpuinfo", 100), captured.ReadHead("proc/cpuinfo", 100))

	replayed, err := New(Config{FS: replayOf(t, rec)})
	require.NoError(t, err)
	_, repErr := replayed.ReadFile("proc/cpuinfo")
	require.Error(t, repErr)
	assert.Equal(t, liveErr.Error(), repErr.Error())
	assert.Equal(t, long[:100], replayed.ReadHead("proc/cpuinfo", 100))
	var whole string
	require.NoError(t, replayed.WithFile("proc/cpuinfo", len(long), func(b []byte) { whole = string(b) }))
	assert.Equal(t, long, whole, "recorded whole, not cut at the first read's limit")
}
