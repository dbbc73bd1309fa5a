package asic

import (
	"context"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Qualcomm Cloud AI accelerators, by PCI id: vendor 0x17cb (Qualcomm
// Technologies; `PCI_VENDOR_ID_QCOM`), devices 0xa100 (AIC100) and 0xa080
// (AIC080) from Linux drivers/accel/qaic/qaic_drv.c. The qaic driver
// registers each card with the DRM accel subsystem (/dev/accel/accelN).
// Memory is left out: the kernel's aic100 documentation gives only "up to
// 32 GB" of on-card DDR, which varies by SKU.

// BackendQualcomm names the qualcomm backend (Cloud AI cards, above).
const BackendQualcomm = "qualcomm"

// VendorQualcomm is Qualcomm Technologies' PCI vendor id.
const VendorQualcomm = 0x17cb

var qaicModels = map[int]string{
	0xa100: "Qualcomm Cloud AI 100",
	0xa080: "Qualcomm Cloud AI 080",
}

// Qualcomm is this file's detection source (the orchestrator lists it).
var Qualcomm = machine.Backend{Name: BackendQualcomm, Detect: DetectQualcomm}

// DetectQualcomm lists the Qualcomm Cloud AI cards (qaicModels) on PCI.
func DetectQualcomm(_ context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	var accel map[string]string
	for _, p := range m.PCIDevices(VendorQualcomm) {
		name, ok := qaicModels[p.Device]
		if !ok {
			continue // Qualcomm also makes Wi-Fi and modem chips
		}
		if accel == nil {
			accel = machine.AccelNodesByBus(m)
		}
		node, hasNode := accel[p.Address]
		d := registry.Device{ID: p.Address, Kind: registry.KindQualcommAI100, Vendor: "qualcomm", Name: name,
			PCIBusID: p.Address, NUMANode: p.NUMANode, Architecture: "aic100"}
		d.SetSource("name", "pci-id")
		d.Available = p.Driver == "qaic" && hasNode && m.Exists("dev/accel/"+node)
		if !d.Available {
			f.Warn(BackendQualcomm, registry.WarnDeviceUnusable, "%s (%s): driver %q, accel node %q: not usable", p.Address, name, p.Driver, node)
		}
		f.Devices = append(f.Devices, d)
	}
	return f
}
