package amd

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

// BackendROCm names the rocm backend, which reports AMD GPUs (kind rocm_gpu). amdgpu sysfs is read
// first (Linux drivers/gpu/drm/amd/amdgpu/amdgpu_device.c and
// amdgpu_vram_mgr.c, https://github.com/torvalds/linux); then AMD SMI is
// read in-process (amd_amdsmi.go), or else rocm-smi, when installed, runs
// once, and fills what sysfs lacks. They are matched by PCI bus id, never
// by position.
const BackendROCm = "rocm"

// ROCmSMIArgs is the single rocm-smi run: product name, VRAM, PCI bus and the
// topology matrices (weight, hops, link type, NUMA), as one JSON line.
var ROCmSMIArgs = []string{"--showproductname", "--showmeminfo", "vram", "--showbus", "--showtopo", "--json"}

// ROCm is this file's detection source (the orchestrator lists it).
var ROCm = machine.Backend{Name: BackendROCm, Detect: detectROCm}

// AMDGPU is one AMD GPU while the backend assembles it.
type AMDGPU struct {
	Dev      registry.Device
	Card     int    // DRM card number; -1 when only rocm-smi saw it
	hive     string // xgmi_hive_id; "" or "0" when not in a hive
	SMIIndex int    // rocm-smi device index; -1 unknown
	deviceID int    // PCI device id; 0 unknown
	// computeMode and memoryMode are amdgpu's current_compute_partition
	// ("CPX") and current_memory_partition ("NPS1"); "" when unreadable.
	computeMode, memoryMode string
	// modeSource names where computeMode came from: "" for sysfs,
	// SourceAMDSMI when AMD SMI gave it.
	modeSource string
}

func detectROCm(ctx context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	gpus := amdGPUsFromSysfs(m, &f)
	kfd := kfdGPUNodes(m)
	for i := range gpus {
		applyKFD(&gpus[i], kfd[gpus[i].Dev.PCIBusID])
	}
	var smi *ROCmSMIReport
	if rep, modes, ok := reportFromAMDSMI(ctx, m, &f, len(gpus)); ok {
		rep.Cards = machine.RowsAtVendor(m, &f, BackendROCm, SourceAMDSMI, false, rep.Cards,
			func(c ROCmSMICard) string { return c.BusID }, machine.VendorAMD)
		smi = &rep
		gpus = MergeRocmSMI(gpus, rep)
		applyAMDSMIModes(gpus, modes)
	} else if m.HasTool("rocm-smi") {
		out, w, ok := m.Tool(ctx, BackendROCm, "rocm-smi", ROCmSMIArgs...)
		f.AddWarning(w)
		if ok {
			rep, err := ParseRocmSMIJSON(out)
			if err != nil {
				f.Warn(BackendROCm, registry.WarnParseError, "rocm-smi %s: %v", strings.Join(ROCmSMIArgs, " "), err)
			} else {
				// A card at another vendor's PCI function is not an AMD GPU.
				rep.Cards = machine.RowsAtVendor(m, &f, BackendROCm, "rocm-smi", false, rep.Cards,
					func(c ROCmSMICard) string { return c.BusID }, machine.VendorAMD)
				for _, c := range rep.Cards {
					for _, a := range c.Absurd {
						f.WarnAbsurdMemory(BackendROCm, "rocm-smi", "", a.What, a.Raw)
					}
				}
				smi = &rep
				gpus = MergeRocmSMI(gpus, rep)
			}
		}
	}
	for i := range gpus {
		finishAMDGPU(&gpus[i])
	}
	gpus = splitPartitions(m, &f, gpus, kfd)
	gpus, hidden := filterAMDVisible(m, gpus)
	if hidden != "" {
		f.Warn(BackendROCm, registry.WarnHiddenByEnv, "%s", hidden)
	}
	for _, g := range gpus {
		f.Devices = append(f.Devices, g.Dev)
	}
	f.Devices = append(f.Devices, unboundAMDGPUs(m)...)
	f.Interconnects = append(f.Interconnects, xgmiInterconnects(gpus, smi)...)
	return f
}

