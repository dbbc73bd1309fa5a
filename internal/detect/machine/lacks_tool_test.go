package machine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lackingRunner is a countingRunner that can tell which tools are not there.
type lackingRunner struct {
	countingRunner
	lacks map[string]bool
}

func (l *lackingRunner) Lacks(tool string) bool { return l.lacks[tool] }

// A tool the runner says is not there answers as missing (no output, no
// warning) without a run: no run reaches the runner, so the per-detection
// bookkeeping of a shared run is not made either. A tool that is there runs.
func TestToolLackedIsMissingWithoutARun(t *testing.T) {
	inner := &lackingRunner{lacks: map[string]bool{"nvidia-smi": true}}
	m, err := New(Config{Sysroot: t.TempDir(), Runner: NewOnceRunner(inner)})
	require.NoError(t, err)
	out, w, ok := m.Tool(context.Background(), "cuda", "nvidia-smi", "-L")
	assert.False(t, ok)
	assert.Nil(t, w, "absence is not a problem")
	assert.Nil(t, out)
	assert.Zero(t, inner.total(), "a lacked tool reached the runner")

	out, w, ok = m.Tool(context.Background(), "hpu", "hl-smi", "-L")
	require.True(t, ok)
	assert.Nil(t, w)
	assert.Equal(t, "hl-smi -L", string(out))
	assert.Equal(t, 1, inner.total())
}

// ExecRunner lacks exactly the tools it does not resolve; a runner that
// cannot tell lacks nothing.
func TestExecRunnerLacksWhatDoesNotResolve(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hl-smi"), []byte("#!/bin/sh\n"), 0o755))
	r := NewExecRunner(dir, time.Second)
	assert.False(t, r.Lacks("hl-smi"))
	assert.True(t, r.Lacks("nvidia-smi"))
	assert.Equal(t, r.Resolve("nvidia-smi") == "", r.Lacks("nvidia-smi"))
	assert.True(t, NewExecRunner("", time.Second).Lacks("hl-smi"), "an empty PATH has no tool")

	m, err := New(Config{Sysroot: t.TempDir(), Runner: NewOnceRunner(&countingRunner{})})
	require.NoError(t, err)
	assert.False(t, m.LacksTool("nvidia-smi"), "a runner that cannot tell lacks nothing")
}
