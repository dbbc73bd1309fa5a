package detect

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The 780M is seen by amdgpu sysfs and by RADV: one GPU, the native rocm one,
// with Vulkan filling the name sysfs lacks. llvmpipe is no GPU.
func TestVulkanFixtureRyzenAIMergesIntoROCm(t *testing.T) {
	reg := detectFixtureBackends(t, "ryzen-ai-laptop", nil, "rocm", "vulkan", "amd_xdna")
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 1)
	assert.Empty(t, devicesOfKind(reg, registry.KindVulkan))
	g := gpus[0]
	assert.Equal(t, "rocm:0", g.ID)
	assert.Equal(t, "AMD Radeon 780M", g.Name)
	assert.Equal(t, "vulkaninfo", g.Sources["name"])
	assert.Equal(t, "sysfs mem_info_vram_total (BIOS UMA carve-out)", g.Sources["memory_carveout_bytes"])
	assert.Equal(t, int64(512<<20), g.MemoryCarveoutBytes)
	assert.True(t, g.MemoryShared)
	assert.Equal(t, "Mesa 24.0.5-1ubuntu1", g.DriverVersion)
	assert.Len(t, devicesOfKind(reg, registry.KindAMDXDNA), 1)
	assert.Len(t, reg.Devices, 2)
	for _, d := range reg.Devices {
		assert.NotContains(t, d.Name, "llvmpipe")
	}
	assert.Empty(t, warningCodes(reg))
}

// Alone, the Vulkan backend reports the 780M as a vulkan_gpu (shared memory,
// no size: the summary has none) and skips llvmpipe.
func TestVulkanFixtureRyzenAIAlone(t *testing.T) {
	reg := detectFixtureBackends(t, "ryzen-ai-laptop", nil, "vulkan")
	gpus := devicesOfKind(reg, registry.KindVulkan)
	require.Len(t, gpus, 1)
	assert.Equal(t, "vulkan_gpu:0", gpus[0].ID)
	assert.Equal(t, "0000:c1:00.0", gpus[0].PCIBusID)
	assert.True(t, gpus[0].MemoryShared)
	assert.Zero(t, gpus[0].MemoryBytes, "no 4 GiB default")
	assert.Len(t, reg.Devices, 1)
	assert.Empty(t, warningCodes(reg))
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
// has no `discovery --dump`, which fails).
func TestVulkanIntelAMDFixturesFullDetection(t *testing.T) {
	tests := []struct {
		machine  string
		want     map[registry.Kind]int
		wantWarn []string
	}{
		{"mi300x-8", map[registry.Kind]int{registry.KindROCm: 8}, nil},
		{"mi300x-4-sysfs", map[registry.Kind]int{registry.KindROCm: 4}, nil},
		{"intel-core-ultra-laptop", map[registry.Kind]int{registry.KindIntelGPU: 1, registry.KindIntelNPU: 1}, nil},
		{"ryzen-ai-laptop", map[registry.Kind]int{registry.KindROCm: 1, registry.KindAMDXDNA: 1}, nil},
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
