// Package detect finds the accelerators of a machine. Every backend reads the
// machine through one injectable view (Machine): a filesystem rooted at the
// sysroot option for /sys, /proc and /dev, and a Runner for vendor tools
// resolved on the path option. Tests point both at fixture machines under
// testdata/machines/.
package detect

import (
	"os"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd/amdsmi"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/snapshot"
)

// Defaults for Options fields left zero.
const (
	DefaultTimeout = machine.DefaultRunTimeout
	MaxTimeout     = 10 * time.Minute
	// MaxCacheTTL bounds cache_ttl_ms: a day.
	MaxCacheTTL = 24 * time.Hour
)

// Options are the detection options of the wire contract.
type Options struct {
	Sysroot  string            `json:"sysroot"`
	Path     string            `json:"path"`
	Backends []string          `json:"backends"`
	Exclude  []string          `json:"exclude"`
	NoExec   bool              `json:"no_exec"`
	Timeout  time.Duration     `json:"-"`
	CacheTTL time.Duration     `json:"-"`
	Env      map[string]string `json:"env"`

	// LookupEnv reads the process environment at call time: PATH when the
	// path option is empty, and the visibility variables the env option does
	// not set. It tells a variable set to "" (CUDA_VISIBLE_DEVICES="" hides
	// every GPU in the CUDA runtime) from an unset one. The C ABI sets it to a
	// C getenv wrapper that answers false for NULL, because Go's os.LookupEnv
	// only sees the environment the process was started with
	// (golang/go issue 44108,
	// https://github.com/golang/go/issues/44108). Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool) `json:"-"`
	// Runner replaces the live command runner (tests, benchmarks).
	Runner machine.Runner `json:"-"`
	// NVMLLibrary names the NVML library the cuda backend loads in-process
	// instead of running nvidia-smi (tests and benchmarks point it at a
	// fake). Empty means libnvidia-ml.so.1 when detecting this machine
	// itself (sysroot "/", no snapshot, not capturing one, no_exec off);
	// NVMLOff never loads it. See docs/detection.md, "NVML".
	NVMLLibrary string `json:"-"`
	// AMDSMILibrary names the AMD SMI library (libamd_smi.so) the rocm
	// backend loads in-process instead of running rocm-smi, with the same
	// rules as NVMLLibrary (empty: libamd_smi.so when detecting this machine
	// itself; AMDSMIOff never). See docs/detection.md, "AMD SMI".
	AMDSMILibrary string `json:"-"`

	// Snapshot is the path of a snapshot archive (internal/snapshot) to
	// detect from instead of this machine: files, tool output and the
	// environment come from the archive, no process starts, and a tool run
	// the archive does not hold is a tool absent. Sysroot, Path and Runner
	// are not used then; the env option still overrides the archive's
	// variables.
	Snapshot string `json:"snapshot"`

	// SnapshotOut, when set, asks the caller of Detect (internal/api) to
	// capture the detection into a snapshot archive at this path (Capture),
	// with serial numbers and UUIDs kept when SnapshotKeepIDs.
	SnapshotOut     string `json:"snapshot_out"`
	SnapshotKeepIDs bool   `json:"snapshot_keep_ids"`

	// record, set by Capture, records everything the detection reads.
	record *snapshot.Recorder

	// InlineKernelReads (the inline_kernel_reads option) runs the backends
	// on the caller's goroutine first, as far as their reads allow
	// (machine/inline.go: listings, stats, links, and files the kernel's
	// core writes), and lets a caller that cannot give up (the C ABI's) fly
	// its detection itself (Cache.fresh). A backend that would run a tool,
	// load a vendor library or read a file a driver writes runs again on a
	// worker, bounded by the deadline as always. Off by default: those
	// inline reads are not bounded by the deadline, which only matters if
	// the kernel itself hangs in meminfo, cpuinfo or a sysfs core
	// attribute. What it saves (a third of a steady-state detection without
	// tools): docs/performance.md, "Fifth pass".
	InlineKernelReads bool `json:"inline_kernel_reads"`
}

// NVMLOff as Options.NVMLLibrary keeps detection from loading NVML.
const NVMLOff = "off"

// nvmlLibrary is the NVML library detection loads for opts, "" for none.
func (o Options) nvmlLibrary() string {
	switch {
	case o.NVMLLibrary == NVMLOff || o.Snapshot != "" || o.record != nil || o.NoExec:
		return ""
	case o.NVMLLibrary != "":
		return o.NVMLLibrary
	case o.Sysroot == "/":
		return nvml.DefaultLibrary
	}
	return ""
}

// AMDSMIOff as Options.AMDSMILibrary keeps detection from loading AMD SMI.
const AMDSMIOff = "off"

// amdsmiLibrary is the AMD SMI library detection loads for opts, "" for
// none: as nvmlLibrary.
func (o Options) amdsmiLibrary() string {
	switch {
	case o.AMDSMILibrary == AMDSMIOff || o.Snapshot != "" || o.record != nil || o.NoExec:
		return ""
	case o.AMDSMILibrary != "":
		return o.AMDSMILibrary
	case o.Sysroot == "/":
		return amdsmi.DefaultLibrary
	}
	return ""
}

// NewMachine builds the machine view for opts: the sysroot, and the live
// runner on opts.Path (or opts.Runner when given), or the snapshot of
// opts.Snapshot.
func NewMachine(opts Options) (*machine.Machine, error) {
	cfg, err := newView(opts.withDefaults())
	if err != nil {
		return nil, err
	}
	return machine.New(cfg)
}

// withDefaults returns a copy of o with every zero field given its default.
func (o Options) withDefaults() Options {
	if o.Sysroot == "" {
		o.Sysroot = "/"
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Path == "" {
		o.Path, _ = o.LookupEnv("PATH")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Timeout > MaxTimeout {
		o.Timeout = MaxTimeout
	}
	return o
}

// lookupEnv returns a visibility variable: the env option first, then the
// process environment at call time (LookupEnv; nil reads nothing).
func (o Options) lookupEnv(name string) (string, bool) {
	if v, ok := o.Env[name]; ok {
		return v, true
	}
	if o.LookupEnv == nil {
		return "", false
	}
	return o.LookupEnv(name)
}

// enabled reports whether backend name runs under these options.
func (o Options) enabled(name string) bool {
	for _, x := range o.Exclude {
		if x == name {
			return false
		}
	}
	if len(o.Backends) == 0 {
		return true
	}
	for _, x := range o.Backends {
		if x == name {
			return true
		}
	}
	return false
}
