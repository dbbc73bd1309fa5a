package aws

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// AWS Neuron (Inferentia, Trainium): `neuron-ls --json-output` first; the
// neuron driver's PCI functions and sysfs when the tool is absent or fails.

// BackendNeuron names the neuron backend (AWS Inferentia and Trainium).
const BackendNeuron = "neuron"

// PathNeuronSysfs is the neuron driver's sysfs root (aws-neuron-sdk
// neuron-sysfs-user-guide.rst: neuronN/{core_count,connected_devices,...}).
const PathNeuronSysfs = "sys/devices/virtual/neuron_device"

// Neuron is this file's detection source (the orchestrator lists it).
var Neuron = machine.Backend{Name: BackendNeuron, Detect: detectNeuron}

// neuronGen describes one Neuron chip generation. Figures per chip come from
// its internal/specs record (AWS Neuron architecture pages):
// memory (used only by the fallback; neuron-ls reports memory_size) and
// bandwidth (the pages state GiB/s; specs converts to GB/s).
type neuronGen struct {
	Arch   string
	Name   string
	Record string // internal/specs record name
}

var (
	// Inferentia (NeuronCore-v1): data types FP32, FP16, BF16 and INT8
	// tensor inputs (Neuron "Data Types" and "NeuronCore-v1 Architecture"
	// pages).
	neuronInf1 = neuronGen{Arch: "inferentia", Name: "AWS Inferentia", Record: "AWS Inferentia (Inf1, per chip)"}
	// Inferentia2 (NeuronCore-v2): "380 INT8 TOPS, 190 FP16/BF16/cFP8/TF32
	// TFLOPS, 47.5 FP32 TFLOPS" (Neuron "Inferentia2 Architecture" page).
	neuronInf2 = neuronGen{Arch: "inferentia2", Name: "AWS Inferentia2", Record: "AWS Inferentia2 (per chip)"}
	// Trainium (NeuronCore-v2): the record's 32 GiB is the memory_size
	// 34359738368 of the real trn1 capture; the same NeuronCore-v2 data types.
	neuronTrn1 = neuronGen{Arch: "trainium", Name: "AWS Trainium", Record: "AWS Trainium (Trn1, per chip)"}
	// Trainium2: FP8 figure, no INT8 figure.
	neuronTrn2 = neuronGen{Arch: "trainium2", Name: "AWS Trainium2", Record: "AWS Trainium2 (per chip)"}
)

// neuronPCIGen maps Amazon PCI device ids to generations: the ids of each
// generation's internal/specs record (aws-neuron-driver neuron_pci.c /
// neuron_device.h; pci.ids "1d0f Amazon.com"), the ids' one home.
var neuronPCIGen = specs.PCIGenerations(machine.VendorAmazon, map[*neuronGen][]string{
	&neuronInf1: {neuronInf1.Record}, &neuronTrn1: {neuronTrn1.Record},
	&neuronInf2: {neuronInf2.Record}, &neuronTrn2: {neuronTrn2.Record},
})

// neuronGenFromInstanceType recognises the generation from an EC2 instance
// type ("inf2.48xlarge", "trn1n.32xlarge"): the family names the chip.
func neuronGenFromInstanceType(t string) *neuronGen {
	family, _, ok := strings.Cut(strings.ToLower(t), ".")
	if !ok {
		return nil
	}
	switch {
	case strings.HasPrefix(family, "inf1"):
		return &neuronInf1
	case strings.HasPrefix(family, "inf2"):
		return &neuronInf2
	case strings.HasPrefix(family, "trn1"):
		return &neuronTrn1
	case strings.HasPrefix(family, "trn2"):
		return &neuronTrn2
	}
	return nil
}

func detectNeuron(ctx context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	// Amazon's vendor id also covers ENA network and EBS NVMe functions.
	pci := machine.PCIFunctionsIn(m, machine.VendorAmazon, neuronPCIGen)
	out, w, ok := m.Tool(ctx, BackendNeuron, "neuron-ls", NeuronLSArgs...)
	f.AddWarning(w)
	if ok {
		devs, errs, err := ParseNeuronLS(out)
		if err != nil {
			f.Warn(BackendNeuron, registry.WarnParseError, "neuron-ls --json-output: %v", err)
		}
		for _, e := range errs {
			f.Warn(BackendNeuron, registry.WarnParseError, "neuron-ls --json-output: %v", e)
		}
		// A row at another vendor's PCI function is not a Neuron device.
		devs = machine.RowsAtVendor(m, &f, BackendNeuron, "neuron-ls", false, devs, func(d neuronDevice) string { return d.BusID }, machine.VendorAmazon)
		for _, d := range devs {
			for _, a := range d.Absurd {
				f.WarnAbsurdMemory(BackendNeuron, "neuron-ls", "", a.What, a.Raw)
			}
		}
		if len(devs) > 0 {
			f.Devices, f.Interconnects = neuronFromTool(m, devs, pci)
			f.Devices = append(f.Devices, neuronMissedByTool(&f, devs, pci)...)
			return f
		}
	}
	neuronFallback(m, &f, pci)
	return f
}

