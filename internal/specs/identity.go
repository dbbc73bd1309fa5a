package specs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DeviceMemoryBytes is the memory the part carries, for detection's
// fallbacks: the record's figure when it is stated in GiB or the record
// gives evidence that its "GB" is binary (MemoryBinary), else 0 (unknown).
func DeviceMemoryBytes(s Spec) int64 {
	switch {
	case s.MemoryBytes <= 0 || s.MemoryIsMaximum:
		return 0
	case s.MemoryUnit == "GiB":
		return s.MemoryBytes
	case s.MemoryUnit == "GB" && s.MemoryBinary != "":
		return int64(math.Round(float64(s.MemoryBytes) / 1e9 * (1 << 30)))
	}
	return 0
}

// Part is what a PCI id tells detection when no vendor tool answers.
type Part struct {
	Name   string // the product name the vendor driver and tool print
	Arch   string // NVIDIA compute capability or AMD gfx target; "" when not sourced
	Source string
}

// ByPCIID finds the record of a "vvvv:dddd" PCI id (any case, spaces
// trimmed), identity-only records included (the integrated GPUs of AMD APUs:
// Category "integrated_gpu").
func ByPCIID(id string) (Spec, bool) {
	id = strings.ToLower(strings.TrimSpace(id))
	for _, s := range records {
		for _, p := range s.PCIIDs {
			if p == id {
				return s, true
			}
		}
	}
	return Spec{}, false
}

// LookupPart finds the identity facts of a "vvvv:dddd" PCI id; false when
// the table has no product name or architecture for it.
func LookupPart(id string) (Part, bool) {
	s, ok := ByPCIID(id)
	if !ok || s.ProductName == "" && s.Arch == "" {
		return Part{}, false
	}
	return Part{Name: s.ProductName, Arch: s.Arch, Source: s.IdentitySource}, true
}

// nvlinkGen derives one NVLink's bandwidth from a record's per-GPU NVLink
// total over the links nvidia-smi topo -m shows on that GPU.
type nvlinkGen struct {
	Record string
	Links  int
}

// nvlinkGens by compute capability: NVLink 4 (Hopper, 9.0): H100 SXM5 900
// GB/s over 18 links (topo -m "NV18" on DGX H100); NVLink 3 (A100, 8.0):
// A100 SXM4 600 GB/s over its 12 links (NV12). Both give 50 GB/s per link
// (25 GB/s each way). Other generations are not sourced.
var nvlinkGens = map[string]nvlinkGen{
	"9.0": {Record: "NVIDIA H100 SXM5 80GB", Links: 18},
	"8.0": {Record: "NVIDIA A100 SXM4 80GB", Links: 12},
}

// NVLinkPerLinkGBs is the bidirectional bandwidth of one NVLink of a GPU of
// compute capability cc, GB/s; 0 when not sourced.
func NVLinkPerLinkGBs(cc string) float64 {
	g, ok := nvlinkGens[cc]
	if !ok {
		return 0
	}
	s, ok := ByName(g.Record)
	if !ok || s.InterconnectGBs <= 0 {
		return 0
	}
	return s.InterconnectGBs / float64(g.Links)
}

// xgmiMeshLinks are the parts whose platform joins its GPUs in a fully
// connected Infinity Fabric mesh with one link between each pair, by record
// name, with the GPU-to-GPU links of one GPU: the MI300X and MI325X 8-GPU
// platforms, "seven ... AMD Infinity Fabric links to form a fully connected
// 8-GPU system" (AMD CDNA 3 white paper, cdna3InfinityFabric). A mesh has no
// switch: traffic between two GPUs crosses their one link, and a GPU
// reaches k peers over k links (NVSwitch gives every GPU its whole NVLink
// bandwidth to any peer).
var xgmiMeshLinks = map[string]int{
	"AMD Instinct MI300X": 7,
	"AMD Instinct MI325X": 7,
}

// XGMIPerLinkGBs is the bidirectional bandwidth of one Infinity Fabric link
// of a part whose platform is a fully connected mesh (its InterconnectGBs
// over its GPU-to-GPU links: 896 / 7 = 128 GB/s, 64 each way, for the
// MI300X), GB/s; 0 for any other part or an unsourced figure.
func XGMIPerLinkGBs(s Spec) float64 {
	links, ok := xgmiMeshLinks[s.Name]
	if !ok || s.InterconnectGBs <= 0 {
		return 0
	}
	return s.InterconnectGBs / float64(links)
}

// ByPCIIDMemory finds the record of a "vvvv:dddd" PCI id on a device whose
// memory is memBytes: among the boards sharing the id (SharedPCIIDs), the
// one whose memory agrees, else ByPCIID's record (the id's own, named as
// pci.ids names it). Board memory is GDDR or HBM of a power-of-two GiB
// count, which amdgpu reports a little under (mem_info_vram_total); a board
// agrees when its figure read as GiB is within variantTolerance of memBytes,
// and only one board may agree.
func ByPCIIDMemory(id string, memBytes int64) (Spec, bool) {
	if s, ok := memoryVariant(id, memBytes); ok {
		return s, true
	}
	return ByPCIID(id)
}

// variantTolerance: the boards sharing an id differ by 4 GiB or more in
// 16 to 24 GiB (RX 7900 GRE, XT, XTX), at least 16 %; the driver's figure
// is within 1 % of the board's.
const variantTolerance = 0.05

func memoryVariant(id string, memBytes int64) (Spec, bool) {
	id = strings.ToLower(strings.TrimSpace(id))
	if memBytes <= 0 {
		return Spec{}, false
	}
	var found []Spec
	for _, s := range records {
		for _, p := range s.SharedPCIIDs {
			if p != id || s.MemoryBytes <= 0 {
				continue
			}
			board := float64(s.MemoryBytes) / 1e9 * (1 << 30)
			if s.MemoryUnit == "GiB" {
				board = float64(s.MemoryBytes)
			}
			if math.Abs(float64(memBytes)/board-1) <= variantTolerance {
				found = append(found, s)
			}
		}
	}
	if len(found) != 1 {
		return Spec{}, false
	}
	return found[0], true
}

// DeviceIDs returns the PCI device ids that the named records give for the
// PCI vendor id vendor, in record order: the one home of the ids that the
// detection packages (internal/detect/google, intel, aws) map to
// generations. A name that is not a record gives no id.
func DeviceIDs(vendor int, names ...string) []int {
	prefix := fmt.Sprintf("%04x:", vendor)
	var ids []int
	for _, name := range names {
		s, _ := ByName(name)
		for _, p := range s.PCIIDs {
			hex, ok := strings.CutPrefix(p, prefix)
			if !ok {
				continue
			}
			if id, err := strconv.ParseUint(hex, 16, 16); err == nil {
				ids = append(ids, int(id))
			}
		}
	}
	return ids
}

// PCIGenerations maps the PCI device ids of vendor that each generation's
// records give (DeviceIDs) to that generation: how a detection package
// reads its generations' ids from the table instead of keeping a list.
func PCIGenerations[G any](vendor int, records map[*G][]string) map[int]*G {
	m := map[int]*G{}
	for g, names := range records {
		for _, id := range DeviceIDs(vendor, names...) {
			m[id] = g
		}
	}
	return m
}
