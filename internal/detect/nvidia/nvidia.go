package nvidia

import (
	"context"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// The NVIDIA backend ("cuda"). NVML, loaded in-process when the machine view
// names it (nvidia_nvml.go), gives the GPUs, their MIG instances and their
// NVLink/PCIe topology (nvidia_nvml_topo.go) without any tool; or else one
// `nvidia-smi --query-gpu` run gives the GPUs; with more than one NVIDIA GPU
// in sysfs, `nvidia-smi topo -m` runs at the same time for NVLink/NVSwitch
// topology. Without a working nvidia-smi the
// GPUs come from sysfs and /proc/driver/nvidia. CUDA_VISIBLE_DEVICES hides
// and reorders GPUs as the CUDA runtime would.

const (
	BackendCUDA   = "cuda"
	ToolNvidiaSMI = "nvidia-smi"
	EnvCUDAVis    = "CUDA_VISIBLE_DEVICES"
)

// Backend is this file's detection source (the orchestrator lists it).
var Backend = machine.Backend{Name: BackendCUDA, Detect: detectNVIDIA}

// nvDevice is a device with the nvidia-smi index it is known by (the index
// CUDA_VISIBLE_DEVICES and `topo -m` use).
type nvDevice struct {
	dev   registry.Device
	index int
	slice bool // a MIG instance of the GPU at index
}

// nvFabric is what sysfs says before any tool runs.
type nvFabric struct {
	GPUs     []machine.PCIDevice // NVIDIA display functions: class 0x0300xx or 0x0302xx
	NVSwitch bool                // an NVSwitch is present (PCI function or /dev node)
}

// topoResult carries the concurrent `topo -m` run back.
type topoResult struct {
	out []byte
	w   *registry.Warning
	ok  bool
}

func detectNVIDIA(ctx context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	startNVML(m)
	fabric := ReadNvidiaFabric(m)

	// NVML first: when it answers, no tool runs at all (devices, MIG
	// instances and topology all come from the one in-process read).
	devs, snap, viaNVML := nvidiaFromNVML(ctx, m, &f, fabric)
	if viaNVML {
		migDone := false
		if devs, migDone = nvmlMIGInstances(snap, devs); !migDone {
			devs = nvidiaMIGInstances(ctx, m, &f, devs)
		}
		devs = applyCUDAVisibility(m, &f, devs)
		if len(fabric.GPUs) > 1 {
			f.Interconnects = append(f.Interconnects, nvmlInterconnects(snap, devs, fabric.NVSwitch)...)
		}
		if fabric.NVSwitch && !nvmlReadLinks(snap) {
			// An NVML without the NVLink entry points says nothing of
			// the links: sysfs's NVSwitches, as without a tool.
			f.Interconnects = append(f.Interconnects, nvswitchFromSysfs(devs)...)
		}
		return withDevices(f, devs)
	}

	// Topology only matters with two GPUs or more; sysfs says so before any
	// tool runs, so topo -m runs beside the query rather than after it.
	var topoCh chan topoResult
	if len(fabric.GPUs) > 1 && m.HasTool(ToolNvidiaSMI) {
		topoCh = make(chan topoResult, 1)
		go func() {
			out, w, ok := m.Tool(ctx, BackendCUDA, ToolNvidiaSMI, "topo", "-m")
			topoCh <- topoResult{out, w, ok}
		}()
	}

	devs, fromTool, failure := nvidiaFromTool(ctx, m, &f, fabric)
	if !fromTool {
		devs = nvidiaFromSysfs(m, &f, fabric, brokenDriverReason(failure))
	}
	devs = nvidiaMIGInstances(ctx, m, &f, devs)
	devs = applyCUDAVisibility(m, &f, devs)

	topoDone := false
	if topoCh != nil {
		r := <-topoCh
		f.AddWarning(r.w)
		if r.ok && fromTool {
			f.Interconnects = append(f.Interconnects, nvidiaInterconnects(&f, r.out, devs, fabric.NVSwitch)...)
			topoDone = true
		} else if fromTool {
			// topo -m fails on real nodes where nvidia-smi still answers.
			var ics []registry.Interconnect
			ics, topoDone = nvlinkStatusInterconnects(ctx, m, &f, devs, fabric.NVSwitch)
			f.Interconnects = append(f.Interconnects, ics...)
		}
	}
	if !topoDone && fabric.NVSwitch {
		f.Interconnects = append(f.Interconnects, nvswitchFromSysfs(devs)...)
	}
	return withDevices(f, devs)
}

// withDevices puts devs on f.
func withDevices(f machine.Findings, devs []nvDevice) machine.Findings {
	for _, d := range devs {
		f.Devices = append(f.Devices, d.dev)
	}
	return f
}

// ReadNvidiaFabric lists the NVIDIA GPU functions and looks for NVSwitches:
// an NVIDIA function of class 0x0680xx (Linux drivers/pci/pci-sysfs.c), or a /dev/nvidia-nvswitchN node
// (https://github.com/NVIDIA/open-gpu-kernel-modules). The HDMI audio function (class 0x0403)
// and the NVSwitches are not GPUs.
func ReadNvidiaFabric(m *machine.Machine) nvFabric {
	var fab nvFabric
	for _, p := range m.PCIDevices(machine.VendorNVIDIA) {
		switch p.Class >> 8 {
		case 0x0300, 0x0302:
			fab.GPUs = append(fab.GPUs, p)
		case 0x0680:
			// Every NVIDIA function of class 0x0680 ("bridge: other") in
			// the PCI ID repository is an NVSwitch (GV100 1ac0-1ac2, A100
			// 1af1, H100 22a3: https://pci-ids.ucw.cz/read/PC/10de); an
			// HGX dump may not even carry the device id
			// (testdata/machines/hgx-h100-nccl-topo-no-tools).
			fab.NVSwitch = true
		}
	}
	for e := range m.DirEntries("dev") {
		if rest, ok := strings.CutPrefix(e.Name(), "nvidia-nvswitch"); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				fab.NVSwitch = true
			}
		}
	}
	return fab
}

