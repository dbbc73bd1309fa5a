package machine

import "slices"

// ReasonNoDriver is the UnavailableReason of a device whose PCI function no
// kernel driver has claimed: present, but no runtime can open it.
const ReasonNoDriver = "no kernel driver bound"

// PCI base classes of GPUs: display controllers (0x03) and processing
// accelerators (0x12, how AMD Instinct cards enumerate).
const (
	ClassDisplay     = 0x03
	ClassAccelerator = 0x12
)

// UnboundFunctions lists the vendor's PCI functions of the given base
// classes that no driver is bound to: devices that sysfs shows but no
// runtime can open. A function bound to any driver (vfio-pci included) is
// not listed.
func UnboundFunctions(m *Machine, vendor int, classBases ...int) []PCIDevice {
	return m.PCIDevicesWhere(vendor, func(p PCIDevice) bool {
		return p.Driver == "" && slices.Contains(classBases, p.ClassBase())
	})
}
