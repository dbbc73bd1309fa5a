// Package amdsmi reads AMD GPUs in-process through AMD SMI (libamd_smi.so,
// the library of ROCm 6 and later that amd-smi is built on), loaded with
// dlopen at run time: the build needs no ROCm header or library, and a
// machine without ROCm simply has no library to load (the caller then asks
// rocm-smi, or keeps what sysfs gave).
//
// Three header families are read, each from declarations checked for every
// struct, enum and prototype used here:
//
//   - 24.6 and 24.7 (ROCm 6.2, 6.3): include/amd_smi/amdsmi.h of
//     https://github.com/ROCm/amdsmi at commit
//     0ceca28f4139dced5e9b5739a3f393780d7add48 (24.7), whose struct layouts
//     are the same as those of tag rocm-6.2.0 (24.6) for every struct read
//     here but amdsmi_asic_info_t, which gained target_graphics_version in
//     24.7 at the end of its used part (so a 24.6 library leaves it unread).
//     ROCm 6.3.0 to 6.3.3 ship 24.7.1 (RELEASE.md of https://github.com/ROCm/ROCm
//     on the documentation branch of each of these releases).
//   - 25.3, 25.4 and 25.5 (ROCm 6.4.0 to 6.4.4): no copy of the 25.x header
//     was at hand, so the layouts are those of the ctypes declarations that
//     ROCm/amdsmi generates from the header with clang (update_wrapper.sh,
//     py-interface/amdsmi_wrapper.py; every padding byte spelled out) in
//     each release, as https://github.com/ml-energy/amdsmi republished them
//     in py-interface/amdsmi/amdsmi_wrapper.py at
//     c3c378e7f6d694a3bd3c5e928bc69d709f89697f (6.4.0),
//     a645e6f4c9fcb856a939626e1a865eebc1605fc7 (6.4.1),
//     e4a639aaa84519ff0dabd01f1878061ee1205a87 (6.4.2; 6.4.3 and 6.4.4, at
//     21f5d08b5ab7ed67187aad3c8981400488a638ad and
//     eba4c0cc4c7e54be1d5de8694edb37f944f468b8, declare the same). Their
//     amdsmi_version_t (with year), amdsmi_bdf_t, amdsmi_memory_type_t,
//     amdsmi_io_link_type_t and prototypes are those of ROCm 6.3.3's (24.7.1,
//     at 5aa2a4834a7fb59b4ac3bdec9853ebbed70aa2d6); amdsmi_asic_info_t
//     has 26.x's 256-byte vendor_name and asic_serial (so device_id and
//     target_graphics_version move to 520 and 800) and ends in reserved[22]
//     (sizeof 896). The version numbers are those of the ROCm 6.4.0
//     changelog ("AMD SMI (25.3.0)", CHANGELOG.md of ROCm/ROCm), the ROCm
//     6.4.1 release notes of 2025-05-07 ("AMD SMI (25.4.2)",
//     https://rocm.docs.amd.com/en/latest/about/release-notes.html then) and
//     AMDSMI_LIB_VERSION_YEAR 25, _MAJOR 25, _MINOR 5, _RELEASE 1 of the
//     6.4.2 header (amd-smi-wrapper-sys/src/versions/v6_4_2.rs of
//     https://github.com/alumet-dev/amd-smi-wrapper at
//     a9cb32a6c0254431ffd4dab75385e1626f059201, bindgen's layout checks of
//     it agreeing with the above; its v6_4_0.rs, at
//     6dad086064c325aa2f17b1a83588fb333f1a7cb1, gives 25, 25, 3, 0).
//     Only these minors are read: the header's rule lets a minor change the
//     API without changing the header, but no header of another 25 minor
//     was at hand.
//   - 26.x (ROCm 7): projects/amdsmi/include/amd_smi/amdsmi.h of
//     https://github.com/ROCm/rocm-systems at commit
//     a881068735de99de46183f9a0a37ef0ba5f89de6 (26.2.1) for amdsmi_version_t,
//     amdsmi_asic_info_t, amdsmi_bdf_t, amdsmi_memory_type_t and
//     amdsmi_link_type_t, checked against two other public copies of that
//     file, of 26.1.0 and of 26.5.0 (commits not known here); the prototypes
//     and AMDSMI_INIT_AMD_GPUS were read in the 26.5.0 copy, and are those
//     of 24.7 but for amdsmi_topo_get_link_type's type, now an
//     amdsmi_link_type_t (see linkType26). ROCm 7.0's AMD SMI 26.0.0
//     removed the year member of amdsmi_version_t and replaced
//     amdsmi_io_link_type_t by amdsmi_link_type_t (CHANGELOG.md of
//     https://github.com/ROCm/ROCm, "AMD SMI (26.0.0)"). In 26.x
//     AMDSMI_MAX_STRING_LENGTH is 256, so vendor_name and asic_serial of
//     amdsmi_asic_info_t are 256 bytes, followed by subsystem_id, then flags
//     (26.2.1, 26.5.0), and a reserved tail whose length differs by minor
//     (sizeof 896 in 26.1.0 and 26.5.0, 904 in 26.2.1). The header's own
//     rule is that the major changes "for every header change that breaks
//     ABI" and the minor "for each API change, but without changing
//     headers": every 26 minor is read with one layout (no 26.0 header was
//     at hand), and the buffer handed to amdsmi_get_gpu_asic_info is larger
//     than any of them.
//
// amdsmi_get_lib_version is asked right after amdsmi_init (it answers
// AMDSMI_STATUS_NOT_INIT before: AMDSMI_CHECK_INIT in
// src/amd_smi/amd_smi.cc), before any struct is read. Both version structs
// are 24 bytes with the build string pointer at offset 16, so the answer is
// read into the 24.x struct and told apart by its first words (see
// decodeVersion); a library of any other version is shut down again and
// not used (its structs may be laid out otherwise: amdsmi_asic_info_t's
// market_name went from 64 to 256 bytes between 24.5 and 24.6).
//
// The library is loaded and initialised once per process and path, and
// never shut down (amdsmi_shut_down would cost the next detection another
// amdsmi_init). Every call runs on one worker goroutine locked to its OS
// thread, one read at a time; the caller waits only until its context ends.
// A read still running then (a driver that hangs in a call) is abandoned:
// its thread stays blocked, the library is marked hung, and every later
// Read fails at once with ErrHung, so a broken driver costs at most one
// detection timeout and one thread per process (the design of package
// internal/detect/nvidia/nvml).
package amdsmi

