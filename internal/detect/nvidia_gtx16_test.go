package detect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// gtx16IDs are the GeForce GTX 16xx (Turing TU116/TU117) PCI ids and their
// names in the PCI ID repository (pci.ids 2023.04.10,
// https://pci-ids.ucw.cz/read/PC/10de/2184 and its neighbours).
var gtx16IDs = map[string]string{
	"2182": "NVIDIA GeForce GTX 1660 Ti", "2184": "NVIDIA GeForce GTX 1660",
	"21c4": "NVIDIA GeForce GTX 1660 SUPER", "2187": "NVIDIA GeForce GTX 1650 SUPER",
	"2188": "NVIDIA GeForce GTX 1650", "1f82": "NVIDIA GeForce GTX 1650", "1f83": "NVIDIA GeForce GTX 1630",
	"2191": "NVIDIA GeForce GTX 1660 Ti Mobile", "2192": "NVIDIA GeForce GTX 1650 Ti Mobile",
}

// A GeForce GTX 16xx whose driver predates it (procfs "Model: Graphics
// Device", or no usable driver) is named from its PCI id, with the Turing
// compute capability 7.5. The sysroot holds only the PCI function's id
// attributes, written here from the ids above (no tool output is parsed).
func TestGTX16NamedFromPCIID(t *testing.T) {
	for id, name := range gtx16IDs {
		t.Run(id, func(t *testing.T) {
			root := t.TempDir()
			fn := filepath.Join(root, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0")
			require.NoError(t, os.MkdirAll(fn, 0o755))
			for file, v := range map[string]string{"vendor": "0x10de", "device": "0x" + id, "class": "0x030000"} {
				require.NoError(t, os.WriteFile(filepath.Join(fn, file), []byte(v+"\n"), 0o644))
			}
			require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/bus/pci/devices"), 0o755))
			require.NoError(t, os.Symlink("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0",
				filepath.Join(root, "sys/bus/pci/devices/0000:01:00.0")))
			reg, err := Detect(context.Background(), Options{Sysroot: root, Path: t.TempDir(), Timeout: 5 * time.Second,
				Backends: hostBackends, LookupEnv: func(string) (string, bool) { return "", false }})
			require.NoError(t, err)
			g := onlyGPU(t, reg)
			assert.Equal(t, name, g.Name)
			assert.Equal(t, "pci-id-table", g.Sources["name"])
			assert.Equal(t, "7.5", g.ComputeCapability)
			assert.True(t, strings.HasPrefix(g.PCIID, "10de:"))
			assert.Zero(t, g.MemoryBytes, "boards of one id differ in memory")
			assert.False(t, g.Available)
			assert.Equal(t, registry.KindCUDA, g.Kind)
		})
	}
}
