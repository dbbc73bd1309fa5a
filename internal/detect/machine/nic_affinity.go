package machine

import (
	"path"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// GPU-to-NIC affinity from the PCIe tree, for devices a vendor tool gave
// none (nvidia-smi topo -m does; without it, or for other vendors, sysfs
// is all there is). The kernel lays PCI functions out under their bridges
// (/sys/devices/pci0000:d7/0000:d7:00.0/0000:d9:00.0: host bridge pci0000:d7,
// bridge d7:00.0, function d9:00.0), so the path classes of nvidia-smi's
// topo -m legend follow from the two functions' ancestor chains:
//   - PIX: they meet in a bridge at most one bridge above each (one PCIe
//     switch: its upstream port, or a downstream port each);
//   - PXB: they meet in a bridge further up, below the host bridge;
//   - PHB: they share only the host bridge (the root complex);
//   - NODE: different host bridges on the same NUMA node;
//   - SYS (other NUMA node, or unknown): not affinity, left out.
// NICs are the RDMA devices of /sys/class/infiniband (InfiniBand and RoCE).

// pciChain is a function's position in the tree: its host bridge
// ("pci0000:d7") and the PCI addresses from the top bridge down to itself.
type pciChain struct {
	root  string
	chain []string
}

// chainOf reads the chain of the sysfs device path a link points to.
func (m *Machine) chainOf(link string) (pciChain, string, bool) {
	t := m.ReadLink(link)
	if t == "" {
		return pciChain{}, "", false
	}
	var c pciChain
	for _, part := range strings.Split(t, "/") {
		switch {
		case strings.HasPrefix(part, "pci") && strings.Contains(part, ":"):
			c.root, c.chain = part, nil
		case c.root != "" && isSysfsPCIAddress(part):
			c.chain = append(c.chain, part)
		case c.root != "" && len(c.chain) > 0:
			// Past the function (".../0000:da:00.0/infiniband/mlx5_5").
			return c, path.Join(PathPCIDevices, c.chain[len(c.chain)-1]), true
		}
	}
	if c.root == "" || len(c.chain) == 0 {
		return pciChain{}, "", false
	}
	return c, path.Join(PathPCIDevices, c.chain[len(c.chain)-1]), true
}

// pciPath classifies the path between two functions; "" when it is SYS or
// unknown.
func pciPath(a, b pciChain, numaA, numaB *int) string {
	if a.root != b.root {
		if numaA != nil && numaB != nil && *numaA == *numaB {
			return "NODE"
		}
		return ""
	}
	// Ancestors: the chains without the functions themselves.
	up, vp := a.chain[:len(a.chain)-1], b.chain[:len(b.chain)-1]
	common := 0
	for common < len(up) && common < len(vp) && up[common] == vp[common] {
		common++
	}
	switch {
	case common == 0:
		return "PHB"
	case len(up)-common <= 1 && len(vp)-common <= 1:
		return "PIX"
	}
	return "PXB"
}

var nicPathRank = map[string]int{"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3}

// EnrichNICAffinity fills registry.Device.NICs from sysfs for every
// accelerator with a PCI bus id that has none yet.
func EnrichNICAffinity(m *Machine, reg *registry.Registry) {
	type nic struct {
		name  string
		chain pciChain
		numa  *int
	}
	var nics []nic
	for _, e := range m.ReadDir(PathInfiniBand) {
		if c, dir, ok := m.chainOf(path.Join(PathInfiniBand, e.Name())); ok {
			nics = append(nics, nic{e.Name(), c, m.numaNode(dir)})
		}
	}
	if len(nics) == 0 {
		return
	}
	for i := range reg.Devices {
		d := &reg.Devices[i]
		if d.PCIBusID == "" || d.Kind == registry.KindCPU || len(d.NICs) > 0 {
			continue
		}
		c, dir, ok := m.chainOf(path.Join(PathPCIDevices, d.PCIBusID))
		if !ok {
			continue
		}
		numa := m.numaNode(dir)
		var out []registry.NICAffinity
		for _, n := range nics {
			if p := pciPath(c, n.chain, numa, n.numa); p != "" {
				out = append(out, registry.NICAffinity{Name: n.name, Path: p})
			}
		}
		sort.SliceStable(out, func(a, b int) bool { return nicPathRank[out[a].Path] < nicPathRank[out[b].Path] })
		if len(out) > 0 {
			d.NICs = out
			d.SetSource("nics", "sysfs (PCIe path)")
		}
	}
}
