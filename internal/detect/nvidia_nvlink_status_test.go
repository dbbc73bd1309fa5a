package detect

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// dgxWithFailingTopo is the dgx-h100 fixture whose `nvidia-smi topo -m`
// fails (as it does on real nodes, issue 13 item 6; the failure's text is
// not captured, so it prints nothing and exits 1), and whose `nvlink -s`
// either fails the same way or is missing from the capture altogether.
func dgxWithFailingTopo(t *testing.T) string {
	dir := copyFixtureMachine(t, "dgx-h100")
	orig := filepath.Join(dir, "bin", "nvidia-smi.orig")
	require.NoError(t, os.Rename(filepath.Join(dir, "bin", "nvidia-smi"), orig))
	detecttest.WriteTool(t, filepath.Join(dir, "bin"), "nvidia-smi",
		`case "$*" in "topo -m"|"nvlink -s") exit 1;; esac; exec "`+orig+`" "$@"`)
	return dir
}

// A DGX whose topo -m and nvlink -s both fail keeps its NVSwitch domain
// from the NVSwitch PCI functions in sysfs, as without nvidia-smi: before,
// it had no interconnect and 70B was planned pipeline parallel.
func TestDGXTopoFailureFallsBackToSysfsNVSwitch(t *testing.T) {
	reg := detectDir(t, dgxWithFailingTopo(t), nil)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 8)
	var nvs []registry.Interconnect
	for _, ic := range reg.SystemIO.Interconnects {
		if ic.Kind == registry.LinkNVSwitch {
			nvs = append(nvs, ic)
		}
	}
	require.Len(t, nvs, 1)
	assert.Equal(t, amdTestIDs(gpus), nvs[0].Devices)
	assert.Equal(t, "sysfs (NVSwitch PCI functions)", nvs[0].Source)
	assert.InDelta(t, 900, nvs[0].BandwidthGBs, 0.01, "the part table's figure")
	assert.Equal(t, []string{"cuda/tool_failed", "cuda/tool_failed"}, warningCodes(reg))
}