import (
	"context"
	"errors"
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vendorlib"
)

// DefaultLibrary is the unversioned name of AMD SMI in ROCm's lib
// directory (the 24.x library has soname libamd_smi.so.24); dlopen finds
// it where the dynamic loader's path holds that directory (ld.so.conf,
// LD_LIBRARY_PATH).
const DefaultLibrary = "libamd_smi.so"

// Errors of Open and Read; each means "ask rocm-smi instead".
var (
	ErrUnavailable = errors.New("amdsmi: not available in this build (needs cgo on Linux)")
	ErrUnsupported = errors.New("amdsmi: unsupported library version")
	ErrHung        = errors.New("amdsmi: an earlier call never returned; AMD SMI is no longer used in this process")
)

// Supported lists the library versions whose struct layouts this package
// reads: 24.6 (ROCm 6.2) and 24.7 (ROCm 6.3), by year and major of
// amdsmi_version_t; 25.3, 25.4 and 25.5 (ROCm 6.4), by major and minor,
// the only 25 minors whose declarations were at hand; and every 26.x (ROCm
// 7), by major. 25.x and 26.x are numbered without year.
var Supported = []Version{{Year: 24, Major: 6}, {Year: 24, Major: 7},
	{Major: 25, Minor: 3}, {Major: 25, Minor: 4}, {Major: 25, Minor: 5}, {Major: 26}}

// Status is an amdsmi_status_t.
type Status int

// The amdsmi_status_t values this package tells apart (amdsmi.h).
const (
	StatusSuccess         Status = 0
	StatusInval           Status = 1
	StatusNotSupported    Status = 2
	StatusNotYetImpl      Status = 3
	StatusNoPerm          Status = 10
	StatusInitError       Status = 18
	StatusNotFound        Status = 31
	StatusNotInit         Status = 32
	StatusDriverNotLoaded Status = 34
	StatusNoData          Status = 40
	StatusInsufficient    Status = 41
	// StatusFunctionNotFound is not AMD SMI's: it stands for an entry point
	// the library lacks.
	StatusFunctionNotFound Status = -1
)