// amdGPUsFromSysfs reads every amdgpu card of vendor 0x1002.
func amdGPUsFromSysfs(m *machine.Machine, f *machine.Findings) []AMDGPU {
	var out []AMDGPU
	for _, c := range machine.ListDRMCards(m) {
		if c.Driver != "amdgpu" || c.Vendor != machine.VendorAMD {
			continue
		}
		g := AMDGPU{Card: c.N, SMIIndex: -1, deviceID: c.Device}
		d := &g.Dev
		d.ID = c.BusID
		d.Kind = registry.KindROCm
		d.Vendor = "amd"
		d.Available = true
		d.PCIBusID = c.BusID
		if s, err := m.ReadString(path.Join(c.Dir, "product_name")); err == nil && s != "" {
			d.Name = s
			d.SetSource("name", "sysfs")
		}
		if s, err := m.ReadString(path.Join(c.Dir, "unique_id")); err == nil && s != "" {
			d.UUID = s
			d.SetSource("uuid", "sysfs")
		}
		readAMDMemory(m, c.Dir, d, f)
		readAMDTelemetry(m, f, c.Dir, d)
		if s, err := m.ReadString(path.Join(c.Dir, "xgmi_hive_info", "xgmi_hive_id")); err == nil {
			g.hive = s
		}
		g.computeMode = partitionMode(m, path.Join(c.Dir, "current_compute_partition"))
		g.memoryMode = partitionMode(m, path.Join(c.Dir, "current_memory_partition"))
		out = append(out, g)
	}
	return out
}

// partitionMode reads an amdgpu partition attribute ("CPX", "NPS1"); ""
// when absent or not a mode name.
func partitionMode(m *machine.Machine, file string) string {
	s, err := m.ReadString(file)
	s = strings.ToUpper(strings.TrimSpace(s))
	if err != nil || len(s) < 3 || len(s) > 4 {
		return ""
	}
	return s
}

// readAMDMemory fills VRAM, free VRAM and GTT from amdgpu's mem_info_*
// attributes (bytes). GTT is system memory the GPU can map: it is reported
// apart and never added to VRAM. Absurd figures (2^64-1, negative) are
// reported and left out (readMemoryFile).
func readAMDMemory(m *machine.Machine, dir string, d *registry.Device, f *machine.Findings) {
	read := func(attr string) (int64, bool) {
		return m.ReadMemoryFile(f, BackendROCm, d.PCIBusID+" "+attr, path.Join(dir, attr))
	}
	total, okTotal := read("mem_info_vram_total")
	used, okUsed := read("mem_info_vram_used")
	if okTotal && total > 0 {
		d.MemoryBytes = total
		d.SetSource("memory_bytes", "sysfs")
		if okUsed && used <= total {
			free := total - used
			d.MemoryFreeBytes = &free
			d.SetSource("memory_free_bytes", "sysfs")
		}
	}
	if gtt, ok := read("mem_info_gtt_total"); ok && gtt > 0 {
		d.GTTBytes = gtt
		d.SetSource("gtt_bytes", "sysfs")
	}
}

// unboundAMDGPUs lists the AMD GPUs that sysfs shows but no driver claims:
// present, not usable (no ROCm runtime can open them), with the reason,
// named from the part table when it knows the id. An APU's GPU keeps its
// shared-memory mark; no memory figure is known without the driver.
func unboundAMDGPUs(m *machine.Machine) []registry.Device {
	var out []registry.Device
	for _, p := range machine.UnboundFunctions(m, machine.VendorAMD, machine.ClassDisplay, machine.ClassAccelerator) {
		d := registry.Device{ID: p.Address, Kind: registry.KindROCm, Vendor: "amd", PCIBusID: p.Address,
			UnavailableReason: machine.ReasonNoDriver, NUMANode: p.NUMANode}
		if s, ok := specs.ByPCIID(p.PCIID()); ok {
			d.Name = s.Name
			if s.ProductName != "" {
				d.Name = s.ProductName
			}
			d.SetSource("name", "part table")
			d.Architecture = s.Arch
			d.MemoryShared = s.Category == specs.IntegratedGPU
		}
		setAMDQuantizations(&d)
		out = append(out, d)
	}
	return out
}

