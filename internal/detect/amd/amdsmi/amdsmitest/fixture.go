package amdsmitest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
)

// The fake AMD SMI of a fixture machine answers what the fixture's tool
// path reads, so the two paths can be compared: with rocm-smi, what its
// JSON says (FromRocmSMI); without, what amdgpu sysfs and KFD say
// (FromSysfs), which is where AMD SMI itself reads on Linux. What the
// fixture did not capture, the fake answers AMDSMI_STATUS_NOT_SUPPORTED.

// FromRocmSMI is the fake machine of a rocm-smi --json output (the run of
// amd.ROCmSMIArgs): one processor (and socket) per card in card order,
// market name from "Card Series", the VRAM figures, the NUMA node, the gfx
// target as the number rocm-smi prints after "gfx", and the link-type, hops
// and weight matrices.
func FromRocmSMI(t testing.TB, out []byte) Machine {
	t.Helper()
	rep, err := amd.ParseRocmSMIJSON(out)
	if err != nil {
		t.Fatalf("rocm-smi JSON: %v", err)
	}
	var m Machine
	pos := map[int]int{}
	for i, c := range rep.Cards {
		pos[c.Index] = i
		p := Processor{Bus: c.BusID, Socket: i, MarketName: c.Name, VendorID: 0x1002, NUMANode: c.NUMANode,
			TargetGfx: rsmiGfxNumber(t, c.GFX)}
		if c.VRAMTotal > 0 {
			v := uint64(c.VRAMTotal)
			p.VRAMTotal = &v
		}
		if c.VRAMUsed >= 0 {
			v := uint64(c.VRAMUsed)
			p.VRAMUsed = &v
		}
		m.Processors = append(m.Processors, p)
	}
	m.Links = map[[2]int]Link{}
	for _, l := range rep.Links {
		typ := map[string]int{"PCIE": 1, "XGMI": 2}[l.Type]
		if typ == 0 && l.Type != "" {
			t.Fatalf("link type %q", l.Type)
		}
		m.Links[[2]int{pos[l.A], pos[l.B]}] = Link{Type: typ, Hops: l.Hops, Weight: l.Weight}
	}
	return m
}

// rsmiGfxNumber is target_graphics_version for an LLVM gfx target: the
// decimal digits of its major, minor and stepping (gfx90a: 9, 0, 10 ->
// 9010), the inverse of amd.SMIGfxTarget; 0 for none.
func rsmiGfxNumber(t testing.TB, gfx string) uint64 {
	digits, ok := strings.CutPrefix(gfx, "gfx")
	if !ok || len(digits) < 3 {
		return 0
	}
	minor, err1 := strconv.ParseUint(digits[len(digits)-2:len(digits)-1], 16, 8)
	step, err2 := strconv.ParseUint(digits[len(digits)-1:], 16, 8)
	if err1 != nil || err2 != nil {
		t.Fatalf("gfx target %q", gfx)
	}
	n, err := strconv.ParseUint(fmt.Sprintf("%s%d%d", digits[:len(digits)-2], minor, step), 10, 64)
	if err != nil {
		t.Fatalf("gfx target %q: %v", gfx, err)
	}
	return n
}

// FromSysfs is the fake machine of a fixture without ROCm tools: one
// processor per KFD GPU node (simd_count > 0), in PCI bus order, at the
// node's bus (a compute partition's at its partition function), grouped
// into one socket per GPU; each answers the amdgpu attributes of its GPU's
// function 0: product_name, mem_info_vram_total and _used (the whole GPU's
// on every partition, as amd-smi shows them: ROCm issue 4750), numa_node,
// current_compute_partition and current_memory_partition, and the PCI
// device id (device) as amdsmi_asic_info_t.device_id. The gfx target
// comes from KFD's gfx_target_version. No link matrix: the fixtures hold no
// KFD io_links.
func FromSysfs(t testing.TB, root string) Machine {
	t.Helper()
	nodes, _ := filepath.Glob(filepath.Join(root, "sys/class/kfd/kfd/topology/nodes/*/properties"))
	type node struct {
		bus string
		gfx int64
	}
	var gpus []node
	for _, n := range nodes {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		p := amd.ParseKFDProperties(string(b))
		if p["simd_count"] <= 0 {
			continue
		}
		loc := p["location_id"]
		gpus = append(gpus, node{bus: fmt.Sprintf("%04x:%02x:%02x.%x", p["domain"], loc>>8, (loc>>3)&0x1f, loc&7),
			gfx: p["gfx_target_version"]})
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].bus < gpus[j].bus })
	var m Machine
	socket := map[string]int{}
	for _, g := range gpus {
		base := g.bus[:len(g.bus)-2]
		s, ok := socket[base]
		if !ok {
			s = len(socket)
			socket[base] = s
		}
		dir := filepath.Join(root, "sys/bus/pci/devices", base+".0")
		p := Processor{Bus: g.bus, Socket: s, VendorID: 0x1002, NUMANode: -1,
			MarketName: read(dir, "product_name"), Compute: read(dir, "current_compute_partition"),
			Memory: read(dir, "current_memory_partition"), TargetGfx: kfdGfxNumber(g.gfx)}
		if id, err := strconv.ParseUint(strings.TrimPrefix(read(dir, "device"), "0x"), 16, 32); err == nil {
			p.DeviceID = uint32(id)
		}
		p.VRAMTotal = readUint(dir, "mem_info_vram_total")
		p.VRAMUsed = readUint(dir, "mem_info_vram_used")
		if n := readUint(dir, "numa_node"); n != nil {
			p.NUMANode = int(*n)
		}
		m.Processors = append(m.Processors, p)
	}
	return m
}

// kfdGfxNumber is target_graphics_version for KFD's gfx_target_version
// (major*10000 + minor*100 + stepping): the decimal digits of the three.
func kfdGfxNumber(v int64) uint64 {
	if v <= 0 {
		return 0
	}
	n, _ := strconv.ParseUint(fmt.Sprintf("%d%d%d", v/10000, (v/100)%100, v%100), 10, 64)
	return n
}

func read(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readUint(dir, name string) *uint64 {
	v, err := strconv.ParseUint(read(dir, name), 10, 64)
	if err != nil {
		return nil
	}
	return &v
}