var statusNames = map[Status]string{
	StatusSuccess: "AMDSMI_STATUS_SUCCESS", StatusInval: "AMDSMI_STATUS_INVAL",
	StatusNotSupported: "AMDSMI_STATUS_NOT_SUPPORTED", StatusNotYetImpl: "AMDSMI_STATUS_NOT_YET_IMPLEMENTED",
	StatusNoPerm: "AMDSMI_STATUS_NO_PERM", StatusInitError: "AMDSMI_STATUS_INIT_ERROR",
	StatusNotFound: "AMDSMI_STATUS_NOT_FOUND", StatusNotInit: "AMDSMI_STATUS_NOT_INIT",
	StatusDriverNotLoaded: "AMDSMI_STATUS_DRIVER_NOT_LOADED", StatusNoData: "AMDSMI_STATUS_NO_DATA",
	StatusInsufficient: "AMDSMI_STATUS_INSUFFICIENT_SIZE", StatusFunctionNotFound: "no such entry point",
}

// String is the status's name in amdsmi.h, or its number.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("amdsmi status %d", int(s))
}

// unknown reports whether s means "no value" rather than a refusal.
func (s Status) unknown() bool {
	return s == StatusNotSupported || s == StatusNotYetImpl || s == StatusFunctionNotFound || s == StatusNoData
}

// CallError is an AMD SMI call that did not succeed.
type CallError struct {
	Call string
	Code Status
}

// Error names the call and the status.
func (e *CallError) Error() string { return e.Call + ": " + e.Code.String() }

// Version is amdsmi_version_t without its build string. Year is 0 for 25.x
// and later, numbered without year since ROCm 6.4 ("25.3.0"; the ROCm
// 6.4.0 changelog), 26.0 having removed the year member too.
type Version struct{ Year, Major, Minor, Release uint32 }

// String is the version as amd-smi prints it: "24.7.0.0", and "25.3.0" or
// "26.2.1" for a library numbered without year.
func (v Version) String() string {
	if v.Year == 0 {
		return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Release)
	}
	return fmt.Sprintf("%d.%d.%d.%d", v.Year, v.Major, v.Minor, v.Release)
}

// family is the version's Supported entry as the refusal names it: "24.7",
// "25.3" for a 25 minor, or "26.x" for a major read whatever its minor.
func (v Version) family() string {
	switch {
	case v.byMinor():
		return fmt.Sprintf("%d.%d", v.Major, v.Minor)
	case v.Year == 0:
		return fmt.Sprintf("%d.x", v.Major)
	}
	return fmt.Sprintf("%d.%d", v.Year, v.Major)
}

// byMinor reports whether v's major is read only for the minors in
// Supported: 25, whose header was at hand for three minors only.
func (v Version) byMinor() bool { return v.Year == 0 && v.Major == majorWithoutYearNumber }

// supported reports whether v's layouts are Supported's.
func (v Version) supported() bool {
	for _, s := range Supported {
		if s.Year == v.Year && s.Major == v.Major && (!v.byMinor() || s.Minor == v.Minor) {
			return true
		}
	}
	return false
}

// hasTargetGfx reports whether amdsmi_asic_info_t has
// target_graphics_version (24.7 and later).
func (v Version) hasTargetGfx() bool {
	return v.Year == 0 || v.Year > 24 || v.Year == 24 && v.Major >= 7
}

// wideAsicInfo reports whether v fills the amdsmi_asic_info_t of 256-byte
// vendor_name and asic_serial (25.x and 26.x), not 24.x's of 64 and 32.
func (v Version) wideAsicInfo() bool { return v.Year == 0 }

// answersLinkType26 reports whether v's amdsmi_topo_get_link_type answers
// amdsmi_link_type_t (26.x), not amdsmi_io_link_type_t (24.x, 25.x).
func (v Version) answersLinkType26() bool { return v.Year == 0 && v.Major >= firstMajorWithoutYear }

// firstMajorWithoutYear is the first major whose amdsmi_version_t has no
// year (26.0.0, ROCm 7.0; ROCm CHANGELOG.md, "AMD SMI (26.0.0)").
const firstMajorWithoutYear = 26

// majorWithoutYearNumber is the major of the libraries numbered without
// year whose amdsmi_version_t still has one (25.x, ROCm 6.4: major and
// year both 25 in the header).
const majorWithoutYearNumber = 25

