// Package nvml reads NVIDIA GPUs in-process through NVML
// (libnvidia-ml.so.1), loaded with dlopen at run time: the build needs no
// NVIDIA header or library, and a machine without the driver simply has no
// library to load (the caller then asks nvidia-smi).
//
// The library is loaded and nvmlInit'ed once per process and path, and never
// shut down (nvmlShutdown would cost the next detection another init,
// 13.8 ms on an H200: shared/machines/h200-vm/nvml.json). Reads run one at
// a time on a worker goroutine locked to its OS thread (the one that loaded
// the library); a read of several GPUs reads up to eight of them at once,
// from that thread and helper goroutines (readDevices: NVML is thread-safe),
// each GPU's calls one after another. The caller waits for a read only
// until its context ends. A read still running then (a driver that hangs in
// an NVML call) is abandoned: its threads stay blocked in the driver, the
// library is marked hung, and every later Read fails at once with ErrHung,
// so a broken driver costs at most one detection timeout and eight threads
// per process.
//
// What a GPU cannot change while it exists (its maximum clocks, maximum PCIe
// link and MIG device count) is read once per library and GPU, the GPU known
// by its UUID and PCI bus id, and reused by later Reads; everything else is
// read on every Read (fixed.go says which facts and why).
package nvml

import (
	"context"
	"errors"
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vendorlib"
)

// DefaultLibrary is the name the NVIDIA driver installs NVML under (the
// soname; the unversioned libnvidia-ml.so comes only with development
// packages).
const DefaultLibrary = "libnvidia-ml.so.1"

// Errors of Open and Read; each means "ask nvidia-smi instead".
var (
	ErrUnavailable = errors.New("nvml: not available in this build (needs cgo on Linux)")
	ErrUnsupported = errors.New("nvml: unsupported library version")
	ErrHung        = errors.New("nvml: an earlier call never returned; NVML is no longer used in this process")
)

// Return is an nvmlReturn_t.
type Return int

// The nvmlReturn_t values this package tells apart (NVML API reference,
// "Error reporting").
const (
	Success                      Return = 0
	ErrorUninitialized           Return = 1
	ErrorNotSupported            Return = 3
	ErrorNoPermission            Return = 4
	ErrorNotFound                Return = 6
	ErrorInsufficientSize        Return = 7
	ErrorDriverNotLoaded         Return = 9
	ErrorLibraryNotFound         Return = 12
	ErrorFunctionNotFound        Return = 13
	ErrorGPUIsLost               Return = 15
	ErrorLibRMVersionMismatch    Return = 18
	ErrorArgumentVersionMismatch Return = 25
	ErrorUnknown                 Return = 999
)

var returnNames = map[Return]string{
	Success: "Success", ErrorUninitialized: "Uninitialized", ErrorNotSupported: "Not Supported",
	ErrorNoPermission: "Insufficient Permissions", ErrorDriverNotLoaded: "Driver Not Loaded",
	ErrorLibraryNotFound: "Library Not Found", ErrorFunctionNotFound: "Function Not Found",
	ErrorGPUIsLost: "GPU is lost", ErrorLibRMVersionMismatch: "Driver/library version mismatch",
	ErrorInsufficientSize: "Insufficient Size", ErrorNotFound: "Not Found", ErrorArgumentVersionMismatch: "Argument version mismatch",
	ErrorUnknown: "Unknown Error",
}

// String is NVML's name of r (nvmlErrorString's text), or its number.
func (r Return) String() string {
	if s, ok := returnNames[r]; ok {
		return s
	}
	return fmt.Sprintf("NVML error %d", int(r))
}

// Err is r as the error of call; nil on Success.
func (r Return) Err(call string) error {
	if r == Success {
		return nil
	}
	return &CallError{Call: call, Code: r}
}

// CallError is an NVML call that did not succeed.
type CallError struct {
	Call string
	Code Return
}

// Error names the call and NVML's error.
func (e *CallError) Error() string { return e.Call + ": " + e.Code.String() }

