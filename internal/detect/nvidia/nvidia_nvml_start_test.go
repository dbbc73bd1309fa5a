//go:build linux && cgo

package nvidia

import (
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml/nvmltest"
)

// fixtureMachine is the machine view of a fixture under testdata/machines,
// with nvmlLib as the NVML library detection may load.
func fixtureMachine(t *testing.T, fixture, nvmlLib string) *machine.Machine {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "machines", fixture, "root")
	m, err := machine.New(machine.Config{Sysroot: root, NoExec: true, NVML: nvmlLib})
	require.NoError(t, err)
	return m
}

// The NVIDIA driver's nodes are nvidiactl and nvidia<N>: the h200-vm
// capture's /dev has them (with nvidia-uvm beside them), the dgx-h100 one
// next to its NVSwitch nodes; a machine whose driver made no node
// (nvidia-tool-fails) has neither, and neither nvidia-uvm nor an NVSwitch
// node is a GPU's.
func TestDriverNodes(t *testing.T) {
	for fixture, want := range map[string]bool{"h200-vm": true, "dgx-h100": true, "nvidia-tool-fails": false} {
		m := fixtureMachine(t, fixture, "")
		assert.Equal(t, want, driverNodes(m.DirEntries("dev")), fixture)
	}
	dev := fixtureMachine(t, "dgx-h100", "").ReadDir("dev")
	var noGPU []fs.DirEntry
	for _, e := range dev {
		if !strings.HasPrefix(e.Name(), "nvidia") || strings.Trim(e.Name()[len("nvidia"):], "0123456789") != "" {
			noGPU = append(noGPU, e) // nvidiactl, nvidia-uvm, nvidia-nvswitch*
		}
	}
	require.Less(t, len(noGPU), len(dev))
	assert.False(t, driverNodes(slices.Values(noGPU)), "no nvidia<N>")
}

// With the driver's nodes in /dev, startNVML begins loading and
// initialising NVML by itself, before any Open: the fake's nvmlInit runs.
func TestStartNVMLLoadsBeforeOpen(t *testing.T) {
	lib := nvmltest.Build(t)
	startNVML(fixtureMachine(t, "h200-vm", lib))
	assert.Eventually(t, func() bool { return nvmltest.Calls(t, lib, "Init") == 1 }, 5*time.Second, time.Millisecond)
}
