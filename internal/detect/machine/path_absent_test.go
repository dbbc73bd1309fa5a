//go:build linux

package machine

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settledDir is a new PATH directory whose modification time is an hour
// old, as an installed system's directories are.
func settledDir(t *testing.T) string {
	d := t.TempDir()
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(d, old, old))
	return d
}

func installTool(t *testing.T, d, name string) string {
	p := filepath.Join(d, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	return p
}

// A tool absent from a settled directory is remembered absent: a later
// runner does not find a file that appeared while the directory's
// modification time was put back (what the memory holds for), and finds a
// tool installed the ordinary way, which moves the directory's time.
func TestResolveRemembersAbsenceWhileTheDirectoryIsUnchanged(t *testing.T) {
	d := settledDir(t)
	assert.Empty(t, NewExecRunner(d, 0).Resolve("nvidia-smi"))
	st, err := os.Stat(d)
	require.NoError(t, err)

	installTool(t, d, "nvidia-smi")
	require.NoError(t, os.Chtimes(d, st.ModTime(), st.ModTime()))
	assert.Empty(t, NewExecRunner(d, 0).Resolve("nvidia-smi"), "remembered absent: the directory looks unchanged")

	require.NoError(t, os.Chtimes(d, time.Now(), time.Now()))
	assert.Equal(t, filepath.Join(d, "nvidia-smi"), NewExecRunner(d, 0).Resolve("nvidia-smi"), "the directory changed: looked up again")
}

// A tool installed after a detection is found by the next one.
func TestResolveFindsAToolInstalledLater(t *testing.T) {
	d := settledDir(t)
	assert.Empty(t, NewExecRunner(d, 0).Resolve("rocm-smi"))
	p := installTool(t, d, "rocm-smi")
	assert.Equal(t, p, NewExecRunner(d, 0).Resolve("rocm-smi"))
}

// A directory changed within racyWindow is not remembered: a second entry
// made in the same clock tick would not move its time.
func TestResolveDoesNotRememberARecentDirectory(t *testing.T) {
	d := t.TempDir()
	assert.Empty(t, NewExecRunner(d, 0).Resolve("hl-smi"))
	st, err := os.Stat(d)
	require.NoError(t, err)
	installTool(t, d, "hl-smi")
	require.NoError(t, os.Chtimes(d, st.ModTime(), st.ModTime()))
	assert.Equal(t, filepath.Join(d, "hl-smi"), NewExecRunner(d, 0).Resolve("hl-smi"))
}

// A dangling link is not an absence: its target can appear without its
// directory changing (a driver package installing into /opt what a link in
// /usr/bin names).
func TestResolveDoesNotRememberADanglingLink(t *testing.T) {
	d := settledDir(t)
	target := filepath.Join(t.TempDir(), "xpu-smi")
	require.NoError(t, os.Symlink(target, filepath.Join(d, "xpu-smi")))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(d, old, old))
	assert.Empty(t, NewExecRunner(d, 0).Resolve("xpu-smi"))
	installTool(t, filepath.Dir(target), "xpu-smi")
	assert.Equal(t, filepath.Join(d, "xpu-smi"), NewExecRunner(d, 0).Resolve("xpu-smi"))
}
