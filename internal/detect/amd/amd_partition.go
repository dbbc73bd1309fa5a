package amd

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Compute partitions (MI300 SPX/DPX/QPX/CPX). A partitioned GPU is one PCI
// function with one DRM card under its PCI device, but every partition is a
// KFD node, a render node and a HIP device of its own: an 8-GPU MI300X box in
// CPX mode shows 64 GPUs to ROCm ("AMD Instinct MI300X GPU partitioning
// overview", https://instinct.docs.amd.com/projects/amdgpu-docs/en/latest/gpu-partitioning/mi300x/overview.html).
// amdgpu numbers the partitions' KFD nodes by ORing the partition number into
// the function bits of location_id (Linux drivers/gpu/drm/amd/amdkfd/kfd_topology.c,
// kfd_topology_add_device: "location_id |= dev->gpu->node_id" for GC 9.4.3),
// which is why amd-smi lists them at 0000:05:00.1 ... .7; all of them share
// the GPU's unique_id. This file turns such a GPU into its partitions.

// kfdNode is one KFD topology node: its properties and its directory.
type kfdNode struct {
	props map[string]int64
	ids   map[string]uint64 // unique_id, hive_id (kfdIDs)
	dir   string
}

// KFD memory heap types of a GPU's own memory (mem_banks/N/properties
// "heap_type"): HSA_HEAPTYPE_FRAME_BUFFER_PUBLIC (1) and _PRIVATE (2), the
// hsa_amd_memory_pool heaps of ROCR's hsakmttypes.h; 0 is system memory.
const (
	heapFBPublic  = 1
	heapFBPrivate = 2
)

// kfdLocalMemory sums the GPU-local memory banks of a KFD node (bytes). On a
// partition this is the partition's share, the figure rocminfo and HIP
// report; amdgpu's mem_info_vram_total (and so rocm-smi and amd-smi) shows
// the whole GPU's VRAM on every partition (ROCm/ROCm issue 4750,
// https://github.com/ROCm/ROCm/issues/4750: 25767706624 bytes per CPX
// partition of an MI300X whose VRAM total is 206141652992). 0 when the node
// has no such bank.
func kfdLocalMemory(m *machine.Machine, node kfdNode) int64 {
	var total int64
	for _, e := range m.ReadDir(path.Join(node.dir, "mem_banks")) {
		b, err := m.ReadFile(path.Join(node.dir, "mem_banks", e.Name(), "properties"))
		if err != nil {
			continue
		}
		p := ParseKFDProperties(string(b))
		if h := p["heap_type"]; (h == heapFBPublic || h == heapFBPrivate) && p["size_in_bytes"] > 0 {
			total += p["size_in_bytes"]
		}
	}
	return total
}

// partitionNodes returns the KFD nodes of the GPU at bus ("0000:05:00.0"),
// one per partition, ordered by partition number; nil when the GPU has one
// node (not partitioned) or its nodes are not numbered 0..n-1 without gaps
// the way amdgpu numbers them.
func partitionNodes(bus string, kfd map[string]kfdNode) []kfdNode {
	base, ok := strings.CutSuffix(bus, ".0")
	if !ok {
		return nil
	}
	var fns []int
	byFn := map[int]kfdNode{}
	for b, n := range kfd {
		var fn int
		if rest, ok := strings.CutPrefix(b, base+"."); ok && len(rest) == 1 {
			if _, err := fmt.Sscanf(rest, "%x", &fn); err == nil {
				fns = append(fns, fn)
				byFn[fn] = n
			}
		}
	}
	if len(fns) < 2 {
		return nil
	}
	sort.Ints(fns)
	out := make([]kfdNode, 0, len(fns))
	for i, fn := range fns {
		if fn != i || byFn[fn].ids["unique_id"] != byFn[0].ids["unique_id"] {
			return nil
		}
		out = append(out, byFn[fn])
	}
	return out
}

