//go:build linux && cgo

package detect

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml/nvmltest"
)

// A second detection in the same process gives the same registry as the
// first, which read every NVML fact, while NVML is not asked again for
// what a GPU cannot change (maximum clocks, maximum PCIe link, the MIG
// device count of a GPU in MIG mode) and is asked again for memory and
// processes: the h200-vm fixture (the fake serving the real H200's NVML
// answers), the DGX H100 (8 GPUs) and a GPU in MIG mode.
func TestSecondNVMLDetectionSkipsFixedFacts(t *testing.T) {
	machines := map[string]func(t *testing.T) nvmltest.Machine{
		"h200-vm":  func(t *testing.T) nvmltest.Machine { return nvmltest.H200(t) },
		"dgx-h100": func(t *testing.T) nvmltest.Machine { return dgxH100Machine(t) },
		"nvidia-mig": func(t *testing.T) nvmltest.Machine {
			m := smiMachine(t, "nvidia-mig", nil)
			addMIGDevices(t, "nvidia-mig", &m)
			return m
		},
	}
	for fixture, machine := range machines {
		t.Run(fixture, func(t *testing.T) {
			m := machine(t)
			opts := fixtureOptions(t, fixture, nil)
			opts.NVMLLibrary = nvmltest.BuildMachine(t, m)
			opts.Path = t.TempDir() // no nvidia-smi: only NVML can answer
			first, err := Detect(context.Background(), opts)
			require.NoError(t, err)
			require.Empty(t, first.Warnings)
			calls := func(call string) uint64 { return nvmltest.Calls(t, opts.NVMLLibrary, call) }
			fixed := []string{"MaxClockInfo", "MaxPcieLinkGeneration", "MaxPcieLinkWidth", "MaxMigDeviceCount"}
			changing := []string{"MemoryInfo_v2", "MemoryInfo", "ComputeRunningProcesses", "MigMode", "EccMode"}
			before := map[string]uint64{}
			for _, c := range append(fixed, changing...) {
				before[c] = calls(c)
			}
			gpus := uint64(len(m.GPUs))
			require.Equal(t, 2*gpus, before["MaxClockInfo"], "SM and memory clock of each GPU")
			require.Equal(t, gpus, before["MaxPcieLinkWidth"])

			second, err := Detect(context.Background(), opts)
			require.NoError(t, err)
			first.Timing, second.Timing = nil, nil // how long each took
			assert.Equal(t, first, second)
			for _, c := range fixed {
				assert.Equal(t, before[c], calls(c), "%s: not asked again", c)
			}
			for _, c := range changing {
				assert.Equal(t, 2*before[c], calls(c), "%s: asked again", c)
			}
			if fixture == "nvidia-mig" {
				assert.Equal(t, uint64(1), before["MaxMigDeviceCount"], "one GPU in MIG mode")
				assert.NotZero(t, before["MemoryInfo"], "the MIG devices' memory")
			}
		})
	}
}
