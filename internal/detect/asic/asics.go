package asic

import (
	"context"
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// AI ASICs without a vendor tool we can parse: found by PCI vendor/device id
// only, one device per PCI function (never a constant "one device").
//
// Sources (pci.ids, The PCI ID Repository, version 2023.04.10):
//   - 1d95 "Graphcore Ltd": 0001 "Colossus GC2 [C2]", 0002 "Colossus GC1 [S1]".
//   - 1de0 "Groq": 0000 "TSP [GroqChip]" (subsystems GC1-010x [GroqCard]).
//
// Not detected, for want of a public id: Cerebras (CS systems are reached
// over the network, no host PCI function is documented), Samsung Exynos NPU
// and MediaTek APU (SoC platform devices of vendor kernels; no mainline
// driver, device node or id to key on).

// BackendASIC names the asic backend: the PCI-id-only accelerators above.
const BackendASIC = "asic"

// PCI vendor ids of the ASIC makers above.
const (
	VendorGraphcore = 0x1d95
	VendorGroq      = 0x1de0
)

// Others is this file's detection source (the orchestrator lists it).
var Others = machine.Backend{Name: BackendASIC, Detect: DetectASICs}

// asicModel is one known PCI device id of an ASIC vendor.
type asicModel struct {
	Name   string
	Arch   string
	Quants func() []string // the precision table's answer (internal/precision)
}

type asicVendor struct {
	ID     int
	Kind   registry.Kind
	Vendor string // registry vendor
	Label  string // for names of unknown ids
	Models map[int]asicModel
}

var asicVendors = []asicVendor{
	{ID: VendorGraphcore, Kind: registry.KindGraphcore, Vendor: "graphcore", Label: "Graphcore IPU",
		Models: map[int]asicModel{
			0x0001: {Name: "Graphcore Colossus GC2 (C2)", Arch: "colossus_gc2"},
			0x0002: {Name: "Graphcore Colossus GC1 (S1)", Arch: "colossus_gc1"},
		}},
	// GroqChip: 188 TFLOPS FP16 and 750 TOPS INT8 (ALCF GroqRack
	// documentation of the GroqCard), hence fp16 and int8.
	{ID: VendorGroq, Kind: registry.KindGroq, Vendor: "groq", Label: "Groq LPU",
		Models: map[int]asicModel{
			0x0000: {Name: "Groq GroqChip (TSP)", Arch: "tsp", Quants: precision.Groq},
		}},
}

// DetectASICs lists the accelerators of asicVendors found by PCI id.
func DetectASICs(_ context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	for _, v := range asicVendors {
		for _, p := range m.PCIDevices(v.ID) {
			f.Devices = append(f.Devices, asicDevice(&f, v, p))
		}
	}
	return f
}

// asicDevice builds the device of one PCI function. An id of a known vendor
// that no source names is still listed (the vendor id is certain), with a
// "guess" warning. Without a bound driver the device is not usable.
func asicDevice(f *machine.Findings, v asicVendor, p machine.PCIDevice) registry.Device {
	d := registry.Device{ID: p.Address, Kind: v.Kind, Vendor: v.Vendor, PCIBusID: p.Address,
		NUMANode: p.NUMANode, Available: p.Driver != ""}
	if mod, ok := v.Models[p.Device]; ok {
		d.Name, d.Architecture = mod.Name, mod.Arch
		if mod.Quants != nil {
			d.Quantizations = mod.Quants()
		}
	} else {
		d.Name = fmt.Sprintf("%s (device %s)", v.Label, machine.Hex4(p.Device))
		f.Warn(BackendASIC, registry.WarnGuess, "%s: PCI id %s is of vendor %s but not a known model", p.Address, p.PCIID(), v.Vendor)
	}
	d.SetSource("name", "pci-id")
	if !d.Available {
		f.Warn(BackendASIC, registry.WarnDeviceUnusable, "%s (%s): no driver bound", p.Address, d.Name)
	}
	return d
}