// nvidiaFromTool runs the one --query-gpu. fromTool is false when the tool is
// absent, failed, or printed no usable GPU line: the caller falls back to
// sysfs. A driver that rejects an optional field is asked again without it.
// failure is the failed run's message, for brokenDriverReason.
func nvidiaFromTool(ctx context.Context, m *machine.Machine, f *machine.Findings, fab nvFabric) (devs []nvDevice, fromTool bool, failure string) {
	if m.LacksTool(ToolNvidiaSMI) {
		// What both queries below would answer, without building them: on
		// a machine without the tool that was 2 KB every detection
		// (docs/performance.md, "Tenth pass").
		return nil, false, ""
	}
	fields := append([]string(nil), NVQueryFields...)
	var dropped []string
	for {
		args := []string{"--query-gpu=" + strings.Join(fields, ","), "--format=csv,noheader,nounits"}
		out, w, ok := m.Tool(ctx, BackendCUDA, ToolNvidiaSMI, args...)
		if !ok {
			// A snapshot recorded before the telemetry columns holds the
			// query without them, and its replay answers this one as a
			// missing tool (no warning): ask that query once.
			if w == nil && removeTelemetry(&fields) {
				continue
			}
			if w != nil {
				if bad := nvRejectedField([]byte(w.Message)); nvOptionalFields[bad] && removeField(&fields, bad) {
					dropped = append(dropped, bad)
					continue
				}
			}
			f.AddWarning(w)
			if w != nil {
				failure = w.Message
			}
			return nil, false, failure
		}
		if len(dropped) > 0 {
			f.Warn(BackendCUDA, registry.WarnFallback, "nvidia-smi rejects %s (older driver); queried without: "+
				"what depends on it (compute capability, precisions beyond fp32/fp16, MIG mode) is unknown",
				strings.Join(dropped, ", "))
		}
		gpus, issues, dropped := ParseNvidiaCSV(out, fields)
		f.DroppedWarnings += dropped
		for _, is := range issues {
			f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendCUDA, Code: is.Code,
				Message: "nvidia-smi --query-gpu: " + is.Message, Tool: ToolNvidiaSMI})
		}
		// A GPU at another vendor's PCI function is not an NVIDIA GPU.
		gpus = machine.RowsAtVendor(m, f, BackendCUDA, ToolNvidiaSMI, false, gpus, func(g nvGPU) string { return g.BusID }, machine.VendorNVIDIA)
		if len(gpus) == 0 && len(fab.GPUs) > 0 {
			f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendCUDA, Code: registry.WarnToolFailed,
				Tool: ToolNvidiaSMI, Message: "nvidia-smi --query-gpu printed no usable GPU line"})
			return nil, false, ""
		}
		for _, g := range gpus {
			d := deviceFromQuery(m, g)
			applyUnifiedMemory(m, f, &d)
			noteCoherentHostMemory(m, f, &d)
			devs = append(devs, nvDevice{dev: d, index: g.Index})
		}
		return devs, true, ""
	}
}

// removeTelemetry drops the telemetry columns from fields; false when they
// were already gone.
func removeTelemetry(fields *[]string) bool {
	removed := false
	for _, f := range NVTelemetryFields {
		removed = removeField(fields, f) || removed
	}
	return removed
}

// removeField drops name from fields; false when it was not there (so a
// driver that keeps rejecting cannot loop).
func removeField(fields *[]string, name string) bool {
	for i, f := range *fields {
		if f == name {
			*fields = append((*fields)[:i:i], (*fields)[i+1:]...)
			return true
		}
	}
	return false
}