// computeMode is the compute partition mode of a GPU split into n
// partitions: amdgpu's current_compute_partition (or AMD SMI's
// amdsmi_get_gpu_compute_partition, source) when it was read, else
// CPX when each partition has one XCC (KFD num_xcc 1: one XCD per
// partition is what CPX means), else the name amdgpu gives n partitions
// (amdgpu_xcp.h: DPX 2, TPX 3, QPX 4). The second result says which.
func computeMode(known, source string, n int, nodes []kfdNode) (string, string) {
	if known != "" && known != "SPX" {
		if source == "" {
			source = "sysfs"
		}
		return known, source
	}
	if nodes[0].props["num_xcc"] == 1 {
		return "CPX", "kfd"
	}
	if name, ok := map[int]string{2: "DPX", 3: "TPX", 4: "QPX"}[n]; ok {
		return name, "kfd"
	}
	return "", ""
}

// xcdCount is the number of compute dies (XCDs) of the partitionable parts
// by PCI device id, the partition count of their CPX mode: MI300X and MI325X
// have 8, MI300A 6 (AMD Instinct MI300 series microarchitecture,
// https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html).
var xcdCount = map[int]int{0x74a1: 8, 0x74a5: 8, 0x74a0: 6}

// modePartitions is how many partitions a compute mode makes of a GPU
// (amdgpu_xcp.h: SPX 1, DPX 2, TPX 3, QPX 4, CPX one per XCD); 0 unknown.
func modePartitions(mode string, deviceID int) int {
	switch mode {
	case "DPX":
		return 2
	case "TPX":
		return 3
	case "QPX":
		return 4
	case "CPX":
		return xcdCount[deviceID]
	}
	return 0
}

// splitPartitions replaces every partitioned GPU by its partitions: the
// GPU stays listed, unavailable (work runs on the partitions, like a
// MIG-enabled NVIDIA GPU), followed by one device per partition. A mode
// that makes more partitions than KFD lists (ROCm/amdsmi issue 99,
// https://github.com/ROCm/amdsmi/issues/99: 63 of 64 after NPS4) is
// reported: the missing partition cannot be used.
func splitPartitions(m *machine.Machine, f *machine.Findings, gpus []AMDGPU, kfd map[string]kfdNode) []AMDGPU {
	out := make([]AMDGPU, 0, len(gpus))
	for _, g := range gpus {
		var nodes []kfdNode
		if g.Card >= 0 {
			nodes = partitionNodes(g.Dev.PCIBusID, kfd)
		}
		mode, modeSrc := "", ""
		if nodes != nil {
			mode, modeSrc = computeMode(g.computeMode, g.modeSource, len(nodes), nodes)
		}
		if nodes == nil || mode == "" {
			out = append(out, g)
			continue
		}
		parent := g
		parent.Dev.Available = false
		parent.Dev.UnavailableReason = fmt.Sprintf("compute partition mode %s: work runs on its %d partitions, listed as devices", mode, len(nodes))
		parent.Dev.SetSource("unavailable_reason", modeSrc)
		count := modePartitions(mode, g.deviceID)
		if count < len(nodes) {
			count = len(nodes)
		} else if count > len(nodes) {
			f.Warn(BackendROCm, registry.WarnDeviceUnusable,
				"%s is in %s mode (%d partitions) but KFD lists %d: %s no KFD node and cannot be used",
				g.Dev.PCIBusID, mode, count, len(nodes), missingPartitions(len(nodes), count))
		}
		part := &registry.Partition{Compute: mode, Memory: g.memoryMode, Count: count}
		parent.Dev.Partition = part
		partSrc := "kfd" // the partitions are KFD nodes; the mode may be sysfs's
		if modeSrc != "kfd" {
			partSrc = modeSrc + "+kfd"
		}
		parent.Dev.SetSource("partition", partSrc)
		out = append(out, parent)
		for i, n := range nodes {
			child := partitionDevice(m, parent.Dev, i, n)
			part.Children = append(part.Children, child.Dev.ID)
			out = append(out, child)
		}
	}
	return out
}

// missingPartitions names partitions from..to-1: "partition 7 has",
// "partitions 6-7 have".
func missingPartitions(from, to int) string {
	if to-from == 1 {
		return fmt.Sprintf("partition %d has", from)
	}
	return fmt.Sprintf("partitions %d-%d have", from, to-1)
}

