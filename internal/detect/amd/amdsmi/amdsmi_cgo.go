//go:build linux && cgo

package amdsmi

/*
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// The AMD SMI types this package reads, declared from include/amd_smi/amdsmi.h
// of https://github.com/ROCm/amdsmi at 0ceca28f4139dced5e9b5739a3f393780d7add48
// (24.x), the declarations of ROCm 6.4's Python interface (25.x; see the
// package comment) and projects/amdsmi/include/amd_smi/amdsmi.h of
// https://github.com/ROCm/rocm-systems at a881068735de99de46183f9a0a37ef0ba5f89de6
// (26.x), so that the build needs no ROCm header or library. Every function
// is resolved with dlsym and called through a pointer. The prototypes are
// the same in the three families (the 26.x amdsmi_topo_get_link_type writes
// an amdsmi_link_type_t where 24.x and 25.x wrote an amdsmi_io_link_type_t,
// both enums of int size).
typedef int amdsmi_status_t;
typedef void *amdsmi_handle;

typedef struct {                   // amdsmi_version_t (24.x, 25.x; 26.x: see decodeVersion)
	uint32_t year, major, minor, release;
	const char *build;
} hw_amdsmi_version_t;

typedef struct {                   // amdsmi_asic_info_t (24.7; 24.6 ends after oam_id with reserved[18])
	char market_name[256];         // AMDSMI_256_LENGTH
	uint32_t vendor_id;
	char vendor_name[64];          // AMDSMI_MAX_STRING_LENGTH
	uint32_t subvendor_id;
	uint64_t device_id;
	uint32_t rev_id;
	char asic_serial[32];          // AMDSMI_NORMAL_STRING_LENGTH
	uint32_t oam_id;
	uint32_t num_of_compute_units;
	uint64_t target_graphics_version;
	uint32_t reserved[15];
} hw_amdsmi_asic_info_t;

// amdsmi_asic_info_t of 25.x and 26.x up to subsystem_id: 25.x (ROCm 6.4)
// widened vendor_name and asic_serial to 256 bytes as 26.x has them, and
// ends after target_graphics_version with reserved[22] (sizeof 896), where
// 26.x has subsystem_id (never read here), then flags (26.2.1, 26.5.0) and a
// reserved tail whose length differs by minor (sizeof 896 or 904); room
// takes the rest, with space to spare.
typedef struct {
	char market_name[256];         // AMDSMI_MAX_STRING_LENGTH
	uint32_t vendor_id;
	char vendor_name[256];
	uint32_t subvendor_id;
	uint64_t device_id;
	uint32_t rev_id;
	char asic_serial[256];
	uint32_t oam_id;
	uint32_t num_of_compute_units;
	uint64_t target_graphics_version;
	uint32_t subsystem_id;
	uint8_t room[1024 - 812];
} hw_amdsmi_asic_info_wide_t;

// The offsets the readers rely on, worked out by hand from the headers.
_Static_assert(sizeof(hw_amdsmi_version_t) == 24, "amdsmi_version_t");
_Static_assert(offsetof(hw_amdsmi_asic_info_t, device_id) == 328, "24.x device_id");
_Static_assert(offsetof(hw_amdsmi_asic_info_t, target_graphics_version) == 384, "24.x target_graphics_version");
_Static_assert(sizeof(hw_amdsmi_asic_info_t) == 456, "24.7 amdsmi_asic_info_t");
_Static_assert(offsetof(hw_amdsmi_asic_info_wide_t, device_id) == 520, "25.x, 26.x device_id");
_Static_assert(offsetof(hw_amdsmi_asic_info_wide_t, target_graphics_version) == 800, "25.x, 26.x target_graphics_version");
_Static_assert(offsetof(hw_amdsmi_asic_info_wide_t, subsystem_id) == 808, "26.x subsystem_id");
_Static_assert(sizeof(hw_amdsmi_asic_info_wide_t) >= 904, "25.x, 26.x amdsmi_asic_info_t, 26.2.1's being the largest");

static int hw_version(void *f, hw_amdsmi_version_t *v) { return ((amdsmi_status_t (*)(hw_amdsmi_version_t *))f)(v); }
static int hw_init(void *f, uint64_t flags) { return ((amdsmi_status_t (*)(uint64_t))f)(flags); }
static int hw_call0(void *f) { return ((amdsmi_status_t (*)(void))f)(); }
static int hw_sockets(void *f, uint32_t *n, amdsmi_handle *out) { return ((amdsmi_status_t (*)(uint32_t *, amdsmi_handle *))f)(n, out); }
static int hw_processors(void *f, amdsmi_handle s, uint32_t *n, amdsmi_handle *out) { return ((amdsmi_status_t (*)(amdsmi_handle, uint32_t *, amdsmi_handle *))f)(s, n, out); }
static int hw_ptr(void *f, amdsmi_handle p, void *out) { return ((amdsmi_status_t (*)(amdsmi_handle, void *))f)(p, out); }
static int hw_mem(void *f, amdsmi_handle p, int type, uint64_t *v) { return ((amdsmi_status_t (*)(amdsmi_handle, int, uint64_t *))f)(p, type, v); }
static int hw_str(void *f, amdsmi_handle p, char *buf, uint32_t n) { return ((amdsmi_status_t (*)(amdsmi_handle, char *, uint32_t))f)(p, buf, n); }
static int hw_weight(void *f, amdsmi_handle a, amdsmi_handle b, uint64_t *w) { return ((amdsmi_status_t (*)(amdsmi_handle, amdsmi_handle, uint64_t *))f)(a, b, w); }
static int hw_link_type(void *f, amdsmi_handle a, amdsmi_handle b, uint64_t *hops, int *t) { return ((amdsmi_status_t (*)(amdsmi_handle, amdsmi_handle, uint64_t *, int *))f)(a, b, hops, t); }
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vendorlib/dl"
)

// symbols are the AMD SMI entry points read, by group.
var symbols = map[string]string{
	"version":          "amdsmi_get_lib_version",
	"init":             "amdsmi_init",
	"shutDown":         "amdsmi_shut_down",
	"sockets":          "amdsmi_get_socket_handles",
	"processors":       "amdsmi_get_processor_handles",
	"bdf":              "amdsmi_get_gpu_device_bdf",
	"asic":             "amdsmi_get_gpu_asic_info",
	"memTotal":         "amdsmi_get_gpu_memory_total",
	"memUsage":         "amdsmi_get_gpu_memory_usage",
	"numa":             "amdsmi_topo_get_numa_node_number",
	"linkType":         "amdsmi_topo_get_link_type",
	"linkWeight":       "amdsmi_topo_get_link_weight",
	"computePartition": "amdsmi_get_gpu_compute_partition",
	"memoryPartition":  "amdsmi_get_gpu_memory_partition",
}

// required are the groups without which the library is not used.
var required = []string{"version", "init", "sockets", "processors", "bdf", "asic"}

// AMDSMI_INIT_AMD_GPUS and AMDSMI_MEM_TYPE_VRAM (amdsmi.h).
const (
	initAMDGPUs = 1 << 1
	memTypeVRAM = 0
)

// Bounds on what a broken library can make us allocate.
const (
	maxSockets    = 256
	maxProcessors = 1024
)

// cLib is one dlopen'ed libamd_smi with its resolved entry points.
type cLib struct {
	fn map[string]unsafe.Pointer
}

// openC loads the library at path and resolves its entry points.
func openC(path string) (*cLib, error) {
	h, err := dl.Open(path)
	if err != nil {
		return nil, err
	}
	l := &cLib{fn: map[string]unsafe.Pointer{}}
	for group, name := range symbols {
		if p := dl.Sym(h, name); p != nil {
			l.fn[group] = p
		}
	}
	for _, g := range required {
		if l.fn[g] == nil {
			return nil, fmt.Errorf("%w: %s lacks %s", ErrUnsupported, path, symbols[g])
		}
	}
	return l, nil
}

func (l *cLib) has(group string) bool { return l.fn[group] != nil }

func (l *cLib) libVersion() (Version, Status) {
	var v C.hw_amdsmi_version_t
	st := Status(C.hw_version(l.fn["version"], &v))
	return decodeVersion([4]uint32{uint32(v.year), uint32(v.major), uint32(v.minor), uint32(v.release)}), st
}

func (l *cLib) init() Status { return Status(C.hw_init(l.fn["init"], initAMDGPUs)) }

// shutDown undoes init for a library that is not used after all.
func (l *cLib) shutDown() {
	if l.has("shutDown") {
		C.hw_call0(l.fn["shutDown"])
	}
}

// handles lists the GPU processor handles, socket by socket: each list is
// asked for its length first (a NULL array), then read.
func (l *cLib) handles() ([]C.amdsmi_handle, error) {
	var n C.uint32_t
	if st := Status(C.hw_sockets(l.fn["sockets"], &n, nil)); st != StatusSuccess {
		return nil, &CallError{Call: symbols["sockets"], Code: st}
	}
	if n == 0 {
		return nil, nil
	}
	n = min(n, maxSockets)
	sockets := make([]C.amdsmi_handle, n)
	if st := Status(C.hw_sockets(l.fn["sockets"], &n, &sockets[0])); st != StatusSuccess {
		return nil, &CallError{Call: symbols["sockets"], Code: st}
	}
	var out []C.amdsmi_handle
	for _, s := range sockets[:min(int(n), len(sockets))] {
		var m C.uint32_t
		if st := Status(C.hw_processors(l.fn["processors"], s, &m, nil)); st != StatusSuccess {
			return nil, &CallError{Call: symbols["processors"], Code: st}
		}
		if m == 0 {
			continue
		}
		m = min(m, maxProcessors)
		ps := make([]C.amdsmi_handle, m)
		if st := Status(C.hw_processors(l.fn["processors"], s, &m, &ps[0])); st != StatusSuccess {
			return nil, &CallError{Call: symbols["processors"], Code: st}
		}
		out = append(out, ps[:min(int(m), len(ps))]...)
		if len(out) >= maxProcessors {
			return out[:maxProcessors], nil
		}
	}
	return out, nil
}

// busID decodes amdsmi_bdf_t: function bits 0-2, device 3-7, bus 8-15,
// domain 16-63 (the bit-field order of the union on little-endian Linux).
func busID(bdf uint64) string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", bdf>>16, (bdf>>8)&0xff, (bdf>>3)&0x1f, bdf&7)
}

func (l *cLib) bdf(p C.amdsmi_handle) (string, Status) {
	var v C.uint64_t
	st := Status(C.hw_ptr(l.fn["bdf"], p, unsafe.Pointer(&v)))
	return busID(uint64(v)), st
}

func (l *cLib) memory(group string, p C.amdsmi_handle) (*uint64, Status) {
	if !l.has(group) {
		return nil, StatusFunctionNotFound
	}
	var v C.uint64_t
	st := Status(C.hw_mem(l.fn[group], p, memTypeVRAM, &v))
	if st != StatusSuccess {
		return nil, st
	}
	b := uint64(v)
	return &b, st
}

func (l *cLib) partition(group string, p C.amdsmi_handle) (string, Status) {
	if !l.has(group) {
		return "", StatusFunctionNotFound
	}
	var buf [32]C.char
	st := Status(C.hw_str(l.fn[group], p, &buf[0], C.uint32_t(len(buf)-1)))
	if st != StatusSuccess {
		return "", st
	}
	return C.GoString(&buf[0]), st
}

// link reads the link type, hops and weight between two processors; ok is
// false when the library answered none of them.
func (l *cLib) link(a, b C.amdsmi_handle, v Version, note func(string, Status) bool) (Link, bool) {
	lk := Link{Hops: -1, Weight: -1}
	ok := false
	if l.has("linkType") {
		var hops C.uint64_t
		var t C.int
		if note(symbols["linkType"], Status(C.hw_link_type(l.fn["linkType"], a, b, &hops, &t))) {
			lk.Type, ok = v.linkType(int(t)), true
			if hops < 1<<16 {
				lk.Hops = int(hops)
			}
		}
	}
	if l.has("linkWeight") {
		var w C.uint64_t
		if note(symbols["linkWeight"], Status(C.hw_weight(l.fn["linkWeight"], a, b, &w))) && w < 1<<16 {
			lk.Weight, ok = int(w), true
		}
	}
	return lk, ok
}

// readAll reads every GPU and the links between them. It runs on the
// worker goroutine only (see Library.Read).
func (l *cLib) readAll(v Version) (*Snapshot, error) {
	hs, err := l.handles()
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Version: v}
	for i, h := range hs {
		s.Processors = append(s.Processors, l.readProcessor(i, h, v, &s.Refused))
	}
	for a := range hs {
		for b := a + 1; b < len(hs); b++ {
			note := func(call string, st Status) bool {
				if st != StatusSuccess && !st.unknown() {
					s.Refused = append(s.Refused, fmt.Sprintf("processors %d and %d: %s: %v", a, b, call, st))
				}
				return st == StatusSuccess
			}
			if lk, ok := l.link(hs[a], hs[b], v, note); ok {
				if s.Links == nil {
					s.Links = map[[2]int]Link{}
				}
				s.Links[[2]int{a, b}] = lk
			}
		}
	}
	return s, nil
}

func (l *cLib) readProcessor(i int, h C.amdsmi_handle, v Version, refused *[]string) Processor {
	p := Processor{Index: i}
	note := func(call string, st Status) bool {
		if st != StatusSuccess && !st.unknown() {
			*refused = append(*refused, fmt.Sprintf("processor %d: %s: %v", i, call, st))
		}
		return st == StatusSuccess
	}
	if bus, st := l.bdf(h); note(symbols["bdf"], st) {
		p.BusID = bus
	}
	if a, st := l.asic(h, v); note(symbols["asic"], st) {
		p.MarketName, p.VendorID, p.DeviceID = a.marketName, a.vendorID, a.deviceID
		// 0xFFFFFFFFFFFFFFFF: not supported (amdsmi.h).
		if g := a.targetGfx; v.hasTargetGfx() && g != 0 && g < 1<<32 {
			p.TargetGfxVersion = g
		}
	}
	if b, st := l.memory("memTotal", h); note(symbols["memTotal"], st) {
		p.VRAMTotal = b
	}
	if b, st := l.memory("memUsage", h); note(symbols["memUsage"], st) {
		p.VRAMUsed = b
	}
	if l.has("numa") {
		var n C.uint32_t
		if note(symbols["numa"], Status(C.hw_ptr(l.fn["numa"], h, unsafe.Pointer(&n)))) && n < 1<<16 {
			node := int(n)
			p.NUMANode = &node
		}
	}
	if s, st := l.partition("computePartition", h); note(symbols["computePartition"], st) {
		p.ComputePartition = s
	}
	if s, st := l.partition("memoryPartition", h); note(symbols["memoryPartition"], st) {
		p.MemoryPartition = s
	}
	return p
}

// asicInfo is what is read of amdsmi_asic_info_t, whichever its layout.
type asicInfo struct {
	marketName         string
	vendorID, deviceID uint32
	targetGfx          uint64
}

// asic reads amdsmi_get_gpu_asic_info into the struct of v's layout.
func (l *cLib) asic(h C.amdsmi_handle, v Version) (asicInfo, Status) {
	if v.wideAsicInfo() {
		var info C.hw_amdsmi_asic_info_wide_t
		st := Status(C.hw_ptr(l.fn["asic"], h, unsafe.Pointer(&info)))
		return asicInfo{C.GoStringN(&info.market_name[0], C.int(cStrLen(info.market_name[:]))),
			uint32(info.vendor_id), uint32(info.device_id), uint64(info.target_graphics_version)}, st
	}
	var info C.hw_amdsmi_asic_info_t
	st := Status(C.hw_ptr(l.fn["asic"], h, unsafe.Pointer(&info)))
	return asicInfo{C.GoStringN(&info.market_name[0], C.int(cStrLen(info.market_name[:]))),
		uint32(info.vendor_id), uint32(info.device_id), uint64(info.target_graphics_version)}, st
}

// structLayout is where a struct declared above holds the members read,
// and how many bytes it hands the library; the tests compare it with the
// headers' figures.
type structLayout struct {
	offsets map[string]uintptr
	size    uintptr
}

// asicLayout is the amdsmi_asic_info_t read for v.
func asicLayout(v Version) structLayout {
	if v.wideAsicInfo() {
		var s C.hw_amdsmi_asic_info_wide_t
		return structLayout{map[string]uintptr{"market_name": unsafe.Offsetof(s.market_name),
			"vendor_id": unsafe.Offsetof(s.vendor_id), "device_id": unsafe.Offsetof(s.device_id),
			"target_graphics_version": unsafe.Offsetof(s.target_graphics_version)}, unsafe.Sizeof(s)}
	}
	var s C.hw_amdsmi_asic_info_t
	return structLayout{map[string]uintptr{"market_name": unsafe.Offsetof(s.market_name),
		"vendor_id": unsafe.Offsetof(s.vendor_id), "device_id": unsafe.Offsetof(s.device_id),
		"target_graphics_version": unsafe.Offsetof(s.target_graphics_version)}, unsafe.Sizeof(s)}
}

// versionLayout is the amdsmi_version_t every version is read into.
func versionLayout() structLayout {
	var s C.hw_amdsmi_version_t
	return structLayout{map[string]uintptr{"year": unsafe.Offsetof(s.year), "major": unsafe.Offsetof(s.major),
		"minor": unsafe.Offsetof(s.minor), "release": unsafe.Offsetof(s.release), "build": unsafe.Offsetof(s.build)},
		unsafe.Sizeof(s)}
}

// cStrLen is the length of a NUL-terminated string in a fixed buffer, or
// the buffer's length when it holds no NUL.
func cStrLen(b []C.char) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}
