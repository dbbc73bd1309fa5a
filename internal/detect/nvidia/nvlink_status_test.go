package nvidia

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func readCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// The three public `nvidia-smi nvlink -s` captures: per-GPU link speeds,
// inactive links counted apart, the poster's "......" ignored.
func TestParseNvlinkStatusCaptures(t *testing.T) {
	a100 := ParseNvlinkStatus(readCapture(t, "nvlink-s-a100-nccl-tests-228.txt"))
	require.Len(t, a100, 3)
	assert.Equal(t, 0, a100[0].Index)
	assert.Equal(t, "GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05", a100[0].UUID)
	assert.Len(t, a100[0].Speeds, 12)
	assert.Equal(t, 25.0, a100[0].Speeds[11])
	assert.Len(t, a100[1].Speeds, 12)
	assert.Len(t, a100[2].Speeds, 1, "the excerpt stops after GPU 2's first link")

	v100 := ParseNvlinkStatus(readCapture(t, "nvlink-s-v100-azhpc-diagnostics-73.txt"))
	require.Len(t, v100, 1)
	assert.Equal(t, 3, v100[0].Index)
	assert.Equal(t, []float64{25.781, 25.781, 25.781, 25.781}, v100[0].Speeds)
	assert.Equal(t, 2, v100[0].Inactive)

	gb200 := ParseNvlinkStatus(readCapture(t, "nvlink-s-gb200-k8s-test-infra-371.txt"))
	require.Len(t, gb200, 2)
	assert.Len(t, gb200[0].Speeds, 18)
	assert.Equal(t, 53.125, gb200[0].Speeds[0])
}

// a100Devs are GPUs 0 and 1 of the nccl-tests 228 machine (name, UUIDs
// and 81920 MiB from its nvidia-smi output).
func a100Devs() []nvDevice {
	mk := func(i int, uuid string) nvDevice {
		return nvDevice{index: i, dev: registry.Device{ID: registry.DeviceID(registry.KindCUDA, i), Kind: registry.KindCUDA,
			Name: "NVIDIA A100-SXM4-80GB", UUID: uuid, Available: true, MemoryBytes: 81920 << 20}}
	}
	return []nvDevice{mk(0, "GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05"), mk(1, "GPU-0c512562-871f-8257-6187-b5ae1b986d5e")}
}

// With an NVSwitch, the GPUs with active links form one domain; the figures
// are per link and direction, the entry's bandwidth both directions.
func TestNvlinkStatusWithNVSwitchIsOneDomain(t *testing.T) {
	ics, ok := nvlinkFromStatus(ParseNvlinkStatus(readCapture(t, "nvlink-s-a100-nccl-tests-228.txt")), a100Devs(), true)
	require.True(t, ok)
	require.Len(t, ics, 1)
	ic := ics[0]
	assert.Equal(t, registry.LinkNVSwitch, ic.Kind)
	assert.Equal(t, []string{"cuda:0", "cuda:1"}, ic.Devices)
	assert.Equal(t, 12, ic.Links)
	assert.Equal(t, 25.0, ic.LinkBandwidthGBs)
	assert.Equal(t, 600.0, ic.BandwidthGBs, "12 x 25 GB/s each way: the A100's 600 GB/s NVLink figure")
	assert.Equal(t, "nvidia-smi nvlink -s", ic.Source)
}

// Without an NVSwitch, two linked GPUs are a pair; the wrong UUID at an
// index, a hidden GPU or a GPU with no active link is no member.
func TestNvlinkStatusWithoutNVSwitch(t *testing.T) {
	status := ParseNvlinkStatus(readCapture(t, "nvlink-s-a100-nccl-tests-228.txt"))
	ics, ok := nvlinkFromStatus(status, a100Devs(), false)
	require.True(t, ok)
	require.Len(t, ics, 1)
	assert.Equal(t, registry.LinkNVLink, ics[0].Kind)

	devs := a100Devs()
	devs[1].dev.UUID = "GPU-00000000-0000-0000-0000-000000000000"
	ics, ok = nvlinkFromStatus(status, devs, false)
	assert.True(t, ok)
	assert.Empty(t, ics, "GPU 1 of the output is another GPU: no pair")

	v100 := ParseNvlinkStatus(readCapture(t, "nvlink-s-v100-azhpc-diagnostics-73.txt"))
	ics, ok = nvlinkFromStatus(v100, a100Devs(), false)
	assert.False(t, ok, "the output lists none of our GPUs")
	assert.Empty(t, ics)
}
