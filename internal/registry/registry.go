// Package registry is the data model of the wire contract: devices, system I/O,
// warnings and the registry that holds them, with JSON as
// schema/registry.schema.json describes it (snake_case, bytes, GB/s; unknown
// fields are omitted, never guessed).
package registry

import (
	"fmt"
	"sort"
	"strconv"
)

// SchemaVersion is the version of the registry JSON written by this library.
// It bumps on any incompatible change of the JSON; adding fields does not bump it.
const SchemaVersion = 1

// Device is one physical accelerator (or the host CPU). Zero values of the
// optional fields mean "unknown" and are omitted from JSON; fields where zero
// is a real value (free memory, NUMA node) are pointers.
type Device struct {
	ID        string `json:"id"`
	Kind      Kind   `json:"kind"`
	Family    Family `json:"family"`
	Index     int    `json:"index"`
	Vendor    string `json:"vendor,omitempty"`
	Name      string `json:"name,omitempty"`
	Available bool   `json:"available"`
	// UnavailableReason says why a device that is present cannot be used
	// (no driver bound, driver/library mismatch); empty when available.
	UnavailableReason string `json:"unavailable_reason,omitempty"`

	MemoryBytes     int64  `json:"memory_bytes,omitempty"`
	MemoryFreeBytes *int64 `json:"memory_free_bytes,omitempty"`
	// MemoryShared marks memory that is carved out of / shared with system RAM
	// (integrated GPUs, unified memory): it must not be added to host RAM.
	MemoryShared bool `json:"memory_shared,omitempty"`
	// GTTBytes is the GPU-addressable system memory window (amdgpu GTT): a
	// separate figure, never part of MemoryBytes.
	GTTBytes int64 `json:"gtt_bytes,omitempty"`
	// MemoryCarveoutBytes is system RAM reserved for an integrated GPU at boot
	// (the BIOS/UEFI "UMA frame buffer", amdgpu mem_info_vram_total on an
	// APU): part of host RAM, reported for what it is.
	MemoryCarveoutBytes int64 `json:"memory_carveout_bytes,omitempty"`
	// MemoryUsableBytes is what the device's runtime can allocate when that
	// differs from MemoryBytes: unified-memory GPUs (the share of system RAM
	// ROCm/CUDA/Metal let one process map), a MIG slice. Planning uses it
	// before MemoryBytes; Sources["memory_usable_bytes"] says where it came from.
	MemoryUsableBytes int64 `json:"memory_usable_bytes,omitempty"`

	MemoryBandwidthGBs float64 `json:"memory_bandwidth_gb_s,omitempty"`
	ComputeCapability  string  `json:"compute_capability,omitempty"`
	Architecture       string  `json:"architecture,omitempty"`
	DriverVersion      string  `json:"driver_version,omitempty"`
	UUID               string  `json:"uuid,omitempty"`
	PCIBusID           string  `json:"pci_bus_id,omitempty"`
	PCIID              string  `json:"pci_id,omitempty"` // "10de:2330"
	NUMANode           *int    `json:"numa_node,omitempty"`
	PCIe               *PCIe   `json:"pcie,omitempty"`
	Cores              int     `json:"cores,omitempty"`   // CPU: physical cores when /proc/cpuinfo has "cpu cores"/"physical id", else logical CPUs
	Threads            int     `json:"threads,omitempty"` // CPU: logical CPUs ("processor" entries)
	// CPUFeatures (CPU only) are the instruction-set extensions the CPU
	// reports that are in the CPUFeature vocabulary, sorted; nil when
	// unknown (no /proc/cpuinfo flags line, a Mac, a registry written
	// before they were read), so that absence is never "has none".
	CPUFeatures []CPUFeature `json:"cpu_features,omitempty"`
	ChipCount   int          `json:"chip_count,omitempty"`
	MIG         *MIG         `json:"mig,omitempty"`
	// Partition is set on an AMD GPU split into compute partitions and on
	// each of its partitions (see Partition).
	Partition *Partition `json:"partition,omitempty"`
	// NICs are the network adapters (InfiniBand/RoCE) near the device on
	// the PCIe tree, nearest first (see NICAffinity).
	NICs []NICAffinity `json:"nics,omitempty"`
	// VisibleAs is the device ordinal a process sees through a visibility
	// variable (CUDA_VISIBLE_DEVICES=3 makes physical GPU 3 visible as "0");
	// empty when no such variable is set.
	VisibleAs string `json:"visible_as,omitempty"`
	// Telemetry is what the device reads now (busy share, power,
	// temperature) where its tool or driver says; nil when none does.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
	// MemoryReservedBytes is memory the driver keeps for itself, neither
	// free nor used by a process (NVML nvmlDeviceGetMemoryInfo_v2
	// "reserved": 615 MiB on an H200); 0 when unknown.
	MemoryReservedBytes int64 `json:"memory_reserved_bytes,omitempty"`
	// Processes are the processes holding memory on the device at
	// detection time (NVML); nil when the source does not list them, empty
	// when it says there are none.
	Processes []Process `json:"processes,omitempty"`
	// Health is what the driver says of the device's state (ECC, remapped
	// rows, clock slowdowns); nil when no source says.
	Health *Health `json:"health,omitempty"`

	// Quantizations lists the precisions this device can run natively.
	Quantizations []string `json:"quantizations,omitempty"`
	// Sources names, per field, which source gave it ("nvidia-smi", "sysfs").
	Sources map[string]string `json:"sources,omitempty"`
}

