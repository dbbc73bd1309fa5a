package detect

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"

	"context"
	"path"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The intel_npu backend reports Intel NPUs (Meteor Lake and later): PCI
// functions with a known NPU id or bound to intel_vpu, and their DRM accel
// node. There is no /sys/class/misc/intel_npu in any kernel (formats.md
// "Intel NPU"); the driver registers with the accel class.
const intelNPUBackend = "intel_npu"

func init() { register(Backend{Name: intelNPUBackend, Detect: detectIntelNPU}) }

// intelNPUSpec: ids from Linux drivers/accel/ivpu/ivpu_drv.h
// (PCI_DEVICE_ID_MTL 0x7d1d, _ARL 0xad1d, _LNL 0x643e, _PTL_P 0xb03e); newer
// ids are caught by the intel_vpu driver binding. 0x7e4c is the Gaussian &
// Neural-Network Accelerator, not an NPU. Precisions: int8 and fp16 (OpenVINO
// NPU device documentation: the NPU executes INT8 and FP16, FP32 models are
// converted to FP16). The NPU has no memory of its own.
var intelNPUSpec = pciNPUSpec{
	backend:   intelNPUBackend,
	kind:      registry.KindIntelNPU,
	vendor:    "intel",
	pciVendor: machine.VendorIntel,
	driver:    "intel_vpu",
	names: map[int]string{
		0x7d1d: "Intel Meteor Lake NPU",
		0xad1d: "Intel Arrow Lake NPU",
		0x643e: "Intel Lunar Lake NPU",
		0xb03e: "Intel Panther Lake NPU",
	},
	notNPU:      map[int]bool{0x7e4c: true},
	defaultName: "Intel NPU",
	quant:       func(int) []string { return []string{"int8", "fp16"} },
}

func detectIntelNPU(_ context.Context, m *machine.Machine) machine.Findings {
	return detectPCINPUs(m, intelNPUSpec)
}

// pciNPUSpec describes an NPU family found on PCI with a DRM accel node.
type pciNPUSpec struct {
	backend     string
	kind        registry.Kind
	vendor      string
	pciVendor   int
	driver      string
	names       map[int]string // known device ids
	notNPU      map[int]bool   // functions of the vendor that are never NPUs
	defaultName string
	quant       func(deviceID int) []string
}

// detectPCINPUs finds the NPUs of one family: a PCI function of the vendor
// that has a known id or is bound to the family's driver. An NPU is available
// when its driver is bound and its /dev/accel node exists; otherwise it is
// listed as unavailable with a device_unusable warning saying why.
func detectPCINPUs(m *machine.Machine, spec pciNPUSpec) machine.Findings {
	var f machine.Findings
	var accel map[string]string // read when the first NPU is found: most machines have none
	for _, p := range m.PCIDevices(spec.pciVendor) {
		_, known := spec.names[p.Device]
		if spec.notNPU[p.Device] || (!known && p.Driver != spec.driver) {
			continue
		}
		d := registry.Device{ID: p.Address, Kind: spec.kind, Vendor: spec.vendor, PCIBusID: p.Address,
			Name: spec.defaultName, MemoryShared: true, Quantizations: spec.quant(p.Device)}
		if n, ok := spec.names[p.Device]; ok {
			d.Name = n
		}
		d.SetSource("name", "pci-id")
		if accel == nil {
			accel = accelNodesByBusID(m)
		}
		node := accel[p.Address]
		switch {
		case p.Driver != spec.driver:
			f.Warn(spec.backend, registry.WarnDeviceUnusable, "%s (%s) at %s: driver %s not bound", d.Name, p.PCIID(), p.Address, spec.driver)
		case node == "" || !m.Exists(path.Join("dev", "accel", node)):
			f.Warn(spec.backend, registry.WarnDeviceUnusable, "%s at %s: no /dev/accel node", d.Name, p.Address)
		default:
			d.Available = true
		}
		f.Devices = append(f.Devices, d)
	}
	return f
}

// accelNodesByBusID maps PCI addresses to their DRM accel node name
// ("accel0"), from /sys/class/accel/accelN/device links (drm_accel.c).
func accelNodesByBusID(m *machine.Machine) map[string]string {
	out := map[string]string{}
	for _, e := range m.ReadDir(machine.PathAccel) {
		name := e.Name()
		if !strings.HasPrefix(name, "accel") {
			continue
		}
		target := m.ReadLink(path.Join(machine.PathAccel, name, "device"))
		if target == "" {
			continue
		}
		out[machine.NormalizeBusID(path.Base(target))] = name
	}
	return out
}
