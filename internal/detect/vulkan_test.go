package detect

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The ThinkPad P16s (Krackan) capture has no vulkaninfo, so its fixture has
// none: with every GPU backend, the Radeon 860M is the one rocm GPU, Vulkan
// adds no duplicate, and the Vulkan backend alone finds nothing to report.
func TestVulkanFixtureKrackanWithoutVulkaninfo(t *testing.T) {
	reg := detectFixtureBackends(t, "thinkpad-p16s-krackan", nil, "rocm", "vulkan", "amd_xdna")
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 1)
	assert.Equal(t, "rocm:0", gpus[0].ID)
	assert.Equal(t, "0000:c4:00.0", gpus[0].PCIBusID)
	assert.Empty(t, devicesOfKind(reg, registry.KindVulkan))
	assert.Len(t, devicesOfKind(reg, registry.KindAMDXDNA), 1)
	assert.Len(t, reg.Devices, 2)

	reg = detectFixtureBackends(t, "thinkpad-p16s-krackan", nil, "vulkan")
	assert.Empty(t, reg.Devices)
	assert.Empty(t, warningCodes(reg), "no vulkaninfo on PATH is no warning")
}

// RTX 4060 Laptop + Raptor Lake-P UHD (a real lspci, testdata/machines/
// slimbook-hero-rtx4060-igpu): the NVIDIA card belongs to the cuda backend,
// the iGPU to intel_gpu. The machine has no vulkaninfo (none was captured),
// so Vulkan adds nothing and duplicates nothing.
func TestVulkanFixtureLaptopRTXIGPUWithoutVulkaninfo(t *testing.T) {
	backends := []string{"vulkan", "intel_gpu"}
	haveCUDA := slices.Contains(BackendNames(), "cuda")
	if haveCUDA {
		backends = append(backends, "cuda")
	}
	reg := detectFixtureBackends(t, "slimbook-hero-rtx4060-igpu", nil, backends...)
	igpu := devicesOfKind(reg, registry.KindIntelGPU)
	require.Len(t, igpu, 1)
	assert.Equal(t, "0000:00:02.0", igpu[0].PCIBusID)
	assert.Equal(t, "8086:a7a8", igpu[0].PCIID)
	assert.True(t, igpu[0].MemoryShared)
	assert.Zero(t, igpu[0].MemoryBytes)
	assert.Empty(t, devicesOfKind(reg, registry.KindVulkan))
	if haveCUDA {
		cuda := devicesOfKind(reg, registry.KindCUDA)
		require.Len(t, cuda, 1)
		assert.Equal(t, "0000:01:00.0", cuda[0].PCIBusID)
		assert.Len(t, reg.Devices, 2, "the RTX's HDMI audio function 01:00.1 is no device")
	}
}

// With every backend enabled, each fixture machine of this file's family
// gives exactly the accelerators it models: no backend claims another's
// device, no Vulkan duplicate survives, and these backends warn about nothing
// but the warnings a machine expects (intel-max-1100-x2: its xpu-smi capture
// has no `discovery --dump`, which fails; thinkpad-p16s-krackan: no amdxdna
// binding was captured).
func TestVulkanIntelAMDFixturesFullDetection(t *testing.T) {
	tests := []struct {
		machine  string
		want     map[registry.Kind]int
		wantWarn []string
	}{
		{"mi300x-8", map[registry.Kind]int{registry.KindROCm: 8}, nil},
		{"mi300x-4-sysfs", map[registry.Kind]int{registry.KindROCm: 4}, nil},
		{"intel-core-ultra-laptop", map[registry.Kind]int{registry.KindIntelGPU: 1, registry.KindIntelNPU: 1}, nil},
		{"thinkpad-p16s-krackan", map[registry.Kind]int{registry.KindROCm: 1, registry.KindAMDXDNA: 1}, []string{"amd_xdna/device_unusable"}},
		{"intel-max-1100-x2", map[registry.Kind]int{registry.KindIntelGPU: 2}, []string{"intel_gpu/tool_failed"}},
	}
	mine := map[string]bool{"rocm": true, "intel_gpu": true, "intel_npu": true, "amd_xdna": true, "vulkan": true}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			reg := detectFixture(t, tt.machine, nil)
			got := map[registry.Kind]int{}
			for _, d := range reg.Devices {
				if d.Kind != registry.KindCPU {
					got[d.Kind]++
				}
			}
			assert.Equal(t, tt.want, got)
			var warned []string
			for _, w := range reg.Warnings {
				if mine[w.Backend] {
					warned = append(warned, w.Backend+"/"+w.Code)
				}
			}
			assert.Equal(t, tt.wantWarn, warned)
		})
	}
}
