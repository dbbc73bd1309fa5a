package intel

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// Intel Gaudi (Habana Labs): hl-smi first, the habanalabs driver's sysfs
// view when hl-smi is absent or fails.

// BackendGaudi names the gaudi backend (Intel Gaudi, above).
const BackendGaudi = "gaudi"

// Gaudi is this file's detection source (the orchestrator lists it).
var Gaudi = machine.Backend{Name: BackendGaudi, Detect: detectGaudi}

// gaudiGen describes one Gaudi generation.
type gaudiGen struct {
	Arch string // "gaudi2"
	Name string // "Intel Gaudi 2"
	// Record names the internal/specs datasheet record ("" = none): its HBM
	// bandwidth, and its memory for the sysfs fallback only (hl-smi reports
	// the real figure) where specs.DeviceMemoryBytes knows it.
	Record string
	// ScaleUpPorts and PortGbps describe the on-chip RoCE ports that join
	// the eight OAM modules of one baseboard all-to-all (0: none known).
	ScaleUpPorts int
	PortGbps     float64
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
	// Neural Compressor "FP8 Quantization" for Gaudi2/HPU; the specs
	// record's BF16/FP16 and FP8 TFLOPS). INT8 is left out: no source names it.
	//
	// Scale-up, Gaudi 2 and 3 alike: of each chip's 24 RoCE ports, 21 join
	// the seven other OAM modules of an HLS box all-to-all (3 per peer) and
	// 3 go out of the box; Gaudi 2 ports run at 100 Gb/s, Gaudi 3 ports at
	// 200 Gb/s (docs.habana.ai "Intel Gaudi Network Configuration",
	// https://docs.habana.ai/en/latest/Management_and_Monitoring/Network_Configuration/index.html).
	gaudi2 = gaudiGen{Arch: "gaudi2", Name: "Intel Gaudi 2", Record: "Intel Gaudi2 (HL-225)", ScaleUpPorts: 21, PortGbps: 100}
	// Gaudi 3: bandwidth from the specs record; its 128 GB figure is given
	// without a binary/decimal unit, so the fallback leaves memory out.
	gaudi3 = gaudiGen{Arch: "gaudi3", Name: "Intel Gaudi 3", Record: "Intel Gaudi3", ScaleUpPorts: 21, PortGbps: 200}
	// First-generation Gaudi (HL-2000): BF16/FP32 training chip; no memory,
	// bandwidth or scale-up figure in our sources.
	gaudi1 = gaudiGen{Arch: "gaudi", Name: "Intel Gaudi"}
)

// gaudiIDRecords names, per generation, the internal/specs records whose
// Habana PCI ids are that generation's (the ids' one home; the records cite
// the habanalabs driver and hl-thunk names).
var gaudiIDRecords = map[*gaudiGen][]string{
	&gaudi1: {"Intel Gaudi (HL-2000)"},
	&gaudi2: {"Intel Gaudi2 (HL-225)", "Intel Gaudi2 (HL-288, PCIe)"},
	&gaudi3: {"Intel Gaudi3", "Intel Gaudi3 (single die)"},
}

// gaudiPCIGen maps Habana PCI device ids to generations (gaudiIDRecords).
var gaudiPCIGen = specs.PCIGenerations(machine.VendorHabana, gaudiIDRecords)

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
	out, w, ok := m.Tool(ctx, BackendGaudi, "hl-smi", HLSMIArgs()...)
	f.AddWarning(w)
	if ok {
		rows, errs := ParseHLSMI(out)
		for _, err := range errs {
			f.Warn(BackendGaudi, registry.WarnParseError, "hl-smi: %v", err)
		}
		// A row at another vendor's PCI function is not a Gaudi.
		rows = machine.RowsAtVendor(m, &f, BackendGaudi, "hl-smi", false, rows, func(r hlSMIRow) string { return r.BusID }, machine.VendorHabana)
		for _, r := range rows {
			for _, a := range r.Absurd {
				f.WarnAbsurdMemory(BackendGaudi, "hl-smi", "", a.What, a.Raw)
			}
		}
		if len(rows) > 0 {
			f.Devices = gaudiFromHLSMI(rows, pci)
			f.Devices = append(f.Devices, gaudiMissedByTool(&f, rows, pci)...)
			f.Interconnects = gaudiScaleUp(f.Devices, pci)
			return f
		}
		if len(errs) == 0 && len(pci) > 0 {
			f.Warn(BackendGaudi, registry.WarnToolFailed, "hl-smi listed no device while sysfs shows %d Habana %s", len(pci), machine.NounOf(len(pci), "device"))
		}
	}
	if len(pci) == 0 {
		return f
	}
	f.Warn(BackendGaudi, registry.WarnFallback, "hl-smi gave no usable answer; %d Gaudi %s from sysfs (no free memory, driver version or uuid)", len(pci), machine.NounOf(len(pci), "device"))
	accel := machine.AccelNodesByBus(m)
	for _, p := range pci {
		d := gaudiFromPCI(p)
		node, bound := accel[p.Address]
		d.Available = p.Driver == "habanalabs" && bound && m.Exists("dev/accel/"+node)
		if !d.Available {
			f.Warn(BackendGaudi, registry.WarnDeviceUnusable, "%s: driver %q, accel node %q: not usable", p.Address, p.Driver, node)
		}
		f.Devices = append(f.Devices, d)
	}
	f.Interconnects = gaudiScaleUp(f.Devices, pci)
	return f
}