// deviceFromQuery builds a device from one query row.
func deviceFromQuery(m *machine.Machine, g nvGPU) registry.Device {
	const src = "nvidia-smi"
	d := registry.Device{ID: "gpu" + strconv.Itoa(g.Index), Kind: registry.KindCUDA, Vendor: "nvidia",
		Available: true, Name: g.Name, UUID: g.UUID, PCIBusID: g.BusID, DriverVersion: g.DriverVersion,
		ComputeCapability: g.CC, Quantizations: precision.CUDA(g.CC)}
	for field, set := range map[string]bool{"name": g.Name != "", "uuid": g.UUID != "", "pci_bus_id": g.BusID != "",
		"driver_version": g.DriverVersion != "", "compute_capability": g.CC != ""} {
		if set {
			d.SetSource(field, src)
		}
	}
	if g.MemoryMiB != nil && *g.MemoryMiB > 0 {
		d.MemoryBytes = *g.MemoryMiB << 20
		d.SetSource("memory_bytes", src)
	}
	if g.FreeMiB != nil {
		free := *g.FreeMiB << 20
		d.MemoryFreeBytes = &free
		d.SetSource("memory_free_bytes", src)
	}
	if g.MIGMode != "" {
		d.MIG = &registry.MIG{Mode: g.MIGMode}
		d.SetSource("mig", src)
	}
	if t := g.Telemetry; t != (nvTelemetry{}) {
		d.Telemetry = &registry.Telemetry{UtilizationPercent: t.UtilPct, PowerDrawWatts: t.PowerW,
			PowerLimitWatts: t.PowerLimitW, TemperatureC: t.TempC}
		d.SetSource("telemetry", src)
	}
	if !isProductName(strings.TrimPrefix(d.Name, "NVIDIA ")) {
		nameFromPCIID(m, &d, g.BusID)
	}
	if ds, ok := nvDatasheetFor(m, g.BusID, d.Name, d.MemoryBytes); ok && ds.BandwidthGBs > 0 {
		d.MemoryBandwidthGBs = ds.BandwidthGBs
		d.SetSource("memory_bandwidth_gb_s", "datasheet")
	}
	return d
}

// nvidiaFromSysfs lists the NVIDIA GPUs when nvidia-smi cannot: names and
// UUIDs from /proc/driver/nvidia/gpus/<bdf>/information, the driver version
// from /proc/driver/nvidia/version, name and memory from the part table by
// PCI id. A GPU with no driver bound, or bound to another one (nouveau,
// vfio-pci), is listed unavailable with that reason; so is every GPU when
// broken says the driver stack cannot reach them.
func nvidiaFromSysfs(m *machine.Machine, f *machine.Findings, fab nvFabric, broken string) []nvDevice {
	version := ""
	// Multi-line files are read raw: ReadString's cleaning drops the newlines.
	if b, err := m.ReadFile(path.Join(machine.PathNVProc, "version")); err == nil {
		version = ParseNvidiaProcVersion(string(b))
	}
	var devs []nvDevice
	for _, p := range fab.GPUs {
		idx := len(devs) // NVML numbers GPUs in PCI bus order; sysfs lists them so
		d := registry.Device{ID: "gpu" + strconv.Itoa(idx), Kind: registry.KindCUDA, Vendor: "nvidia",
			Available: true, PCIBusID: p.Address}
		d.SetSource("pci_bus_id", "sysfs")
		if _, deviceRead, ok := m.ScannedFunction(p.Address); !ok || deviceRead {
			d.PCIID = p.PCIID()
		}
		raw, err := m.ReadFile(path.Join(machine.PathNVProc, "gpus", p.Address, "information"))
		driven := p.Driver == "nvidia" || err == nil
		if err == nil {
			info := parseNvidiaProcInfo(string(raw))
			if isProductName(info.Model) {
				d.Name = info.Model
				d.SetSource("name", "procfs")
			}
			if info.UUID != "" {
				d.UUID = info.UUID
				d.SetSource("uuid", "procfs")
			}
		}
		if version != "" && driven {
			d.DriverVersion = version
			d.SetSource("driver_version", "procfs")
		}
		switch {
		case !driven:
			markUnavailable(&d, notDrivenReason(p.Driver), "sysfs")
		case broken != "":
			markUnavailable(&d, broken, "nvidia-smi")
		}
		d.Quantizations = precision.CUDA("")
		applyNvidiaPCIID(&d)
		devs = append(devs, nvDevice{dev: d, index: idx})
	}
	if len(devs) > 0 {
		why := "is not installed"
		if m.HasTool(ToolNvidiaSMI) {
			why = "failed"
		}
		if m.NoExec() {
			why = "was not run (no_exec)"
		}
		f.Warn(BackendCUDA, registry.WarnFallback, "nvidia-smi %s: %d NVIDIA %s read from sysfs and "+
			"/proc/driver/nvidia; name and memory are the part table's where the PCI id is known, free memory is unknown",
			why, len(devs), machine.NounOf(len(devs), "GPU"))
	}
	return devs
}

// markUnavailable records why a present GPU cannot be used.
func markUnavailable(d *registry.Device, reason, source string) {
	d.Available = false
	d.UnavailableReason = reason
	d.SetSource("unavailable_reason", source)
}