// neuronInstanceGen reads the generation from the instance type in DMI.
func neuronInstanceGen(m *machine.Machine) *neuronGen {
	t, err := m.ReadString(path.Join(machine.PathDMI, "product_name"))
	if err != nil {
		return nil
	}
	return neuronGenFromInstanceType(t)
}

// neuronFromTool builds devices and NeuronLink groups from neuron-ls. The
// generation comes from the PCI id at the device's bdf when sysfs has it,
// else from the instance type neuron-ls or DMI reports.
func neuronFromTool(m *machine.Machine, devs []neuronDevice, pci []machine.PCIDevice) ([]registry.Device, []registry.Interconnect) {
	byBus := map[string]machine.PCIDevice{}
	for _, p := range pci {
		byBus[p.Address] = p
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].Index < devs[j].Index })
	out := make([]registry.Device, 0, len(devs))
	for _, nd := range devs {
		d := registry.Device{ID: neuronID(nd.Index), Kind: registry.KindNeuron, Vendor: "amazon",
			Available: true, PCIBusID: nd.BusID}
		var gen *neuronGen
		if p, ok := byBus[nd.BusID]; ok && nd.BusID != "" {
			gen = neuronPCIGen[p.Device]
		}
		if gen == nil {
			gen = neuronGenFromInstanceType(nd.InstanceType)
		}
		if gen == nil {
			gen = neuronInstanceGen(m)
		}
		if nd.MemoryBytes > 0 {
			d.MemoryBytes = nd.MemoryBytes
			d.SetSource("memory_bytes", "neuron-ls")
		}
		if nd.Cores > 0 {
			d.Cores = nd.Cores
			d.SetSource("cores", "neuron-ls")
		}
		if nd.NUMANode >= 0 {
			n := nd.NUMANode
			d.NUMANode = &n
			d.SetSource("numa_node", "neuron-ls")
		}
		applyNeuronGen(&d, gen, false)
		out = append(out, d)
	}
	return out, neuronLinkGroups(devs)
}

// neuronMissedByTool lists, as unusable, the Neuron PCI functions that
// neuron-ls did not report.
func neuronMissedByTool(f *machine.Findings, devs []neuronDevice, pci []machine.PCIDevice) []registry.Device {
	listed := map[string]bool{}
	for _, d := range devs {
		listed[d.BusID] = true
	}
	var out []registry.Device
	for _, p := range pci {
		if listed[p.Address] {
			continue
		}
		d := registry.Device{ID: p.Address, Kind: registry.KindNeuron, Vendor: "amazon", PCIBusID: p.Address, NUMANode: p.NUMANode}
		applyNeuronGen(&d, neuronPCIGen[p.Device], true)
		f.Warn(BackendNeuron, registry.WarnDeviceUnusable, "%s (%s): in sysfs but not listed by neuron-ls", p.Address, d.Name)
		out = append(out, d)
	}
	return out
}

func neuronID(i int) string { return "nd" + strconv.Itoa(i) }

// applyNeuronGen fills name, architecture, bandwidth and precisions from the
// generation; withMemory also sets the generation's memory (fallback only).
func applyNeuronGen(d *registry.Device, gen *neuronGen, withMemory bool) {
	if gen == nil {
		d.Name = "AWS Neuron device"
		return
	}
	d.Name, d.Architecture = gen.Name, gen.Arch
	d.Quantizations = precision.Neuron(gen.Arch)
	ds, ok := specs.Datasheet(gen.Record)
	if !ok {
		return
	}
	if ds.BandwidthGBs > 0 {
		d.MemoryBandwidthGBs = ds.BandwidthGBs
		d.SetSource("memory_bandwidth_gb_s", "datasheet")
	}
	if mem := specs.DeviceMemoryBytes(ds); withMemory && d.MemoryBytes == 0 && mem > 0 {
		d.MemoryBytes = mem
		d.SetSource("memory_bytes", "datasheet")
	}
}

