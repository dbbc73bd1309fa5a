package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Without nvidia-smi, the NVSwitch PCI functions in sysfs still say the GPUs
// share an NVSwitch fabric (testdata/machines/hgx-h100-nccl-topo-no-tools:
// class 0x068000 NVIDIA functions; hgx-h20-lspci-tree-no-tools: 10de:22a3).
func TestFixtureNVSwitchFromSysfs(t *testing.T) {
	reg := detectHost(t, "hgx-h100-nccl-topo-no-tools", nil)
	var sw []registry.Interconnect
	for _, ic := range reg.SystemIO.Interconnects {
		if ic.Kind == registry.LinkNVSwitch {
			sw = append(sw, ic)
		}
	}
	require.Len(t, sw, 1)
	assert.Equal(t, []string{"cuda:0", "cuda:1"}, sw[0].Devices)
	assert.Equal(t, "sysfs (NVSwitch PCI functions)", sw[0].Source)
	assert.Equal(t, float64(900), sw[0].BandwidthGBs, "H100 SXM5 NVLink 4: 900 GB/s per GPU (part table)")

	reg = detectHost(t, "hgx-h20-lspci-tree-no-tools", nil)
	require.Len(t, reg.SystemIO.Interconnects, 1)
	assert.Equal(t, registry.LinkNVSwitch, reg.SystemIO.Interconnects[0].Kind)
	assert.Equal(t, []string{"cuda:0"}, reg.SystemIO.Interconnects[0].Devices)
}