// PCIe is the link of a PCI device, current and maximum.
type PCIe struct {
	CurrentSpeedGTs float64 `json:"current_speed_gt_s,omitempty"`
	CurrentWidth    int     `json:"current_width,omitempty"`
	MaxSpeedGTs     float64 `json:"max_speed_gt_s,omitempty"`
	MaxWidth        int     `json:"max_width,omitempty"`
	// BandwidthGBs is the one-direction bandwidth of the maximum link.
	BandwidthGBs float64 `json:"bandwidth_gb_s,omitempty"`
}

// Telemetry is a device's live readings at detection time. Each field is
// absent when the source does not give it; zero is a real reading (an idle
// GPU is 0 % busy). Sources["telemetry"] names where they came from.
type Telemetry struct {
	// UtilizationPercent is the share of the last sample period the device
	// was busy (nvidia-smi utilization.gpu, amdgpu gpu_busy_percent).
	UtilizationPercent *float64 `json:"utilization_percent,omitempty"`
	PowerDrawWatts     *float64 `json:"power_draw_watts,omitempty"`
	PowerLimitWatts    *float64 `json:"power_limit_watts,omitempty"`
	TemperatureC       *float64 `json:"temperature_c,omitempty"` // the GPU die sensor, degrees Celsius
}

// Process is a process holding device memory.
type Process struct {
	PID         int   `json:"pid"`
	MemoryBytes int64 `json:"memory_bytes"`
}

// Health is a device's state as its driver reports it. Each field is absent
// when the source does not give it.
type Health struct {
	// ECCEnabled is whether ECC is on now.
	ECCEnabled *bool `json:"ecc_enabled,omitempty"`
	// ECCUncorrectedVolatile counts uncorrected ECC errors since the
	// driver loaded.
	ECCUncorrectedVolatile *int64 `json:"ecc_uncorrected_volatile,omitempty"`
	// RemappedRows is the row remapper's state (A100 and later).
	RemappedRows *RemappedRows `json:"remapped_rows,omitempty"`
	// ClocksEventReasons name why the clocks are below their maximum now
	// ("gpu_idle", "sw_power_cap", "hw_thermal_slowdown", ...); empty when
	// nothing holds them back.
	ClocksEventReasons []string `json:"clocks_event_reasons,omitempty"`
	// MaxClockSMMHz and MaxClockMemoryMHz are the maximum clocks.
	MaxClockSMMHz     int `json:"max_clock_sm_mhz,omitempty"`
	MaxClockMemoryMHz int `json:"max_clock_memory_mhz,omitempty"`
	// NVLinksActive and NVLinks count the active links and the links.
	NVLinksActive *int `json:"nvlinks_active,omitempty"`
	NVLinks       int  `json:"nvlinks,omitempty"`
}