// kfdGPUNodes reads the KFD topology nodes that are GPUs (simd_count > 0),
// keyed by PCI bus id (a partition's at its partition function, see
// amd_partition.go). CPU nodes (simd_count 0) come first and are skipped.
func kfdGPUNodes(m *machine.Machine) map[string]kfdNode {
	out := map[string]kfdNode{}
	base := "sys/class/kfd/kfd/topology/nodes"
	for _, e := range m.ReadDir(base) {
		// ReadFile, not ReadString: the file has one property per line and
		// ReadString drops newlines with the other control characters.
		dir := path.Join(base, e.Name())
		b, err := m.ReadFile(path.Join(dir, "properties"))
		if err != nil {
			continue
		}
		props := ParseKFDProperties(string(b))
		if props["simd_count"] <= 0 {
			continue
		}
		if bus := kfdBusID(props); bus != "" {
			out[bus] = kfdNode{props: props, ids: kfdIDs(string(b)), dir: dir}
		}
	}
	return out
}

// applyKFD takes the architecture (gfx target) from the GPU's KFD node, and
// its XGMI hive from the node's hive_id when sysfs has no xgmi_hive_id (the
// same id, kfd_topology.c node_show).
func applyKFD(g *AMDGPU, node kfdNode) {
	props := node.props
	if props == nil {
		return
	}
	if h := node.ids["hive_id"]; h != 0 && (g.hive == "" || g.hive == "0") {
		g.hive = strconv.FormatUint(h, 10)
	}
	if arch := gfxTarget(props["gfx_target_version"]); arch != "" {
		g.Dev.Architecture = arch
		g.Dev.SetSource("architecture", "kfd")
	}
}

// MergeRocmSMI folds rocm-smi's view into the sysfs devices by PCI bus id;
// a card rocm-smi lists that sysfs did not show (a container without /sys)
// becomes a device of its own. sysfs figures stay when both have one.
func MergeRocmSMI(gpus []AMDGPU, rep ROCmSMIReport) []AMDGPU {
	at := map[string]int{}
	for i, g := range gpus {
		at[g.Dev.PCIBusID] = i
	}
	fromSysfs := len(gpus)
	for _, c := range rep.Cards {
		if c.BusID == "" && fromSysfs > 0 {
			// Cannot be matched to a sysfs card: adding it would count a
			// GPU twice.
			continue
		}
		i, ok := at[c.BusID]
		if !ok || c.BusID == "" {
			g := AMDGPU{Card: -1, SMIIndex: c.Index}
			g.Dev = registry.Device{Kind: registry.KindROCm, Vendor: "amd", Available: true, PCIBusID: c.BusID}
			g.Dev.ID = c.BusID
			if g.Dev.ID == "" {
				g.Dev.ID = fmt.Sprintf("rocm-smi:%d", c.Index)
			}
			if c.NUMANode >= 0 {
				n := c.NUMANode
				g.Dev.NUMANode = &n
				g.Dev.SetSource("numa_node", rep.tool())
			}
			gpus = append(gpus, g)
			i = len(gpus) - 1
			if c.BusID != "" {
				at[c.BusID] = i
			}
		}
		g := &gpus[i]
		g.SMIIndex = c.Index
		d := &g.Dev
		if d.Name == "" && c.Name != "" {
			d.Name = c.Name
			d.SetSource("name", rep.tool())
		}
		if d.MemoryBytes == 0 && c.VRAMTotal > 0 {
			d.MemoryBytes = c.VRAMTotal
			d.SetSource("memory_bytes", rep.tool())
			if c.VRAMUsed >= 0 && c.VRAMUsed <= c.VRAMTotal {
				free := c.VRAMTotal - c.VRAMUsed
				d.MemoryFreeBytes = &free
				d.SetSource("memory_free_bytes", rep.tool())
			}
		}
		if d.Architecture == "" && c.GFX != "" {
			d.Architecture = c.GFX
			d.SetSource("architecture", rep.tool())
		}
	}
	return gpus
}

