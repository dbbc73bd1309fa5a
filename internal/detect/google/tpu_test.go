package google

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

func TestTPUGenOf(t *testing.T) {
	tests := []struct {
		dev, sub int
		want     string // "" = not a TPU
		gib      int64
	}{
		{0x0027, 0x004e, "v2", 16}, {0x0027, 0x004f, "v3", 32}, {0x0027, 0x0001, "", 0},
		{0x005e, 0, "v4", 32}, {0x0063, 0, "v5e", 16}, {0x0062, 0, "v5p", 95},
		{0x006f, 0, "v6e", 32}, {0x0076, 0, "7x", 192},
		{0x0042, 0, "", 0}, {0x001f, 0, "", 0}, // gVNIC, NVMe
	}
	for _, tt := range tests {
		g := tpuGenOf(machine.PCIDevice{Vendor: machine.VendorGoogle, Device: tt.dev, SubDevice: tt.sub})
		if tt.want == "" {
			assert.Nil(t, g, "%04x:%04x", tt.dev, tt.sub)
			continue
		}
		require.NotNil(t, g, "%04x", tt.dev)
		assert.Equal(t, tt.want, g.Arch)
		assert.Equal(t, tt.gib, g.MemoryGiB)
	}
	assert.Equal(t, "dev/vfio/3", tpuChipNode(&tpuV6e, 3))
	assert.Equal(t, "dev/accel3", tpuChipNode(&tpuV3, 3))
}

// The Google ids of v4 and later come from the part table (tpu_info
// device.py); v2 and v3 share 0x0027 and are told apart by subsystem.
func TestTPUPCIGenFromRecords(t *testing.T) {
	assert.Equal(t, map[int]*tpuGen{
		0x005e: &tpuV4, 0x0063: &tpuV5e, 0x0062: &tpuV5p, 0x006f: &tpuV6e, 0x0076: &tpuV7x,
	}, tpuPCIGen)
}
