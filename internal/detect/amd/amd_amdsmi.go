package amd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd/amdsmi"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// SourceAMDSMI names the figures read in-process through AMD SMI.
const SourceAMDSMI = "amdsmi"

// ToolROCmSMI names the figures read from the rocm-smi run.
const ToolROCmSMI = "rocm-smi"

// reportFromAMDSMI reads the GPUs through AMD SMI when the machine view
// names a library (machine.Config.AMDSMI) and the machine shows an AMD GPU
// (an amdgpu card in sysfs, or /dev/kfd in a container without /sys): the
// figures of the rocm-smi run (name, VRAM total and used, PCI bus, NUMA
// node, gfx target, the link-type, hops and weight matrices) and the
// partition modes, in one in-process read, as the report the rocm-smi run
// would give, so that both are merged into the sysfs devices alike. ok is
// false, with a fallback warning, when the library is absent, of a version
// this build does not read, fails amdsmi_init, hung earlier in this process,
// lists no GPU, or does not answer before ctx ends: rocm-smi is asked then.
func reportFromAMDSMI(ctx context.Context, m *machine.Machine, f *machine.Findings, sysfsGPUs int) (rep ROCmSMIReport, modes map[string][2]string, ok bool) {
	if sysfsGPUs == 0 && !m.Exists("dev/kfd") {
		return rep, nil, false
	}
	path := m.AMDSMILibrary()
	if path == "" {
		return rep, nil, false
	}
	lib, err := amdsmi.Open(ctx, path)
	if err == nil {
		var s *amdsmi.Snapshot
		if s, err = lib.Read(ctx); err == nil {
			if len(s.Processors) == 0 {
				err = fmt.Errorf("AMD SMI lists no GPU")
			} else {
				for _, r := range s.Refused {
					f.Warn(BackendROCm, registry.WarnFallback, "AMD SMI refused %s; that figure is unknown", r)
				}
				rep, modes = amdsmiReport(f, s)
				return rep, modes, true
			}
		}
	}
	next := "rocm-smi"
	if !m.HasTool("rocm-smi") {
		next = "sysfs only"
	}
	f.Warn(BackendROCm, registry.WarnFallback, "AMD SMI (%s) not used: %v; using %s", path, err, next)
	return rep, nil, false
}

// amdsmiReport turns an AMD SMI read into the report of a rocm-smi run
// (cards by processor index, links by processor pair), plus the compute and
// memory partition modes by PCI bus id. A compute partition's handle (the
// GPU's bus with the partition number as function, ROCm/amdsmi issue 132,
// https://github.com/ROCm/amdsmi/issues/132) is not a card of its own when
// its GPU's function 0 is listed too: the partitions are made from KFD
// (amd_partition.go), the GPU's figures come from function 0.
func amdsmiReport(f *machine.Findings, s *amdsmi.Snapshot) (ROCmSMIReport, map[string][2]string) {
	rep := ROCmSMIReport{Tool: SourceAMDSMI}
	listed := map[string]bool{}
	for _, p := range s.Processors {
		listed[machine.NormalizeBusID(p.BusID)] = true
	}
	modes := map[string][2]string{}
	kept := map[int]bool{}
	for _, p := range s.Processors {
		bus := machine.NormalizeBusID(p.BusID)
		if base, fn, ok := strings.Cut(bus, "."); ok && fn != "0" && listed[base+".0"] {
			continue
		}
		kept[p.Index] = true
		rep.Cards = append(rep.Cards, amdsmiCard(f, p, bus))
		if p.ComputePartition != "" || p.MemoryPartition != "" {
			modes[bus] = [2]string{p.ComputePartition, p.MemoryPartition}
		}
	}
	for pair, l := range s.Links {
		if !kept[pair[0]] || !kept[pair[1]] {
			continue
		}
		rep.Links = append(rep.Links, rocmSMILink{A: pair[0], B: pair[1], Type: l.Type.String(), Weight: l.Weight, Hops: l.Hops})
	}
	sortLinks(rep.Links)
	return rep, modes
}

// amdsmiCard is one processor as the card rocm-smi would list: its market
// name, bus, VRAM (figures over registry.MaxDeviceMemory, 2^64-1 among
// them, reported as absurd and left out, as rocm-smi's are),
// NUMA node and gfx target (target_graphics_version is the number rocm-smi
// prints after "gfx": the same rsmi_dev_target_graphics_version_get, per
// amdsmi's src/amd_smi/amd_smi.cc amdsmi_get_gpu_asic_info).
func amdsmiCard(f *machine.Findings, p amdsmi.Processor, bus string) ROCmSMICard {
	c := ROCmSMICard{Index: p.Index, Name: machine.CleanText(p.MarketName), BusID: bus, VRAMUsed: -1, NUMANode: -1}
	if machine.NoValueText(c.Name) {
		c.Name = ""
	}
	what := "processor " + strconv.Itoa(p.Index) + " "
	if v := p.VRAMTotal; v != nil {
		if *v > uint64(registry.MaxDeviceMemory) {
			f.WarnAbsurdMemory(BackendROCm, SourceAMDSMI, "", what+"amdsmi_get_gpu_memory_total", strconv.FormatUint(*v, 10))
		} else if *v > 0 {
			c.VRAMTotal = int64(*v)
		}
	}
	if v := p.VRAMUsed; v != nil {
		if *v > uint64(registry.MaxDeviceMemory) {
			f.WarnAbsurdMemory(BackendROCm, SourceAMDSMI, "", what+"amdsmi_get_gpu_memory_usage", strconv.FormatUint(*v, 10))
		} else {
			c.VRAMUsed = int64(*v)
		}
	}
	if p.NUMANode != nil {
		c.NUMANode = *p.NUMANode
	}
	if p.TargetGfxVersion > 0 {
		if g, ok := SMIGfxTarget("gfx" + strconv.FormatUint(p.TargetGfxVersion, 10)); ok {
			c.GFX = g
		}
	}
	return c
}

// applyAMDSMIModes takes the compute and memory partition modes AMD SMI gave
// for the GPUs whose sysfs attributes said none.
func applyAMDSMIModes(gpus []AMDGPU, modes map[string][2]string) {
	for i := range gpus {
		g := &gpus[i]
		mode, ok := modes[g.Dev.PCIBusID]
		if !ok {
			continue
		}
		if g.computeMode == "" && validMode(mode[0]) {
			g.computeMode, g.modeSource = strings.ToUpper(mode[0]), SourceAMDSMI
		}
		if g.memoryMode == "" && validMode(mode[1]) {
			g.memoryMode = strings.ToUpper(mode[1])
		}
	}
}

// validMode is partitionMode's test of a mode name ("CPX", "NPS1").
func validMode(s string) bool { return len(s) >= 3 && len(s) <= 4 }
