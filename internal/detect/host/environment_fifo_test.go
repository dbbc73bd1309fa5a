package host

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

// A FIFO at /proc/cpuinfo must not block the environment backend, which
// reads the file's head for the hypervisor flag (issue 14 item 1: it once
// opened the file without the regular-file and non-blocking checks).
func TestEnvironmentCPUInfoFIFOIsNotWaitedOn(t *testing.T) {
	m, root := cpuTreeMachine(t, map[string]string{"proc/.keep": ""})
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, machine.PathCPUInfo), 0o644))
	done := make(chan machine.Findings, 1)
	go func() { done <- DetectEnvironment(t.Context(), m) }()
	select {
	case f := <-done:
		assert.Nil(t, f.Environment, "nothing readable: no environment facts")
		assert.Empty(t, f.Warnings)
	case <-time.After(2 * time.Second):
		if f, err := os.OpenFile(filepath.Join(root, machine.PathCPUInfo), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("the environment backend blocked on a FIFO at /proc/cpuinfo")
	}
}
