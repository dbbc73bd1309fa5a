package plan

import (
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// requestPools builds the pools of a request: the registry's, or, for a
// cluster, each node's pools merged by kind and vendor, with device ids
// prefixed by the node ("node1/cuda:3"). High-bandwidth domains never span
// nodes, so tensor parallelism stays inside a node and only pipeline stages
// cross nodes. It also returns the bandwidth between pipeline stages (GB/s
// per direction): across nodes the slowest node's RDMA bandwidth, within a
// machine the slowest PCIe link; 0 when unknown.
func requestPools(req *planning, want map[string]bool) ([]*pool, float64) {
	if len(req.Cluster) == 0 {
		ps := registryPools(req, want)
		return ps, slowestPCIe(ps)
	}
	merged := map[string]*pool{}
	var order []string
	for i, reg := range req.Cluster {
		for _, p := range buildPools(reg, i, nodePrefix(i), req.engineRule(), want) {
			key := string(p.Kind) + "|" + p.Vendor
			m, ok := merged[key]
			if !ok {
				m = &pool{Kind: p.Kind, Vendor: p.Vendor, Budget: p.Budget}
				merged[key] = m
				order = append(order, key)
			}
			for _, dom := range p.Domains {
				for _, d := range dom {
					d.Domain = len(m.Domains)
				}
				m.Domains = append(m.Domains, dom)
			}
			m.Devices = append(m.Devices, p.Devices...)
		}
	}
	inter := interNodeGBs(req.Cluster)
	var out []*pool
	for _, k := range order {
		merged[k].InterNodeGBs = inter
		merged[k].setGroups()
		merged[k].setGPUs()
		out = append(out, merged[k])
	}
	return out, inter
}

// interNodeGBs is the smallest, over nodes, of a node's total InfiniBand and
// RoCE bandwidth (its NICs' rates added: a stage boundary between two nodes
// is limited by the slower side). 0 when a node reports none. RoCE that
// lists devices is a scale-up domain inside the node (Gaudi), not a NIC.
func interNodeGBs(nodes []*registry.Registry) float64 {
	least := math.Inf(1)
	for _, reg := range nodes {
		var sum float64
		for _, ic := range reg.SystemIO.Interconnects {
			if (ic.Kind == registry.LinkInfiniBand || ic.Kind == registry.LinkRoCE) && len(ic.Devices) == 0 && ic.BandwidthGBs > 0 &&
				(ic.State == "" || ic.State == "active" || ic.State == "ACTIVE") {
				sum += ic.BandwidthGBs
			}
		}
		least = math.Min(least, sum)
	}
	if math.IsInf(least, 1) {
		return 0
	}
	return least
}

func slowestPCIe(ps []*pool) float64 {
	least := 0.0
	for _, p := range ps {
		for _, d := range p.Devices {
			if d.PCIeGBs > 0 && (least == 0 || d.PCIeGBs < least) {
				least = d.PCIeGBs
			}
		}
	}
	return least
}
