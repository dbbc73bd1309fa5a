package google

import (
	"context"
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// Google Cloud TPU: there is no vendor tool to parse, so chips are counted
// by PCI id, one device per PCI function, as Google's own tpu-info does
// (AI-Hypercomputer/cloud-accelerator-diagnostics tpu_info/device.py;
// pytorch/xla PR 4845). Google's vendor id also covers gVNIC and NVMe
// functions on every Compute Engine VM, so only the TPU device ids count.

const TpuBackend = "tpu"

// TPU is this file's detection source (the orchestrator lists it).
var TPU = machine.Backend{Name: TpuBackend, Detect: detectTPU}

// tpuGen describes one TPU generation.
type tpuGen struct {
	Arch string // "v5e"
	Name string // "TPU v5e"
	// Record names the internal/specs datasheet (devices.json, Cloud TPU
	// documentation; tpu_info for v2 and TPU7x): HBM per chip, HBM bandwidth
	// per chip and bidirectional ICI bandwidth per chip, each where a source
	// gives it.
	Record string
	// MemoryGiB is the record's HBM per chip in GiB (0 = unknown), set from
	// internal/specs at init (tpuGens).
	MemoryGiB int64
	// VFIO: the chip is reached through /dev/vfio/<i> (v5e and later), not
	// /dev/accel<i> (tpu_info device.py chip_path).
	VFIO bool
}

// datasheet returns the generation's internal/specs record.
func (g *tpuGen) datasheet() specs.Spec {
	s, _ := specs.Datasheet(g.Record)
	return s
}

var (
	tpuV2  = tpuGen{Arch: "v2", Name: "TPU v2", Record: "Google TPU v2 (per chip)"}
	tpuV3  = tpuGen{Arch: "v3", Name: "TPU v3", Record: "Google TPU v3 (per chip)"}
	tpuV4  = tpuGen{Arch: "v4", Name: "TPU v4", Record: "Google TPU v4 (per chip)"}
	tpuV5e = tpuGen{Arch: "v5e", Name: "TPU v5e", Record: "Google TPU v5e (per chip)", VFIO: true}
	tpuV5p = tpuGen{Arch: "v5p", Name: "TPU v5p", Record: "Google TPU v5p (per chip)", VFIO: true}
	tpuV6e = tpuGen{Arch: "v6e", Name: "TPU v6e", Record: "Google TPU v6e Trillium (per chip)", VFIO: true}
	// TPU7x: memory only (tpu_info); no bandwidth or INT8 source.
	tpuV7x = tpuGen{Arch: "7x", Name: "TPU7x", Record: "Google TPU7x (per chip)", VFIO: true}
)

// tpuGens lists every generation, to fill MemoryGiB from internal/specs.
var tpuGens = []*tpuGen{&tpuV2, &tpuV3, &tpuV4, &tpuV5e, &tpuV5p, &tpuV6e, &tpuV7x}

func init() {
	for _, g := range tpuGens {
		g.MemoryGiB = specs.DeviceMemoryBytes(g.datasheet()) >> 30
	}
}

// tpuGenOf maps a Google PCI function to its TPU generation, or nil: device
// 0x0027 is v2 or v3 by subsystem device (0x004e / 0x004f), then 0x005e v4,
// 0x0063 v5e, 0x0062 v5p, 0x006f v6e, 0x0076 TPU7x (tpu_info device.py).
func tpuGenOf(p machine.PCIDevice) *tpuGen {
	switch p.Device {
	case 0x0027:
		switch p.SubDevice {
		case 0x004e:
			return &tpuV2
		case 0x004f:
			return &tpuV3
		}
		return nil
	case 0x005e:
		return &tpuV4
	case 0x0063:
		return &tpuV5e
	case 0x0062:
		return &tpuV5p
	case 0x006f:
		return &tpuV6e
	case 0x0076:
		return &tpuV7x
	}
	return nil
}

// tpuChipNode is the device node of the i-th chip.
func tpuChipNode(gen *tpuGen, i int) string {
	if gen.VFIO {
		return fmt.Sprintf("dev/vfio/%d", i)
	}
	return fmt.Sprintf("dev/accel%d", i)
}

func detectTPU(_ context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	var chips []machine.PCIDevice
	var gens []*tpuGen
	for _, p := range m.PCIDevices(machine.VendorGoogle) {
		if g := tpuGenOf(p); g != nil {
			chips = append(chips, p)
			gens = append(gens, g)
		}
	}
	var ids []string
	for i, p := range chips {
		d := tpuDevice(p, gens[i])
		// The i-th chip in PCI address order owns node i (tpu_info's chip_path
		// uses the same enumeration index).
		node := tpuChipNode(gens[i], i)
		d.Available = m.Exists(node)
		d.SetSource("available", "/"+node)
		if !d.Available {
			f.Warn(TpuBackend, registry.WarnDeviceUnusable, "%s (%s): device node /%s is missing", p.Address, d.Name, node)
		}
		ids = append(ids, d.ID)
		f.Devices = append(f.Devices, d)
	}
	if len(chips) >= 2 {
		ic := registry.Interconnect{Kind: registry.LinkICI, Name: "ICI", Devices: ids, Source: "pci-id"}
		if same, g := tpuOneGen(gens); same && g.datasheet().InterconnectGBs > 0 {
			ic.BandwidthGBs = g.datasheet().InterconnectGBs
		}
		f.Interconnects = append(f.Interconnects, ic)
	}
	return f
}

// tpuOneGen reports whether all chips are of one generation (tpu_info
// asserts so; a mix is not a real machine) and returns it.
func tpuOneGen(gens []*tpuGen) (bool, *tpuGen) {
	for _, g := range gens[1:] {
		if g != gens[0] {
			return false, nil
		}
	}
	return true, gens[0]
}

func tpuDevice(p machine.PCIDevice, g *tpuGen) registry.Device {
	ds := g.datasheet()
	d := registry.Device{ID: p.Address, Kind: registry.KindTPU, Vendor: "google", Name: g.Name,
		Architecture: g.Arch, PCIBusID: p.Address, NUMANode: p.NUMANode,
		MemoryBytes: g.MemoryGiB << 30, MemoryBandwidthGBs: ds.BandwidthGBs,
		Quantizations: precision.TPU(g.Arch)}
	d.SetSource("name", "pci-id")
	if d.MemoryBytes > 0 {
		d.SetSource("memory_bytes", "pci-id")
	}
	if ds.BandwidthGBs > 0 {
		d.SetSource("memory_bandwidth_gb_s", "datasheet")
	}
	return d
}
