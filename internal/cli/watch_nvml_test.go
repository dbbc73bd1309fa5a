//go:build linux && cgo

package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml/nvmltest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// --watch on the H200 VM read through NVML (the fake library with the real
// H200's values and one process holding 621 MiB, the CUDA context of
// captures/cuda-context.txt) shows the processes and the health.
func TestWatchShowsNVMLProcessesAndHealth(t *testing.T) {
	dir := detecttest.MachineDir(t, "h200-vm")
	lib := nvmltest.Build(t, "-DFAKE_PROC_PID=4242", "-DFAKE_PROC_BYTES=651165696ULL")
	detectFn := func(ctx context.Context) (*registry.Registry, error) {
		return detect.Detect(ctx, detect.Options{Sysroot: filepath.Join(dir, "root"), Path: t.TempDir(),
			Timeout: 5 * time.Second, NVMLLibrary: lib, LookupEnv: func(string) (string, bool) { return "", false }})
	}
	out := watchOnce(t, detectFn, 1)
	lines := strings.Split(out, "\n")
	require.GreaterOrEqual(t, len(lines), 5)
	assert.Contains(t, lines[2], "PROCS")
	assert.Contains(t, lines[2], "HEALTH")
	var gpu string
	for _, l := range lines {
		if strings.HasPrefix(l, "cuda:0") {
			gpu = l
		}
	}
	assert.Contains(t, gpu, "1 (0.6 GiB)")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(gpu), "ok"), gpu)
}

// The health cell names what is wrong.
func TestHealthCell(t *testing.T) {
	three, one := int64(3), 1
	d := registry.Device{Health: &registry.Health{ECCUncorrectedVolatile: &three,
		RemappedRows:       &registry.RemappedRows{Pending: true},
		ClocksEventReasons: []string{"gpu_idle", "hw_thermal_slowdown"}, NVLinksActive: &one, NVLinks: 18}}
	assert.Equal(t, "ecc:3,remap-pending,hw_thermal_slowdown,nvlink:1/18", healthCell(d))
	assert.Equal(t, "—", healthCell(registry.Device{}))
	assert.Equal(t, "ok", healthCell(registry.Device{Health: &registry.Health{ClocksEventReasons: []string{"gpu_idle"}}}))
}