// decodeVersion reads what amdsmi_get_lib_version wrote into the 24.x
// struct {year, major, minor, release, build}. A 26.x library writes
// {major, minor, release, build} into the same 24 bytes: its major lands
// in year, its minor in major, its release in minor, and release holds
// padding, which is not read. The year of the struct with a year was 23
// (tags rocm-5.6.0 to rocm-6.0.2 of ROCm/amdsmi) or 24 (rocm-6.1.0 to
// rocm-6.2.2, and 24.7), then 25 until 26.0.0 removed it; the majors of
// the struct without a year start at 26. So a first word of 26 or more is
// the struct without a year, and the rest the struct with one. In that
// struct a major of 25 is 25.x (the ROCm 6.4 header: year 25, major 25),
// numbered without year; whether 25.x still writes the year, which 26.0.0
// calls an unused member, was not seen, so a year left as the caller's
// zero is 25.x too.
func decodeVersion(word [4]uint32) Version {
	switch {
	case word[0] >= firstMajorWithoutYear:
		return Version{Major: word[0], Minor: word[1], Release: word[2]}
	case word[1] == majorWithoutYearNumber && (word[0] == majorWithoutYearNumber || word[0] == 0):
		return Version{Major: word[1], Minor: word[2], Release: word[3]}
	}
	return Version{Year: word[0], Major: word[1], Minor: word[2], Release: word[3]}
}

// Snapshot is what one Read saw.
type Snapshot struct {
	Version Version
	// Processors are the GPUs in the order of amdsmi_get_socket_handles
	// and amdsmi_get_processor_handles (amd-smi's GPU index).
	Processors []Processor
	// Links is amdsmi_topo_get_link_type and _link_weight of every pair
	// of processors, keyed by their indices {a, b} with a < b; a pair the
	// library did not answer for is absent.
	Links map[[2]int]Link
	// Refused lists the calls the library answered with an error other
	// than "not supported" (a missing entry point is not one).
	Refused []string
}

// Processor is one GPU processor handle; zero values and nil pointers are
// what AMD SMI did not give.
type Processor struct {
	Index int
	// BusID is amdsmi_get_gpu_device_bdf as "0000:05:00.0"; a compute
	// partition's handle has the partition number as its function
	// (ROCm/amdsmi issue 132, https://github.com/ROCm/amdsmi/issues/132).
	BusID      string
	MarketName string
	VendorID   uint32
	DeviceID   uint32
	// TargetGfxVersion is amdsmi_asic_info_t.target_graphics_version, the
	// number rocm-smi prints after "gfx" (942; 9010 for gfx90a); 0 unknown.
	TargetGfxVersion uint64
	// VRAMTotal and VRAMUsed are amdsmi_get_gpu_memory_total and _usage of
	// AMDSMI_MEM_TYPE_VRAM, bytes.
	VRAMTotal, VRAMUsed *uint64
	NUMANode            *int
	// ComputePartition and MemoryPartition are amdsmi_get_gpu_compute_partition
	// and _memory_partition ("CPX", "NPS1"); "" unknown.
	ComputePartition, MemoryPartition string
}

// Link is the connection between two processors.
type Link struct {
	// Type is the link type in amdsmi_io_link_type_t's numbering (see
	// linkType26 for the 26.x libraries).
	Type IOLinkType
	// Hops and Weight are -1 when unknown.
	Hops, Weight int
}

// IOLinkType is amdsmi_io_link_type_t, what amdsmi_topo_get_link_type
// answers in 24.x and 25.x.
type IOLinkType int

// The amdsmi_io_link_type_t values.
const (
	IOLinkUndefined IOLinkType = 0
	IOLinkPCIe      IOLinkType = 1
	IOLinkXGMI      IOLinkType = 2
)

// The amdsmi_link_type_t values amdsmi_topo_get_link_type answers in 26.x
// (26.1.0, 26.2.1 and 26.5.0 headers alike): INTERNAL 0, PCIE 1, XGMI 2,
// NOT_APPLICABLE 3, UNKNOWN 4, and in 26.5 NUMA 5 and XNUMA 6 (NIC to GPU
// only). 24.x had an amdsmi_link_type_t too, for amdsmi_link_metrics_t, in
// other orders: INTERNAL 0, XGMI 1, PCIE 2 in 24.7, PCIE 0, XGMI 1 in 24.6;
// the 26.0.0 changelog's "ordering of the PCI and XGMI types". PCIe and
// XGMI keep amdsmi_io_link_type_t's numbers in 26.x, the other values do
// not, so a 26.x answer is mapped by name (linkType26), never taken for
// either 24.x enum.
const (
	linkType26PCIe = 1
	linkType26XGMI = 2
)

