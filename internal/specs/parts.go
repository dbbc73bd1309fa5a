package specs

import (
	"math"
	"strings"
)

// This file is hand-kept (gen.go does not touch it). It holds what the
// detection backends need beyond the generated table, each fact with its
// source, so that no datasheet figure is written in two places: detection
// reads memory, bandwidth and interconnect figures from the table (through
// DeviceMemoryBytes, Datasheet and NVLinkPerLinkGBs) and the per-PCI-id
// identity facts (driver product name, compute capability, gfx target) from
// parts.

// binaryGB lists the records whose memory "GB" is binary: the part carries
// memory_size GiB (DRAM and HBM come in power-of-two sizes), and the tool that
// reports the real figure shows it. The generated MemoryBytes reads "GB" as
// 10^9 (the planner's SKU check tolerates either); DeviceMemoryBytes reads
// these records as GiB. A "GB" record missing here has no memory figure for
// detection (Intel Gaudi3: "128 GB" with no binary/decimal evidence).
var binaryGB = map[string]string{
	// nvidia-smi reports the frame buffer in MiB just under the GiB figure:
	// 81559 MiB on an H100 80GB HBM3, 46068 MiB on an A40 with ECC on
	// (shared/formats.md, nvidia-smi).
	"NVIDIA H100 SXM5 80GB":          "nvidia-smi memory.total (formats.md)",
	"NVIDIA A100 PCIe 80GB":          "nvidia-smi memory.total (formats.md)",
	"NVIDIA A40":                     "nvidia-smi memory.total (formats.md)",
	"NVIDIA GeForce RTX 4090":        "nvidia-smi memory.total (formats.md)",
	"NVIDIA GeForce RTX 3090":        "nvidia-smi memory.total (formats.md)",
	"NVIDIA GeForce RTX 3060 (12GB)": "nvidia-smi memory.total (formats.md)",
	// hl-smi: "98304 MiB" per HL-225 (formats.md "hl-smi", public 8x Gaudi 2
	// tables) = 96 GiB.
	"Intel Gaudi2 (HL-225)": "hl-smi memory.total 98304 MiB (formats.md)",
	// tpu_info device.py hbm_gib (AI-Hypercomputer/cloud-accelerator-
	// diagnostics); the v5p page states "HBM capacity per chip (GiB) 95"
	// (https://docs.cloud.google.com/tpu/docs/v5p).
	"Google TPU v5e (per chip)":          "tpu_info device.py hbm_gib",
	"Google TPU v5p (per chip)":          "https://docs.cloud.google.com/tpu/docs/v5p; tpu_info device.py hbm_gib",
	"Google TPU v6e Trillium (per chip)": "tpu_info device.py hbm_gib",
}

// DeviceMemoryBytes is the memory the part carries, for detection's
// fallbacks: the record's figure when it is stated in GiB or listed in
// binaryGB, else 0 (unknown).
func DeviceMemoryBytes(s Spec) int64 {
	switch {
	case s.MemoryBytes <= 0 || s.MemoryIsMaximum:
		return 0
	case s.MemoryUnit == "GiB":
		return s.MemoryBytes
	case s.MemoryUnit == "GB" && binaryGB[s.Name] != "":
		return int64(math.Round(float64(s.MemoryBytes) / 1e9 * (1 << 30)))
	}
	return 0
}

// extraRecords are parts detection recognises that devices.json has no
// record for. They are not in All() (the table is one entry per record).
var extraRecords = []Spec{
	// tpu_info device.py: hbm_gib 8 per TensorCore, two TensorCores per v2
	// chip; the v3 record (32 GiB per chip) confirms the per-chip doubling.
	{Name: "Google TPU v2 (per chip)", Vendor: "Google", Category: "tpu",
		MemoryBytes: 16 << 30, MemoryUnit: "GiB",
		Source: "AI-Hypercomputer/cloud-accelerator-diagnostics tpu_info/device.py (hbm_gib)"},
	{Name: "Google TPU7x (per chip)", Vendor: "Google", Category: "tpu",
		MemoryBytes: 192 << 30, MemoryUnit: "GiB",
		Source: "AI-Hypercomputer/cloud-accelerator-diagnostics tpu_info/device.py (hbm_gib)"},
}