// Snapshot is what one Read saw.
type Snapshot struct {
	DriverVersion     string
	NVMLVersion       string
	CUDADriverVersion int // 13000 for CUDA 13.0
	Devices           []Device
	// Topology is nvmlDeviceGetTopologyCommonAncestor of every pair of
	// devices, keyed by their indices {a, b} with a < b; a pair the driver
	// did not answer for is absent.
	Topology map[[2]int]TopologyLevel
	// Refused lists the calls the driver answered with an error other
	// than NotSupported (a missing entry point is not one).
	Refused []string
}

// Device is one GPU as NVML reports it; nil pointers are values NVML did
// not give (NotSupported, or an entry point the library lacks).
type Device struct {
	Index   int
	Name    string
	UUID    string
	PCI     PCI
	Memory  *Memory
	CCMajor int
	CCMinor int
	MIG     *MIGMode

	UtilizationPercent   *uint32
	PowerMilliwatts      *uint32
	PowerLimitMilliwatts *uint32
	TemperatureC         *uint32

	// Processes hold memory on the GPU (compute processes);
	// ProcessesKnown tells an empty list from an unknown one.
	Processes      []Process
	ProcessesKnown bool

	ECCEnabled             *bool
	ECCUncorrectedVolatile *uint64
	RemappedRows           *RemappedRows
	// ClocksEventReasons is the nvmlClocksEventReasons bit mask (formerly
	// throttle reasons).
	ClocksEventReasons *uint64

	MaxClockSMMHz, MaxClockMemoryMHz uint32
	PCIeGen, PCIeGenMax              uint32
	PCIeWidth, PCIeWidthMax          uint32
	NUMANode                         *int
	// NVLinks are the GPU's NVLinks in link order; empty when it has
	// none or the driver does not say.
	NVLinks []NVLink
	// NVLinkSpeedMBps is the speed of each active NVLink in one
	// direction, MB/s (NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON; nvidia-smi
	// nvlink -s prints it in GB/s); 0 when NVML gives none.
	NVLinkSpeedMBps uint32
	// MIGDevices are the MIG devices of a GPU in MIG mode, in
	// nvmlDeviceGetMigDeviceHandleByIndex order (the "Device N" of
	// `nvidia-smi -L`); MIGDevicesKnown tells none from unread.
	MIGDevices      []MIGDevice
	MIGDevicesKnown bool
}

// NVLink is one NVLink of a GPU: nvmlDeviceGetNvLinkState, -Version,
// -RemotePciInfo and -RemoteDeviceType for that link.
type NVLink struct {
	Link   int
	Active bool
	// Version is nvmlNvlinkVersion_t (NVLinkVersion...); 0 when unknown.
	Version uint32
	// RemoteBusID is the PCI bus id of the device at the link's other end
	// as NVML prints it ("00000000:05:00.0"); "" when unknown.
	RemoteBusID string
	// RemoteType is nvmlIntNvLinkDeviceType_t (NVLinkRemote...).
	RemoteType NVLinkRemoteType
}

// NVLinkRemoteType is what is at a link's other end
// (nvmlIntNvLinkDeviceType_t in the NVML API reference).
type NVLinkRemoteType int

// The nvmlIntNvLinkDeviceType_t values.
const (
	NVLinkRemoteGPU     NVLinkRemoteType = 0x00
	NVLinkRemoteIBMNPU  NVLinkRemoteType = 0x01
	NVLinkRemoteSwitch  NVLinkRemoteType = 0x02
	NVLinkRemoteUnknown NVLinkRemoteType = 0xFF
)

// The nvmlNvlinkVersion_t values (NVML API reference, "NvLink";
// https://github.com/NVIDIA/go-nvml gen/nvml/nvml.h): the enum counts
// versions, it is not the version number.
const (
	NVLinkVersion1_0 uint32 = 1
	NVLinkVersion2_0 uint32 = 2
	NVLinkVersion2_2 uint32 = 3
	NVLinkVersion3_0 uint32 = 4
	NVLinkVersion3_1 uint32 = 5
	NVLinkVersion4_0 uint32 = 6
	NVLinkVersion5_0 uint32 = 7
)

// TopologyLevel is nvmlGpuTopologyLevel_t: the closest common ancestor of
// two GPUs on the PCIe tree.
type TopologyLevel int

