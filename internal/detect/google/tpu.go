package google

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// Google Cloud TPU: there is no vendor tool to parse, so chips are counted
// by PCI id, one device per chip (a PCI device; TPU7x has two functions per
// chip, see tpuChip), as Google's own tpu-info does
// (AI-Hypercomputer/cloud-accelerator-diagnostics tpu_info/device.py;
// pytorch/xla PR 4845). Google's vendor id also covers gVNIC and NVMe
// functions on every Compute Engine VM, so only the TPU device ids count.

// BackendTPU names the tpu backend (Google Cloud TPU chips, above).
const BackendTPU = "tpu"

// TPU is this file's detection source (the orchestrator lists it).
var TPU = machine.Backend{Name: BackendTPU, Detect: detectTPU}

// tpuGen describes one TPU generation.
type tpuGen struct {
	Arch string // "v5e"
	Name string // "TPU v5e"
	// Record names the internal/specs datasheet (Cloud TPU documentation; tpu_info for v2 and TPU7x): HBM per chip, HBM bandwidth
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

// tpuPCIGen maps Google PCI device ids to generations, v4 and later: the
// ids of each generation's internal/specs record (tpu_info device.py: 0x005e
// v4, 0x0063 v5e, 0x0062 v5p, 0x006f v6e, 0x0076 TPU7x), the ids' one home.
var tpuPCIGen = specs.PCIGenerations(machine.VendorGoogle, map[*tpuGen][]string{
	&tpuV4: {tpuV4.Record}, &tpuV5e: {tpuV5e.Record}, &tpuV5p: {tpuV5p.Record},
	&tpuV6e: {tpuV6e.Record}, &tpuV7x: {tpuV7x.Record},
})

// tpuGenOf maps a Google PCI function to its TPU generation, or nil: device
// 0x0027 is v2 or v3 by subsystem device (0x004e / 0x004f; tpu_info
// device.py), which no record carries as the two share the device id; the
// others by tpuPCIGen.
func tpuGenOf(p machine.PCIDevice) *tpuGen {
	if p.Device != 0x0027 {
		return tpuPCIGen[p.Device]
	}
	switch p.SubDevice {
	case 0x004e:
		return &tpuV2
	case 0x004f:
		return &tpuV3
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

// tpuChip is one chip: its PCI functions ("cores"), in address order. A
// TPU7x chip is one PCI device with two functions (.0 and .1), each a core
// in an IOMMU group of its own, opened through /dev/vfio/<group>; earlier
// generations have one function per chip. tpu-info groups functions into
// chips by their domain:bus:device and counts the chip once (tpu_info
// device.py get_chips, TpuChip.V7X devices_per_chip=2; cli.py "two devices
// (cores) per chip", https://github.com/AI-Hypercomputer/cloud-accelerator-diagnostics),
// and Ray's maintainers report "tpu7x ... exposes two vfio devices per chip"
// (https://github.com/ray-project/ray/pull/65105).
type tpuChip struct {
	gen   *tpuGen
	cores []machine.PCIDevice
	// index is the enumeration index of each core among all TPU functions,
	// the /dev/vfio or /dev/accel number when sysfs gives no IOMMU group.
	index []int
}

// tpuChips groups the TPU functions of the machine into chips.
func tpuChips(m *machine.Machine) []*tpuChip {
	var chips []*tpuChip
	byBase := map[string]*tpuChip{}
	n := 0
	for _, p := range m.PCIDevices(machine.VendorGoogle) {
		g := tpuGenOf(p)
		if g == nil {
			continue
		}
		base, _, _ := strings.Cut(p.Address, ".")
		c := byBase[base]
		if c == nil || c.gen != g {
			c = &tpuChip{gen: g}
			byBase[base] = c
			chips = append(chips, c)
		}
		c.cores = append(c.cores, p)
		c.index = append(c.index, n)
		n++
	}
	return chips
}

// coreNode is the device node of a chip's core: /dev/vfio/<IOMMU group>
// when sysfs links the function to its group (what tpu-info opens), else
// the node of the core's enumeration index (tpu_info chip_path).
func coreNode(m *machine.Machine, c *tpuChip, i int) string {
	if c.gen.VFIO {
		group := path.Base(m.ReadLink(path.Join(machine.PathPCIDevices, c.cores[i].Address, "iommu_group")))
		if _, err := strconv.Atoi(group); err == nil {
			return "dev/vfio/" + group
		}
	}
	return tpuChipNode(c.gen, c.index[i])
}

func detectTPU(_ context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	chips := tpuChips(m)
	var ids []string
	var gens []*tpuGen
	for _, c := range chips {
		d := tpuDevice(c.cores[0], c.gen)
		d.Available = true
		var nodes, missing []string
		for i := range c.cores {
			node := coreNode(m, c, i)
			nodes = append(nodes, "/"+node)
			if !m.Exists(node) {
				d.Available = false
				missing = append(missing, "/"+node)
			}
		}
		d.SetSource("available", strings.Join(nodes, " "))
		if !d.Available {
			f.Warn(BackendTPU, registry.WarnDeviceUnusable, "%s (%s): device node %s is missing", c.cores[0].Address, d.Name, strings.Join(missing, ", "))
		}
		ids = append(ids, d.ID)
		gens = append(gens, c.gen)
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