// gaudiOAMPCI are the PCI device ids of the OAM mezzanine modules that sit
// on an eight-way baseboard (Gaudi 2 HL-225, Gaudi 3 HL-325L); the PCIe
// cards (Gaudi 2 HL-288 0x1021, Gaudi 3 HL-338 0x1063) are not wired
// all-to-all, nor is the single-die Gaudi 3 (0x1062).
var gaudiOAMPCI = map[int]bool{0x1020: true, 0x1060: true}

// gaudiOAMName recognises the OAM modules by their hl-smi product name when
// sysfs does not give the PCI id.
func gaudiOAMName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasPrefix(n, "HL-225") || strings.HasPrefix(n, "HL-325")
}

// gaudiScaleUp returns the scale-up domain of the devices: the OAM modules
// of one generation whose ports it knows, when there are at least two. No
// tool reports these links (the backend runs no hl-smi port query, and no
// public capture of one from such a server was found), so the domain is
// derived from the documented topology: every OAM module of an HLS box
// reaches its seven peers over 21 ports. BandwidthGBs is one device's scale-up bandwidth in
// one direction, ports x rate / 8 (Gaudi 2: 21 x 100 Gb/s = 262.5 GB/s,
// Gaudi 3: 525 GB/s, the figures of the cited page); LinkBandwidthGBs is one
// port's.
func gaudiScaleUp(devs []registry.Device, pci []machine.PCIDevice) []registry.Interconnect {
	pciDevice := map[string]int{}
	for _, p := range pci {
		pciDevice[p.Address] = p.Device
	}
	var ids []string
	var gen *gaudiGen
	// Bus order, the order the registry numbers devices in.
	devs = slices.Clone(devs)
	slices.SortStableFunc(devs, func(a, b registry.Device) int { return strings.Compare(a.PCIBusID, b.PCIBusID) })
	for _, d := range devs {
		g := gaudiGenFromArch(d.Architecture)
		oam := gaudiOAMName(d.Name)
		if id, ok := pciDevice[d.PCIBusID]; ok && d.PCIBusID != "" {
			oam = gaudiOAMPCI[id]
		}
		if g == nil || g.ScaleUpPorts == 0 || !oam {
			continue
		}
		if gen != nil && gen != g {
			return nil // two generations on one baseboard is not a real machine
		}
		gen = g
		ids = append(ids, d.ID)
	}
	if len(ids) < 2 {
		return nil
	}
	port := gen.PortGbps / 8
	return []registry.Interconnect{{Kind: registry.LinkRoCE, Name: gen.Name + " scale-up", Devices: ids,
		BandwidthGBs: float64(gen.ScaleUpPorts) * port, Links: gen.ScaleUpPorts, LinkBandwidthGBs: port,
		Source: "pci-id"}}
}

// gaudiGenFromArch returns the generation of an architecture name.
func gaudiGenFromArch(arch string) *gaudiGen {
	for _, g := range []*gaudiGen{&gaudi1, &gaudi2, &gaudi3} {
		if g.Arch == arch {
			return g
		}
	}
	return nil
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
		f.Warn(BackendGaudi, registry.WarnDeviceUnusable, "%s (%s): in sysfs but not listed by hl-smi", p.Address, d.Name)
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
