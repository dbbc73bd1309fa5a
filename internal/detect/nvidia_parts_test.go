package detect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// nvidiaPartIDs are NVIDIA parts of the last five generations the part table
// covers (internal/specs coverage_test.go lists them all).
var nvidiaPartIDs = []string{
	"10de:1f08", "10de:1e07", "10de:2486", "10de:2208", "10de:2203", "10de:2882", "10de:2805",
	"10de:2783", "10de:2705", "10de:2702", "10de:2f04", "10de:2c02", "10de:24b0", "10de:27b2",
	"10de:2bb5", "10de:20b7", "10de:20b1", "10de:2321", "10de:233b", "10de:2342", "10de:2348",
	"10de:25b6", "10de:2941", "10de:2717", "10de:28e0",
}

// A GPU with no driver bound is named and sized from the part table: the
// gce-a100-sxm4-no-driver machine with its GPU's device id replaced by each
// part's (the same sysfs function, class 0x0302).
func TestNoDriverGPUNamedAndSizedFromTable(t *testing.T) {
	for _, id := range nvidiaPartIDs {
		t.Run(id, func(t *testing.T) {
			s, ok := specs.ByPCIID(id)
			require.True(t, ok)
			dir := copyFixtureMachine(t, "gce-a100-sxm4-no-driver")
			dev := filepath.Join(dir, "root/sys/devices/pci0000:00/0000:00:04.0/device")
			require.NoError(t, os.WriteFile(dev, []byte("0x"+id[5:]+"\n"), 0o644))
			opts := Options{Sysroot: filepath.Join(dir, "root"), Path: filepath.Join(dir, "bin"),
				Env: map[string]string{}, LookupEnv: func(string) (string, bool) { return "", false },
				Backends: hostBackends}
			reg, err := Detect(context.Background(), opts)
			require.NoError(t, err)
			gpus := devicesOfKind(reg, registry.KindCUDA)
			require.Len(t, gpus, 1)
			g := gpus[0]
			assert.Equal(t, id, g.PCIID)
			name := s.ProductName
			if name == "" { // a shared id (A2 / A16): the record's alias
				name = s.Aliases[0]
			}
			assert.Equal(t, name, g.Name)
			assert.Equal(t, s.MemoryBytes, g.MemoryBytes, "the record's GB as 10^9 bytes, a lower bound")
			assert.Equal(t, s.BandwidthGBs, g.MemoryBandwidthGBs)
			assert.Equal(t, s.Arch, g.ComputeCapability)
			assert.NotEmpty(t, g.Quantizations)
			assert.False(t, g.Available)
		})
	}
}
