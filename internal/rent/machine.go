package rent

import (
	"fmt"
	"math"
	"slices"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// gib is 2^30 bytes.
const gib = 1 << 30

// part returns the part record of m's accelerators.
func (m *Machine) part() (specs.Spec, error) {
	s, ok := specs.ByName(m.Part)
	if !ok {
		return specs.Spec{}, errs.New(errs.Internal, "rent catalog: %s names part %q, which the part table does not hold", m.Key(), m.Part)
	}
	if partMemory(s) <= 0 {
		return specs.Spec{}, errs.New(errs.Internal, "rent catalog: part %q of %s states no memory", m.Part, m.Key())
	}
	return s, nil
}

// partMemory is the memory one device of part s holds: the binary figure
// where the record has evidence for it (specs.DeviceMemoryBytes), else the
// datasheet figure.
func partMemory(s specs.Spec) int64 {
	if b := specs.DeviceMemoryBytes(s); b > 0 {
		return b
	}
	return s.MemoryBytes
}

// kindOf is the device kind of a part's vendor.
func kindOf(s specs.Spec) (registry.Kind, error) {
	switch s.Vendor {
	case "NVIDIA":
		return registry.KindCUDA, nil
	case "AMD":
		return registry.KindROCm, nil
	}
	return "", errs.New(errs.Internal, "rent catalog: part %q: no device kind for vendor %q", s.Name, s.Vendor)
}

// Registry is the registry a node of m would detect: Count devices of the
// part (memory and bandwidth from the part table), the scale-up link
// between them, the network out of the node, and the host CPU and RAM
// where the catalog states them. node prefixes nothing: ids are those of
// one machine ("cuda:0").
func (m *Machine) Registry() (*registry.Registry, error) {
	s, err := m.part()
	if err != nil {
		return nil, err
	}
	kind, err := kindOf(s)
	if err != nil {
		return nil, err
	}
	reg := registry.New()
	var ids []string
	for i := 0; i < m.Count; i++ {
		d := registry.Device{Kind: kind, Family: kind.Family(), Index: i, Vendor: vendorID(s), Name: s.Name,
			Available: true, MemoryBytes: partMemory(s), MemoryBandwidthGBs: s.BandwidthGBs,
			Sources: map[string]string{"catalog": "rent catalog " + m.Key() + "; figures: part table " + s.Name}}
		d.ID = registry.DeviceID(kind, i)
		if kind == registry.KindCUDA {
			d.ComputeCapability = s.Arch
		} else {
			d.Architecture = s.Arch
		}
		d.Quantizations = quantizations(&d, s)
		ids = append(ids, d.ID)
		reg.Devices = append(reg.Devices, d)
	}
	if m.VCPUs > 0 || m.HostMemoryGiB > 0 {
		reg.Devices = append(reg.Devices, registry.Device{ID: registry.DeviceID(registry.KindCPU, 0), Kind: registry.KindCPU, Family: registry.FamilyCPU,
			Available: true, Threads: m.VCPUs, Cores: m.VCPUs, MemoryBytes: int64(math.Round(m.HostMemoryGiB * gib)),
			Name: fmt.Sprintf("%d vCPUs", m.VCPUs)})
	}
	if link := m.scaleUp(s, ids); link != nil {
		reg.SystemIO.Interconnects = append(reg.SystemIO.Interconnects, *link)
	}
	if n := m.Network; n != nil && n.GbitS > 0 {
		reg.SystemIO.Interconnects = append(reg.SystemIO.Interconnects, networkLink(n))
	}
	return reg, nil
}

// quantizations is what the device runs natively: the precision table's
// answer for its architecture, plus every precision the part's datasheet
// states a dense tensor figure for (specs.TensorPrecisions). Records without
// an architecture (the H200 and B200 records name none) would otherwise be
// planned as if they had no fp8.
func quantizations(d *registry.Device, s specs.Spec) []string {
	q := precision.Of(d)
	for _, p := range s.TensorPrecisions() {
		if !slices.Contains(q, p) {
			q = append(q, p)
		}
	}
	return q
}

// vendorID is the vendor as detection writes it ("nvidia", "amd").
func vendorID(s specs.Spec) string {
	switch s.Vendor {
	case "NVIDIA":
		return "nvidia"
	case "AMD":
		return "amd"
	}
	return s.Vendor
}

// scaleUp is the link between the devices, as detection reports an NVLink
// or Infinity Fabric domain: every device listed, at the part's datasheet
// bandwidth. PCIe-only machines and single devices have none.
func (m *Machine) scaleUp(s specs.Spec, ids []string) *registry.Interconnect {
	if len(ids) < 2 {
		return nil
	}
	switch m.ScaleUp {
	case registry.LinkNVSwitch, registry.LinkNVLink, registry.LinkXGMI:
		return &registry.Interconnect{Kind: m.ScaleUp, Name: s.Interconnect, Devices: ids,
			BandwidthGBs: s.InterconnectGBs, Source: "rent catalog"}
	}
	return nil
}

// networkLink is the node's network as an RDMA interconnect with no
// devices (how detection reports NICs; the planner takes the bandwidth
// between nodes from it). EFA is RDMA over AWS's SRD transport, not RoCE;
// it is listed under roce because that is the planner's kind for Ethernet
// RDMA between nodes, and named EFA.
func networkLink(n *Network) registry.Interconnect {
	kind := registry.LinkRoCE
	name := n.Kind
	if n.Kind == registry.LinkInfiniBand {
		kind = registry.LinkInfiniBand
	}
	if n.Kind == "efa" {
		name = "EFA"
	}
	return registry.Interconnect{Kind: kind, Name: name, Devices: []string{}, BandwidthGBs: n.GbitS / 8, State: "active",
		Source: "rent catalog"}
}
