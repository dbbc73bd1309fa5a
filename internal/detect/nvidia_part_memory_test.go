package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// The part table's A100-SXM4-80GB record says what nvidia-smi reports for
// that board, 81920 MiB (80 GiB; the captures of
// testdata/machines/a100-sxm4-80gb-x4-mig-gpu0), not 80 000 000 000 bytes:
// a machine that knows the board only by its PCI id (10de:20b2) gets the
// same figure as one with nvidia-smi.
func TestPartTableA100SXM480GBMatchesNvidiaSMI(t *testing.T) {
	reg := detectHost(t, "a100-sxm4-80gb-x4-mig-gpu0", nil)
	var whole []registry.Device
	for _, d := range devicesOfKind(reg, registry.KindCUDA) {
		if d.MIG == nil || (d.MIG.Instance == "" && d.MIG.Mode != "enabled") {
			whole = append(whole, d)
		}
	}
	require.NotEmpty(t, whole)
	rec, ok := specs.ByPCIID("10de:20b2")
	require.True(t, ok)
	for _, d := range whole {
		assert.Equal(t, "NVIDIA A100-SXM4-80GB", d.Name)
		assert.Equal(t, int64(81920)<<20, d.MemoryBytes, d.ID)
		assert.Equal(t, d.MemoryBytes, specs.DeviceMemoryBytes(rec), "part table and nvidia-smi agree")
	}
}
