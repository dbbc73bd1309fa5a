package cli

import (
	"sort"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Summary is the answer of `ai-hwaccel --summary`: a few figures a script or
// an operator needs without walking the registry. Counts are of available
// devices. It is JSON; docs/cli.md describes every field.
type Summary struct {
	SchemaVersion    int `json:"schema_version"`
	DeviceCount      int `json:"device_count"`      // every device, the CPU included, available or not
	AvailableCount   int `json:"available_count"`   // devices with available=true
	AcceleratorCount int `json:"accelerator_count"` // available devices that are not the CPU
	// Families counts available devices per family; all five families are
	// always present so a reader can index without checking.
	Families map[string]int `json:"families"`
	// Kinds counts available devices per kind; only kinds present appear.
	Kinds map[string]int `json:"kinds"`
	// AcceleratorMemoryBytes is the memory the available accelerators can
	// use: memory_bytes of those with dedicated memory (a MIG GPU instance
	// shared by compute instances once), plus the host memory that
	// memory_shared devices can use (AcceleratorSharedMemoryBytes). Absent
	// when accelerators exist but none reports its memory.
	AcceleratorMemoryBytes *int64 `json:"accelerator_memory_bytes,omitempty"`
	// AcceleratorSharedMemoryBytes is the part of AcceleratorMemoryBytes
	// that is host RAM (unified memory, integrated GPUs): the most any
	// memory_shared device can use (registry.Device.SharedUsableMemory),
	// counted once, since such devices share one pool.
	AcceleratorSharedMemoryBytes int64 `json:"accelerator_shared_memory_bytes,omitempty"`
	// AcceleratorsMemoryUnknown counts available accelerators left out of
	// the sum because their memory is unknown.
	AcceleratorsMemoryUnknown int      `json:"accelerators_memory_unknown,omitempty"`
	HostMemoryBytes           int64    `json:"host_memory_bytes,omitempty"` // cpu:0 memory_bytes (MemTotal)
	BestDevice                *Best    `json:"best_device"`                 // null without an accelerator
	Interconnects             []string `json:"interconnects"`               // distinct interconnect kinds, sorted
	NUMANodeCount             int      `json:"numa_node_count"`
	WarningCount              int      `json:"warning_count"`
}

// Best names the accelerator a single-device job would pick: the available
// accelerator with the most memory, then the most bandwidth, then the first
// in registry order.
type Best struct {
	ID                 string  `json:"id"`
	Kind               string  `json:"kind"`
	Name               string  `json:"name,omitempty"`
	MemoryBytes        int64   `json:"memory_bytes,omitempty"`
	MemoryBandwidthGBs float64 `json:"memory_bandwidth_gb_s,omitempty"`
}

// Summarize computes the summary of a registry.
func Summarize(reg *registry.Registry) Summary {
	s := Summary{
		SchemaVersion: reg.SchemaVersion,
		DeviceCount:   len(reg.Devices),
		Families:      map[string]int{},
		Kinds:         map[string]int{},
		Interconnects: []string{},
		NUMANodeCount: len(reg.SystemIO.NUMANodes),
		WarningCount:  len(reg.Warnings),
	}
	for _, f := range []registry.Family{registry.FamilyCPU, registry.FamilyGPU, registry.FamilyNPU,
		registry.FamilyTPU, registry.FamilyAIASIC} {
		s.Families[string(f)] = 0
	}
	var memSum int64
	memKnown := false
	sharedUnknown := 0 // memory_shared accelerators of no reported size
	var best *registry.Device
	for i := range reg.Devices {
		d := &reg.Devices[i]
		if d.Kind == registry.KindCPU && d.Index == 0 {
			s.HostMemoryBytes = d.MemoryBytes
		}
		if !d.Available {
			continue
		}
		s.AvailableCount++
		s.Families[string(d.Kind.Family())]++
		s.Kinds[string(d.Kind)]++
		if d.Kind == registry.KindCPU {
			continue
		}
		s.AcceleratorCount++
		switch {
		case d.MemoryShared && d.SharedUsableMemory() > 0:
			s.AcceleratorSharedMemoryBytes = max(s.AcceleratorSharedMemoryBytes, d.SharedUsableMemory())
			memKnown = true
		case d.MemoryShared:
			sharedUnknown++
		case registry.MemoryCountedBefore(reg.Devices, i):
			// a compute instance of a GPU instance already counted
		case d.MemoryBytes > 0:
			memSum += d.MemoryBytes
			memKnown = true
		default:
			s.AcceleratorsMemoryUnknown++
		}
		if best == nil || better(d, best) {
			best = d
		}
	}
	// Shared memory of no reported size is the pool another shared device
	// reports (an Apple SoC's Neural Engine beside its GPU), else unknown,
	// not none (a Jetson without /proc/meminfo in view).
	if s.AcceleratorSharedMemoryBytes == 0 {
		s.AcceleratorsMemoryUnknown += sharedUnknown
	}
	// Zero is a true sum when there is no accelerator; it is withheld when
	// all the figures are unknown.
	if memKnown || s.AcceleratorsMemoryUnknown == 0 {
		memSum += s.AcceleratorSharedMemoryBytes
		s.AcceleratorMemoryBytes = &memSum
	}
	if best != nil {
		s.BestDevice = &Best{ID: best.ID, Kind: string(best.Kind), Name: best.Name,
			MemoryBytes: best.MemoryBytes, MemoryBandwidthGBs: best.MemoryBandwidthGBs}
	}
	seen := map[string]bool{}
	for _, ic := range reg.SystemIO.Interconnects {
		if !seen[ic.Kind] {
			seen[ic.Kind] = true
			s.Interconnects = append(s.Interconnects, ic.Kind)
		}
	}
	sort.Strings(s.Interconnects)
	return s
}

func better(a, b *registry.Device) bool {
	if a.MemoryBytes != b.MemoryBytes {
		return a.MemoryBytes > b.MemoryBytes
	}
	return a.MemoryBandwidthGBs > b.MemoryBandwidthGBs
}