// isAPU reports whether a PCI id is the integrated GPU of an AMD APU: the
// part table (internal/specs) files those under Category "integrated_gpu",
// each with its pci.ids entry. Their mem_info_vram_total is a UMA carve-out
// of system RAM (the BIOS "UMA frame buffer"), not memory of their own.
func isAPU(pciID string) bool {
	s, ok := specs.ByPCIID(pciID)
	return ok && s.Category == specs.IntegratedGPU
}

// finishAMDGPU derives what depends on the identity: name and architecture
// from the part table, the memory figures of APUs, bandwidth and precisions.
func finishAMDGPU(g *AMDGPU) {
	d := &g.Dev
	pciID := machine.Hex4(machine.VendorAMD) + ":" + machine.Hex4(g.deviceID)
	// The gfx target of documented PCI ids, for machines without KFD
	// (internal/specs parts: MI300X 0x74a1 gfx942, Radeon 780M 0x15bf gfx1103).
	if p, ok := specs.LookupPart(pciID); ok && d.Architecture == "" && p.Arch != "" {
		d.Architecture = p.Arch
		d.SetSource("architecture", "pci-id")
	}
	if isAPU(pciID) {
		applyAPUMemory(d)
	}
	// The part of the id (a board of an id several boards share, by the
	// VRAM amdgpu reports: RX 7900 XT/XTX/GRE on 1002:744c) names a GPU no
	// tool named, with the product name the table gives.
	part, known := specs.ByPCIIDMemory(pciID, d.MemoryBytes)
	if known && d.Name == "" && part.ProductName != "" {
		d.Name = part.ProductName
		d.SetSource("name", "part table")
	}
	// Peak memory bandwidth only for ids whose internal/specs record has a
	// sourced figure (each record names its datasheet); other GPUs get none,
	// not a guess. The source label is the other backends' "datasheet".
	if known && part.BandwidthGBs > 0 {
		d.MemoryBandwidthGBs = part.BandwidthGBs
		d.SetSource("memory_bandwidth_gb_s", "datasheet")
	}
	setAMDQuantizations(d)
}

// Sources of the APU memory figures.
const (
	srcCarveout = "sysfs mem_info_vram_total (BIOS UMA carve-out)"
	srcAPUGTT   = "sysfs mem_info_gtt_total (ROCm maps APU memory through GTT)"
)

// applyAPUMemory names the memory figures of an AMD APU's GPU. What amdgpu
// (or rocm-smi) reports as VRAM is the BIOS carve-out: it is reported as
// MemoryCarveoutBytes, not as memory of the GPU's own, and its free figure
// (carve-out minus used) is dropped, since a ROCm process is not bound by it.
// What a process can allocate is the GTT window: ROCm's "AMD RDNA3.5 system
// optimization" page (https://rocm.docs.amd.com/en/latest/reference/system-optimization/rdna3-5.html)
// documents that APU memory is mapped through GTT, whose size the TTM pages
// limit sets: by default half of system RAM (Linux
// drivers/gpu/drm/ttm/ttm_device.c, ttm_global_init), the ~62 GiB ROCm
// reports on a 128 GB machine; 96 GiB on the strix-halo-128gb fixture, where
// ttm.pages_limit was raised and HIP reports "Total VRAM: 98304 MiB".
// Without a GTT figure the usable memory stays unknown rather than guessed.
func applyAPUMemory(d *registry.Device) {
	d.MemoryShared = true
	if d.MemoryBytes > 0 {
		d.MemoryCarveoutBytes = d.MemoryBytes
		d.SetSource("memory_carveout_bytes", carveoutSource(d.Sources["memory_bytes"]))
		d.MemoryBytes = 0
		delete(d.Sources, "memory_bytes")
		d.MemoryFreeBytes = nil
		delete(d.Sources, "memory_free_bytes")
	}
	if d.GTTBytes > 0 {
		d.MemoryUsableBytes = d.GTTBytes
		d.SetSource("memory_usable_bytes", srcAPUGTT)
	}
}

