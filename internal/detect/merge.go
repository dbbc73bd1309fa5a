package detect

import (
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// NormalizeBusID returns a PCI address in sysfs form: domain of at least 4
// digits, lower case ("00000000:18:00.0" from nvidia-smi becomes
// "0000:18:00.0"). The kernel prints the domain with "%04x"
// (drivers/pci/probe.c), so a wider domain (Intel VMD: "10000:e1:00.0") keeps
// its significant digits; only leading zeros beyond 4 digits go. An input
// that is not a PCI address is returned cleaned but otherwise unchanged.
func NormalizeBusID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	parts := strings.Split(s, ":")
	if len(parts) == 3 {
		for len(parts[0]) > 4 && parts[0][0] == '0' {
			parts[0] = parts[0][1:]
		}
	} else if len(parts) == 2 {
		parts = append([]string{"0000"}, parts...)
	}
	return strings.Join(parts, ":")
}

// kindPriority ranks sources of the same physical device: a native backend
// (vendor tool or driver sysfs) beats the generic Vulkan view.
func kindPriority(k registry.Kind) int {
	if k == registry.KindVulkan {
		return 0
	}
	return 1
}

// mergeByBusID makes one device of every group sharing a PCI bus id: the
// device of the highest-priority kind is kept and missing fields are filled
// from the others (a GPU seen by its vendor tool, sysfs and Vulkan is one
// device). Devices without a bus id are kept as they are.
func mergeByBusID(devs []registry.Device) []registry.Device {
	out := make([]registry.Device, 0, len(devs))
	at := map[string]int{}
	for _, d := range devs {
		bus := d.PCIBusID
		if bus == "" {
			out = append(out, d)
			continue
		}
		i, seen := at[bus]
		if !seen {
			at[bus] = len(out)
			out = append(out, d)
			continue
		}
		keep, other := out[i], d
		if kindPriority(other.Kind) > kindPriority(keep.Kind) {
			keep, other = other, keep
		}
		out[i] = fillFrom(keep, other)
	}
	return out
}

// fillFrom fills the unknown fields of d from o and records o's sources.
func fillFrom(d, o registry.Device) registry.Device {
	setS := func(dst *string, src string, field string) {
		if *dst == "" && src != "" {
			*dst = src
			if s, ok := o.Sources[field]; ok {
				d.SetSource(field, s)
			}
		}
	}
	setS(&d.Name, o.Name, "name")
	setS(&d.Vendor, o.Vendor, "vendor")
	setS(&d.UUID, o.UUID, "uuid")
	setS(&d.DriverVersion, o.DriverVersion, "driver_version")
	setS(&d.ComputeCapability, o.ComputeCapability, "compute_capability")
	setS(&d.PCIID, o.PCIID, "pci_id")
	if d.MemoryBytes == 0 && o.MemoryBytes > 0 {
		d.MemoryBytes = o.MemoryBytes
		d.SetSource("memory_bytes", o.Sources["memory_bytes"])
	}
	if d.MemoryFreeBytes == nil && o.MemoryFreeBytes != nil {
		d.MemoryFreeBytes = o.MemoryFreeBytes
	}
	if d.MemoryBandwidthGBs == 0 {
		d.MemoryBandwidthGBs = o.MemoryBandwidthGBs
	}
	if d.NUMANode == nil {
		d.NUMANode = o.NUMANode
	}
	return d
}
