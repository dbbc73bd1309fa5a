package apple

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The Apple backend: the Metal GPU and the Neural Engine of an Apple Silicon
// Mac, from sysctl and system_profiler (formats in apple_parse.go). It keys
// on the machine, not on GOOS (a fixture machine can provide the tools): a
// Mac has sysctl and either system_profiler or no procfs (Linux has sysctl
// too, but always /proc). sysctl's brand string ("Apple M2 Max") alone
// identifies Apple Silicon; system_profiler only adds GPU details. On an
// Intel Mac it reports nothing (no phantom Apple GPU); its AMD or Intel GPUs
// are left to a later backend.
//
// Unified memory: the GPU's memory_bytes is hw.memsize, the same RAM the host
// has, so it is marked memory_shared and must never be added to host RAM.
// What Metal lets the GPU use is less: memory_usable_bytes is the working-set
// cap (metalWorkingSet).

const (
	BackendApple = "apple"
	ToolSysctl   = "sysctl"
	ToolSPProf   = "system_profiler"
)

// SPDisplaysArgs is the one system_profiler run.
var SPDisplaysArgs = []string{"SPDisplaysDataType", "-json"}

// Backend is this file's detection source (the orchestrator lists it).
var Backend = machine.Backend{Name: BackendApple, Detect: DetectApple}

// DetectApple is the apple backend's detection: the Apple GPU of a Mac from
// system_profiler and sysctl.
func DetectApple(ctx context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	if !isMac(m) {
		return f
	}
	h, ok := readSysctlHost(ctx, m, &f)
	if !ok || !isAppleSilicon(h.Brand) {
		return f
	}
	gpu := appleGPU(ctx, m, &f, h)
	f.Devices = append(f.Devices, gpu)
	if ane, ok := neuralEngine(h.Brand); ok {
		f.Devices = append(f.Devices, ane)
	}
	return f
}

// isMac reports whether the machine looks like macOS: sysctl resolves and
// either system_profiler does too or there is no procfs at all.
func isMac(m *machine.Machine) bool {
	if !m.HasTool(ToolSysctl) {
		return false
	}
	return m.HasTool(ToolSPProf) || (!m.Exists(machine.PathCPUInfo) && !m.Exists(machine.PathMemInfo))
}

// readSysctlHost runs sysctl once for appleSysctlNames. A non-zero exit with
// values printed (an unknown name, such as hw.perflevel0.logicalcpu on an
// Intel Mac) keeps the values printed; only a run that printed nothing usable
// is a warning. ok is false when sysctl gave nothing.
func readSysctlHost(ctx context.Context, m *machine.Machine, f *machine.Findings) (sysctlHost, bool) {
	if m.NoExec() {
		return sysctlHost{}, false
	}
	args := append([]string{"-n"}, appleSysctlNames...)
	res := m.Run(ctx, ToolSysctl, args...)
	if errors.Is(res.Err, machine.ErrToolMissing) {
		return sysctlHost{}, false
	}
	partial := res.Err != nil && errors.Is(res.Err, machine.ErrExit) && onlyUnknownPerfLevels(res.Stderr)
	if res.Err != nil && !partial {
		f.AddWarning(machine.ToolWarning(BackendApple, ToolSysctl, args, res))
		return sysctlHost{}, false
	}
	h, issues := parseSysctlHost(string(res.Stdout))
	for _, is := range issues {
		f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendApple, Code: is.Code, Message: is.Message, Tool: ToolSysctl})
	}
	if h.Brand == "" && h.MemoryBytes == 0 {
		f.Warn(BackendApple, registry.WarnToolFailed, "sysctl -n %s printed no value", strings.Join(appleSysctlNames, " "))
		return sysctlHost{}, false
	}
	return h, true
}

// onlyUnknownPerfLevels reports whether every stderr line is sysctl's
// "unknown oid" complaint about a hw.perflevel name: the expected failure on
// an Intel Mac, not a problem to warn about.
func onlyUnknownPerfLevels(stderr []byte) bool {
	text := strings.TrimSpace(string(stderr))
	if text == "" {
		return false
	}
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "unknown oid 'hw.perflevel") {
			return false
		}
	}
	return true
}