// neuronLinkGroups turns connected_to lists into one "neuronlink"
// interconnect per connected group of two or more devices (a ring on
// inf2/trn instances), listing the group's devices and counting its links
// (undirected edges). One entry per group rather than per edge keeps the
// registry small; the state says "ring" when every device has exactly two
// neighbours and the edges close one cycle. Bandwidth is left out: no
// per-link figure is sourced.
func neuronLinkGroups(devs []neuronDevice) []registry.Interconnect {
	known := map[int]bool{}
	for _, d := range devs {
		known[d.Index] = true
	}
	adj := map[int]map[int]bool{}
	link := func(a, b int) {
		if adj[a] == nil {
			adj[a] = map[int]bool{}
		}
		adj[a][b] = true
	}
	for _, d := range devs {
		for _, p := range d.ConnectedTo {
			if known[p] && p != d.Index {
				link(d.Index, p)
				link(p, d.Index)
			}
		}
	}
	var out []registry.Interconnect
	done := map[int]bool{}
	for _, d := range devs {
		if done[d.Index] || len(adj[d.Index]) == 0 {
			continue
		}
		group := neuronComponent(d.Index, adj, done)
		edges, ring := 0, true
		for _, n := range group {
			edges += len(adj[n])
			ring = ring && len(adj[n]) == 2
		}
		edges /= 2
		ic := registry.Interconnect{Kind: registry.LinkNeuronLink, Name: "NeuronLink", Links: edges, Source: "neuron-ls"}
		if ring && edges == len(group) && len(group) > 2 {
			ic.State = "ring"
		}
		for _, n := range group {
			ic.Devices = append(ic.Devices, neuronID(n))
		}
		out = append(out, ic)
	}
	return out
}

// neuronComponent returns the sorted device indices connected to start.
func neuronComponent(start int, adj map[int]map[int]bool, done map[int]bool) []int {
	var group []int
	stack := []int{start}
	done[start] = true
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		group = append(group, n)
		for p := range adj[n] {
			if !done[p] {
				done[p] = true
				stack = append(stack, p)
			}
		}
	}
	sort.Ints(group)
	return group
}

// neuronFallback lists devices without neuron-ls: one per Neuron PCI
// function (bus id and generation known), else one per neuronN sysfs
// directory or /dev/neuronN node. Cores come from sysfs core_count when
// every device reports the same count (the sysfs index is not tied to a PCI
// address by any source, so per-device values are not matched). Memory is
// the generation's datasheet figure. NeuronLink is not reported: it would
// need that same index-to-address mapping.
func neuronFallback(m *machine.Machine, f *machine.Findings, pci []machine.PCIDevice) {
	sysIdx := neuronSysfsIndices(m)
	cores := neuronUniformCores(m, sysIdx)
	instGen := neuronInstanceGen(m)
	var devs []registry.Device
	if len(pci) > 0 {
		for _, p := range pci {
			d := registry.Device{ID: p.Address, Kind: registry.KindNeuron, Vendor: "amazon", PCIBusID: p.Address,
				NUMANode: p.NUMANode, Available: p.Driver == "neuron-driver", Cores: cores}
			applyNeuronGen(&d, neuronPCIGen[p.Device], true)
			if !d.Available {
				f.Warn(BackendNeuron, registry.WarnDeviceUnusable, "%s: driver %q is not neuron-driver", p.Address, p.Driver)
			}
			devs = append(devs, d)
		}
	} else {
		for _, i := range sysIdx {
			d := registry.Device{ID: neuronID(i), Kind: registry.KindNeuron, Vendor: "amazon",
				Available: m.Exists(fmt.Sprintf("dev/neuron%d", i)), Cores: cores}
			applyNeuronGen(&d, instGen, true)
			devs = append(devs, d)
		}
	}
	if len(devs) == 0 {
		return
	}
	if cores > 0 {
		for i := range devs {
			devs[i].SetSource("cores", "sysfs")
		}
	}
	f.Devices = devs
	f.Warn(BackendNeuron, registry.WarnFallback, "neuron-ls gave no usable answer; %d Neuron %s from sysfs (memory from the datasheet, no NeuronLink)", len(devs), machine.NounOf(len(devs), "device"))
}

// neuronSysfsIndices lists N of every neuronN under the neuron sysfs root,
// or of every /dev/neuronN node when sysfs has none, in order.
func neuronSysfsIndices(m *machine.Machine) []int {
	idx := neuronNumbered(m, PathNeuronSysfs)
	if len(idx) == 0 {
		idx = neuronNumbered(m, "dev")
	}
	return idx
}

func neuronNumbered(m *machine.Machine, dir string) []int {
	var out []int
	for e := range m.DirEntries(dir) {
		n, ok := strings.CutPrefix(e.Name(), "neuron")
		if !ok {
			continue
		}
		if v, err := strconv.Atoi(n); err == nil && v >= 0 && v < maxNeuronDevices {
			out = append(out, v)
		}
	}
	sort.Ints(out)
	return out
}

// neuronUniformCores returns the core_count shared by every neuronN, or 0.
func neuronUniformCores(m *machine.Machine, idx []int) int {
	cores := 0
	for _, i := range idx {
		v, err := m.ReadInt(path.Join(PathNeuronSysfs, fmt.Sprintf("neuron%d", i), "core_count"))
		if err != nil || v <= 0 || v > 1024 || (cores != 0 && int(v) != cores) {
			return 0
		}
		cores = int(v)
	}
	return cores
}
