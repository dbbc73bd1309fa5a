package vulkan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

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
	devs := ParseVulkanSummary(out)
	require.Len(t, devs, 2, "the nameless GPU2 block is dropped; layer lines are not devices")
	assert.Equal(t, vulkanDevice{Index: 0, APIVersion: "1.3.289", DriverVersion: "565.77.0.0", DriverInfo: "565.77",
		VendorID: 0x10de, DeviceID: 0x2704, DeviceType: "PHYSICAL_DEVICE_TYPE_DISCRETE_GPU",
		Name: "NVIDIA GeForce RTX 4080"}, devs[0])
	assert.Equal(t, vkTypeCPU, devs[1].DeviceType)
	assert.Equal(t, -1, devs[1].DeviceID)

	assert.Empty(t, ParseVulkanSummary(""))
	assert.Empty(t, ParseVulkanSummary("ERROR: [Loader Message] Code 0 : cannot open\nCannot create Vulkan instance.\n"),
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
		devs := ParseVulkanSummary(s)
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
