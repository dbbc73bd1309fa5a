package amd

import (
	"context"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The amd_xdna backend reports AMD Ryzen AI NPUs (kind amd_xdna_npu): PCI
// functions of vendor 0x1022 with an XDNA id or bound to amdxdna, and their
// /dev/accel node (Linux drivers/accel/amdxdna/amdxdna_pci_drv.c,
// https://github.com/torvalds/linux).
const backendAMDXDNA = "amd_xdna"

// XDNA is this file's detection source (the orchestrator lists it).
var XDNA = machine.Backend{Name: backendAMDXDNA, Detect: DetectAMDXDNA}

// amdXDNASpec: ids from Linux drivers/accel/amdxdna/amdxdna_pci_drv.c
// (0x1502 NPU1 Phoenix/Hawk Point, 0x17f0 NPU4), named as pci.ids names them:
// 0x17f0 is "Strix/Krackan/Strix Halo Neural Processing Unit"
// (https://pci-ids.ucw.cz/read/PC/1022/17f0), the same id on all three, as a
// Krackan ThinkPad P16s's lspci shows (testdata/machines/thinkpad-p16s-krackan).
// 0x14ec is the dummy function next to the NPU, never an NPU. Precisions per the AMD Ryzen AI
// Software documentation ("Model quantization"): INT8 on the first XDNA
// generation, INT8 and BF16 on XDNA 2 (Strix). The NPU has no memory of its
// own.
var amdXDNASpec = machine.PCINPUSpec{
	Backend:   backendAMDXDNA,
	Kind:      registry.KindAMDXDNA,
	Vendor:    "amd",
	PCIVendor: machine.VendorAMDCPU,
	Driver:    "amdxdna",
	Names: map[int]string{
		0x1502: "AMD XDNA NPU (Phoenix/Hawk Point)",
		0x17f0: "AMD XDNA 2 NPU (Strix/Krackan/Strix Halo)",
	},
	NotNPU:      map[int]bool{0x14ec: true},
	DefaultName: "AMD XDNA NPU",
	Quant:       precision.AMDXDNA,
}

// DetectAMDXDNA lists the AMD XDNA NPUs (amdXDNASpec) on PCI.
func DetectAMDXDNA(_ context.Context, m *machine.Machine) machine.Findings {
	return machine.DetectPCINPUs(m, amdXDNASpec)
}