// notDrivenReason is why a GPU the NVIDIA driver does not drive is unusable.
func notDrivenReason(driver string) string {
	if driver == "" {
		return "no driver bound"
	}
	return "bound to " + driver + ", not the NVIDIA driver"
}

// brokenDriverReason reads nvidia-smi's failure for the errors that mean
// the driver stack cannot use the GPU at all: an NVML library of another
// version than the loaded kernel module ("Failed to initialize NVML:
// Driver/library version mismatch", testdata/machines/gt640-nvml-mismatch)
// and a GPU the driver cannot open ("Unable to determine the device handle
// for GPU ...", testdata/machines/kata-gt1030-vm), and a driver nvidia-smi
// cannot reach at all ("NVIDIA-SMI has failed because it couldn't
// communicate with the NVIDIA driver", testdata/machines/nvidia-tool-fails
// and TestNVIDIAUnreachableDriverMakesBoundGPUUnavailable: CUDA reaches the
// GPU through the same driver). Other failures (a missing
// or hanging tool) say nothing about the GPU: "".
func brokenDriverReason(failure string) string {
	switch {
	case strings.Contains(failure, "Driver/library version mismatch"):
		return "NVML/driver version mismatch (nvidia-smi: Failed to initialize NVML: Driver/library version mismatch)"
	case strings.Contains(failure, "Unable to determine the device handle"):
		_, msg, _ := strings.Cut(failure, "Unable to determine the device handle")
		return "the driver cannot open the GPU (nvidia-smi: Unable to determine the device handle" + firstLine(msg) + ")"
	case strings.Contains(failure, "couldn't communicate with the NVIDIA driver"):
		return "the NVIDIA driver is not reachable (nvidia-smi: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver)"
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// isProductName rejects what procfs prints when the driver does not know the
// part: "Unknown" (kata-gt1030-vm) and old drivers' "Graphics Device".
func isProductName(model string) bool {
	switch strings.ToLower(strings.TrimSpace(model)) {
	case "", "unknown", "graphics device", "nvidia graphics device", "n/a", "[n/a]":
		return false
	}
	return true
}

// nameFromPCIID replaces the name nvidia-smi printed for a card its driver
// predates ("Graphics Device", "NVIDIA Graphics Device": a GeForce GTX 1660
// under a driver older than the card) by the part's name from its PCI id,
// with the compute capability when the tool gave none.
func nameFromPCIID(m *machine.Machine, d *registry.Device, busID string) {
	ds, ok := nvDatasheetFor(m, busID, "", 0)
	if !ok || len(ds.PCIIDs) == 0 {
		d.Name = ""
		delete(d.Sources, "name")
		return
	}
	d.Name = partName(ds)
	d.SetSource("name", "pci-id-table")
	if d.ComputeCapability == "" && ds.Arch != "" {
		d.ComputeCapability = ds.Arch
		d.SetSource("compute_capability", "pci-id-table")
		d.Quantizations = precision.CUDA(ds.Arch)
	}
}

// applyNvidiaPCIID fills, from the PCI id alone, what nvidia-smi would have
// said: the product name (when procfs gave none), compute capability and
// precisions, memory and bandwidth from the internal/specs record of the id.
// A memory figure the record states in GB without evidence that it means GiB
// is taken as 10^9 bytes, a lower bound. Ids specs does not know leave those
// unknown.
func applyNvidiaPCIID(d *registry.Device) {
	ds, ok := specs.ByPCIID(d.PCIID)
	if !ok {
		return
	}
	if name := partName(ds); d.Name == "" && name != "" {
		d.Name = name
		d.SetSource("name", "pci-id-table")
	}
	if ds.Arch != "" {
		d.ComputeCapability = ds.Arch
		d.SetSource("compute_capability", "pci-id-table")
		d.Quantizations = precision.CUDA(ds.Arch)
	}
	if mem := specs.DeviceMemoryBytes(ds); mem > 0 {
		d.MemoryBytes = mem
		d.SetSource("memory_bytes", "pci-id-table")
	} else if ds.MemoryUnit == "GB" && ds.MemoryBytes > 0 && !ds.MemoryIsMaximum && !ds.MemoryVaries {
		d.MemoryBytes = ds.MemoryBytes
		d.SetSource("memory_bytes", "pci-id-table (datasheet GB as 10^9 bytes)")
	}
	if ds.BandwidthGBs > 0 {
		d.MemoryBandwidthGBs = ds.BandwidthGBs
		d.SetSource("memory_bandwidth_gb_s", "datasheet")
	}
}

// partName is the name nvidia-smi prints for a record's part: its
// ProductName, else its first alias (the tool's spelling), else its name.
func partName(s specs.Spec) string {
	switch {
	case s.ProductName != "":
		return s.ProductName
	case len(s.Aliases) > 0:
		return s.Aliases[0]
	}
	return s.Name
}

// nvidiaMIGInstances runs `nvidia-smi -L` only when a GPU has MIG enabled,
// and `nvidia-smi -q` for the instances' memory (expandMIG).
func nvidiaMIGInstances(ctx context.Context, m *machine.Machine, f *machine.Findings, devs []nvDevice) []nvDevice {
	if !anyMIGEnabled(devs) {
		return devs
	}
	out, w, ok := m.Tool(ctx, BackendCUDA, ToolNvidiaSMI, "-L")
	f.AddWarning(w)
	if !ok {
		return devs
	}
	byIndex := map[int][]nvListMIG{}
	for _, g := range ParseNvidiaList(out) {
		byIndex[g.Index] = g.MIG
	}
	qgpus := migQuery(ctx, m, f)
	return expandMIG(devs, byIndex, func(d nvDevice, inst nvListMIG) (qMIGMemory, bool) {
		return migMemoryOf(qgpus, d.index, d.dev.PCIBusID, inst.Device)
	})
}

// anyMIGEnabled reports whether a GPU of devs is in MIG mode.
func anyMIGEnabled(devs []nvDevice) bool {
	for _, d := range devs {
		if d.dev.MIG != nil && d.dev.MIG.Mode == "enabled" {
			return true
		}
	}
	return false
}

// expandMIG lists the MIG instances of each GPU in MIG mode (instances, by
// GPU index) after it. A MIG-enabled GPU runs work only through its
// instances (NVIDIA MIG User Guide,
// https://docs.nvidia.com/datacenter/tesla/mig-user-guide/), so each
// instance becomes a device after its parent, and the parent stays listed,
// unavailable, with the instance UUIDs as its children. memOf gives an
// instance's memory and GPU/compute instance where the source has them.
func expandMIG(devs []nvDevice, instances map[int][]nvListMIG, memOf func(nvDevice, nvListMIG) (qMIGMemory, bool)) []nvDevice {
	var res []nvDevice
	for _, d := range devs {
		insts := instances[d.index]
		if d.dev.MIG == nil || d.dev.MIG.Mode != "enabled" || len(insts) == 0 {
			res = append(res, d)
			continue
		}
		parent := d
		mig := *parent.dev.MIG
		parent.dev.MIG = &mig
		parent.dev.Available = false
		parent.dev.UnavailableReason = "MIG mode enabled: work runs on its MIG instances, listed as devices"
		parent.dev.SetSource("unavailable_reason", "nvidia-smi")
		res = append(res, parent)
		first := len(res)
		for n, inst := range insts {
			mig.Children = append(mig.Children, inst.UUID)
			dev := migInstanceDevice(parent.dev, n, inst)
			if mem, ok := memOf(d, inst); ok {
				setMIGMemory(&dev, mem)
			}
			res = append(res, nvDevice{dev: dev, index: d.index, slice: true})
		}
		markSharedGPUInstances(res[first:])
	}
	return res
}

// migInstanceDevice is one MIG instance of parent as a device: the parent's
// identity and precisions, the instance's UUID and profile, and the memory the
// profile names ("1g.10gb": 10 GB), which nvidiaMIGInstances replaces by
// what `nvidia-smi -q` reports (mig_memory.go). The label is a rounded name,
// not a measurement: below the slice on A100/H100 80GB (1g.10gb = 9984 MiB)
// but above it on later parts (`nvidia-smi mig -lgip`: B200 1g.23gb 20.50
// GiB, https://github.com/NVIDIA/mig-parted/pull/187; GB200 1g.24gb 20.00
// GiB, https://github.com/NVIDIA/gpu-operator/pull/1303; H100 NVL 1g.12gb
// 10.75 GiB, https://github.com/NVIDIA/gpu-operator/pull/903), so the
// fallback carries a warning. A slice is not a PCI function.
func migInstanceDevice(parent registry.Device, n int, inst nvListMIG) registry.Device {
	d := registry.Device{ID: parent.ID + "-mig" + strconv.Itoa(n), Kind: registry.KindCUDA, Vendor: "nvidia",
		Available: true, Name: parent.Name + " MIG " + inst.Profile, UUID: inst.UUID,
		DriverVersion: parent.DriverVersion, ComputeCapability: parent.ComputeCapability,
		Quantizations: parent.Quantizations,
		MIG:           &registry.MIG{Instance: inst.UUID, Profile: inst.Profile, Parent: parent.ID}}
	for _, field := range []string{"driver_version", "compute_capability"} {
		if src := parent.Sources[field]; src != "" {
			d.SetSource(field, src)
		}
	}
	d.SetSource("name", "nvidia-smi -L")
	d.SetSource("uuid", "nvidia-smi -L")
	d.SetSource("mig", "nvidia-smi -L")
	if gb := migProfileGB(inst.Profile); gb > 0 {
		d.MemoryBytes = gb * 1e9
		d.SetSource("memory_bytes", "nvidia-smi -L (MIG profile)")
	}
	return d
}

// migProfilePattern reads a GPU instance profile, with the compute instance
// prefix nvidia-smi -L prints for a compute instance smaller than its GPU
// instance ("1c.3g.71gb": one compute slice of a 3g.71gb GPU instance).
var migProfilePattern = regexp.MustCompile(`^(?:[0-9]+c\.)?[0-9]+g\.([0-9]+)gb`)

// migProfileGB is the memory a MIG profile names ("3g.40gb" -> 40,
// "1g.10gb+me" -> 10, "2c.3g.71gb" -> 71, the GPU instance's); 0 when the
// name has none.
func migProfileGB(profile string) int64 {
	m := migProfilePattern.FindStringSubmatch(profile)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > 1<<20 {
		return 0
	}
	return n
}

// applyCUDAVisibility keeps the GPUs CUDA_VISIBLE_DEVICES shows, in its
// order, as the CUDA runtime does (CUDA C++ Programming Guide, "CUDA
// Environment Variables"): entries are indices, GPU UUIDs or unique UUID
// prefixes ("GPU-8932f937"), or MIG ids; "if one of the indices is invalid,
// only the devices whose index precedes the invalid index are visible"
// (so "-1" ends the list and hides what follows). An empty value, "-1" and
// "none" hide every GPU without a warning; any other entry that matches no
// GPU (or several, or one already listed) is a visibility_invalid warning and
// ends the list. Indices are nvidia-smi's (PCI bus order); CUDA's default
// order (CUDA_DEVICE_ORDER=FASTEST_FIRST) can differ on mixed-model hosts.
// A GPU in MIG mode that is named makes its instances visible; a named MIG
// instance is visible alone, its parent kept (unavailable) beside it.
func applyCUDAVisibility(m *machine.Machine, f *machine.Findings, devs []nvDevice) []nvDevice {
	val, set := m.Env(EnvCUDAVis)
	if !set || len(devs) == 0 {
		return devs
	}
	shown := map[int]bool{} // positions in devs
	var order []int
	show := func(i int) {
		if !shown[i] {
			shown[i] = true
			order = append(order, i)
		}
	}
	for _, entry := range strings.Split(val, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" && strings.TrimSpace(val) == "" || entry == "none" {
			break
		}
		i, ok, quiet := matchCUDAEntry(entry, devs)
		if ok && shown[i] {
			ok, quiet = false, false
		}
		if !ok {
			if !quiet {
				f.Warn(BackendCUDA, registry.WarnVisibilityInvalid, "%s=%q: entry %q matches no single unlisted NVIDIA GPU; "+
					"it and the entries after it are ignored, as by the CUDA runtime", EnvCUDAVis, val, entry)
			}
			break
		}
		if devs[i].slice {
			show(parentOf(devs, i))
		}
		show(i)
		if !devs[i].slice {
			for j := range devs {
				if devs[j].slice && devs[j].index == devs[i].index {
					show(j)
				}
			}
		}
	}
	var visible []nvDevice
	ordinal, hidden, total := 0, 0, 0
	for i, d := range devs {
		if d.dev.Available {
			total++
			if !shown[i] {
				hidden++
			}
		}
	}
	for _, i := range order {
		d := devs[i]
		if d.dev.Available {
			d.dev.VisibleAs = strconv.Itoa(ordinal)
			d.dev.SetSource("visible_as", "env")
			ordinal++
		}
		visible = append(visible, d)
	}
	if hidden > 0 {
		f.Warn(BackendCUDA, registry.WarnHiddenByEnv, "%d of %d NVIDIA %s hidden by %s=%q",
			hidden, total, machine.NounOf(total, "GPU"), EnvCUDAVis, val)
	}
	return visible
}

// parentOf is the position of the GPU a MIG instance at position i is carved from.
func parentOf(devs []nvDevice, i int) int {
	for j, d := range devs {
		if !d.slice && d.index == devs[i].index {
			return j
		}
	}
	return i
}

// matchCUDAEntry finds the device an entry names. quiet marks a deliberate
// terminator (a negative index) that needs no warning.
func matchCUDAEntry(entry string, devs []nvDevice) (i int, ok, quiet bool) {
	if n, err := strconv.Atoi(entry); err == nil {
		if n < 0 {
			return 0, false, true
		}
		for j, d := range devs {
			if !d.slice && d.index == n {
				return j, true, false
			}
		}
		return 0, false, false
	}
	uuid := entry
	if rest, isMIG := strings.CutPrefix(entry, "MIG-"); isMIG {
		for j, d := range devs {
			if d.slice && d.dev.UUID == entry {
				return j, true, false
			}
		}
		// The older form names the parent: MIG-GPU-<uuid>/<gi>/<ci>.
		if !strings.HasPrefix(rest, "GPU-") {
			return 0, false, false
		}
		uuid, _, _ = strings.Cut(rest, "/")
	}
	if !strings.HasPrefix(uuid, "GPU-") || len(uuid) <= len("GPU-") {
		return 0, false, false
	}
	match := -1
	for j, d := range devs {
		if !d.slice && strings.HasPrefix(d.dev.UUID, uuid) {
			if match >= 0 {
				return 0, false, false // ambiguous prefix
			}
			match = j
		}
	}
	return match, match >= 0, false
}

// nvidiaInterconnects turns `topo -m` into NVLink/NVSwitch entries among the
// visible GPUs (interconnectsFromTopo) and gives the GPUs their NICs.
func nvidiaInterconnects(f *machine.Findings, out []byte, devs []nvDevice, nvswitch bool) []registry.Interconnect {
	t, err := ParseNvidiaTopo(out)
	if err != nil {
		f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendCUDA, Code: registry.WarnParseError,
			Message: "nvidia-smi " + err.Error(), Tool: ToolNvidiaSMI})
		return nil
	}
	setNICAffinity(t, devs)
	return interconnectsFromTopo(t, devs, nvswitch, topoLinks{source: "nvidia-smi topo -m", perLinkGBs: nvLinkPerLinkByCC})
}

