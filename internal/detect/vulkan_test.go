package detect

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"

	"slices"
	"strings"
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
	assert.Equal(t, "sysfs", g.Sources["memory_bytes"])
	assert.Equal(t, int64(512<<20), g.MemoryBytes)
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

// RTX 4090 + UHD 770: the NVIDIA card belongs to the cuda backend, the iGPU
// to intel_gpu; Vulkan leaves no device of its own and llvmpipe is skipped.
func TestVulkanFixtureDesktopRTXIGPU(t *testing.T) {
	backends := []string{"vulkan", "intel_gpu"}
	haveCUDA := slices.Contains(BackendNames(), "cuda")
	if haveCUDA {
		backends = append(backends, "cuda")
	}
	reg := detectFixtureBackends(t, "desktop-rtx-igpu", nil, backends...)
	igpu := devicesOfKind(reg, registry.KindIntelGPU)
	require.Len(t, igpu, 1)
	assert.Equal(t, "0000:00:02.0", igpu[0].PCIBusID)
	assert.Equal(t, "Intel UHD Graphics 770", igpu[0].Name)
	assert.True(t, igpu[0].MemoryShared)
	assert.Zero(t, igpu[0].MemoryBytes)
	assert.Equal(t, "Mesa 24.0.5-1ubuntu1", igpu[0].DriverVersion, "filled from Vulkan")
	for _, d := range reg.Devices {
		assert.False(t, strings.Contains(d.Name, "llvmpipe"), d.Name)
	}
	if haveCUDA {
		cuda := devicesOfKind(reg, registry.KindCUDA)
		require.Len(t, cuda, 1)
		assert.Equal(t, "0000:01:00.0", cuda[0].PCIBusID)
		assert.Equal(t, "NVIDIA GeForce RTX 4090", cuda[0].Name)
		assert.Empty(t, devicesOfKind(reg, registry.KindVulkan))
		assert.Len(t, reg.Devices, 2)
	} else {
		// Without the native NVIDIA backend Vulkan is the only view of it.
		vk := devicesOfKind(reg, registry.KindVulkan)
		require.Len(t, vk, 1)
		assert.Equal(t, "0000:01:00.0", vk[0].PCIBusID)
		assert.Equal(t, "NVIDIA GeForce RTX 4090", vk[0].Name)
		assert.Equal(t, "nvidia", vk[0].Vendor)
		assert.False(t, vk[0].MemoryShared)
	}
}

func TestVulkanParseSummary(t *testing.T) {
	out := "Vulkan Instance Version: 1.3.275\n\nLayers: count = 1\n=======\n" +
		"\tDevices: count = 1\n\t\tGPU id = 0 (llvmpipe (LLVM 11.0.1, 128 bits))\n\n" +
		"Devices:\n========\nGPU0:\n" +
		"\tapiVersion         = 1.3.289\n\tdriverVersion      = 565.77.0.0\n\tvendorID           = 0x10de\n" +
		"\tdeviceID           = 0x2704\n\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU\n" +
		"\tdeviceName         = NVIDIA GeForce RTX 4080\n\tdriverInfo         = 565.77\n" +
		"GPU1:\n" +
		"        vendorID           = 0x10005\n        deviceType         = PHYSICAL_DEVICE_TYPE_CPU\n" +
		"        deviceName         = llvmpipe (LLVM 17.0.6, 128 bits)\n" +
		"GPU2:\n\tdeviceType = PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU\n"
	devs := parseVulkanSummary(out)
	require.Len(t, devs, 2, "the nameless GPU2 block is dropped; layer lines are not devices")
	assert.Equal(t, vulkanDevice{Index: 0, APIVersion: "1.3.289", DriverVersion: "565.77.0.0", DriverInfo: "565.77",
		VendorID: 0x10de, DeviceID: 0x2704, DeviceType: "PHYSICAL_DEVICE_TYPE_DISCRETE_GPU",
		Name: "NVIDIA GeForce RTX 4080"}, devs[0])
	assert.Equal(t, vkTypeCPU, devs[1].DeviceType)
	assert.Equal(t, -1, devs[1].DeviceID)

	assert.Empty(t, parseVulkanSummary(""))
	assert.Empty(t, parseVulkanSummary("ERROR: [Loader Message] Code 0 : cannot open\nCannot create Vulkan instance.\n"),
		"no device parsed: no invented Unknown Vulkan Device")
}

