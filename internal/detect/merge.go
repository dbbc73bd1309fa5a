package detect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

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
// device). Devices without a bus id are kept as they are. Devices of
// different vendors are one device by mistake (a tool naming another
// vendor's address), so they are never merged: the one sysfs confirms is
// kept (see keepAtConflict) and the other dropped with a warning.
// vendorAt is the PCI vendor sysfs shows at a bus id (Machine.vendorAt).
func mergeByBusID(reg *registry.Registry, vendorAt func(bus string) (int, bool)) {
	out := make([]registry.Device, 0, len(reg.Devices))
	at := map[string]int{}
	for _, d := range reg.Devices {
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
		if vendorsDiffer(keep, other) {
			sysfs, known := vendorAt(bus)
			keep, other = keepAtConflict(keep, other, sysfs, known)
			out[i] = keep
			reg.Warnings = append(reg.Warnings, conflictWarning(keep, other, bus, sysfs, known))
			continue
		}
		if kindPriority(other.Kind) > kindPriority(keep.Kind) {
			keep, other = other, keep
		}
		out[i] = fillFrom(keep, other)
	}
	reg.Devices = out
}

// kindPCIVendor is the PCI vendor of every device of a kind, where a kind has
// one vendor (ids in pci.go). Gaudi says vendor "intel" but is a Habana
// function, so the kind says more than the vendor name.
var kindPCIVendor = map[registry.Kind]int{
	registry.KindCUDA: machine.VendorNVIDIA, registry.KindROCm: machine.VendorAMD, registry.KindIntelGPU: machine.VendorIntel,
	registry.KindIntelNPU: machine.VendorIntel, registry.KindAMDXDNA: machine.VendorAMDCPU, registry.KindGaudi: machine.VendorHabana,
	registry.KindNeuron: machine.VendorAmazon, registry.KindTPU: machine.VendorGoogle,
}

// vendorNamePCI maps the vendor names backends write to PCI vendor ids, for
// kinds that span vendors (Vulkan).
var vendorNamePCI = map[string]int{
	"nvidia": machine.VendorNVIDIA, "amd": machine.VendorAMD, "intel": machine.VendorIntel, "amazon": machine.VendorAmazon, "google": machine.VendorGoogle,
}

// pciVendorOf returns the PCI vendor a device claims: its pci_id's when set,
// else its kind's, else its vendor name's; false when it claims none.
func pciVendorOf(d registry.Device) (int, bool) {
	if v, _, ok := strings.Cut(d.PCIID, ":"); ok {
		if n, err := strconv.ParseUint(v, 16, 16); err == nil {
			return int(n), true
		}
	}
	if v, ok := kindPCIVendor[d.Kind]; ok {
		return v, true
	}
	v, ok := vendorNamePCI[d.Vendor]
	return v, ok
}

// vendorsDiffer reports whether two devices claim different PCI vendors (or,
// when neither claims one, carry different vendor names).
func vendorsDiffer(a, b registry.Device) bool {
	va, oka := pciVendorOf(a)
	vb, okb := pciVendorOf(b)
	if oka && okb {
		return va != vb
	}
	return !oka && !okb && a.Vendor != "" && b.Vendor != "" && a.Vendor != b.Vendor
}

// keepAtConflict picks, of two devices of different vendors at one bus id,
// the one whose vendor is the function's in sysfs; when sysfs cannot tell,
// the native kind over Vulkan, and between equals the one seen first.
func keepAtConflict(first, second registry.Device, sysfs int, known bool) (keep, drop registry.Device) {
	if known {
		if v, ok := pciVendorOf(second); ok && v == sysfs {
			return second, first
		}
		if v, ok := pciVendorOf(first); ok && v == sysfs {
			return first, second
		}
	}
	if kindPriority(second.Kind) > kindPriority(first.Kind) {
		return second, first
	}
	return first, second
}

// conflictWarning reports the dropped device under the backend that found
// it (device keys are "backend|id" until Normalize, see addFindings).
func conflictWarning(keep, drop registry.Device, bus string, sysfs int, known bool) registry.Warning {
	backend, _, _ := strings.Cut(drop.ID, "|")
	why := "sysfs cannot tell which"
	if known {
		why = "sysfs shows PCI vendor " + machine.Hex4(sysfs)
	}
	return registry.Warning{Backend: backend, Code: registry.WarnConflictingSources,
		Message: fmt.Sprintf("%s: %s %q (%s) and %s %q (%s) claim the same PCI function; %s: %s kept, %s dropped",
			bus, drop.Kind, drop.Name, drop.Vendor, keep.Kind, keep.Name, keep.Vendor, why, keep.Kind, drop.Kind)}
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