// topoLinks says where a matrix came from and what one NVLink between two
// GPUs carries (bidirectional GB/s; 0 unknown) and, where the source says,
// one link's speed in one direction.
type topoLinks struct {
	source     string
	perLinkGBs func(a, b nvDevice) float64
	linkGBs    func(a, b nvDevice) float64 // nil: not reported
}

// nvLinkPerLinkByCC is one NVLink's bidirectional bandwidth of two GPUs of
// the same compute capability, from the part table (specs.NVLinkPerLinkGBs).
func nvLinkPerLinkByCC(a, b nvDevice) float64 {
	if a.dev.ComputeCapability != b.dev.ComputeCapability {
		return 0
	}
	return specs.NVLinkPerLinkGBs(a.dev.ComputeCapability)
}

// interconnectsFromTopo turns a GPU matrix (`topo -m`'s, or the one rebuilt
// from NVML) into NVLink/NVSwitch entries among the visible GPUs. With an
// NVSwitch in the fabric and every pair NV-connected, the GPUs form one
// nvswitch domain; otherwise each NV-connected pair is an nvlink entry.
// PCIe paths (PIX, PXB, PHB, NODE, SYS) are not interconnects.
func interconnectsFromTopo(t nvTopo, devs []nvDevice, nvswitch bool, tl topoLinks) []registry.Interconnect {
	inTopo := map[int]bool{}
	for _, g := range t.GPUs {
		inTopo[g] = true
	}
	var gpus []nvDevice
	for _, d := range devs {
		if inTopo[d.index] && !d.slice { // the matrix has one column per physical GPU
			gpus = append(gpus, d)
		}
	}
	if len(gpus) < 2 {
		return nil
	}
	allLinked, minLinks, linkGBs := true, 0, 0.0
	var pairs []registry.Interconnect
	for a := 0; a < len(gpus); a++ {
		for b := a + 1; b < len(gpus); b++ {
			n := nvLinks(t.Link(gpus[a].index, gpus[b].index))
			if n == 0 {
				allLinked = false
				continue
			}
			if minLinks == 0 || n < minLinks {
				minLinks = n
			}
			ic := registry.Interconnect{Kind: registry.LinkNVLink, Devices: []string{gpus[a].dev.ID, gpus[b].dev.ID},
				Links: n, Source: tl.source}
			if per := tl.perLinkGBs(gpus[a], gpus[b]); per > 0 {
				ic.BandwidthGBs = per * float64(n)
			}
			if tl.linkGBs != nil {
				ic.LinkBandwidthGBs = tl.linkGBs(gpus[a], gpus[b])
				if linkGBs == 0 || (ic.LinkBandwidthGBs > 0 && ic.LinkBandwidthGBs < linkGBs) {
					linkGBs = ic.LinkBandwidthGBs
				}
			}
			pairs = append(pairs, ic)
		}
	}
	if !nvswitch || !allLinked {
		return pairs
	}
	ic := registry.Interconnect{Kind: registry.LinkNVSwitch, Links: minLinks, Source: tl.source, LinkBandwidthGBs: linkGBs}
	bw := -1.0
	for _, g := range gpus {
		ic.Devices = append(ic.Devices, g.dev.ID)
		per := nvLinkPerGPUGBs(g.dev)
		switch {
		case per == 0:
			bw = 0
		case bw < 0:
			bw = per
		case bw != per:
			bw = 0
		}
	}
	if bw > 0 {
		ic.BandwidthGBs = bw
	}
	return []registry.Interconnect{ic}
}