// partitionDevice is partition i of parent: the parent's identity and
// precisions, its KFD node's architecture, and its share of the memory.
// Memory is the node's own banks when KFD lists them; else the GPU's VRAM
// divided by the number of partitions, which is how amdgpu sizes them
// (amdgpu_amdkfd_xcp_memory_size: a memory partition's size divided among
// the compute partitions on it, equal shares in NPS1 and NPS4; the divisor
// is the mode's partition count, also when KFD lists fewer). A partition
// is not a PCI function of its own, so it has no bus id (like a MIG slice).
func partitionDevice(m *machine.Machine, parent registry.Device, i int, n kfdNode) AMDGPU {
	p := parent.Partition
	idx := i
	d := registry.Device{ID: fmt.Sprintf("%s/partition%d", parent.ID, i), Kind: registry.KindROCm, Vendor: "amd",
		Available: true, Name: partitionName(parent.Name, p.Compute, i),
		DriverVersion: parent.DriverVersion, Quantizations: parent.Quantizations, Architecture: parent.Architecture,
		Partition: &registry.Partition{Compute: p.Compute, Memory: p.Memory, Index: &idx, Parent: parent.ID}}
	for _, field := range []string{"architecture", "quantizations"} {
		if src := parent.Sources[field]; src != "" {
			d.SetSource(field, src)
		}
	}
	if arch := gfxTarget(n.props["gfx_target_version"]); arch != "" {
		d.Architecture = arch
		d.SetSource("architecture", "kfd")
	}
	d.SetSource("name", "kfd")
	d.SetSource("partition", parent.Sources["partition"])
	if mem := kfdLocalMemory(m, n); mem > 0 {
		d.MemoryBytes = mem
		d.SetSource("memory_bytes", "kfd mem_banks")
	} else if parent.MemoryBytes > 0 {
		d.MemoryBytes = parent.MemoryBytes / int64(p.Count)
		d.SetSource("memory_bytes", fmt.Sprintf("%s VRAM total / %d partitions", parent.Sources["memory_bytes"], p.Count))
	}
	return AMDGPU{Dev: d, Card: -1, SMIIndex: -1}
}

// partitionName is "<GPU name> (CPX partition 3)", or "CPX partition 3"
// for a GPU without a name.
func partitionName(gpu, mode string, i int) string {
	if gpu == "" {
		return fmt.Sprintf("%s partition %d", mode, i)
	}
	return fmt.Sprintf("%s (%s partition %d)", gpu, mode, i)
}

// hipDevices are the positions of gpus a ROCm process enumerates: every GPU
// but a partitioned one, whose partitions are enumerated instead.
func hipDevices(gpus []AMDGPU) []int {
	out := make([]int, 0, len(gpus))
	for i, g := range gpus {
		if p := g.Dev.Partition; p == nil || p.Count == 0 {
			out = append(out, i)
		}
	}
	return out
}

// withParents puts back, before its first visible partition, the GPU of
// every partition a visibility variable kept.
func withParents(all, kept []AMDGPU) []AMDGPU {
	byID := map[string]AMDGPU{}
	for _, g := range all {
		byID[g.Dev.ID] = g
	}
	out := make([]AMDGPU, 0, len(kept))
	added := map[string]bool{}
	for _, g := range kept {
		if p := g.Dev.Partition; p != nil && p.Parent != "" && !added[p.Parent] {
			added[p.Parent] = true
			out = append(out, keptChildrenOnly(byID[p.Parent], kept))
		}
		out = append(out, g)
	}
	return out
}

// keptChildrenOnly is parent with only the partitions in kept as children.
func keptChildrenOnly(parent AMDGPU, kept []AMDGPU) AMDGPU {
	in := map[string]bool{}
	for _, g := range kept {
		in[g.Dev.ID] = true
	}
	p := *parent.Dev.Partition
	p.Children = nil
	for _, id := range parent.Dev.Partition.Children {
		if in[id] {
			p.Children = append(p.Children, id)
		}
	}
	parent.Dev.Partition = &p
	return parent
}
