package intel

import (
	"context"
	"fmt"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// Intel Gaudi (Habana Labs): hl-smi first, the habanalabs driver's sysfs
// view when hl-smi is absent or fails.

const GaudiBackend = "gaudi"

// Gaudi is this file's detection source (the orchestrator lists it).
var Gaudi = machine.Backend{Name: GaudiBackend, Detect: detectGaudi}

// gaudiGen describes one Gaudi generation.
type gaudiGen struct {
	Arch string // "gaudi2"
	Name string // "Intel Gaudi 2"
	// Record names the internal/specs datasheet record ("" = none): its HBM
	// bandwidth, and its memory for the sysfs fallback only (hl-smi reports
	// the real figure) where specs.DeviceMemoryBytes knows it.
	Record string
}

// datasheet returns the generation's internal/specs record.
func (g *gaudiGen) datasheet() (specs.Spec, bool) {
	if g == nil || g.Record == "" {
		return specs.Spec{}, false
	}
	return specs.Datasheet(g.Record)
}

var (
	// Gaudi 2: HBM (read as binary, as hl-smi prints it) and bandwidth from
	// the specs record. Precisions: FP8
	// (E4M3/E5M2) with BF16/FP16/FP32 as the high-precision types (Intel
	// Neural Compressor "FP8 Quantization" for Gaudi2/HPU; devices.json
	// fp16_bf16 and fp8 TFLOPS). INT8 is left out: no source names it.
	gaudi2 = gaudiGen{Arch: "gaudi2", Name: "Intel Gaudi 2", Record: "Intel Gaudi2 (HL-225)"}
	// Gaudi 3: bandwidth from the specs record; its 128 GB figure is given
	// without a binary/decimal unit, so the fallback leaves memory out.
	gaudi3 = gaudiGen{Arch: "gaudi3", Name: "Intel Gaudi 3", Record: "Intel Gaudi3"}
	// First-generation Gaudi (HL-2000): BF16/FP32 training chip; no memory or
	// bandwidth figure in our sources.
	gaudi1 = gaudiGen{Arch: "gaudi", Name: "Intel Gaudi"}
)

// gaudiPCIGen maps Habana PCI device ids to generations: habanalabs driver
// `habanalabs_drv.c` / hl-thunk `pci_ids.h` (PCI_IDS_GAUDI 0x1000,
// GAUDI_HL2000M 0x1001, GAUDI_SEC 0x1010, GAUDI_HL2000M_SEC 0x1011, GAUDI2
// 0x1020, GAUDI2_HL_288 0x1021, GAUDI3 0x1060, GAUDI3_SINGLE_DIE 0x1062,
// GAUDI3_HL_338 0x1063); pci.ids 2023.04.10 "1da3 Habana Labs Ltd.".
var gaudiPCIGen = map[int]*gaudiGen{
	0x1000: &gaudi1, 0x1001: &gaudi1, 0x1010: &gaudi1, 0x1011: &gaudi1,
	0x1020: &gaudi2, 0x1021: &gaudi2,
	0x1060: &gaudi3, 0x1062: &gaudi3, 0x1063: &gaudi3,
}

// gaudiGenFromName recognises a generation from an hl-smi product name:
// HL-205 is the first Gaudi mezzanine card, HL-225/HL-288 Gaudi 2 (OAM/PCIe),
// HL-325/HL-338 Gaudi 3 (OAM/PCIe).
func gaudiGenFromName(name string) *gaudiGen {
	n := strings.ToUpper(name)
	switch {
	case strings.Contains(n, "GAUDI3"), strings.Contains(n, "GAUDI 3"),
		strings.HasPrefix(n, "HL-32"), strings.HasPrefix(n, "HL-33"):
		return &gaudi3
	case strings.Contains(n, "GAUDI2"), strings.Contains(n, "GAUDI 2"),
		strings.HasPrefix(n, "HL-22"), strings.HasPrefix(n, "HL-28"):
		return &gaudi2
	case strings.HasPrefix(n, "HL-20"):
		return &gaudi1
	}
	return nil
}

func detectGaudi(ctx context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	// Only device ids that name a Gaudi generation: Goya and Greco
	// inference cards share the vendor id.
	pci := machine.PCIFunctionsIn(m, machine.VendorHabana, gaudiPCIGen)
	out, w, ok := m.Tool(ctx, GaudiBackend, "hl-smi", HLSMIArgs()...)
	f.AddWarning(w)
	if ok {
		rows, errs := ParseHLSMI(out)
		for _, err := range errs {
			f.Warn(GaudiBackend, registry.WarnParseError, "hl-smi: %v", err)
		}
		// A row at another vendor's PCI function is not a Gaudi.
		rows = machine.RowsAtVendor(m, &f, GaudiBackend, "hl-smi", false, rows, func(r hlSMIRow) string { return r.BusID }, machine.VendorHabana)
		for _, r := range rows {
			for _, a := range r.Absurd {
				f.WarnAbsurdMemory(GaudiBackend, "hl-smi", "", a.What, a.Raw)
			}
		}
		if len(rows) > 0 {
			f.Devices = gaudiFromHLSMI(rows, pci)
			f.Devices = append(f.Devices, gaudiMissedByTool(&f, rows, pci)...)
			return f
		}
		if len(errs) == 0 && len(pci) > 0 {
			f.Warn(GaudiBackend, registry.WarnToolFailed, "hl-smi listed no device while sysfs shows %d Habana device(s)", len(pci))
		}
	}
	if len(pci) == 0 {
		return f
	}
	f.Warn(GaudiBackend, registry.WarnFallback, "hl-smi gave no usable answer; %d Gaudi device(s) from sysfs (no free memory, driver version or uuid)", len(pci))
	accel := machine.AccelNodesByBus(m)
	for _, p := range pci {
		d := gaudiFromPCI(p)
		node, bound := accel[p.Address]
		d.Available = p.Driver == "habanalabs" && bound && m.Exists("dev/accel/"+node)
		if !d.Available {
			f.Warn(GaudiBackend, registry.WarnDeviceUnusable, "%s: driver %q, accel node %q: not usable", p.Address, p.Driver, node)
		}
		f.Devices = append(f.Devices, d)
	}
	return f
}

// gaudiFromHLSMI builds devices from hl-smi rows; the generation comes from
// the PCI device id of the same bus id when sysfs has it, else from the name.
func gaudiFromHLSMI(rows []hlSMIRow, pci []machine.PCIDevice) []registry.Device {
	byBus := map[string]machine.PCIDevice{}
	for _, p := range pci {
		byBus[p.Address] = p
	}
	devs := make([]registry.Device, 0, len(rows))
	for _, r := range rows {
		d := registry.Device{ID: fmt.Sprintf("hl%d", r.Index), Kind: registry.KindGaudi, Vendor: "intel",
			Name: r.Name, Available: true, PCIBusID: r.BusID, DriverVersion: r.DriverVersion, UUID: r.UUID}
		d.SetSource("name", "hl-smi")
		gen := gaudiGenFromName(r.Name)
		if p, ok := byBus[r.BusID]; ok && r.BusID != "" {
			gen = gaudiPCIGen[p.Device]
		}
		if r.MemoryMiB > 0 {
			d.MemoryBytes = r.MemoryMiB << 20
			d.SetSource("memory_bytes", "hl-smi")
		}
		if r.MemoryFreeMiB >= 0 && (r.MemoryMiB <= 0 || r.MemoryFreeMiB <= r.MemoryMiB) {
			free := r.MemoryFreeMiB << 20
			d.MemoryFreeBytes = &free
			d.SetSource("memory_free_bytes", "hl-smi")
		}
		applyGaudiGen(&d, gen)
		devs = append(devs, d)
	}
	return devs
}

// gaudiMissedByTool lists, as unusable, the Gaudi PCI functions hl-smi did
// not report (a device the driver failed to bring up is still seen).
func gaudiMissedByTool(f *machine.Findings, rows []hlSMIRow, pci []machine.PCIDevice) []registry.Device {
	listed := map[string]bool{}
	for _, r := range rows {
		listed[r.BusID] = true
	}
	var out []registry.Device
	for _, p := range pci {
		if listed[p.Address] {
			continue
		}
		d := gaudiFromPCI(p)
		f.Warn(GaudiBackend, registry.WarnDeviceUnusable, "%s (%s): in sysfs but not listed by hl-smi", p.Address, d.Name)
		out = append(out, d)
	}
	return out
}

// gaudiFromPCI builds a device from its PCI function alone.
func gaudiFromPCI(p machine.PCIDevice) registry.Device {
	gen := gaudiPCIGen[p.Device]
	d := registry.Device{ID: p.Address, Kind: registry.KindGaudi, Vendor: "intel", Name: gen.Name,
		PCIBusID: p.Address, NUMANode: p.NUMANode}
	d.SetSource("name", "pci-id")
	if ds, ok := gen.datasheet(); ok {
		if mem := specs.DeviceMemoryBytes(ds); mem > 0 {
			d.MemoryBytes = mem
			d.SetSource("memory_bytes", "pci-id")
		}
	}
	applyGaudiGen(&d, gen)
	return d
}

// applyGaudiGen fills what the generation tells: architecture, datasheet
// bandwidth and native precisions.
func applyGaudiGen(d *registry.Device, gen *gaudiGen) {
	if gen == nil {
		return
	}
	d.Architecture = gen.Arch
	if ds, ok := gen.datasheet(); ok && ds.BandwidthGBs > 0 {
		d.MemoryBandwidthGBs = ds.BandwidthGBs
		d.SetSource("memory_bandwidth_gb_s", "datasheet")
	}
	d.Quantizations = precision.Gaudi(gen.Arch)
}