// nicPathRank orders topo -m's PCIe path classes from nearest to farthest
// (its legend); SYS (across NUMA nodes) and anything else is not affinity.
var nicPathRank = map[string]int{"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3}

// setNICAffinity gives every physical GPU the NICs topo -m places on its
// side of the machine (PIX, PXB, PHB, NODE), nearest first, named by the NIC
// Legend (mlx5_0); a MIG slice shares its GPU's.
func setNICAffinity(t nvTopo, devs []nvDevice) {
	for i := range devs {
		var nics []registry.NICAffinity
		for _, c := range t.NICPaths[devs[i].index] {
			name := t.NICs[c[0]]
			if _, near := nicPathRank[c[1]]; !near || name == "" {
				continue
			}
			nics = append(nics, registry.NICAffinity{Name: name, Path: c[1]})
		}
		sort.SliceStable(nics, func(a, b int) bool { return nicPathRank[nics[a].Path] < nicPathRank[nics[b].Path] })
		if len(nics) > 0 {
			devs[i].dev.NICs = nics
			devs[i].dev.SetSource("nics", "nvidia-smi topo -m")
		}
	}
}

// nvLinkPerGPUGBs is a GPU's NVLink bandwidth per GPU (the datasheet's
// bidirectional aggregate), from its internal/specs record by name; 0 when
// the record gives none or its interconnect is not NVLink (an L40S's figure
// is PCIe).
func nvLinkPerGPUGBs(d registry.Device) float64 {
	ds, ok := specs.ForDevice(&registry.Device{Name: d.Name, MemoryBytes: d.MemoryBytes})
	if !ok || !strings.HasPrefix(ds.Interconnect, "NVLink") {
		return 0
	}
	return ds.InterconnectGBs
}

// nvDatasheetFor finds the internal/specs record of a GPU: by the PCI id
// sysfs gives for its bus id, else by its product name (specs' matching,
// which rejects a record whose memory size says it is another SKU).
func nvDatasheetFor(m *machine.Machine, busID, name string, memBytes int64) (specs.Spec, bool) {
	probe := registry.Device{Name: name, MemoryBytes: memBytes}
	if p, deviceRead, ok := m.ScannedFunction(busID); ok {
		if deviceRead && p.Vendor == machine.VendorNVIDIA {
			probe.PCIID = p.PCIID()
		}
	} else if busID != "" {
		if id, err := m.ReadInt(path.Join(machine.PathPCIDevices, busID, "device")); err == nil {
			if v, err := m.ReadInt(path.Join(machine.PathPCIDevices, busID, "vendor")); err == nil && v == machine.VendorNVIDIA {
				probe.PCIID = machine.Hex4(int(v)) + ":" + machine.Hex4(int(id))
			}
		}
	}
	return specs.ForDevice(&probe)
}

// nvListGPU is one GPU of `nvidia-smi -L` with its MIG instances.
type nvListGPU struct {
	Index int
	UUID  string
	MIG   []nvListMIG
}

// nvListMIG is one MIG instance line: its profile ("1g.10gb"), device
// number ("Device  2:", the "Index" of `nvidia-smi -q`; -1 when absent) and
// UUID.
type nvListMIG struct {
	Profile string
	Device  int
	UUID    string
}

// ParseNvidiaList parses `nvidia-smi -L`: "GPU 0: <name> (UUID: GPU-...)"
// (https://github.com/utkuozdemir/nvidia_gpu_exporter internal/captures) and, under a MIG-enabled GPU, indented lines
// "  MIG 1g.10gb     Device  0: (UUID: MIG-...)" (the layout of the NVIDIA
// MIG User Guide examples and public captures).
func ParseNvidiaList(out []byte) []nvListGPU {
	var gpus []nvListGPU
	for _, line := range strings.Split(string(out), "\n") {
		t := strings.TrimSpace(line)
		uuid := ""
		if i := strings.LastIndex(t, "(UUID: "); i >= 0 && strings.HasSuffix(t, ")") {
			uuid = strings.TrimSpace(t[i+len("(UUID: ") : len(t)-1])
		}
		if g, ok := parseNvidiaListGPU(t); ok {
			gpus = append(gpus, g)
			continue
		}
		if strings.HasPrefix(t, "MIG ") && len(gpus) > 0 && strings.HasPrefix(uuid, "MIG-") {
			g := &gpus[len(gpus)-1]
			g.MIG = append(g.MIG, nvListMIG{Profile: strings.Fields(t)[1], Device: migDeviceNumber(t), UUID: uuid})
		}
	}
	return gpus
}

// nvswitchFromSysfs is the NVSwitch domain of the usable GPUs when no tool
// ran: on an HGX/DGX baseboard every SXM GPU is cabled to the NVSwitches, so
// their presence in sysfs says the GPUs share the fabric. Link counts are not
// known without the tool; the bandwidth per GPU is the part table's when
// every GPU has the same figure.
func nvswitchFromSysfs(devs []nvDevice) []registry.Interconnect {
	ic := registry.Interconnect{Kind: registry.LinkNVSwitch, Source: "sysfs (NVSwitch PCI functions)"}
	bw := -1.0
	for _, d := range devs {
		if !d.dev.Available || d.slice {
			continue
		}
		ic.Devices = append(ic.Devices, d.dev.ID)
		switch per := nvLinkPerGPUGBs(d.dev); {
		case bw < 0:
			bw = per
		case bw != per:
			bw = 0
		}
	}
	if len(ic.Devices) == 0 {
		return nil
	}
	if bw > 0 {
		ic.BandwidthGBs = bw
	}
	return []registry.Interconnect{ic}
}