// carveoutSource names where the carve-out figure came from: sysfs, or
// rocm-smi's VRAM total on a machine without sysfs.
func carveoutSource(memorySource string) string {
	if memorySource == "sysfs" {
		return srcCarveout
	}
	return memorySource + " VRAM total (BIOS UMA carve-out)"
}

// setAMDQuantizations takes the precisions of the GPU's gfx target from the
// precision table; a target the table does not know (gfx1030, gfx1036, or
// none at all) gets the ROCm family's answer (precision.Of), and its source
// says it was inferred.
func setAMDQuantizations(d *registry.Device) {
	if q := precision.AMDGPU(d.Architecture); q != nil {
		d.Quantizations = q
		return
	}
	d.Quantizations = precision.Of(d)
	arch := d.Architecture
	if arch == "" {
		arch = "unknown"
	}
	d.SetSource("quantizations", "inferred from the ROCm family (gfx target "+arch+" not in the precision table)")
}

// filterAMDVisible applies ROCR_VISIBLE_DEVICES (indices or GPU UUIDs) and
// then HIP_VISIBLE_DEVICES (indices into what ROCR left), as the ROCm runtime
// does. Indices count GPUs in DRM card order (the enumeration order of the
// ROCm runtime on one node). As with CUDA_VISIBLE_DEVICES, the list stops at
// the first entry that matches nothing. It returns the visible GPUs and, when
// some were hidden, the warning text.
func filterAMDVisible(m *machine.Machine, gpus []AMDGPU) ([]AMDGPU, string) {
	all := gpus
	gpus = nil
	for _, i := range hipDevices(all) {
		gpus = append(gpus, all[i])
	}
	total := len(gpus)
	var used []string
	for _, name := range []string{"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"} {
		v, ok := m.Env(name)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		gpus = selectVisibleAMD(gpus, v, name == "ROCR_VISIBLE_DEVICES")
		used = append(used, name+"="+v)
	}
	if len(gpus) == total {
		return all, ""
	}
	return withParents(all, gpus), fmt.Sprintf("%d of %d AMD GPUs hidden by %s", total-len(gpus), total, strings.Join(used, ", "))
}

// selectVisibleAMD keeps the GPUs a visibility list names, in list order.
func selectVisibleAMD(gpus []AMDGPU, list string, uuids bool) []AMDGPU {
	var out []AMDGPU
	taken := map[int]bool{}
	for _, tok := range strings.Split(list, ",") {
		tok = strings.TrimSpace(tok)
		i := -1
		if n, err := strconv.Atoi(tok); err == nil {
			if n >= 0 && n < len(gpus) {
				i = n
			}
		} else if uuids {
			i = gpuByUUID(gpus, tok)
		}
		if i < 0 {
			break
		}
		if !taken[i] {
			taken[i] = true
			out = append(out, gpus[i])
		}
	}
	return out
}

// gpuByUUID finds "GPU-<hex>" (the ROCm runtime's UUID, built from the
// device's unique_id) among the GPUs; leading zeros and case are ignored.
func gpuByUUID(gpus []AMDGPU, tok string) int {
	want, ok := normAMDUUID(strings.TrimPrefix(strings.TrimPrefix(tok, "GPU-"), "gpu-"))
	if !ok {
		return -1
	}
	for i, g := range gpus {
		if have, ok := normAMDUUID(g.Dev.UUID); ok && have == want {
			return i
		}
	}
	return -1
}

func normAMDUUID(s string) (string, bool) {
	s = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "0x"))
	if s == "" {
		return "", false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return "", false
		}
	}
	s = strings.TrimLeft(s, "0")
	return s, s != ""
}

