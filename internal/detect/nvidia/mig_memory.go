package nvidia

import (
	"context"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// MIG slice memory from `nvidia-smi -q`. A MIG device's memory is not its
// profile's label: the H100 80GB's 1g.10gb instance has 9984 MiB, its 3g.40gb
// 40448 MiB (utkuozdemir/nvidia_gpu_exporter capture
// internal/captures/linux-x86_64__nvidia-h100-mig__590.48.01.txt, kept in
// testdata/machines/nvidia-mig/captures/). `nvidia-smi -q` prints, under each
// "GPU <bus id>" block, one "MIG Device" block per instance with its "Index"
// (the "Device N" of `nvidia-smi -L`) and its framebuffer under
// "Shared FB Memory Usage" (recent drivers) or "FB Memory Usage":
// "Total : 9984 MiB", "Free : 9976 MiB".

// SourceMIGQuery names the MIG devices' memory figures read from -q.
const SourceMIGQuery = "nvidia-smi -q (MIG device)"

// qGPU is one GPU block of `nvidia-smi -q`: its bus id and MIG devices.
type qGPU struct {
	BusID string
	MIG   map[int]qMIGMemory // by MIG device index
}

// qMIGMemory is a MIG device's framebuffer in bytes (zero is unknown) and
// the GPU and compute instance it runs on (-1 when -q did not say). Compute
// instances of one GPU instance share its memory: -q prints the GPU
// instance's framebuffer under each of them (H200 3g.71gb split into
// 1c.3g.71gb and 2c.3g.71gb: "GPU Instance ID : 2", "Compute Instance ID :
// 0" and "1", both "Total : 71424 MiB"; utkuozdemir/nvidia_gpu_exporter
// internal/captures/linux-x86_64__nvidia-h200-mig__590.48.01.txt, kept in
// testdata/machines/h200-mig-shared-gi/captures/).
type qMIGMemory struct {
	Total, Free int64
	GI, CI      int
}

// maxMIGMiB bounds a believable slice: 16 TiB.
const maxMIGMiB = 16 << 20

// parseNvidiaQueryMIG reads the MIG devices' memory out of `nvidia-smi -q`,
// GPUs in the order printed (nvidia-smi's index order). Blocks are told
// apart by indentation: GPU at 0, its sections at 4, their fields at 8, a
// MIG device's sub-sections' fields at 12.
func parseNvidiaQueryMIG(out []byte) []qGPU {
	var gpus []qGPU
	idx := -1 // the MIG device being read, -1 outside one
	inFB := false
	for _, line := range strings.Split(string(out), "\n") {
		t := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case indent == 0 && isQueryGPUHeader(t):
			gpus = append(gpus, qGPU{BusID: strings.TrimPrefix(t, "GPU "), MIG: map[int]qMIGMemory{}})
			idx, inFB = -1, false
		case len(gpus) == 0 || t == "":
		case indent == 4:
			idx, inFB = -1, false
			if t == "MIG Device" {
				idx = -2 // inside a device whose Index is not read yet
			}
		case idx != -1 && indent == 8:
			inFB = t == "FB Memory Usage" || t == "Shared FB Memory Usage"
			k, v, ok := qField(t)
			if !ok {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n >= 1024 {
				continue
			}
			switch {
			case k == "Index":
				idx = n
				gpus[len(gpus)-1].MIG[idx] = qMIGMemory{GI: -1, CI: -1}
			case idx >= 0 && k == "GPU Instance ID":
				mem := gpus[len(gpus)-1].MIG[idx]
				mem.GI = n
				gpus[len(gpus)-1].MIG[idx] = mem
			case idx >= 0 && k == "Compute Instance ID":
				mem := gpus[len(gpus)-1].MIG[idx]
				mem.CI = n
				gpus[len(gpus)-1].MIG[idx] = mem
			}
		case idx >= 0 && inFB && indent == 12:
			k, v, ok := qField(t)
			if !ok {
				continue
			}
			mem := gpus[len(gpus)-1].MIG[idx]
			switch k {
			case "Total":
				mem.Total = qMiB(v)
			case "Free":
				mem.Free = qMiB(v)
			}
			gpus[len(gpus)-1].MIG[idx] = mem
		}
	}
	return gpus
}

// isQueryGPUHeader reports whether t is a GPU block's header, "GPU " and a
// bus id ("GPU 00000000:00:09.0"), not an `nvidia-smi -L` line ("GPU 0: ...").
func isQueryGPUHeader(t string) bool {
	bus, ok := strings.CutPrefix(t, "GPU ")
	return ok && strings.Count(bus, ":") == 2 && !strings.ContainsAny(bus, " \t")
}

// qField splits "Name    : value".
func qField(t string) (string, string, bool) {
	k, v, ok := strings.Cut(t, ":")
	return strings.TrimSpace(k), strings.TrimSpace(v), ok
}

// qMiB reads "9984 MiB" as bytes; 0 for anything else ("N/A").
func qMiB(v string) int64 {
	n, ok := strings.CutSuffix(v, " MiB")
	if !ok {
		return 0
	}
	x, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
	if err != nil || x <= 0 || x > maxMIGMiB {
		return 0
	}
	return x << 20
}

// migMemoryOf finds the -q figures of MIG device n of the GPU at position
// pos (index order) with bus id bus: by bus id when both are known, else by
// position.
func migMemoryOf(gpus []qGPU, pos int, bus string, n int) (qMIGMemory, bool) {
	for _, g := range gpus {
		if bus != "" && machine.NormalizeBusID(g.BusID) == machine.NormalizeBusID(bus) {
			m, ok := g.MIG[n]
			return m, ok && m.Total > 0
		}
	}
	if pos < 0 || pos >= len(gpus) || (bus != "" && gpus[pos].BusID != "") {
		return qMIGMemory{}, false
	}
	m, ok := gpus[pos].MIG[n]
	return m, ok && m.Total > 0
}

// migQuery runs `nvidia-smi -q` for the MIG devices' memory. A failure is a
// fallback warning: the slices then keep their profile's figure.
func migQuery(ctx context.Context, m *machine.Machine, f *machine.Findings) []qGPU {
	out, w, ok := m.Tool(ctx, BackendCUDA, ToolNvidiaSMI, "-q")
	if w != nil {
		w.Code = registry.WarnFallback
		w.Message += "; MIG slice memory is the figure of the profile name, a rounded label that can exceed the slice (B200 1g.23gb has 20.50 GiB)"
		f.AddWarning(w)
	}
	if !ok {
		return nil
	}
	return parseNvidiaQueryMIG(out)
}

// setMIGMemory puts the -q figures on a MIG device.
func setMIGMemory(d *registry.Device, mem qMIGMemory) {
	if mem.GI >= 0 && mem.CI >= 0 {
		gi, ci := mem.GI, mem.CI
		d.MIG.GPUInstance, d.MIG.ComputeInstance = &gi, &ci
	}
	d.MemoryBytes = mem.Total
	d.SetSource("memory_bytes", SourceMIGQuery)
	if mem.Free > 0 && mem.Free <= mem.Total {
		free := mem.Free
		d.MemoryFreeBytes = &free
		d.SetSource("memory_free_bytes", SourceMIGQuery)
	}
}

// migDeviceNumber reads N of "MIG 1g.10gb     Device  N: (UUID: ...)"; -1
// when the line has none.
func migDeviceNumber(line string) int {
	_, rest, ok := strings.Cut(line, "Device")
	if !ok {
		return -1
	}
	num, _, ok := strings.Cut(rest, ":")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if !ok || err != nil || n < 0 {
		return -1
	}
	return n
}

// markSharedGPUInstances links the MIG instances of one GPU (slices) that
// are compute instances of the same GPU instance: each names the others in
// SharesMemoryWith, so that the GPU instance's memory, which -q prints under
// each of them, is counted once (registry.MemoryCountedBefore).
func markSharedGPUInstances(slices []nvDevice) {
	byGI := map[int][]int{}
	for i, s := range slices {
		if gi := s.dev.MIG.GPUInstance; gi != nil {
			byGI[*gi] = append(byGI[*gi], i)
		}
	}
	for _, members := range byGI {
		if len(members) < 2 {
			continue
		}
		for _, i := range members {
			mig := slices[i].dev.MIG
			for _, j := range members {
				if j != i {
					mig.SharesMemoryWith = append(mig.SharesMemoryWith, slices[j].dev.MIG.Instance)
				}
			}
			slices[i].dev.SetSource("mig", SourceMIGQuery)
		}
	}
}