func TestVulkanBusIDsIdenticalCards(t *testing.T) {
	pci := []machine.PCIDevice{
		{Address: "0000:01:00.0", Vendor: machine.VendorNVIDIA, Device: 0x2684},
		{Address: "0000:41:00.0", Vendor: machine.VendorNVIDIA, Device: 0x2684},
		{Address: "0000:00:02.0", Vendor: machine.VendorIntel, Device: 0x4680},
	}
	devs := []vulkanDevice{
		{VendorID: machine.VendorNVIDIA, DeviceID: 0x2684},
		{VendorID: machine.VendorIntel, DeviceID: 0x4680},
		{VendorID: machine.VendorNVIDIA, DeviceID: 0x2684},
		{VendorID: 0x10005, DeviceID: 0, DeviceType: vkTypeCPU},
		{VendorID: 0x106b, DeviceID: 0xf000208},
		{VendorID: machine.VendorIntel, DeviceID: 0x4680}, // a second driver for the same iGPU
	}
	assert.Equal(t, []string{"0000:01:00.0", "0000:00:02.0", "0000:41:00.0", "", "", "0000:00:02.0"},
		vulkanBusIDs(devs, pci))
}

func TestVulkanDisplayName(t *testing.T) {
	assert.Equal(t, "AMD Radeon 780M", vulkanDisplayName("AMD Radeon 780M (RADV GFX1103_R1)"))
	assert.Equal(t, "Intel(R) UHD Graphics 770 (ADL-S GT1)", vulkanDisplayName("Intel(R) UHD Graphics 770 (ADL-S GT1)"))
	assert.Equal(t, "(RADV X)", vulkanDisplayName("(RADV X)"))
}

func FuzzVulkanParseSummary(f *testing.F) {
	f.Add("Devices:\n========\nGPU0:\n\tvendorID = 0x1002\n\tdeviceID = 0x15bf\n\tdeviceName = AMD Radeon 780M (RADV GFX1103_R1)\n")
	f.Add("Devices:\nGPU1:\n\tdeviceType = PHYSICAL_DEVICE_TYPE_CPU\n\tdeviceName = llvmpipe\n")
	f.Add("Devices:\nGPU99999999999999999999:\n\tdeviceName = x\n\tvendorID = 0xffffffffffffffffff\n")
	f.Add("Devices:\nGPU0:\n\tdeviceName = \x1b[2Jname\n")
	f.Fuzz(func(t *testing.T, s string) {
		devs := parseVulkanSummary(s)
		assert.LessOrEqual(t, len(devs), maxVulkanDevices)
		for _, d := range devs {
			assert.NotEmpty(t, d.Name)
			assert.LessOrEqual(t, len(d.Name), 256)
			assert.GreaterOrEqual(t, d.VendorID, -1)
			assert.GreaterOrEqual(t, d.DeviceID, -1)
			assert.GreaterOrEqual(t, d.Index, 0)
			assert.NotContains(t, d.Name, "\x1b")
		}
		// Mapping never panics and never invents an address.
		bus := vulkanBusIDs(devs, []machine.PCIDevice{{Address: "0000:c1:00.0", Vendor: machine.VendorAMD, Device: 0x15bf}})
		for _, b := range bus {
			assert.Contains(t, []string{"", "0000:c1:00.0"}, b)
		}
	})
}

// With every backend enabled, each fixture machine of this file's family
// gives exactly the accelerators it models: no backend claims another's
// device, no Vulkan duplicate survives, and these backends warn about nothing.
func TestVulkanIntelAMDFixturesFullDetection(t *testing.T) {
	tests := []struct {
		machine string
		want    map[registry.Kind]int
	}{
		{"mi300x-8", map[registry.Kind]int{registry.KindROCm: 8}},
		{"mi300x-8-sysfs", map[registry.Kind]int{registry.KindROCm: 8}},
		{"intel-core-ultra-laptop", map[registry.Kind]int{registry.KindIntelGPU: 1, registry.KindIntelNPU: 1}},
		{"ryzen-ai-laptop", map[registry.Kind]int{registry.KindROCm: 1, registry.KindAMDXDNA: 1}},
		{"intel-max-4", map[registry.Kind]int{registry.KindIntelGPU: 4}},
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
			for _, w := range reg.Warnings {
				assert.False(t, mine[w.Backend], "%s/%s: %s", w.Backend, w.Code, w.Message)
			}
		})
	}
}
