package vulkan

import (
	"context"
	"fmt"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The vulkan backend is the generic view of GPUs: it matters only for GPUs
// no native backend claims. Each Vulkan device is tied to its PCI function
// by (vendorID, deviceID) — for PCI GPUs Vulkan reports the PCI ids — so
// mergeByBusID folds it into the native device, which wins; Vulkan only
// fills fields the native backend left empty.
//
// `vulkaninfo --summary` has no memory heaps, so memory is omitted: the full
// output is not run (it is hundreds of KiB per GPU) and no size is guessed.
const backendVulkan = "vulkan"

// Backend is this file's detection source (the orchestrator lists it).
var Backend = machine.Backend{Name: backendVulkan, Detect: detectVulkan}

func detectVulkan(ctx context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	if !m.HasTool("vulkaninfo") {
		return f
	}
	out, w, ok := m.Tool(ctx, backendVulkan, "vulkaninfo", "--summary")
	f.AddWarning(w)
	if !ok {
		return f
	}
	devs := ParseVulkanSummary(string(out))
	bus := vulkanBusIDs(devs, m.PCIDevices(0))
	for i, v := range devs {
		if v.DeviceType == vkTypeCPU {
			// llvmpipe/lavapipe: a software rasteriser, not a GPU.
			continue
		}
		f.Devices = append(f.Devices, vulkanToDevice(v, bus[i]))
	}
	return f
}

// vulkanToDevice builds the registry device of one Vulkan GPU.
func vulkanToDevice(v vulkanDevice, busID string) registry.Device {
	d := registry.Device{
		ID:        fmt.Sprintf("GPU%d", v.Index),
		Kind:      registry.KindVulkan,
		Name:      vulkanDisplayName(v.Name),
		Vendor:    vulkanVendorName(v.VendorID),
		Available: true,
		PCIBusID:  busID,
	}
	d.SetSource("name", "vulkaninfo")
	if d.Vendor != "" {
		d.SetSource("vendor", "vulkaninfo")
	}
	if dv := vulkanDriverVersion(v); dv != "" {
		d.DriverVersion = dv
		d.SetSource("driver_version", "vulkaninfo")
	}
	// apiVersion is not put in compute_capability: merged into a native
	// device it would pass for that vendor's compute capability.
	if v.DeviceType == vkTypeIntegrated {
		// An integrated GPU uses system RAM: never count it as memory of its own.
		d.MemoryShared = true
	}
	return d
}

// vulkanBusIDs maps each Vulkan device to a PCI function with the same
// vendor and device id. Identical cards cannot be told apart by the summary,
// so the i-th Vulkan device of an id is given the i-th function of that id
// in PCI address order; identical cards have the same name and capabilities,
// so the registry loses nothing by it. A GPU listed twice (two Vulkan drivers
// for one card, e.g. RADV and AMDVLK) wraps around onto the same function and
// is merged with it. A device with no matching function keeps no bus id.
func vulkanBusIDs(devs []vulkanDevice, pci []machine.PCIDevice) []string {
	byID := map[[2]int][]string{}
	for _, p := range pci {
		k := [2]int{p.Vendor, p.Device}
		byID[k] = append(byID[k], p.Address)
	}
	seen := map[[2]int]int{}
	out := make([]string, len(devs))
	for i, v := range devs {
		if v.DeviceType == vkTypeCPU || v.VendorID < 0 || v.DeviceID < 0 {
			continue
		}
		k := [2]int{v.VendorID, v.DeviceID}
		addrs := byID[k]
		if len(addrs) == 0 {
			continue
		}
		out[i] = addrs[seen[k]%len(addrs)]
		seen[k]++
	}
	return out
}

// vulkanVendorName names the PCI vendors a Vulkan device reports.
func vulkanVendorName(id int) string {
	switch id {
	case machine.VendorNVIDIA:
		return "nvidia"
	case machine.VendorAMD:
		return "amd"
	case machine.VendorIntel:
		return "intel"
	}
	return ""
}

// vulkanDriverVersion prefers driverInfo ("565.77" for NVIDIA, "Mesa 26.1.8"
// for Mesa drivers), which is the version people know, over driverVersion,
// whose encoding is vendor-defined ("565.77.0.0").
func vulkanDriverVersion(v vulkanDevice) string {
	if v.DriverInfo != "" {
		return v.DriverInfo
	}
	return v.DriverVersion
}

// vulkanDisplayName drops the "(RADV GFX1103_R1)" tag RADV appends to the
// marketing name; other names are kept as the driver gives them.
func vulkanDisplayName(name string) string {
	if i := strings.LastIndex(name, " (RADV "); i > 0 && strings.HasSuffix(name, ")") {
		return name[:i]
	}
	return name
}
