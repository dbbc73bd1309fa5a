// Package benchreg builds the synthetic registries and planning requests of
// the planning benchmarks (docs/performance.md): N GPUs shaped exactly like
// the H100s that detection reports for the dgx-h100 fixture machine
// (testdata/machines/dgx-h100), grouped eight to an NVSwitch domain, plus the
// host CPU. Go benchmarks call it directly; bench/genreg writes the same
// bytes to files for the C harness, so both measure the same input.
//
// A registry of 4096 GPUs is no real machine: it is the scaling input of the
// "cost grows at most linearly" target.
package benchreg

import (
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry/regjson"
)

// Sizes are the registry sizes (GPUs) of the cost curve.
var Sizes = []int{16, 256, 4096}

// Model is the model every benchmark request plans: a catalog model, so the
// planner works on its exact shape rather than one estimated from a
// parameter count (the reference crate's benchmark planned a 70B model too).
const Model = "Llama-3.1-70B"

// dgxBusIDs are the GPU bus numbers of the dgx-h100 fixture; GPU i gets
// bus dgxBusIDs[i%8] in PCI domain i/8.
var dgxBusIDs = []string{"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"}

// The H100 figures as the dgx-h100 fixture's detection reports them
// (nvidia-smi memory.total 81559 MiB, memory.free 81106 MiB; datasheet
// bandwidth 3350 GB/s; PCIe Gen5 x16).
const (
	h100Memory     int64 = 81559 << 20
	h100Free       int64 = 81106 << 20
	h100Bandwidth        = 3350
	nvswitchGBs          = 900
	hostMemory     int64 = 2164152250368
	hostMemoryFree int64 = 2100000000000
)

// Registry returns a registry with the host CPU and gpus H100s.
func Registry(gpus int) *registry.Registry {
	reg := registry.New()
	free := hostMemoryFree
	reg.Devices = append(reg.Devices, registry.Device{
		ID: "cpu:0", Kind: "cpu", Family: "cpu", Vendor: "intel", Name: "Intel(R) Xeon(R) Platinum 8480C",
		Available: true, MemoryBytes: hostMemory, MemoryFreeBytes: &free, Cores: 112, Threads: 224,
		Quantizations: []string{"fp32", "fp16", "bf16", "int8", "int4"},
	})
	for i := 0; i < gpus; i++ {
		reg.Devices = append(reg.Devices, h100(i))
		if i%8 == 7 || i == gpus-1 {
			reg.SystemIO.Interconnects = append(reg.SystemIO.Interconnects, domain(i-i%8, i))
		}
	}
	reg.SystemIO.NUMANodes = []registry.NUMANode{
		{ID: 0, MemoryBytes: hostMemory / 2, CPUs: "0-55,112-167"},
		{ID: 1, MemoryBytes: hostMemory / 2, CPUs: "56-111,168-223"},
	}
	return reg
}

func h100(i int) registry.Device {
	free := h100Free
	numa := (i % 8) / 4
	return registry.Device{
		ID: fmt.Sprintf("cuda:%d", i), Kind: "cuda_gpu", Family: "gpu", Index: i, Vendor: "nvidia",
		Name: "NVIDIA H100 80GB HBM3", Available: true, MemoryBytes: h100Memory, MemoryFreeBytes: &free,
		MemoryBandwidthGBs: h100Bandwidth, ComputeCapability: "9.0", DriverVersion: "565.57.01",
		UUID:     fmt.Sprintf("GPU-00000000-0000-4000-8000-%012x", i),
		PCIBusID: fmt.Sprintf("%04x:%s:00.0", i/8, dgxBusIDs[i%8]), PCIID: "10de:2330", NUMANode: &numa,
		PCIe:          &registry.PCIe{CurrentSpeedGTs: 32, CurrentWidth: 16, MaxSpeedGTs: 32, MaxWidth: 16, BandwidthGBs: 63.02},
		MIG:           &registry.MIG{Mode: "disabled"},
		Quantizations: []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
		Sources: map[string]string{"memory_bytes": "nvidia-smi", "memory_bandwidth_gb_s": "datasheet",
			"numa_node": "sysfs", "pcie": "sysfs"},
	}
}

// domain is one NVSwitch fabric over GPUs first..last.
func domain(first, last int) registry.Interconnect {
	ic := registry.Interconnect{Kind: registry.LinkNVSwitch, BandwidthGBs: nvswitchGBs, Links: 18,
		Source: "nvidia-smi topo -m"}
	for i := first; i <= last; i++ {
		ic.Devices = append(ic.Devices, fmt.Sprintf("cuda:%d", i))
	}
	return ic
}

// RegistryJSON is Registry(gpus) as the C ABI writes it.
func RegistryJSON(gpus int) []byte {
	b, err := regjson.Encode(Registry(gpus))
	if err != nil {
		panic(err) // a fixed, valid value: cannot fail
	}
	return b
}

// Request is the planning request of the benchmarks: Model at its defaults
// (quant auto, context 4096, batch 1) on a registry of gpus H100s.
func Request(gpus int) []byte {
	b, err := json.Marshal(map[string]any{
		"model":    map[string]string{"name": Model},
		"registry": json.RawMessage(RegistryJSON(gpus)),
	})
	if err != nil {
		panic(err)
	}
	return b
}
