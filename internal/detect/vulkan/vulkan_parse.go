package vulkan

import (
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

// vulkanDevice is one "GPUn:" block of `vulkaninfo --summary`.
type vulkanDevice struct {
	Index         int // n of "GPUn:"
	APIVersion    string
	DriverVersion string
	DriverInfo    string
	DriverName    string
	VendorID      int // -1 unknown
	DeviceID      int // -1 unknown
	DeviceType    string
	Name          string
}

// Device types of VkPhysicalDeviceType as vulkaninfo prints them.
const (
	vkTypeCPU        = "PHYSICAL_DEVICE_TYPE_CPU"
	vkTypeIntegrated = "PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU"
)

// maxVulkanDevices bounds the parse of a hostile output.
const maxVulkanDevices = 256

// ParseVulkanSummary parses the "Devices:" section of `vulkaninfo --summary`
// (KhronosGroup/Vulkan-Tools vulkaninfo.cpp summary printer,
// https://github.com/KhronosGroup/Vulkan-Tools): a "GPUn:" header, then "\tkey = value" lines
// (padded keys; some captures indent with spaces). Unknown keys are ignored;
// a block without a deviceName is dropped. Text before "Devices:" (instance
// extensions, layers: their "GPU id = 0 (...)" lines look alike) is skipped.
func ParseVulkanSummary(out string) []vulkanDevice {
	var devs []vulkanDevice
	var cur *vulkanDevice
	flush := func() {
		if cur != nil && cur.Name != "" && len(devs) < maxVulkanDevices {
			devs = append(devs, *cur)
		}
		cur = nil
	}
	inDevices := false
	for _, raw := range strings.Split(out, "\n") {
		line := strings.TrimRight(raw, "\r")
		trim := strings.TrimSpace(line)
		if trim == "Devices:" {
			inDevices = true
			continue
		}
		if !inDevices {
			continue
		}
		if n, ok := vulkanGPUHeader(trim); ok {
			flush()
			cur = &vulkanDevice{Index: n, VendorID: -1, DeviceID: -1}
			continue
		}
		if cur == nil {
			continue
		}
		key, val, ok := strings.Cut(trim, "=")
		if !ok {
			continue
		}
		setVulkanField(cur, strings.TrimSpace(key), machine.CleanText(val))
	}
	flush()
	return devs
}

// vulkanGPUHeader recognises "GPU0:" and returns 0.
func vulkanGPUHeader(s string) (int, bool) {
	if !strings.HasPrefix(s, "GPU") || !strings.HasSuffix(s, ":") {
		return 0, false
	}
	n, err := strconv.Atoi(s[3 : len(s)-1])
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func setVulkanField(d *vulkanDevice, key, val string) {
	switch key {
	case "apiVersion":
		d.APIVersion = vulkanFirstField(val)
	case "driverVersion":
		d.DriverVersion = vulkanFirstField(val)
	case "driverInfo":
		d.DriverInfo = val
	case "driverName":
		d.DriverName = val
	case "vendorID":
		d.VendorID = parseVulkanID(val)
	case "deviceID":
		d.DeviceID = parseVulkanID(val)
	case "deviceType":
		d.DeviceType = vulkanFirstField(val)
	case "deviceName":
		if len(val) > 256 {
			val = val[:256]
		}
		d.Name = val
	}
}

// parseVulkanID reads "0x10de"; anything else is unknown (-1).
func parseVulkanID(s string) int {
	v, err := machine.ParseInt(vulkanFirstField(s))
	if err != nil || v < 0 || v > 0xffffffff {
		return -1
	}
	return int(v)
}

func vulkanFirstField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