// linkType26 maps a 26.x amdsmi_link_type_t to the link types read here:
// PCIe and XGMI; the other values (within the chip, not applicable,
// unknown, NIC paths) say nothing about a GPU pair's link.
func linkType26(t int) IOLinkType {
	switch t {
	case linkType26PCIe:
		return IOLinkPCIe
	case linkType26XGMI:
		return IOLinkXGMI
	}
	return IOLinkUndefined
}

// linkType maps what amdsmi_topo_get_link_type answered to IOLinkType for
// a library of version v; 24.x's and 25.x's answer is an
// amdsmi_io_link_type_t already.
func (v Version) linkType(t int) IOLinkType {
	if v.answersLinkType26() {
		return linkType26(t)
	}
	return IOLinkType(t)
}

// String is the link type as rocm-smi's link-type matrix prints it
// ("XGMI", "PCIE"), "" for undefined.
func (t IOLinkType) String() string {
	switch t {
	case IOLinkPCIe:
		return "PCIE"
	case IOLinkXGMI:
		return "XGMI"
	}
	return ""
}

// Library is one loaded and initialised AMD SMI.
type Library struct {
	path    string
	version Version
	thread  *vendorlib.Thread[*Snapshot]
}

// libs are the libraries opened in this process, by path.
var libs = vendorlib.Loader[*Library]{Default: DefaultLibrary, Load: load, Hung: ErrHung}

// Open returns the AMD SMI at path ("" for DefaultLibrary), loading,
// initialising (amdsmi_init(AMDSMI_INIT_AMD_GPUS)) and version checking it on first
// use in the process, bounded by ctx: a load or init that does not return in
// time is abandoned (ErrHung, now and on every later Open of that path). A
// library that is absent, lacks an entry point this package needs, is of a
// version not Supported (ErrUnsupported) or fails amdsmi_init gives an
// error; the error is remembered too.
func Open(ctx context.Context, path string) (*Library, error) {
	return libs.Open(ctx, path)
}

// session is a loaded library and its version, as its thread reads it.
type session struct {
	c *cLib
	v Version
}

// load dlopens path, resolves its symbols, runs amdsmi_init and checks the
// library's version, on a thread that then serves every read of the library.
func load(path string) (*Library, error) {
	s, t, err := vendorlib.Start(path, ErrHung, func() (session, error) {
		c, err := openC(path)
		if err != nil {
			return session{}, err
		}
		if st := c.init(); st != StatusSuccess {
			return session{}, fmt.Errorf("%s: %w", path, &CallError{Call: "amdsmi_init", Code: st})
		}
		v, st := c.libVersion()
		if st != StatusSuccess {
			c.shutDown()
			return session{}, fmt.Errorf("%s: %w", path, &CallError{Call: "amdsmi_get_lib_version", Code: st})
		}
		if !v.supported() {
			c.shutDown()
			return session{}, fmt.Errorf("%w: %s is version %s; this build reads %s", ErrUnsupported, path, v, supportedList())
		}
		return session{c, v}, nil
	}, func(s session) (*Snapshot, error) { return s.c.readAll(s.v) })
	if err != nil {
		return nil, err
	}
	return &Library{path: path, version: s.v, thread: t}, nil
}

// supportedList names the Supported versions ("24.6, 24.7, 25.3, 25.4,
// 25.5, 26.x").
func supportedList() string {
	s := ""
	for i, v := range Supported {
		if i > 0 {
			s += ", "
		}
		s += v.family()
	}
	return s
}

// Read reads every GPU, waiting at most until ctx ends. A read that
// outlives ctx marks the library hung (see the package comment).
func (l *Library) Read(ctx context.Context) (*Snapshot, error) { return l.thread.Call(ctx) }

// Path is the library's path as opened.
func (l *Library) Path() string { return l.path }

// Version is the library's amdsmi_get_lib_version.
func (l *Library) Version() Version { return l.version }