// RemappedRows is the NVIDIA row remapper's state: rows remapped for
// correctable and uncorrectable errors, a remap waiting for a GPU reset, and
// a remap that failed (the GPU should be serviced).
type RemappedRows struct {
	Correctable   int  `json:"correctable"`
	Uncorrectable int  `json:"uncorrectable"`
	Pending       bool `json:"pending"`
	Failure       bool `json:"failure"`
}

// MIG describes a MIG-enabled GPU or a MIG instance.
type MIG struct {
	Mode     string `json:"mode,omitempty"` // "enabled", "disabled"
	Instance string `json:"instance,omitempty"`
	// Profile is a MIG instance's profile ("1g.10gb") and Parent the id of
	// the GPU it is carved from; both only on an instance device.
	Profile  string   `json:"profile,omitempty"`
	Parent   string   `json:"parent,omitempty"`
	Children []string `json:"children,omitempty"`
	// GPUInstance and ComputeInstance are a MIG instance's GPU instance id
	// and compute instance id ("GPU Instance ID", "Compute Instance ID" of
	// nvidia-smi -q), when the source gives them.
	GPUInstance     *int `json:"gpu_instance_id,omitempty"`
	ComputeInstance *int `json:"compute_instance_id,omitempty"`
	// SharesMemoryWith lists the other MIG instances (their Instance UUIDs)
	// that are compute instances of the same GPU instance: they share that
	// GPU instance's memory, which each states as MemoryBytes, so a total
	// over devices counts it once (CountsSharedMemory).
	SharesMemoryWith []string `json:"shares_memory_with,omitempty"`
}

// Partition describes an AMD compute partition mode (MI300: SPX, DPX, QPX,
// CPX, with memory mode NPS1 or NPS4). Each partition is a device of its own
// (its own KFD node, HIP device and render node); the physical GPU stays
// listed, unavailable, with Count and Children. On a partition device Index
// is its number within the GPU and Parent the GPU's id.
type Partition struct {
	Compute  string   `json:"compute,omitempty"`
	Memory   string   `json:"memory,omitempty"`
	Count    int      `json:"count,omitempty"`
	Index    *int     `json:"index,omitempty"`
	Parent   string   `json:"parent,omitempty"`
	Children []string `json:"children,omitempty"`
}

// NICAffinity is a network adapter and the PCIe path from a device to it,
// in nvidia-smi topo -m's terms: PIX (at most one PCIe bridge: the same
// switch), PXB (several bridges, no host bridge), PHB (through the host
// bridge: the same root complex), NODE (between host bridges of one NUMA
// node). Adapters across NUMA nodes (SYS) are not listed. GPUDirect RDMA
// is used up to PXB by default (NCCL_NET_GDR_LEVEL).
type NICAffinity struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// Interconnect is a link between devices or out of the machine.
type Interconnect struct {
	Kind         string   `json:"kind"` // nvlink nvswitch xgmi infiniband roce neuronlink ici pcie ethernet
	Name         string   `json:"name,omitempty"`
	Devices      []string `json:"devices"`
	BandwidthGBs float64  `json:"bandwidth_gb_s,omitempty"`
	Links        int      `json:"links,omitempty"`
	// LinkBandwidthGBs is one link's bandwidth in one direction, as the
	// source reports it (nvidia-smi nvlink -s "Link 0: 26.562 GB/s", KFD
	// io_links max_bandwidth); the slowest link when they differ.
	LinkBandwidthGBs float64 `json:"link_bandwidth_gb_s,omitempty"`
	State            string  `json:"state,omitempty"`
	Source           string  `json:"source,omitempty"`
}

// Interconnect kinds.
const (
	LinkNVLink     = "nvlink"
	LinkNVSwitch   = "nvswitch"
	LinkXGMI       = "xgmi"
	LinkInfiniBand = "infiniband"
	LinkRoCE       = "roce"
	LinkNeuronLink = "neuronlink"
	LinkICI        = "ici"
	LinkPCIe       = "pcie"
	LinkEthernet   = "ethernet"
)

