package nvidia

import (
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/host"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Unified and coherent memory. nvidia-smi prints no memory.total ("[N/A]",
// "Not Supported") for GPUs that have no memory of their own and allocate
// from the system's LPDDR5X like the CPU: DGX Spark's GB10 (listed as a
// known issue: https://docs.nvidia.com/dgx/dgx-spark/known-issues.html) and
// Jetson/Tegra (captures in testdata/machines/dgx-spark-gb10 and
// jetson-agx-orin). CUDA allocates such a GPU's memory from system memory, so
// its memory is the host's MemTotal, shared with the CPU.
//
// A Grace Hopper/Blackwell superchip's GPU has its own HBM, which nvidia-smi
// reports, and also reads the Grace CPU's memory coherently over NVLink-C2C
// (NVIDIA Grace Hopper Superchip Architecture whitepaper,
// https://resources.nvidia.com/en-us-grace-cpu/nvidia-grace-hopper); plans
// keep to the HBM and a warning notes the coherent pool.

// memInfoSource is the provenance of a figure read from /proc/meminfo.
const memInfoSource = "/proc/meminfo"

// applyUnifiedMemory gives a GPU without a memory figure from the tool the
// unified system memory, with a warning that says so.
func applyUnifiedMemory(m *machine.Machine, f *machine.Findings, d *registry.Device) {
	if d.MemoryBytes > 0 {
		return
	}
	d.MemoryShared = true
	total := hostMemTotal(m)
	if total <= 0 {
		applyDatasheetUnifiedMemory(m, f, d)
		return
	}
	d.MemoryBytes = total
	d.MemoryUsableBytes = total
	d.SetSource("memory_bytes", memInfoSource)
	d.SetSource("memory_usable_bytes", memInfoSource)
	f.Warn(BackendCUDA, registry.WarnFallback, "nvidia-smi reports no memory for %q: taken as a unified-memory GPU "+
		"(shared with the CPU, as on DGX Spark and Jetson); its memory is the host's MemTotal (%d bytes, /proc/meminfo), "+
		"of which the CPU and other processes use a share", d.Name, total)
}

// SourceUnifiedDatasheet names a unified-memory GPU's memory taken from the
// part table when /proc/meminfo is out of view.
const SourceUnifiedDatasheet = "datasheet (system memory the GPU shares)"

// applyDatasheetUnifiedMemory gives a unified-memory GPU whose host memory
// cannot be read (a container without /proc/meminfo in view) the system
// memory its part's datasheet states: GB10, "sharing 128GB of LPDDR5x
// memory with the integrated GPU" (internal/specs, NVIDIA DGX Spark porting
// guide). The figure is the datasheet's, in 10^9 bytes, and the warning says
// so; a part without one leaves memory unknown.
func applyDatasheetUnifiedMemory(m *machine.Machine, f *machine.Findings, d *registry.Device) {
	ds, ok := nvDatasheetFor(m, d.PCIBusID, d.Name, 0)
	if !ok || ds.Category != "unified_memory_gpu" || ds.MemoryBytes <= 0 || ds.MemoryIsMaximum {
		f.Warn(BackendCUDA, registry.WarnFallback, "nvidia-smi reports no memory for %q: taken as a unified-memory GPU "+
			"(shared with the CPU, as on DGX Spark and Jetson); memory unknown: /proc/meminfo has no MemTotal", d.Name)
		return
	}
	d.MemoryBytes = ds.MemoryBytes
	d.MemoryUsableBytes = ds.MemoryBytes
	d.SetSource("memory_bytes", SourceUnifiedDatasheet)
	d.SetSource("memory_usable_bytes", SourceUnifiedDatasheet)
	f.Warn(BackendCUDA, registry.WarnFallback, "nvidia-smi reports no memory for %q and /proc/meminfo has no MemTotal: "+
		"taken as a unified-memory GPU with the %d bytes of system memory its datasheet states (%s), "+
		"of which the CPU and other processes use a share", d.Name, ds.MemoryBytes, ds.Name)
}

// noteCoherentHostMemory warns that a Grace superchip's GPU also addresses
// the CPU's memory: memory_bytes is its HBM only.
func noteCoherentHostMemory(m *machine.Machine, f *machine.Findings, d *registry.Device) {
	if !graceSuperchip(d.Name) || d.MemoryBytes <= 0 {
		return
	}
	host := "the Grace CPU's memory"
	if total := hostMemTotal(m); total > 0 {
		host += " (MemTotal " + formatBytes(total) + ", /proc/meminfo)"
	}
	f.Warn(BackendCUDA, registry.WarnFallback, "%q: memory_bytes is its HBM only (nvidia-smi); the GPU also reads %s "+
		"coherently over NVLink-C2C, which plans do not count", d.Name, host)
}

// graceSuperchip reports whether an nvidia-smi name is the GPU of a Grace
// superchip ("NVIDIA GH200 480GB", "NVIDIA GB200").
func graceSuperchip(name string) bool {
	for _, w := range strings.Fields(name) {
		if strings.HasPrefix(w, "GH200") || strings.HasPrefix(w, "GB200") || strings.HasPrefix(w, "GB300") {
			return true
		}
	}
	return false
}

// hostMemTotal is /proc/meminfo's MemTotal in bytes, 0 when unknown.
func hostMemTotal(m *machine.Machine) int64 {
	b, err := m.ReadFile(machine.PathMemInfo)
	if err != nil {
		return 0
	}
	t := host.ParseMemInfo(string(b))["MemTotal"]
	if t <= 0 || t > machine.MaxHostMemory {
		return 0
	}
	return t
}

func formatBytes(n int64) string { return strconv.FormatInt(n, 10) + " bytes" }