// The nvmlGpuTopologyLevel_t values.
const (
	TopologyInternal   TopologyLevel = 0  // one board (Tesla K80)
	TopologySingle     TopologyLevel = 10 // one PCIe switch
	TopologyMultiple   TopologyLevel = 20 // several switches, no host bridge
	TopologyHostBridge TopologyLevel = 30 // the same host bridge
	TopologyNode       TopologyLevel = 40 // the same NUMA node
	TopologySystem     TopologyLevel = 50 // across NUMA nodes
)

// MIGDevice is one MIG device (a compute instance of a GPU instance).
type MIGDevice struct {
	Index int
	// Name is nvmlDeviceGetName of the MIG handle ("NVIDIA H100 80GB HBM3
	// MIG 1g.10gb").
	Name string
	UUID string
	// GPUInstance and ComputeInstance are the instance ids; -1 unknown.
	GPUInstance, ComputeInstance int
	Memory                       *Memory
}

// PCI is nvmlPciInfo_t: BusID as NVML prints it ("00000000:00:06.0") and
// DeviceID as device<<16 | vendor (0x233510DE for 10de:2335).
type PCI struct {
	BusID                 string
	Domain, Bus, Device   uint32
	DeviceID, SubsystemID uint32
}

// Memory is a GPU's framebuffer in bytes. With nvmlDeviceGetMemoryInfo_v2
// (HasReserved) Reserved is what the driver keeps and Used excludes it; with
// the first entry point Used includes it.
type Memory struct {
	Total, Reserved, Free, Used uint64
	HasReserved                 bool
}

// MIGMode is nvmlDeviceGetMigMode's current and pending mode.
type MIGMode struct{ Current, Pending bool }

// Process is one compute process and the GPU memory it holds.
type Process struct {
	PID       int
	UsedBytes uint64
}

// RemappedRows is nvmlDeviceGetRemappedRows.
type RemappedRows struct {
	Correctable, Uncorrectable uint32
	Pending, Failure           bool
}

// Library is one loaded and initialised NVML.
type Library struct {
	path   string
	lib    *cLib
	thread *vendorlib.Thread[*Snapshot]
}

// libs are the libraries opened in this process, by path.
var libs = vendorlib.Loader[*Library]{Default: DefaultLibrary, Load: load, Hung: ErrHung}

// Open returns the NVML at path ("" for DefaultLibrary), loading and
// initialising it on first use in the process, bounded by ctx: a load or
// nvmlInit that does not return in time is abandoned (ErrHung, now and on
// every later Open of that path). A library that is absent, lacks an entry
// point this package needs, or fails nvmlInit (no driver, driver/library
// version mismatch) gives an error; the error is remembered too.
func Open(ctx context.Context, path string) (*Library, error) {
	return libs.Open(ctx, path)
}

// Start begins loading and initialising the NVML at path ("" for
// DefaultLibrary) in the background, as Open would, and returns at once: a
// caller that knows early that it will Open path starts the load there, so
// that nvmlInit (12.5 ms on an H200) runs while it does other work. The
// later Open waits for that load, bounded by its context as always.
func Start(path string) { libs.Start(path) }

// load dlopens path, resolves its symbols and runs nvmlInit, on a thread
// that then serves every read of the library.
func load(path string) (*Library, error) {
	c, t, err := vendorlib.Start(path, ErrHung, func() (*cLib, error) {
		c, err := openC(path)
		if err != nil {
			return nil, err
		}
		if r := c.init(); r != Success {
			return nil, fmt.Errorf("%s: %w", path, r.Err(c.names["init"]))
		}
		return c, nil
	}, (*cLib).readAll)
	if err != nil {
		return nil, err
	}
	return &Library{path: path, lib: c, thread: t}, nil
}

// Read reads every device, waiting at most until ctx ends. A read that
// outlives ctx marks the library hung (see the package comment).
func (l *Library) Read(ctx context.Context) (*Snapshot, error) { return l.thread.Call(ctx) }

// Path is the library's path as opened.
func (l *Library) Path() string { return l.path }

// Symbol is the entry point resolved for a group of calls ("memoryV2",
// "init"), "" when the library has none; for tests and diagnostics.
func (l *Library) Symbol(group string) string { return l.lib.names[group] }
