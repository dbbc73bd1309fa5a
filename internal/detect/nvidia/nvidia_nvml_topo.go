package nvidia

import (
	"strconv"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// NVLink and PCIe topology from NVML: the matrix `nvidia-smi topo -m` prints,
// rebuilt from each GPU's links (state, remote PCI device and its type) and
// each pair's common PCIe ancestor, then turned into interconnects by the
// same builder as the tool's matrix (interconnectsFromTopo), so that plans
// over a machine see the same links whichever source answered.

// topologyLabels are topo -m's names of the nvmlGpuTopologyLevel_t values
// (its legend: PIX "at most a single PCIe bridge", PXB "multiple PCIe
// bridges", PHB "a PCIe Host Bridge", NODE "the interconnect between PCIe
// Host Bridges within a NUMA node", SYS "the SMP interconnect between NUMA
// nodes"). Two GPUs of one board (Tesla K80, TopologyInternal) sit behind
// the board's own PCIe switch: PIX.
var topologyLabels = map[nvml.TopologyLevel]string{
	nvml.TopologyInternal: "PIX", nvml.TopologySingle: "PIX", nvml.TopologyMultiple: "PXB",
	nvml.TopologyHostBridge: "PHB", nvml.TopologyNode: "NODE", nvml.TopologySystem: "SYS",
}

// topoFromNVML is the GPU part of `topo -m` as NVML describes it. A pair is
// NV<n> when n active links of one end reach the other's PCI function, or,
// with neither linked directly, when both have active links to NVSwitches:
// n is then the smaller count (a DGX A100 GPU's 12 links to its six
// switches print NV12 for every pair, https://github.com/NVIDIA/nccl/issues/1505;
// a DGX H100's 18 print NV18, https://github.com/NVIDIA/nccl/issues/1264).
// Other pairs carry their common ancestor's label. A driver too old to say
// what is at a link's end (nvmlDeviceGetNvLinkRemoteDeviceType) leaves it
// unknown: a link to no GPU of ours is then an NVSwitch link when sysfs
// shows NVSwitches (nvswitch).
func topoFromNVML(s *nvml.Snapshot, nvswitch bool) nvTopo {
	t := nvTopo{Cells: map[[2]int]string{}, NICs: map[string]string{}, NICPaths: map[int][][2]string{}}
	byBus := map[string]int{}
	for _, d := range s.Devices {
		t.GPUs = append(t.GPUs, d.Index)
		if bus := machine.NormalizeBusID(d.PCI.BusID); bus != "" {
			byBus[bus] = d.Index
		}
	}
	direct := map[[2]int]int{}
	toSwitch := map[int]int{}
	for _, d := range s.Devices {
		for _, l := range d.NVLinks {
			if !l.Active {
				continue
			}
			peer, toGPU := byBus[machine.NormalizeBusID(l.RemoteBusID)]
			switch {
			case toGPU && peer != d.Index && l.RemoteType != nvml.NVLinkRemoteSwitch:
				direct[[2]int{d.Index, peer}]++
			case l.RemoteType == nvml.NVLinkRemoteSwitch,
				l.RemoteType == nvml.NVLinkRemoteUnknown && !toGPU && nvswitch:
				toSwitch[d.Index]++
			}
		}
	}
	for x, a := range s.Devices {
		for _, b := range s.Devices[x+1:] {
			i, j := a.Index, b.Index
			n := max(direct[[2]int{i, j}], direct[[2]int{j, i}])
			if n == 0 && toSwitch[i] > 0 && toSwitch[j] > 0 {
				n = min(toSwitch[i], toSwitch[j])
			}
			switch lvl, ok := s.Topology[[2]int{min(i, j), max(i, j)}]; {
			case n > 0:
				t.Cells[[2]int{i, j}] = "NV" + strconv.Itoa(n)
			case ok && topologyLabels[lvl] != "":
				t.Cells[[2]int{i, j}] = topologyLabels[lvl]
			}
		}
	}
	return t
}

// nvlinkVersionPerLinkGBs is one NVLink's bidirectional bandwidth by
// nvmlNvlinkVersion_t, where NVIDIA's published per-GPU figures give one
// figure per generation: NVLink 1.0 (Tesla P100) 160 GB/s over 4 links
// (NVIDIA Tesla P100 whitepaper,
// https://images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf);
// 2.0 (V100) 300 GB/s over 6 links, 4.0 (H100) 900 GB/s over 18 links and
// 5.0 (Blackwell) 1,800 GB/s over 18 links
// (https://www.nvidia.com/en-us/data-center/nvlink/). NVLink 3.0 is left
// out: the A100's links carry 50 GB/s (600 GB/s over 12) but a GA102
// board's 28.125 GB/s (A40: 112.5 GB/s, its record in
// internal/specs/records_nvidia.go, over the 4 links `topo -m` prints as NV4 between bridged GA102 cards,
// testdata/topo-m-quad-rtx3090-aikitoria-pr18.txt), so the compute
// capability decides (nvLinkPerLinkByCC); so it does for 2.2 and 3.1, for
// which NVIDIA publishes no per-generation figure.
// Each figure is twice the one-direction speed `nvidia-smi nvlink -s`
// prints per link ("25 GB/s" on an A100,
// testdata/nvlink-s-a100-nccl-tests-228.txt).
var nvlinkVersionPerLinkGBs = map[uint32]float64{
	nvml.NVLinkVersion1_0: 160.0 / 4,
	nvml.NVLinkVersion2_0: 300.0 / 6,
	nvml.NVLinkVersion4_0: 900.0 / 18,
	nvml.NVLinkVersion5_0: 1800.0 / 18,
}

// nvmlLinkFacts is what NVML says of one GPU's links: the version its
// active links share (0 when unknown or mixed) and their speed in one
// direction, GB/s (0 unknown).
type nvmlLinkFacts struct {
	version  uint32
	speedGBs float64
}

func linkFactsOf(d nvml.Device) nvmlLinkFacts {
	f := nvmlLinkFacts{speedGBs: float64(d.NVLinkSpeedMBps) / 1000}
	for _, l := range d.NVLinks {
		switch {
		case !l.Active || l.Version == 0:
		case f.version == 0:
			f.version = l.Version
		case f.version != l.Version:
			return nvmlLinkFacts{speedGBs: f.speedGBs}
		}
	}
	return f
}

// nvmlInterconnects builds the NVLink/NVSwitch entries of an NVML read over
// the devices detected from it, as nvidiaInterconnects does from `topo -m`.
// One link's bandwidth is the published figure of the links' NVLink
// version where there is one, else the compute capability's; the entry's
// link speed is what NVML reports for one direction.
func nvmlInterconnects(s *nvml.Snapshot, devs []nvDevice, nvswitch bool) []registry.Interconnect {
	facts := map[int]nvmlLinkFacts{}
	for _, d := range s.Devices {
		facts[d.Index] = linkFactsOf(d)
		for _, l := range d.NVLinks {
			if l.Active && l.RemoteType == nvml.NVLinkRemoteSwitch {
				nvswitch = true
			}
		}
	}
	tl := topoLinks{source: SourceNVML,
		perLinkGBs: func(a, b nvDevice) float64 {
			fa, fb := facts[a.index], facts[b.index]
			if per := nvlinkVersionPerLinkGBs[fa.version]; per > 0 && fa.version == fb.version {
				return per
			}
			return nvLinkPerLinkByCC(a, b)
		},
		linkGBs: func(a, b nvDevice) float64 {
			sa, sb := facts[a.index].speedGBs, facts[b.index].speedGBs
			if sa == 0 || sb == 0 {
				return 0
			}
			return min(sa, sb)
		}}
	return interconnectsFromTopo(topoFromNVML(s, nvswitch), devs, nvswitch, tl)
}

// nvmlReadLinks reports whether NVML gave the NVLinks of any GPU (active
// or not).
func nvmlReadLinks(s *nvml.Snapshot) bool {
	for _, d := range s.Devices {
		if len(d.NVLinks) > 0 {
			return true
		}
	}
	return false
}