// xgmiInterconnects groups the visible GPUs into XGMI hives: by sysfs
// xgmi_hive_id when the driver exposes it, else by rocm-smi's link-type
// matrix ("XGMI" cells). LinkBandwidthGBs is one link's rate on CDNA 3
// (xgmiLinkGBs); BandwidthGBs, a GPU's aggregate, is left to the part table
// (internal/specs: 896 GB/s both ways for the MI300X and MI325X), which the
// planner reads by record; nothing here measures it. Links counts the GPU
// pairs rocm-smi reports as directly XGMI-linked (one hop), when rocm-smi ran.
func xgmiInterconnects(gpus []AMDGPU, smi *ROCmSMIReport) []registry.Interconnect {
	groups := map[string][]int{}
	var order []string
	for i, g := range gpus {
		if g.hive == "" || g.hive == "0" {
			continue
		}
		if _, ok := groups[g.hive]; !ok {
			order = append(order, g.hive)
		}
		groups[g.hive] = append(groups[g.hive], i)
	}
	source := "sysfs"
	if len(order) == 0 && smi != nil {
		order, groups = xgmiGroupsFromSMI(gpus, smi)
		source = smi.tool()
	}
	var out []registry.Interconnect
	for _, key := range order {
		members := groups[key]
		if len(members) < 2 {
			continue
		}
		ic := registry.Interconnect{Kind: registry.LinkXGMI, Source: source}
		if source == "sysfs" {
			ic.Name = "xgmi hive " + key
		}
		inHive := map[int]bool{}
		for _, i := range members {
			ic.Devices = append(ic.Devices, gpus[i].Dev.ID)
			if gpus[i].SMIIndex >= 0 {
				inHive[gpus[i].SMIIndex] = true
			}
		}
		if smi != nil {
			ic.Links = countXGMILinks(smi.Links, inHive)
			if ic.Links > 0 && source == "sysfs" {
				ic.Source = "sysfs+" + smi.tool()
			}
		}
		ic.LinkBandwidthGBs = xgmiLinkGBs(gpus, members)
		out = append(out, ic)
	}
	return out
}

// cdna3XGMILinkGBs is one CDNA 3 (gfx942: MI300X, MI300A, MI308X, MI325X)
// Infinity Fabric link's bandwidth in one direction: 16 lanes at 32 Gbps
// ("the communication links ... operate at up to 32Gbps ... two 16-lane,
// bi-directional inter-package AMD Infinity Fabric links" per IOD, AMD CDNA 3
// white paper, "Communication and scaling",
// https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/amd-cdna-3-white-paper.pdf),
// 16 x 32 / 8 = 64 GB/s. An 8-GPU platform joins every pair by one link.
const cdna3XGMILinkGBs = 64

// xgmiLinkGBs is the per-link, per-direction bandwidth of a hive whose GPUs
// are all CDNA 3; 0 (unknown) otherwise.
func xgmiLinkGBs(gpus []AMDGPU, members []int) float64 {
	for _, i := range members {
		if gpus[i].Dev.Architecture != "gfx942" {
			return 0
		}
	}
	return cdna3XGMILinkGBs
}

// xgmiGroupsFromSMI builds hives as the connected components of the XGMI
// links rocm-smi reports between visible GPUs.
func xgmiGroupsFromSMI(gpus []AMDGPU, smi *ROCmSMIReport) ([]string, map[string][]int) {
	byIndex := map[int]int{}
	for i, g := range gpus {
		if g.SMIIndex >= 0 {
			byIndex[g.SMIIndex] = i
		}
	}
	parent := make([]int, len(gpus))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	linked := map[int]bool{}
	for _, l := range smi.Links {
		a, okA := byIndex[l.A]
		b, okB := byIndex[l.B]
		if !okA || !okB || l.Type != "XGMI" {
			continue
		}
		parent[find(a)] = find(b)
		linked[a], linked[b] = true, true
	}
	groups := map[string][]int{}
	var order []string
	for i := range gpus {
		if !linked[i] {
			continue
		}
		key := strconv.Itoa(find(i))
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], i)
	}
	return order, groups
}

// countXGMILinks counts direct (one-hop, or hops unknown) XGMI pairs among
// the given rocm-smi device indices.
func countXGMILinks(links []rocmSMILink, members map[int]bool) int {
	n := 0
	for _, l := range links {
		if l.Type == "XGMI" && members[l.A] && members[l.B] && l.Hops <= 1 {
			n++
		}
	}
	return n
}
