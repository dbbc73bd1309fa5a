// Package amdsmitest builds the fake libamd_smi.so of the AMD SMI tests:
// ../testdata/fake_amdsmi.c compiled with cc and a generated fake_data.h
// that holds a Machine's values. The tests make a Machine from an AMD
// fixture machine (its rocm-smi output, or its sysfs and KFD tree), so the
// in-process path and the tool path see the same machine.
package amdsmitest

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vendorlib/vendorlibtest"
)

// Machine is what the fake library answers: its processors in handle
// order and the links between them (keyed {a, b}, a < b; a pair absent is
// "not supported").
type Machine struct {
	Processors []Processor
	Links      map[[2]int]Link
}

// Processor is one GPU processor handle. Socket groups the handles as
// amdsmi_get_socket_handles does (one socket per physical GPU, its
// partitions in it); VRAMTotal, VRAMUsed nil and NUMANode -1 are "not
// supported", as are an empty partition mode and a TargetGfx of 0.
type Processor struct {
	Bus                string // "0000:05:00.0"
	Socket             int
	MarketName         string
	VendorID, DeviceID uint32
	TargetGfx          uint64
	VRAMTotal          *uint64
	VRAMUsed           *uint64
	NUMANode           int
	Compute, Memory    string
}

// Link is amdsmi_io_link_type_t (1 PCIe, 2 XGMI), hops and weight; -1 is
// "not supported" for hops and weight.
type Link struct{ Type, Hops, Weight int }

// bdf packs a bus id into amdsmi_bdf_t's bit fields.
func bdf(t testing.TB, bus string) uint64 {
	var dom, b, dev, fn uint64
	if _, err := fmt.Sscanf(bus, "%x:%x:%x.%x", &dom, &b, &dev, &fn); err != nil {
		t.Fatalf("bus id %q: %v", bus, err)
	}
	return dom<<16 | b<<8 | dev<<3 | fn
}

// header is m as fake_data.h.
func (m Machine) header(t testing.TB) string {
	var b strings.Builder
	q := strconv.Quote
	sockets := 0
	for _, p := range m.Processors {
		sockets = max(sockets, p.Socket+1)
	}
	n := max(len(m.Processors), 1)
	fmt.Fprintf(&b, "#define FAKE_NPROC %d\n#define FAKE_NSOCKETS %d\n", len(m.Processors), sockets)
	fmt.Fprintf(&b, "static struct fake_proc fake_procs[%d] = {\n", n)
	opt := func(v *uint64) (int, uint64) {
		if v == nil {
			return 0, 0
		}
		return 1, *v
	}
	for _, p := range m.Processors {
		ht, tot := opt(p.VRAMTotal)
		hu, used := opt(p.VRAMUsed)
		fmt.Fprintf(&b, "\t{0x%xULL, %s, 0x%x, 0x%x, %dULL, %d, %d, %dULL, %dULL, %d, %s, %s, %d},\n",
			bdf(t, p.Bus), q(p.MarketName), p.VendorID, p.DeviceID, p.TargetGfx, ht, hu, tot, used,
			p.NUMANode, q(p.Compute), q(p.Memory), p.Socket)
	}
	b.WriteString("};\n")
	fmt.Fprintf(&b, "static const struct fake_link fake_link[%d][%d] = {\n", n, n)
	for a := 0; a < n; a++ {
		b.WriteString("\t{")
		for c := 0; c < n; c++ {
			l, ok := m.Links[[2]int{min(a, c), max(a, c)}]
			if !ok || a == c {
				l = Link{Type: -1, Hops: -1, Weight: -1}
			}
			fmt.Fprintf(&b, "{%d, %d, %d}, ", l.Type, l.Hops, l.Weight)
		}
		b.WriteString("},\n")
	}
	b.WriteString("};\n")
	return b.String()
}

// V25 is the -D flag of the variant that plays a 25.x library (ROCm 6.4):
// the amdsmi_version_t with year (25, 25.3.0 unless -DFAKE_V25_MINOR=n and
// -DFAKE_V25_RELEASE=n; year left unwritten with -DFAKE_V25_NO_YEAR), the
// amdsmi_asic_info_t of 256-byte strings ending in reserved[22], and
// amdsmi_io_link_type_t link types.
const V25 = "-DFAKE_V25"

// V26 is the -D flag of the variant that plays a 26.x library (ROCm 7):
// amdsmi_version_t without year (26.5.0 unless -DFAKE_V26_MINOR=n), the
// amdsmi_asic_info_t of 256-byte strings, and amdsmi_link_type_t link types.
const V26 = "-DFAKE_V26"

// Build compiles the fake library answering m's values, with the extra -D
// flags of a variant ("-DFAKE_HANG", "-DFAKE_INIT_RETURN=34",
// "-DFAKE_MAJOR=6", V25, V26), into a fresh directory as libamd_smi.so, and
// returns its path. The test is skipped when no C compiler is at hand.
func Build(t testing.TB, m Machine, extra ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "fake_amdsmi.c")
	return vendorlibtest.BuildFake(t, src, m.header(t), "libamd_smi.so", extra...)
}
