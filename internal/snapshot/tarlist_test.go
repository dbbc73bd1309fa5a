package snapshot

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A snapshot with entries kept as existing only (a file stat'ed, a directory
// traversed) lists with the system's tar without a warning: issue 24 saw 129
// "Ignoring unknown extended header keyword 'AIHWACCEL.stub'" lines from
// `tar tzvf` on a format 1 snapshot. Format 2 says which entries are stubs in
// the manifest instead.
func TestStandardTarListsWithoutWarnings(t *testing.T) {
	tarPath, err := exec.LookPath("tar")
	if err != nil {
		t.Skip("no tar on PATH")
	}
	rec := NewRecorder(fixtureSource(t, "dgx-h100"), Options{LibraryVersion: "test", Created: created})
	_, err = rec.Stat("sys/bus/pci/devices")
	require.NoError(t, err)
	_, err = rec.ReadFile("proc/meminfo")
	require.NoError(t, err)
	s, raw := writeAndRead(t, rec)
	require.NotEmpty(t, s.manifest.Stubs, "the stat'ed directory is a stub")
	_, err = s.ReadDir("sys/bus/pci/devices")
	require.ErrorIs(t, err, ErrNotRecorded)

	file := filepath.Join(t.TempDir(), "machine.tar.gz")
	require.NoError(t, os.WriteFile(file, raw, 0o600))
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(tarPath, "tzvf", file)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.Empty(t, stderr.String())
	assert.Contains(t, stdout.String(), "root/sys/bus/pci/devices")
	assert.Contains(t, stdout.String(), "root/proc/meminfo")
}
