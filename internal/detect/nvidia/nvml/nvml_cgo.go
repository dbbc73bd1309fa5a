//go:build linux && cgo

package nvml

/*
#include <stdlib.h>

// The few NVML types this package reads, declared from the public NVML API
// reference (https://docs.nvidia.com/deploy/nvml-api/), so that the build
// needs no NVIDIA header or library. Every function is resolved with dlsym
// at run time and called through a pointer.
typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;

typedef struct { unsigned long long total, free, used; } hw_nvmlMemory_t;          // nvmlMemory_t
typedef struct {                                                                    // nvmlMemory_v2_t
	unsigned int version;
	unsigned long long total, reserved, free, used;
} hw_nvmlMemory_v2_t;
typedef struct {                                                                    // nvmlPciInfo_t (v3)
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} hw_nvmlPciInfo_t;
typedef struct { unsigned int gpu, memory; } hw_nvmlUtilization_t;                 // nvmlUtilization_t
typedef struct {                                                                    // nvmlProcessInfo_v2_t
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} hw_nvmlProcessInfo_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } hw_nvmlProcessInfo_v1_t;

typedef struct {                                                                    // nvmlFieldValue_t
	unsigned int fieldId, scopeId;
	long long timestamp, latencyUsec;
	int valueType;
	nvmlReturn_t nvmlReturn;
	union { double dVal; int siVal; unsigned int uiVal; unsigned long ulVal; unsigned long long ullVal; long long sllVal; unsigned short usVal; } value;
} hw_nvmlFieldValue_t;

static int hw_call0(void *f) { return ((nvmlReturn_t (*)(void))f)(); }
static int hw_call_str(void *f, char *buf, unsigned int n) { return ((nvmlReturn_t (*)(char *, unsigned int))f)(buf, n); }
static int hw_call_int(void *f, int *v) { return ((nvmlReturn_t (*)(int *))f)(v); }
static int hw_call_uint(void *f, unsigned int *v) { return ((nvmlReturn_t (*)(unsigned int *))f)(v); }
static int hw_handle(void *f, unsigned int i, nvmlDevice_t *d) { return ((nvmlReturn_t (*)(unsigned int, nvmlDevice_t *))f)(i, d); }
static int hw_dev_str(void *f, nvmlDevice_t d, char *buf, unsigned int n) { return ((nvmlReturn_t (*)(nvmlDevice_t, char *, unsigned int))f)(d, buf, n); }
static int hw_dev_ptr(void *f, nvmlDevice_t d, void *p) { return ((nvmlReturn_t (*)(nvmlDevice_t, void *))f)(d, p); }
static int hw_dev_2int(void *f, nvmlDevice_t d, int *a, int *b) { return ((nvmlReturn_t (*)(nvmlDevice_t, int *, int *))f)(d, a, b); }
static int hw_dev_2uint(void *f, nvmlDevice_t d, unsigned int *a, unsigned int *b) { return ((nvmlReturn_t (*)(nvmlDevice_t, unsigned int *, unsigned int *))f)(d, a, b); }
static int hw_dev_4uint(void *f, nvmlDevice_t d, unsigned int *a, unsigned int *b, unsigned int *c, unsigned int *e) { return ((nvmlReturn_t (*)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *, unsigned int *))f)(d, a, b, c, e); }
static int hw_dev_arg_uint(void *f, nvmlDevice_t d, int arg, unsigned int *v) { return ((nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int *))f)(d, arg, v); }
static int hw_dev_ecc(void *f, nvmlDevice_t d, int et, int ct, unsigned long long *v) { return ((nvmlReturn_t (*)(nvmlDevice_t, int, int, unsigned long long *))f)(d, et, ct, v); }
static int hw_dev_procs(void *f, nvmlDevice_t d, unsigned int *n, void *infos) { return ((nvmlReturn_t (*)(nvmlDevice_t, unsigned int *, void *))f)(d, n, infos); }
static int hw_dev_link_ptr(void *f, nvmlDevice_t d, unsigned int link, void *p) { return ((nvmlReturn_t (*)(nvmlDevice_t, unsigned int, void *))f)(d, link, p); }
static int hw_dev_pair_int(void *f, nvmlDevice_t a, nvmlDevice_t b, int *v) { return ((nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int *))f)(a, b, v); }
static int hw_dev_index_handle(void *f, nvmlDevice_t d, unsigned int i, nvmlDevice_t *out) { return ((nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t *))f)(d, i, out); }
static int hw_field_values(void *f, nvmlDevice_t d, int n, hw_nvmlFieldValue_t *v) { return ((nvmlReturn_t (*)(nvmlDevice_t, int, hw_nvmlFieldValue_t *))f)(d, n, v); }
static int hw_set_v2_version(hw_nvmlMemory_v2_t *m) { m->version = (unsigned int)(sizeof(hw_nvmlMemory_v2_t) | (2 << 24)); return 0; }
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vendorlib/dl"
)

// symbols are the NVML entry points read, newest first within each group:
// a driver that lacks a versioned name (older branches) is asked through the
// older one. Which groups must resolve is in required.
var symbols = map[string][]string{
	"init":            {"nvmlInit_v2", "nvmlInit"},
	"driverVersion":   {"nvmlSystemGetDriverVersion"},
	"nvmlVersion":     {"nvmlSystemGetNVMLVersion"},
	"cudaVersion":     {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"},
	"count":           {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"},
	"handle":          {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
	"name":            {"nvmlDeviceGetName"},
	"uuid":            {"nvmlDeviceGetUUID"},
	"pci":             {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"},
	"memoryV2":        {"nvmlDeviceGetMemoryInfo_v2"},
	"memory":          {"nvmlDeviceGetMemoryInfo"},
	"cc":              {"nvmlDeviceGetCudaComputeCapability"},
	"mig":             {"nvmlDeviceGetMigMode"},
	"util":            {"nvmlDeviceGetUtilizationRates"},
	"power":           {"nvmlDeviceGetPowerUsage"},
	"powerLimit":      {"nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit"},
	"temp":            {"nvmlDeviceGetTemperature"},
	"processes":       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"},
	"processesV1":     {"nvmlDeviceGetComputeRunningProcesses"},
	"eccMode":         {"nvmlDeviceGetEccMode"},
	"eccErrors":       {"nvmlDeviceGetTotalEccErrors"},
	"remapped":        {"nvmlDeviceGetRemappedRows"},
	"throttle":        {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
	"maxClock":        {"nvmlDeviceGetMaxClockInfo"},
	"pcieGenMax":      {"nvmlDeviceGetMaxPcieLinkGeneration"},
	"pcieWidthMax":    {"nvmlDeviceGetMaxPcieLinkWidth"},
	"pcieGen":         {"nvmlDeviceGetCurrPcieLinkGeneration"},
	"pcieWidth":       {"nvmlDeviceGetCurrPcieLinkWidth"},
	"numa":            {"nvmlDeviceGetNumaNodeId"},
	"nvlinkState":     {"nvmlDeviceGetNvLinkState"},
	"busWidth":        {"nvmlDeviceGetMemoryBusWidth"},
	"persistenceMode": {"nvmlDeviceGetPersistenceMode"},

	// NVLink per link, topology, MIG devices.
	"nvlinkVersion": {"nvmlDeviceGetNvLinkVersion"},
	// _v2 fills the nvmlPciInfo_t of today; the first entry point an older
	// layout whose first 16 bytes are the bus id too.
	"nvlinkRemotePCI":   {"nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemotePciInfo"},
	"nvlinkRemoteType":  {"nvmlDeviceGetNvLinkRemoteDeviceType"},
	"fieldValues":       {"nvmlDeviceGetFieldValues"},
	"topology":          {"nvmlDeviceGetTopologyCommonAncestor"},
	"migMaxCount":       {"nvmlDeviceGetMaxMigDeviceCount"},
	"migHandle":         {"nvmlDeviceGetMigDeviceHandleByIndex"},
	"gpuInstanceID":     {"nvmlDeviceGetGpuInstanceId"},
	"computeInstanceID": {"nvmlDeviceGetComputeInstanceId"},
}

// required are the groups without which the library is not used: a library
// that lacks one is an unsupported version (nvidia-smi is asked instead).
var required = []string{"init", "count", "handle", "name", "uuid", "pci"}

// cLib is one dlopen'ed libnvidia-ml with its resolved entry points and
// the fixed facts of its GPUs read so far (fixed.go).
type cLib struct {
	handle unsafe.Pointer
	fn     map[string]unsafe.Pointer
	names  map[string]string // group -> the symbol resolved
	fixed  fixedCache
}

// openC loads the library at path and resolves its entry points.
func openC(path string) (*cLib, error) {
	h, err := dl.Open(path)
	if err != nil {
		return nil, err
	}
	l := &cLib{handle: h, fn: map[string]unsafe.Pointer{}, names: map[string]string{}}
	for group, names := range symbols {
		for _, n := range names {
			if p := dl.Sym(h, n); p != nil {
				l.fn[group], l.names[group] = p, n
				break
			}
		}
	}
	for _, g := range required {
		if l.fn[g] == nil {
			return nil, fmt.Errorf("%w: %s lacks %s", ErrUnsupported, path, symbols[g][0])
		}
	}
	return l, nil
}

func (l *cLib) has(group string) bool { return l.fn[group] != nil }

func (l *cLib) init() Return { return Return(C.hw_call0(l.fn["init"])) }

func (l *cLib) sysString(group string) (string, Return) {
	if !l.has(group) {
		return "", ErrorFunctionNotFound
	}
	var buf [96]C.char
	r := Return(C.hw_call_str(l.fn[group], &buf[0], C.uint(len(buf))))
	return C.GoString(&buf[0]), r
}

func (l *cLib) sysInt(group string) (int, Return) {
	if !l.has(group) {
		return 0, ErrorFunctionNotFound
	}
	var v C.int
	r := Return(C.hw_call_int(l.fn[group], &v))
	return int(v), r
}

func (l *cLib) count() (int, Return) {
	var n C.uint
	r := Return(C.hw_call_uint(l.fn["count"], &n))
	return int(n), r
}

func (l *cLib) device(i int) (C.nvmlDevice_t, Return) {
	var d C.nvmlDevice_t
	r := Return(C.hw_handle(l.fn["handle"], C.uint(i), &d))
	return d, r
}

func (l *cLib) devString(group string, d C.nvmlDevice_t) (string, Return) {
	if !l.has(group) {
		return "", ErrorFunctionNotFound
	}
	var buf [96]C.char
	r := Return(C.hw_dev_str(l.fn[group], d, &buf[0], C.uint(len(buf))))
	return C.GoString(&buf[0]), r
}

func (l *cLib) devUint(group string, d C.nvmlDevice_t) (uint64, Return) {
	if !l.has(group) {
		return 0, ErrorFunctionNotFound
	}
	var v C.uint
	r := Return(C.hw_dev_ptr(l.fn[group], d, unsafe.Pointer(&v)))
	return uint64(v), r
}

func (l *cLib) devUint64(group string, d C.nvmlDevice_t) (uint64, Return) {
	if !l.has(group) {
		return 0, ErrorFunctionNotFound
	}
	var v C.ulonglong
	r := Return(C.hw_dev_ptr(l.fn[group], d, unsafe.Pointer(&v)))
	return uint64(v), r
}

func (l *cLib) devArgUint(group string, d C.nvmlDevice_t, arg int) (uint64, Return) {
	if !l.has(group) {
		return 0, ErrorFunctionNotFound
	}
	var v C.uint
	r := Return(C.hw_dev_arg_uint(l.fn[group], d, C.int(arg), &v))
	return uint64(v), r
}

func (l *cLib) devPair(group string, d C.nvmlDevice_t) (int, int, Return) {
	if !l.has(group) {
		return 0, 0, ErrorFunctionNotFound
	}
	var a, b C.uint
	r := Return(C.hw_dev_2uint(l.fn[group], d, &a, &b))
	return int(a), int(b), r
}

func (l *cLib) computeCapability(d C.nvmlDevice_t) (int, int, Return) {
	if !l.has("cc") {
		return 0, 0, ErrorFunctionNotFound
	}
	var a, b C.int
	r := Return(C.hw_dev_2int(l.fn["cc"], d, &a, &b))
	return int(a), int(b), r
}

func (l *cLib) pci(d C.nvmlDevice_t) (PCI, Return) {
	var p C.hw_nvmlPciInfo_t
	r := Return(C.hw_dev_ptr(l.fn["pci"], d, unsafe.Pointer(&p)))
	return PCI{BusID: C.GoString(&p.busId[0]), Domain: uint32(p.domain), Bus: uint32(p.bus), Device: uint32(p.device),
		DeviceID: uint32(p.pciDeviceId), SubsystemID: uint32(p.pciSubSystemId)}, r
}

// memory reads nvmlDeviceGetMemoryInfo_v2 (with the driver's reserved
// share), else nvmlDeviceGetMemoryInfo (used then includes it).
func (l *cLib) memory(d C.nvmlDevice_t) (Memory, Return) {
	if l.has("memoryV2") {
		var m C.hw_nvmlMemory_v2_t
		C.hw_set_v2_version(&m)
		if r := Return(C.hw_dev_ptr(l.fn["memoryV2"], d, unsafe.Pointer(&m))); r == Success {
			return Memory{Total: uint64(m.total), Reserved: uint64(m.reserved), Free: uint64(m.free), Used: uint64(m.used), HasReserved: true}, r
		}
	}
	if !l.has("memory") {
		return Memory{}, ErrorFunctionNotFound
	}
	var m C.hw_nvmlMemory_t
	r := Return(C.hw_dev_ptr(l.fn["memory"], d, unsafe.Pointer(&m)))
	return Memory{Total: uint64(m.total), Free: uint64(m.free), Used: uint64(m.used)}, r
}

func (l *cLib) utilization(d C.nvmlDevice_t) (uint32, Return) {
	if !l.has("util") {
		return 0, ErrorFunctionNotFound
	}
	var u C.hw_nvmlUtilization_t
	r := Return(C.hw_dev_ptr(l.fn["util"], d, unsafe.Pointer(&u)))
	return uint32(u.gpu), r
}

func (l *cLib) remappedRows(d C.nvmlDevice_t) (RemappedRows, Return) {
	if !l.has("remapped") {
		return RemappedRows{}, ErrorFunctionNotFound
	}
	var a, b, c, e C.uint
	r := Return(C.hw_dev_4uint(l.fn["remapped"], d, &a, &b, &c, &e))
	return RemappedRows{Correctable: uint32(a), Uncorrectable: uint32(b), Pending: c != 0, Failure: e != 0}, r
}

// eccUncorrectedVolatile is nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
// NVML_VOLATILE_ECC = 0).
func (l *cLib) eccUncorrectedVolatile(d C.nvmlDevice_t) (uint64, Return) {
	if !l.has("eccErrors") {
		return 0, ErrorFunctionNotFound
	}
	var v C.ulonglong
	r := Return(C.hw_dev_ecc(l.fn["eccErrors"], d, 1, 0, &v))
	return uint64(v), r
}

// maxProcesses bounds the process list read per GPU.
const maxProcesses = 1024

// processes reads the compute processes holding memory: the _v3/_v2 entry
// point (with GPU and compute instance), else the first one.
func (l *cLib) processes(d C.nvmlDevice_t) ([]Process, Return) {
	switch {
	case l.has("processes"):
		infos := make([]C.hw_nvmlProcessInfo_t, maxProcesses)
		n := C.uint(len(infos))
		r := Return(C.hw_dev_procs(l.fn["processes"], d, &n, unsafe.Pointer(&infos[0])))
		if r != Success {
			return nil, r
		}
		out := make([]Process, 0, min(int(n), maxProcesses))
		for _, p := range infos[:min(int(n), maxProcesses)] {
			out = append(out, Process{PID: int(p.pid), UsedBytes: uint64(p.usedGpuMemory)})
		}
		return out, r
	case l.has("processesV1"):
		infos := make([]C.hw_nvmlProcessInfo_v1_t, maxProcesses)
		n := C.uint(len(infos))
		r := Return(C.hw_dev_procs(l.fn["processesV1"], d, &n, unsafe.Pointer(&infos[0])))
		if r != Success {
			return nil, r
		}
		out := make([]Process, 0, min(int(n), maxProcesses))
		for _, p := range infos[:min(int(n), maxProcesses)] {
			out = append(out, Process{PID: int(p.pid), UsedBytes: uint64(p.usedGpuMemory)})
		}
		return out, r
	}
	return nil, ErrorFunctionNotFound
}

// maxNVLinks is NVML_NVLINK_MAX_LINKS of current headers (36; it was 18
// before NVLink 5). A driver answers links past its GPU's last with an
// error, where the walk stops.
const maxNVLinks = 36

// nvlinks reads each NVLink's state, and where the library has the entry
// points its version and what is at its other end (PCI bus id, device
// type), stopping at the first link the driver refuses; a GPU without
// NVLink answers NotSupported for link 0.
func (l *cLib) nvlinks(d C.nvmlDevice_t) ([]NVLink, Return) {
	if !l.has("nvlinkState") {
		return nil, ErrorFunctionNotFound
	}
	var out []NVLink
	for link := 0; link < maxNVLinks; link++ {
		var v C.uint
		r := Return(C.hw_dev_arg_uint(l.fn["nvlinkState"], d, C.int(link), &v))
		if r != Success {
			if link == 0 {
				return nil, r
			}
			break
		}
		out = append(out, l.nvlinkDetail(d, link, v != 0))
	}
	return out, Success
}

// nvlinkDetail reads one link's version and remote end; what the driver
// does not answer stays unknown.
func (l *cLib) nvlinkDetail(d C.nvmlDevice_t, link int, active bool) NVLink {
	nl := NVLink{Link: link, Active: active, RemoteType: NVLinkRemoteUnknown}
	if l.has("nvlinkVersion") {
		var v C.uint
		if Return(C.hw_dev_link_ptr(l.fn["nvlinkVersion"], d, C.uint(link), unsafe.Pointer(&v))) == Success {
			nl.Version = uint32(v)
		}
	}
	if !active {
		return nl // an inactive link has no remote end
	}
	if l.has("nvlinkRemotePCI") {
		var p C.hw_nvmlPciInfo_t
		if Return(C.hw_dev_link_ptr(l.fn["nvlinkRemotePCI"], d, C.uint(link), unsafe.Pointer(&p))) == Success {
			if l.names["nvlinkRemotePCI"] == "nvmlDeviceGetNvLinkRemotePciInfo" {
				nl.RemoteBusID = C.GoString(&p.busIdLegacy[0])
			} else {
				nl.RemoteBusID = C.GoString(&p.busId[0])
			}
		}
	}
	if l.has("nvlinkRemoteType") {
		var t C.int
		if Return(C.hw_dev_link_ptr(l.fn["nvlinkRemoteType"], d, C.uint(link), unsafe.Pointer(&t))) == Success {
			nl.RemoteType = NVLinkRemoteType(t)
		}
	}
	return nl
}

// fieldNVLinkSpeedCommon is NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: "Common
// NVLink Speed in MBps for active links" (nvml.h, field value ids).
const fieldNVLinkSpeedCommon = 90

// nvlinkSpeedMBps reads the speed NVML gives for every active NVLink of the
// GPU (one direction, MB/s); 0 when it gives none.
func (l *cLib) nvlinkSpeedMBps(d C.nvmlDevice_t) uint32 {
	if !l.has("fieldValues") {
		return 0
	}
	var v C.hw_nvmlFieldValue_t
	v.fieldId = fieldNVLinkSpeedCommon
	if Return(C.hw_field_values(l.fn["fieldValues"], d, 1, &v)) != Success || Return(v.nvmlReturn) != Success {
		return 0
	}
	raw := (*[8]byte)(unsafe.Pointer(&v.value))[:] // the nvmlValue_t union, in the host's byte order
	var mbps uint64
	switch v.valueType {
	case 1, 5: // NVML_VALUE_TYPE_UNSIGNED_INT, SIGNED_INT
		mbps = uint64(binary.NativeEndian.Uint32(raw))
	case 2, 3, 4: // UNSIGNED_LONG, UNSIGNED_LONG_LONG, SIGNED_LONG_LONG
		mbps = binary.NativeEndian.Uint64(raw)
	case 6: // UNSIGNED_SHORT
		mbps = uint64(binary.NativeEndian.Uint16(raw))
	}
	if mbps == 0 || mbps > 1<<20 { // above 1 TB/s a link: not a speed
		return 0
	}
	return uint32(mbps)
}

// topology reads the common ancestor of every pair of devices.
func (l *cLib) topology(handles map[int]C.nvmlDevice_t, refused *[]string) map[[2]int]TopologyLevel {
	if !l.has("topology") || len(handles) < 2 {
		return nil
	}
	idx := make([]int, 0, len(handles))
	for i := range handles {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	out := map[[2]int]TopologyLevel{}
	for x, a := range idx {
		for _, b := range idx[x+1:] {
			var v C.int
			r := Return(C.hw_dev_pair_int(l.fn["topology"], handles[a], handles[b], &v))
			switch r {
			case Success:
				out[[2]int{a, b}] = TopologyLevel(v)
			case ErrorNotSupported:
			default:
				*refused = append(*refused, fmt.Sprintf("devices %d and %d: nvmlDeviceGetTopologyCommonAncestor: %v", a, b, r))
			}
		}
	}
	return out
}

// migDevices reads the MIG devices of a GPU in MIG mode: index 0 to
// nvmlDeviceGetMaxMigDeviceCount-1 (cached per GPU k), skipping the indices
// with no device (NotFound).
func (l *cLib) migDevices(d C.nvmlDevice_t, k deviceKey) ([]MIGDevice, Return) {
	if !l.has("migMaxCount") || !l.has("migHandle") {
		return nil, ErrorFunctionNotFound
	}
	n, r := l.fixed.maxMIG(k, func() (uint32, Return) {
		v, r := l.devUint("migMaxCount", d)
		return uint32(v), r
	})
	if r != Success {
		return nil, r
	}
	out := []MIGDevice{}
	for i := 0; i < int(min(n, maxMIGDevices)); i++ {
		var h C.nvmlDevice_t
		r := Return(C.hw_dev_index_handle(l.fn["migHandle"], d, C.uint(i), &h))
		if r == ErrorNotFound {
			continue
		}
		if r != Success {
			return nil, r
		}
		m := MIGDevice{Index: i, GPUInstance: -1, ComputeInstance: -1}
		m.Name, _ = l.devString("name", h)
		m.UUID, _ = l.devString("uuid", h)
		if mem, r := l.memory(h); r == Success {
			m.Memory = &mem
		}
		if v, r := l.devUint("gpuInstanceID", h); r == Success {
			m.GPUInstance = int(v)
		}
		if v, r := l.devUint("computeInstanceID", h); r == Success {
			m.ComputeInstance = int(v)
		}
		out = append(out, m)
	}
	return out, Success
}

// maxMIGDevices bounds the MIG devices read per GPU (seven GPU instances
// of one compute slice each on today's parts).
const maxMIGDevices = 64

// readAll reads the system and every device, the devices in parallel
// (readDevices). It runs on the library's thread only (see Library.Read),
// one read at a time.
func (l *cLib) readAll() (*Snapshot, error) {
	s := &Snapshot{}
	s.DriverVersion, _ = l.sysString("driverVersion")
	s.NVMLVersion, _ = l.sysString("nvmlVersion")
	s.CUDADriverVersion, _ = l.sysInt("cudaVersion")
	n, r := l.count()
	if r != Success {
		return nil, r.Err("nvmlDeviceGetCount")
	}
	reads := l.readDevices(min(n, maxDevices))
	handles := map[int]C.nvmlDevice_t{}
	seen := map[deviceKey]bool{}
	for i, rd := range reads { // index order, as one read after another
		s.Refused = append(s.Refused, rd.refused...)
		if !rd.ok {
			continue
		}
		handles[i] = rd.handle
		seen[rd.key] = true
		s.Devices = append(s.Devices, rd.dev)
	}
	l.fixed.keep(seen)
	s.Topology = l.topology(handles, &s.Refused)
	return s, nil
}

// maxDevices bounds the devices read.
const maxDevices = 256

// maxParallelReads bounds the GPUs read at once, so the threads a read
// occupies in the driver: eight, the GPUs of one HGX/DGX baseboard (a
// machine with more is read in rounds). A driver that hangs keeps at most
// that many threads, the library's own among them.
const maxParallelReads = 8

// deviceRead is what the read of one GPU gave: its handle (ok false when
// nvmlDeviceGetHandleByIndex refused it), the device and its identity, and
// the calls the driver refused.
type deviceRead struct {
	handle  C.nvmlDevice_t
	ok      bool
	dev     Device
	key     deviceKey
	refused []string
}

// readDevices reads GPUs 0 to n-1, at most maxParallelReads at once: the
// calling goroutine and helpers take the next unread index until none is
// left. NVML allows it: "NVML is thread-safe so it is safe to make
// simultaneous NVML calls from multiple threads" (NVML API Reference,
// https://docs.nvidia.com/deploy/nvml-api/nvml-api-reference.html; the same
// words head nvml.h, https://github.com/NVIDIA/go-nvml/blob/main/pkg/nvml/nvml.h).
// Each GPU's calls stay one after another on one goroutine, and a GPU's
// read touches no other GPU's state but the fixed-fact cache, which is
// locked. The result is in index order, whichever read ends first. A call
// that never returns keeps its helper and readDevices from returning: the
// caller's deadline (Library.Read) bounds the detection as before.
func (l *cLib) readDevices(n int) []deviceRead {
	reads := make([]deviceRead, n)
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			reads[i] = l.readOne(i)
		}
	}
	var wg sync.WaitGroup
	for range min(n, maxParallelReads) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return reads
}

// readOne reads GPU i: its handle, then the device.
func (l *cLib) readOne(i int) deviceRead {
	d, r := l.device(i)
	if r != Success {
		return deviceRead{refused: []string{fmt.Sprintf("device %d: nvmlDeviceGetHandleByIndex: %v", i, r)}}
	}
	rd := deviceRead{handle: d, ok: true}
	rd.dev, rd.key = l.readDevice(i, d, &rd.refused)
	return rd
}

// readDevice reads GPU i, whose handle is d, and says who it is (its UUID
// and bus id; zero when NVML did not give both).
func (l *cLib) readDevice(i int, d C.nvmlDevice_t, refused *[]string) (Device, deviceKey) {
	dev := Device{Index: i}
	note := func(call string, r Return) bool {
		if r != Success && r != ErrorNotSupported && r != ErrorFunctionNotFound {
			*refused = append(*refused, fmt.Sprintf("device %d: %s: %v", i, call, r))
		}
		return r == Success
	}
	var r Return
	dev.Name, r = l.devString("name", d)
	note("nvmlDeviceGetName", r)
	var key deviceKey // the GPU's identity, for its fixed facts; unknown unless both reads answered
	dev.UUID, r = l.devString("uuid", d)
	uuidOK := note("nvmlDeviceGetUUID", r)
	dev.PCI, r = l.pci(d)
	if note(l.names["pci"], r) && uuidOK {
		key = deviceKey{UUID: dev.UUID, BusID: dev.PCI.BusID}
	}
	if m, r := l.memory(d); note("nvmlDeviceGetMemoryInfo", r) {
		dev.Memory = &m
	}
	if a, b, r := l.computeCapability(d); note("nvmlDeviceGetCudaComputeCapability", r) {
		dev.CCMajor, dev.CCMinor = a, b
	}
	if cur, pend, r := l.devPair("mig", d); note("nvmlDeviceGetMigMode", r) {
		dev.MIG = &MIGMode{Current: cur == 1, Pending: pend == 1}
	}
	if u, r := l.utilization(d); note("nvmlDeviceGetUtilizationRates", r) {
		dev.UtilizationPercent = &u
	}
	if v, r := l.devUint("power", d); note("nvmlDeviceGetPowerUsage", r) {
		mw := uint32(v)
		dev.PowerMilliwatts = &mw
	}
	if v, r := l.devUint("powerLimit", d); note(l.names["powerLimit"], r) {
		mw := uint32(v)
		dev.PowerLimitMilliwatts = &mw
	}
	if v, r := l.devArgUint("temp", d, 0); note("nvmlDeviceGetTemperature", r) { // NVML_TEMPERATURE_GPU
		c := uint32(v)
		dev.TemperatureC = &c
	}
	if p, r := l.processes(d); note(l.names["processes"], r) {
		dev.Processes = p
		dev.ProcessesKnown = true
	}
	if cur, _, r := l.devPair("eccMode", d); note("nvmlDeviceGetEccMode", r) {
		on := cur == 1
		dev.ECCEnabled = &on
	}
	if v, r := l.eccUncorrectedVolatile(d); note("nvmlDeviceGetTotalEccErrors", r) {
		dev.ECCUncorrectedVolatile = &v
	}
	if rr, r := l.remappedRows(d); note("nvmlDeviceGetRemappedRows", r) {
		dev.RemappedRows = &rr
	}
	if v, r := l.devUint64("throttle", d); note(l.names["throttle"], r) {
		dev.ClocksEventReasons = &v
	}
	fixed := l.fixed.facts(key, func() fixedFacts { return l.readFixed(d) })
	if note("nvmlDeviceGetMaxClockInfo", fixed.MaxClockSM.Code) {
		dev.MaxClockSMMHz = fixed.MaxClockSM.Value
	}
	if note("nvmlDeviceGetMaxClockInfo", fixed.MaxClockMemory.Code) {
		dev.MaxClockMemoryMHz = fixed.MaxClockMemory.Value
	}
	if note("nvmlDeviceGetMaxPcieLinkGeneration", fixed.PCIeGenMax.Code) {
		dev.PCIeGenMax = fixed.PCIeGenMax.Value
	}
	if note("nvmlDeviceGetMaxPcieLinkWidth", fixed.PCIeWidthMax.Code) {
		dev.PCIeWidthMax = fixed.PCIeWidthMax.Value
	}
	if v, r := l.devUint("pcieGen", d); note("nvmlDeviceGetCurrPcieLinkGeneration", r) {
		dev.PCIeGen = uint32(v)
	}
	if v, r := l.devUint("pcieWidth", d); note("nvmlDeviceGetCurrPcieLinkWidth", r) {
		dev.PCIeWidth = uint32(v)
	}
	if v, r := l.devUint("numa", d); note("nvmlDeviceGetNumaNodeId", r) {
		n := int(v)
		dev.NUMANode = &n
	}
	if links, r := l.nvlinks(d); note("nvmlDeviceGetNvLinkState", r) {
		dev.NVLinks = links
		for _, nl := range links {
			if nl.Active {
				dev.NVLinkSpeedMBps = l.nvlinkSpeedMBps(d)
				break
			}
		}
	}
	if dev.MIG != nil && dev.MIG.Current {
		if migs, r := l.migDevices(d, key); note("nvmlDeviceGetMigDeviceHandleByIndex", r) {
			dev.MIGDevices, dev.MIGDevicesKnown = migs, true
		}
	}
	return dev, key
}

// readFixed asks NVML for the facts a GPU cannot change (fixed.go).
func (l *cLib) readFixed(d C.nvmlDevice_t) fixedFacts {
	read := func(v uint64, r Return) fixedRead { return fixedRead{Value: uint32(v), Code: r} }
	return fixedFacts{
		MaxClockSM:     read(l.devArgUint("maxClock", d, 1)), // NVML_CLOCK_SM
		MaxClockMemory: read(l.devArgUint("maxClock", d, 2)), // NVML_CLOCK_MEM
		PCIeGenMax:     read(l.devUint("pcieGenMax", d)),
		PCIeWidthMax:   read(l.devUint("pcieWidthMax", d)),
	}
}