// Datasheet returns the record named name, or the extra record of that name.
func Datasheet(name string) (Spec, bool) {
	if s, ok := ByName(name); ok {
		return s, true
	}
	for _, s := range extraRecords {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// supplement is a figure a devices.json record lacks, with its source.
type supplement struct {
	InterconnectGBs float64
	BandwidthGBs    float64 // memory bandwidth, GB/s
	Source          string
}

// supplements fill figures the records lack (never one they state: a record
// that gains the figure keeps its own, and the supplement should go).
var supplements = map[string]supplement{
	// The record only notes "Interchip Interconnect BW 4800 Gbps per chip"
	// (the older page); the current page states "Bidirectional inter-chip
	// interconnect (ICI) bandwidth per chip (GBps) 1200", the same convention
	// as the v5e (400) and v6e (800) records. 4800 Gbps / 8 = 600 GB/s is
	// one direction (the v5e page likewise went from "1600 Gbps" to "400 GBps"
	// bidirectional).
	"Google TPU v5p (per chip)": {InterconnectGBs: 1200,
		Source: "https://docs.cloud.google.com/tpu/docs/v5p (bidirectional ICI bandwidth per chip)"},
	// The record notes the bandwidth was not found. GDDR6X at 22.4 Gbps
	// effective on a 256-bit bus (https://db.thegpu.guru/card/RTX%204080;
	// https://www.pcmasters.de/news/133711911-nvidia-rtx-4080-founder-edition-pcb-foto-geleakt.html
	// "22,4 Gbps, nicht 23 Gbps") = 716.8 GB/s, the "717GB/s" of
	// https://guru3d.com/story/rumored-nvidia-rtx-5090-specs-cores-gddr7-memory-and-bandwidth
	// (the 736 GB/s in older reports assumed 23 Gbps memory).
	"NVIDIA GeForce RTX 4080 (16GB)": {BandwidthGBs: 716.8,
		Source: "22.4 Gbps x 256 bit (db.thegpu.guru/card/RTX 4080; pcmasters.de), \"717GB/s\" (guru3d.com rumored-nvidia-rtx-5090 story)"},
}

// init completes the table: the hand-kept records (datasheets_extra.go) join
// the generated ones, supplements fill missing figures, and the name index
// is rebuilt over both.
func init() {
	table = append(table, handRecords...)
	applySupplements(table)
	byWords = buildIndex()
}

func applySupplements(t []Spec) {
	for i := range t {
		sup, ok := supplements[t[i].Name]
		if !ok {
			continue
		}
		if sup.InterconnectGBs > 0 && t[i].InterconnectGBs == 0 {
			t[i].InterconnectGBs = sup.InterconnectGBs
			t[i].Source += "; interconnect_gb_s_per_device: " + sup.Source
		}
		if sup.BandwidthGBs > 0 && t[i].BandwidthGBs == 0 {
			t[i].BandwidthGBs = sup.BandwidthGBs
			t[i].Source += "; memory_bandwidth_gb_s: " + sup.Source
		}
	}
}

// Part is what a PCI id tells detection when no vendor tool answers.
type Part struct {
	Name string // the product name the vendor driver and tool print
	// Arch is the NVIDIA compute capability ("9.0") or the AMD gfx target
	// ("gfx942"); "" when not sourced.
	Arch   string
	Source string
}

// parts is keyed by "vvvv:dddd" (lower-case hex). Datasheet figures for the
// same ids come from the table through LookupPCIID (match.go pciIDs).
var parts = map[string]Part{
	// Names as nvidia-smi and /proc/driver/nvidia print them (formats.md,
	// nvidia-smi); compute capability from NVIDIA's "CUDA GPUs" list
	// (https://developer.nvidia.com/cuda-gpus).
	"10de:2330": {Name: "NVIDIA H100 80GB HBM3", Arch: "9.0", Source: nvidiaPartSource},
	"10de:20b5": {Name: "NVIDIA A100 80GB PCIe", Arch: "8.0", Source: nvidiaPartSource},
	"10de:2235": {Name: "NVIDIA A40", Arch: "8.6", Source: nvidiaPartSource},
	"10de:2684": {Name: "NVIDIA GeForce RTX 4090", Arch: "8.9", Source: nvidiaPartSource},
	"10de:2204": {Name: "NVIDIA GeForce RTX 3090", Arch: "8.6", Source: nvidiaPartSource},
	"10de:2504": {Name: "NVIDIA GeForce RTX 3060", Arch: "8.6", Source: nvidiaPartSource},
	// MI300X = gfx942 (ROCm docs/reference/gpu-arch-specs.rst, LLVM target
	// column); Radeon 780M (Phoenix1) = gfx1103 (RADV names it
	// "GFX1103_R1", formats.md vulkaninfo).
	"1002:74a1": {Arch: "gfx942", Source: "ROCm docs/reference/gpu-arch-specs.rst"},
	"1002:15bf": {Arch: "gfx1103", Source: "formats.md vulkaninfo (RADV GFX1103_R1)"},
}

const nvidiaPartSource = "formats.md nvidia-smi (name); https://developer.nvidia.com/cuda-gpus (compute capability)"

// LookupPart finds the identity facts of a "vvvv:dddd" PCI id.
func LookupPart(id string) (Part, bool) {
	p, ok := parts[strings.ToLower(strings.TrimSpace(id))]
	return p, ok
}

// nvlinkGen derives one NVLink's bandwidth from a record's per-GPU NVLink
// total over the links nvidia-smi topo -m shows on that GPU.
type nvlinkGen struct {
	Record string
	Links  int
}

// nvlinkGens by compute capability: NVLink 4 (Hopper, 9.0): H100 SXM5 900
// GB/s over 18 links (topo -m "NV18" on DGX H100, formats.md); NVLink 3
// (A100, 8.0): A100 SXM4 600 GB/s over its 12 links (NV12). Both give 50 GB/s
// per link (25 GB/s each way). Other generations are not sourced.
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