// NUMANode is one NUMA node of the host.
type NUMANode struct {
	ID          int    `json:"id"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	CPUs        string `json:"cpus,omitempty"`
}

// SystemIO is everything between and around the devices.
type SystemIO struct {
	Interconnects []Interconnect `json:"interconnects"`
	NUMANodes     []NUMANode     `json:"numa_nodes"`
	Environment   *Environment   `json:"environment,omitempty"`
	Storage       []Storage      `json:"storage,omitempty"`
}

// Environment holds container, VM and cloud hints.
type Environment struct {
	Container         string            `json:"container,omitempty"` // docker, podman, kubernetes, lxc
	Kubernetes        bool              `json:"kubernetes,omitempty"`
	Virtualized       bool              `json:"virtualized,omitempty"`
	Hypervisor        string            `json:"hypervisor,omitempty"`
	Cloud             string            `json:"cloud,omitempty"`
	InstanceType      string            `json:"instance_type,omitempty"`
	CgroupMemoryLimit int64             `json:"cgroup_memory_limit_bytes,omitempty"`
	CgroupCPULimit    float64           `json:"cgroup_cpu_limit,omitempty"`
	Visibility        map[string]string `json:"visibility,omitempty"`
}

// Storage is one block device with a throughput class.
type Storage struct {
	Name         string  `json:"name"`
	Class        string  `json:"class"` // nvme, ssd, hdd, virtual, unknown
	BandwidthGBs float64 `json:"bandwidth_gb_s,omitempty"`
	SizeBytes    int64   `json:"size_bytes,omitempty"`
}

// Warning is a typed, non-fatal problem found during detection.
type Warning struct {
	Backend  string `json:"backend"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Tool     string `json:"tool,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Path     string `json:"path,omitempty"`
}

// Warning codes.
const (
	WarnToolFailed     = "tool_failed"
	WarnToolTimeout    = "tool_timeout"
	WarnOutputTooLarge = "output_too_large"
	WarnParseError     = "parse_error"
	WarnAbsurdValue    = "absurd_value"
	WarnFallback       = "fallback"        // a backend used a weaker source
	WarnDeviceUnusable = "device_unusable" // seen but not usable
	WarnGuess          = "guess"           // identified by an id whose meaning is not confirmed
	WarnSysfsRead      = "sysfs_read"
	WarnPanic          = "backend_panic"
	// WarnBackendTimeout: a backend was still running past the detection
	// deadline (plus a short grace) and its findings were dropped.
	WarnBackendTimeout = "backend_timeout"
	// WarnVisibilityInvalid: an entry of a visibility variable matches no
	// device (or is ambiguous); like the runtime, entries after it are ignored.
	WarnVisibilityInvalid = "visibility_invalid"
	// WarnHiddenByEnv: devices hidden by a visibility variable
	// (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES).
	WarnHiddenByEnv = "hidden_by_env"
	// WarnConflictingSources: two sources disagree about what a PCI address
	// holds (a tool names a device of one vendor where sysfs shows another
	// vendor's function); the device sysfs confirms is kept.
	WarnConflictingSources = "conflicting_sources"
	// WarnToolLeftProcess: a tool left a process running outside its
	// process group (a daemon); the runner killed it.
	WarnToolLeftProcess = "tool_left_process"
	// WarnToolStatusLost: the host reaped a tool before its exit status
	// could be read (SIGCHLD ignored, waitpid(-1)); its output was used.
	WarnToolStatusLost = "tool_status_lost"
	// WarnWarningsDropped: a backend raised more warnings than the cap; this
	// one says how many were left out.
	WarnWarningsDropped = "warnings_dropped"
)

// Timing records how long detection took.
type Timing struct {
	TotalMs  float64            `json:"total_ms"`
	Backends map[string]float64 `json:"backends,omitempty"`
	Cached   bool               `json:"cached,omitempty"`
}

// Registry is the answer of detection.
type Registry struct {
	SchemaVersion int       `json:"schema_version"`
	Devices       []Device  `json:"devices"`
	SystemIO      SystemIO  `json:"system_io"`
	Warnings      []Warning `json:"warnings"`
	Timing        *Timing   `json:"timing,omitempty"`
}

// New returns an empty registry of the current schema version.
func New() *Registry {
	return &Registry{SchemaVersion: SchemaVersion, Devices: []Device{}, Warnings: []Warning{},
		SystemIO: SystemIO{Interconnects: []Interconnect{}, NUMANodes: []NUMANode{}}}
}

// DeviceID builds the contract id of a device: "cuda:0", "tpu:3".
func DeviceID(k Kind, index int) string { return fmt.Sprintf("%s:%d", k.IDPrefix(), index) }

// Normalize fills Family, renumbers indices per kind in the current order,
// rebuilds ids, and makes nil slices empty so JSON shows [] rather than null.
// Interconnect device references are rewritten to the new ids.
func (r *Registry) Normalize() {
	r.SchemaVersion = SchemaVersion
	rename := map[string]string{}
	next := map[Kind]int{}
	for i := range r.Devices {
		d := &r.Devices[i]
		d.Family = d.Kind.Family()
		d.Index = next[d.Kind]
		next[d.Kind]++
		id := DeviceID(d.Kind, d.Index)
		if d.ID != "" && d.ID != id {
			rename[d.ID] = id
		}
		d.ID = id
	}
	for i := range r.Devices {
		if m := r.Devices[i].MIG; m != nil && rename[m.Parent] != "" {
			mig := *m
			mig.Parent = rename[m.Parent]
			r.Devices[i].MIG = &mig
		}
		if p := r.Devices[i].Partition; p != nil {
			r.Devices[i].Partition = p.Renamed(func(id string) string {
				if n, ok := rename[id]; ok {
					return n
				}
				return id
			})
		}
	}
	for i := range r.SystemIO.Interconnects {
		ic := &r.SystemIO.Interconnects[i]
		if ic.Devices == nil {
			ic.Devices = []string{}
		}
		for j, id := range ic.Devices {
			if n, ok := rename[id]; ok {
				ic.Devices[j] = n
			}
		}
	}
	r.fillEmpty()
}

// Renamed is a copy of p with its parent and children ids passed through
// rename.
func (p *Partition) Renamed(rename func(id string) string) *Partition {
	q := *p
	if q.Parent != "" {
		q.Parent = rename(q.Parent)
	}
	if len(q.Children) > 0 {
		q.Children = make([]string, len(p.Children))
		for j, id := range p.Children {
			q.Children[j] = rename(id)
		}
	}
	return &q
}

// SortDevices orders devices deterministically: CPU first, then by kind in
// contract order, then by PCI bus id (devices without one keep their relative
// order after those with one).
func (r *Registry) SortDevices() {
	rank := kindRank
	sort.SliceStable(r.Devices, func(i, j int) bool {
		a, b := r.Devices[i], r.Devices[j]
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] < rank[b.Kind]
		}
		// Under a visibility variable the runtime's order wins, so that
		// "cuda:0" is the device the process calls 0.
		if va, vb := visibleOrdinal(a), visibleOrdinal(b); va >= 0 && vb >= 0 && va != vb {
			return va < vb
		}
		if (a.PCIBusID == "") != (b.PCIBusID == "") {
			return a.PCIBusID != ""
		}
		return a.PCIBusID < b.PCIBusID
	})
}

// kindRank is each kind's place in Kinds, for SortDevices: made once, not
// on every detection (docs/performance.md, "Eighth pass").
var kindRank = func() map[Kind]int {
	rank := map[Kind]int{}
	for i, k := range Kinds() {
		rank[k] = i
	}
	return rank
}()

// visibleOrdinal returns d.VisibleAs as a number, or -1 when it is not set.
func visibleOrdinal(d Device) int {
	n, err := strconv.Atoi(d.VisibleAs)
	if err != nil || n < 0 {
		return -1
	}
	return n
}
