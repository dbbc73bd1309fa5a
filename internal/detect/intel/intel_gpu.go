package intel

import (
	"context"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// BackendIntelGPU names the intel_gpu backend, which reports Intel GPUs (kind intel_gpu): DRM cards bound
// to i915 or xe, filled by xpu-smi (data-center GPUs) when it is installed.
// Integrated GPUs use system RAM: they are memory_shared and get no memory
// figure, since neither i915 nor xe exposes a dedicated size for them and
// system RAM is not GPU memory.
const BackendIntelGPU = "intel_gpu"

// GPU is this file's detection source (the orchestrator lists it).
var GPU = machine.Backend{Name: BackendIntelGPU, Detect: detectIntelGPU}

// intelGPUModel is what a PCI device id tells about an Intel GPU.
type intelGPUModel struct {
	Name       string
	Integrated bool
}

// intelGPUModels names Intel GPUs by PCI device id: 0x0bda Data Center GPU
// Max 1100 (testdata/machines/intel-max-1100-x2; xpu-smi captures print
// that name for pci_device_id 0xbda), 0x7d55 Meteor Lake-P Arc Graphics and
// 0x4680 Alder Lake-S GT1 UHD Graphics 770 (hwdata pci.ids,
// https://pci-ids.ucw.cz/read/PC/8086).
var intelGPUModels = map[int]intelGPUModel{
	0x0bda: {Name: "Intel Data Center GPU Max 1100"},
	0x7d55: {Name: "Intel Arc Graphics (Meteor Lake)", Integrated: true},
	0x4680: {Name: "Intel UHD Graphics 770", Integrated: true},
}

func detectIntelGPU(ctx context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	var devs []registry.Device
	for _, c := range machine.ListDRMCards(m) {
		if c.Vendor != machine.VendorIntel || (c.Driver != "i915" && c.Driver != "xe") {
			continue
		}
		devs = append(devs, intelGPUFromCard(c))
	}
	devs = append(devs, unboundIntelGPUs(m)...)
	if m.HasTool("xpu-smi") {
		out, w, ok := m.Tool(ctx, BackendIntelGPU, "xpu-smi", XPUSMIDumpArgs...)
		f.AddWarning(w)
		if ok {
			rows, err := ParseXPUDump(string(out))
			if err != nil {
				f.Warn(BackendIntelGPU, registry.WarnParseError, "xpu-smi %s: %v", strings.Join(XPUSMIDumpArgs, " "), err)
			}
			devs = mergeXPU(devs, intelXPURows(m, rows, &f), &f)
		}
	}
	f.Devices = devs
	return f
}

// intelGPUFromCard builds the device of one Intel DRM card from sysfs.
func intelGPUFromCard(c machine.DRMCard) registry.Device {
	d := registry.Device{ID: c.BusID, Kind: registry.KindIntelGPU, Vendor: "intel", Available: true, PCIBusID: c.BusID}
	model, known := intelGPUModels[c.Device]
	if known {
		d.Name = model.Name
		d.SetSource("name", "pci-id")
	} else {
		nameFromPartTable(&d, c.Device)
	}
	if isIntelIntegrated(c, model, known) {
		d.MemoryShared = true
	}
	d.Quantizations = precision.IntelGPU(c.Device, c.Class)
	return d
}

// unboundIntelGPUs lists the Intel GPUs that sysfs shows but no driver
// claims (an xe that lacks the card's id, testdata/machines/zimaos-arc-pro-b70-unbound):
// present, not usable, with the reason, instead of vanishing.
func unboundIntelGPUs(m *machine.Machine) []registry.Device {
	var out []registry.Device
	for _, p := range machine.UnboundFunctions(m, machine.VendorIntel, machine.ClassDisplay) {
		d := registry.Device{ID: p.Address, Kind: registry.KindIntelGPU, Vendor: "intel", PCIBusID: p.Address,
			UnavailableReason: machine.ReasonNoDriver, NUMANode: p.NUMANode}
		if model, ok := intelGPUModels[p.Device]; ok {
			d.Name = model.Name
			d.SetSource("name", "pci-id")
			d.MemoryShared = model.Integrated
		} else {
			nameFromPartTable(&d, p.Device)
		}
		d.Quantizations = precision.IntelGPU(p.Device, p.Class)
		out = append(out, d)
	}
	return out
}

// nameFromPartTable names an Intel GPU from its internal/specs record.
func nameFromPartTable(d *registry.Device, deviceID int) {
	if p, ok := specs.LookupPart(machine.Hex4(machine.VendorIntel) + ":" + machine.Hex4(deviceID)); ok && p.Name != "" {
		d.Name = p.Name
		d.SetSource("name", "part table")
	}
}

// isIntelIntegrated tells an iGPU from a discrete card. Known ids decide;
// otherwise an Intel GPU on bus 0 of domain 0 is integrated: Intel iGPUs are
// root-complex integrated endpoints (00:02.0), while every discrete card sits
// behind a PCIe root port on a bus of its own.
func isIntelIntegrated(c machine.DRMCard, model intelGPUModel, known bool) bool {
	if known {
		return model.Integrated
	}
	return strings.HasPrefix(c.BusID, "0000:00:")
}

// intelXPURows keeps the xpu-smi rows whose PCI address sysfs shows as an
// Intel function: a row at another vendor's function (or at an address the
// PCI tree lacks) would otherwise become an Intel GPU that absorbs the real
// device in mergeByBusID. A machine with no PCI tree at all (a container
// without /sys) cannot contradict xpu-smi, so there every row is kept.
func intelXPURows(m *machine.Machine, rows []XPUDevice, f *machine.Findings) []XPUDevice {
	return machine.RowsAtVendor(m, f, BackendIntelGPU, "xpu-smi", true, rows, func(r XPUDevice) string { return r.BusID }, machine.VendorIntel)
}

// mergeXPU folds xpu-smi rows into the sysfs devices by PCI address; a row
// whose device sysfs did not show becomes a device of its own, and a row in
// bad state (no device id) is reported, not used.
func mergeXPU(devs []registry.Device, rows []XPUDevice, f *machine.Findings) []registry.Device {
	at := map[string]int{}
	for i, d := range devs {
		at[d.PCIBusID] = i
	}
	for _, r := range rows {
		for _, a := range r.Absurd {
			f.WarnAbsurdMemory(BackendIntelGPU, "xpu-smi", "", a.What, a.Raw)
		}
		if r.ID < 0 {
			f.Warn(BackendIntelGPU, registry.WarnDeviceUnusable, "xpu-smi lists %s without a device id (GPU in bad state)", r.BusID)
			continue
		}
		i, ok := at[r.BusID]
		if !ok || r.BusID == "" {
			devs = append(devs, registry.Device{ID: "xpu:" + r.BusID, Kind: registry.KindIntelGPU, Vendor: "intel",
				Available: true, PCIBusID: r.BusID})
			i = len(devs) - 1
		}
		d := &devs[i]
		if r.Name != "" {
			d.Name = r.Name
			d.SetSource("name", "xpu-smi")
		}
		if r.UUID != "" {
			d.UUID = r.UUID
			d.SetSource("uuid", "xpu-smi")
		}
		if r.Driver != "" {
			d.DriverVersion = r.Driver
			d.SetSource("driver_version", "xpu-smi")
		}
		if r.MemoryBytes > 0 && !d.MemoryShared {
			d.MemoryBytes = r.MemoryBytes
			d.SetSource("memory_bytes", "xpu-smi")
		}
	}
	return devs
}