// appleGPU builds the Metal GPU of an Apple Silicon Mac. system_profiler gives
// its name, core count and Metal version; without it the GPU is still
// reported (every Apple M chip has one) under the chip's name, with the
// tool's warning.
func appleGPU(ctx context.Context, m *machine.Machine, f *machine.Findings, h sysctlHost) registry.Device {
	d := registry.Device{ID: "gpu", Kind: registry.KindMetal, Vendor: "apple", Available: true,
		Name: h.Brand, Quantizations: precision.Metal()}
	d.SetSource("name", "sysctl")
	if h.MemoryBytes > 0 {
		d.MemoryBytes = h.MemoryBytes
		d.MemoryShared = true
		d.SetSource("memory_bytes", "sysctl")
		d.MemoryUsableBytes = metalWorkingSet(h.MemoryBytes)
		d.SetSource("memory_usable_bytes", SourceWorkingSet)
	}
	if !m.HasTool(ToolSPProf) {
		return finishAppleGPU(d, h)
	}
	if entry, ok := spDisplaysEntry(ctx, m, f); ok {
		if name := machine.CleanText(entry.Model); name != "" {
			d.Name = name
			d.SetSource("name", ToolSPProf)
		}
		cores, ok := entry.GPUCores()
		if !ok {
			f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendApple, Code: registry.WarnParseError,
				Tool: ToolSPProf, Message: "sppci_cores " + strconv.Quote(machine.CleanText(entry.Cores)) + " is not a core count"})
		}
		if cores > 0 {
			d.Cores = cores
			d.SetSource("cores", ToolSPProf)
		}
		if cc := metalSupport(entry.Metal); cc != "" {
			d.ComputeCapability = cc
			d.SetSource("compute_capability", ToolSPProf)
		}
	}
	return finishAppleGPU(d, h)
}

// finishAppleGPU adds the datasheet bandwidth of the chip.
func finishAppleGPU(d registry.Device, h sysctlHost) registry.Device {
	if bw := appleBandwidth(h.Brand, d.Cores); bw > 0 {
		d.MemoryBandwidthGBs = bw
		d.SetSource("memory_bandwidth_gb_s", "datasheet")
	}
	return d
}

// spDisplaysEntry runs system_profiler and returns the Apple GPU entry. A
// failed run, invalid JSON or a report without an Apple GPU is a warning.
func spDisplaysEntry(ctx context.Context, m *machine.Machine, f *machine.Findings) (spDisplay, bool) {
	out, w, ok := m.Tool(ctx, BackendApple, ToolSPProf, SPDisplaysArgs...)
	f.AddWarning(w)
	if !ok {
		return spDisplay{}, false
	}
	ds, err := ParseSPDisplays(out)
	if err != nil {
		f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendApple, Code: registry.WarnParseError,
			Tool: ToolSPProf, Message: "SPDisplaysDataType JSON: " + machine.FirstLine([]byte(err.Error()))})
		return spDisplay{}, false
	}
	entry, ok := AppleGPUEntry(ds)
	if !ok {
		f.Warn(BackendApple, registry.WarnParseError, "system_profiler SPDisplaysDataType lists no Apple GPU on an Apple Silicon Mac")
	}
	return entry, ok
}

// neuralEngine returns the Neural Engine of chips whose core count a source
// gives (neuralEngineCores). Its memory is the host's unified RAM: no figure,
// memory_shared.
func neuralEngine(chip string) (registry.Device, bool) {
	cores, ok := neuralEngineCores[chip]
	if !ok {
		return registry.Device{}, false
	}
	d := registry.Device{ID: "ane", Kind: registry.KindAppleNPU, Vendor: "apple", Name: "Apple Neural Engine",
		Available: true, MemoryShared: true, Cores: cores,
		Quantizations: precision.AppleNeuralEngine()}
	d.SetSource("cores", "datasheet")
	return d, true
}

// MacHostCPU is the host CPU as sysctl describes it, for a machine without
// /proc (macOS): name, vendor, logical CPUs and memory, each with source
// "sysctl". It runs the same sysctl command line as the apple backend, which
// the per-detection runner shares, so the tool runs once. The warnings are
// the apple backend's to report: a caller discards them. ok is false when
// sysctl is absent or printed nothing. The cpu backend is meant to call it
// when neither /proc/cpuinfo nor /proc/meminfo exists.
func MacHostCPU(ctx context.Context, m *machine.Machine, quantizations []string) (registry.Device, bool) {
	if !isMac(m) {
		return registry.Device{}, false
	}
	var scratch machine.Findings
	h, ok := readSysctlHost(ctx, m, &scratch)
	if !ok {
		return registry.Device{}, false
	}
	d := registry.Device{ID: "cpu", Kind: registry.KindCPU, Available: true,
		Quantizations: append([]string(nil), quantizations...)}
	if h.Brand != "" {
		d.Name = h.Brand
		d.SetSource("name", "sysctl")
	}
	if v := macCPUVendor(h.Brand); v != "" {
		d.Vendor = v
		d.SetSource("vendor", "sysctl")
	}
	if h.LogicalCPUs > 0 {
		// hw.ncpu counts logical CPUs; physical cores were not asked, so
		// cores = logical CPUs as the cpu backend does without "cpu cores".
		d.Threads = h.LogicalCPUs
		d.Cores = h.LogicalCPUs
		d.SetSource("cores", "sysctl")
	}
	if h.MemoryBytes > 0 {
		d.MemoryBytes = h.MemoryBytes
		d.SetSource("memory_bytes", "sysctl")
	}
	return d, true
}
