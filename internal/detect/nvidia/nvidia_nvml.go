package nvidia

import (
	"context"
	"fmt"
	"io/fs"
	"iter"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// SourceNVML names the figures read in-process through NVML.
const SourceNVML = "nvml"

// nvidiaFromNVML reads the GPUs through NVML when the machine view names a
// library (machine.Config.NVML) and sysfs shows an NVIDIA GPU: the same
// figures as the --query-gpu run, in one in-process read, plus the driver's
// reserved memory, the processes holding memory and the GPU's health. ok is
// false, with a fallback warning, when the library is absent, fails to
// initialise (no driver, driver/library version mismatch), lacks an entry
// point it needs, hung earlier in this process, or does not answer before
// ctx ends: nvidia-smi is asked then.
func nvidiaFromNVML(ctx context.Context, m *machine.Machine, f *machine.Findings, fab nvFabric) (devs []nvDevice, snap *nvml.Snapshot, ok bool) {
	if len(fab.GPUs) == 0 {
		return nil, nil, false
	}
	path := m.NVMLLibrary()
	if path == "" {
		return nil, nil, false
	}
	lib, err := nvml.Open(ctx, path)
	if err == nil {
		var s *nvml.Snapshot
		if s, err = lib.Read(ctx); err == nil {
			if len(s.Devices) == 0 {
				err = fmt.Errorf("NVML lists no GPU though sysfs shows %d", len(fab.GPUs))
			} else {
				return nvmlDevices(m, f, s), s, true
			}
		}
	}
	f.Warn(BackendCUDA, registry.WarnFallback, "NVML (%s) not used: %v; asking nvidia-smi", path, err)
	return nil, nil, false
}

// startNVML begins loading and initialising NVML (nvml.Start) before the
// backend reads sysfs, when /dev holds the NVIDIA driver's device nodes
// (nvidiactl and one nvidia<N> per GPU: CUDA Installation Guide for Linux,
// "Device Node Verification",
// https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html#runfile-verifications):
// nvmlInit (12.5 ms on an H200) then runs while sysfs is read, where
// before it started only after. nvidiaFromNVML's Open later waits for that
// same load, bounded by the detection's deadline as before, and decides as
// before whether NVML is used. The listing of /dev is the one
// ReadNvidiaFabric reads next (one reading per detection), so a machine
// without those nodes pays nothing more; there NVML, if asked at all, is
// loaded where it always was.
func startNVML(m *machine.Machine) {
	if !driverNodes(m.DirEntries("dev")) {
		return
	}
	if path := m.NVMLLibrary(); path != "" {
		nvml.Start(path)
	}
}

// driverNodes reports whether a /dev listing holds nvidiactl and at least
// one nvidia<N>.
func driverNodes(dev iter.Seq[fs.DirEntry]) bool {
	ctl, gpu := false, false
	for e := range dev {
		name := e.Name()
		if name == "nvidiactl" {
			ctl = true
		} else if n, ok := strings.CutPrefix(name, "nvidia"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			gpu = true
		}
	}
	return ctl && gpu
}

// nvmlMIGInstances lists the MIG instances NVML read (name, UUID, memory,
// GPU and compute instance of each MIG device handle), as
// nvidiaMIGInstances does from `nvidia-smi -L` and `-q`. ok is false when a
// GPU in MIG mode has no MIG devices read (an entry point missing or
// refused): nvidia-smi is asked then.
func nvmlMIGInstances(s *nvml.Snapshot, devs []nvDevice) (res []nvDevice, ok bool) {
	if !anyMIGEnabled(devs) {
		return devs, true
	}
	byIndex := map[int][]nvListMIG{}
	mem := map[string]qMIGMemory{} // by MIG UUID
	for _, nd := range s.Devices {
		if nd.MIG == nil || !nd.MIG.Current {
			continue
		}
		if !nd.MIGDevicesKnown {
			return devs, false
		}
		for _, md := range nd.MIGDevices {
			byIndex[nd.Index] = append(byIndex[nd.Index], nvListMIG{Profile: migProfileFromName(md.Name), Device: md.Index, UUID: md.UUID})
			if md.Memory != nil && md.Memory.Total > 0 && md.Memory.Total <= maxGPUBytes {
				mem[md.UUID] = qMIGMemory{Total: int64(md.Memory.Total), Free: int64(min(md.Memory.Free, md.Memory.Total)),
					GI: md.GPUInstance, CI: md.ComputeInstance}
			}
		}
	}
	res = expandMIG(devs, byIndex, func(_ nvDevice, inst nvListMIG) (qMIGMemory, bool) {
		m, ok := mem[inst.UUID]
		return m, ok
	})
	for i := range res {
		if res[i].slice || (res[i].dev.MIG != nil && len(res[i].dev.MIG.Children) > 0) {
			nvmlSources(&res[i].dev)
		}
	}
	return res, true
}

// nvmlSources names NVML as the source of what expandMIG and the
// --query-gpu row builder marked as nvidia-smi's.
func nvmlSources(d *registry.Device) {
	for field, src := range d.Sources {
		switch src {
		case ToolNvidiaSMI, "nvidia-smi -L", SourceMIGQuery:
			d.Sources[field] = SourceNVML
		case "nvidia-smi -L (MIG profile)":
			d.Sources[field] = SourceNVML + " (MIG profile)"
		}
	}
}

// migProfileFromName is the MIG profile at the end of a MIG device's NVML
// name ("NVIDIA H100 80GB HBM3 MIG 1g.10gb" -> "1g.10gb"), the spelling
// `nvidia-smi -L` prints after "MIG".
func migProfileFromName(name string) string {
	if i := strings.LastIndex(name, "MIG "); i >= 0 {
		return strings.TrimSpace(name[i+len("MIG "):])
	}
	return ""
}

// nvmlDevices turns an NVML read into devices, through the same builder as
// a --query-gpu row (deviceFromQuery), then puts on what only NVML gives.
func nvmlDevices(m *machine.Machine, f *machine.Findings, s *nvml.Snapshot) []nvDevice {
	var devs []nvDevice
	for _, nd := range s.Devices {
		d := deviceFromQuery(m, nvmlRow(s, nd))
		nvmlSources(&d)
		applyNVMLMemory(&d, nd.Memory)
		applyNVMLProcesses(&d, nd)
		d.Health = nvmlHealth(nd)
		if d.Health != nil {
			d.SetSource("health", SourceNVML)
		}
		applyUnifiedMemory(m, f, &d)
		noteCoherentHostMemory(m, f, &d)
		devs = append(devs, nvDevice{dev: d, index: nd.Index})
	}
	for _, r := range s.Refused {
		f.Warn(BackendCUDA, registry.WarnFallback, "NVML refused %s; that figure is unknown", r)
	}
	return devs
}

// nvmlRow is an NVML device as the --query-gpu row it stands for.
func nvmlRow(s *nvml.Snapshot, nd nvml.Device) nvGPU {
	g := nvGPU{Index: nd.Index, Name: nd.Name, UUID: nd.UUID, BusID: machine.NormalizeBusID(nd.PCI.BusID),
		DriverVersion: s.DriverVersion}
	if nd.CCMajor > 0 {
		g.CC = strconv.Itoa(nd.CCMajor) + "." + strconv.Itoa(nd.CCMinor)
	}
	if nd.MIG != nil {
		g.MIGMode = "disabled"
		if nd.MIG.Current {
			g.MIGMode = "enabled"
		}
	}
	t := &g.Telemetry
	if nd.UtilizationPercent != nil && !(nd.MIG != nil && nd.MIG.Current) {
		v := float64(*nd.UtilizationPercent)
		t.UtilPct = &v
	}
	if nd.PowerMilliwatts != nil {
		v := float64(*nd.PowerMilliwatts) / 1000
		t.PowerW = &v
	}
	if nd.PowerLimitMilliwatts != nil {
		v := float64(*nd.PowerLimitMilliwatts) / 1000
		t.PowerLimitW = &v
	}
	if nd.TemperatureC != nil {
		v := float64(*nd.TemperatureC)
		t.TempC = &v
	}
	return g
}

// maxGPUBytes bounds a believable GPU memory figure: 1 PiB, as for
// nvidia-smi's (docs/detection.md, absurd_value).
const maxGPUBytes = 1 << 50

// applyNVMLMemory sets total, free and reserved memory in bytes (NVML's own
// figures, not MiB-rounded ones).
func applyNVMLMemory(d *registry.Device, mem *nvml.Memory) {
	if mem == nil || mem.Total == 0 || mem.Total > maxGPUBytes {
		return
	}
	d.MemoryBytes = int64(mem.Total)
	d.SetSource("memory_bytes", SourceNVML)
	if mem.Free <= mem.Total {
		free := int64(mem.Free)
		d.MemoryFreeBytes = &free
		d.SetSource("memory_free_bytes", SourceNVML)
	}
	if mem.HasReserved && mem.Reserved > 0 && mem.Reserved <= mem.Total {
		d.MemoryReservedBytes = int64(mem.Reserved)
		d.SetSource("memory_reserved_bytes", SourceNVML)
	}
}

// applyNVMLProcesses lists the processes holding memory; an empty list is a
// known "none".
func applyNVMLProcesses(d *registry.Device, nd nvml.Device) {
	if !nd.ProcessesKnown {
		return
	}
	d.Processes = make([]registry.Process, 0, len(nd.Processes))
	for _, p := range nd.Processes {
		if p.UsedBytes > maxGPUBytes {
			continue
		}
		d.Processes = append(d.Processes, registry.Process{PID: p.PID, MemoryBytes: int64(p.UsedBytes)})
	}
	d.SetSource("processes", SourceNVML)
}

// clocksEventReasons are the bits of nvmlClocksEventReasons (NVML API
// reference, "ClocksEventReasons"), in bit order.
var clocksEventReasons = []struct {
	bit  uint64
	name string
}{
	{0x1, "gpu_idle"}, {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
	{0x8, "hw_slowdown"}, {0x10, "sync_boost"}, {0x20, "sw_thermal_slowdown"},
	{0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"}, {0x100, "display_clock_setting"},
}

// nvmlHealth is the device's health, nil when NVML gave none of it.
func nvmlHealth(nd nvml.Device) *registry.Health {
	h := registry.Health{ECCEnabled: nd.ECCEnabled, MaxClockSMMHz: int(nd.MaxClockSMMHz),
		MaxClockMemoryMHz: int(nd.MaxClockMemoryMHz)}
	if v := nd.ECCUncorrectedVolatile; v != nil && *v < 1<<62 {
		n := int64(*v)
		h.ECCUncorrectedVolatile = &n
	}
	if r := nd.RemappedRows; r != nil {
		h.RemappedRows = &registry.RemappedRows{Correctable: int(r.Correctable), Uncorrectable: int(r.Uncorrectable),
			Pending: r.Pending, Failure: r.Failure}
	}
	if r := nd.ClocksEventReasons; r != nil {
		h.ClocksEventReasons = []string{}
		for _, c := range clocksEventReasons {
			if *r&c.bit != 0 {
				h.ClocksEventReasons = append(h.ClocksEventReasons, c.name)
			}
		}
	}
	if len(nd.NVLinks) > 0 {
		active := 0
		for _, l := range nd.NVLinks {
			if l.Active {
				active++
			}
		}
		h.NVLinksActive, h.NVLinks = &active, len(nd.NVLinks)
	}
	if h.ECCEnabled == nil && h.ECCUncorrectedVolatile == nil && h.RemappedRows == nil && h.ClocksEventReasons == nil &&
		h.MaxClockSMMHz == 0 && h.MaxClockMemoryMHz == 0 && h.NVLinksActive == nil {
		return nil
	}
	return &h
}
