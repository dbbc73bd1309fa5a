package intel

import (
	"context"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The intel_npu backend reports Intel NPUs (Meteor Lake and later): PCI
// functions with a known NPU id or bound to intel_vpu, and their DRM accel
// node. There is no /sys/class/misc/intel_npu in any kernel (Linux
// drivers/accel/ivpu, https://github.com/torvalds/linux); the driver registers with the accel class.
const backendIntelNPU = "intel_npu"

// NPU is this file's detection source (the orchestrator lists it).
var NPU = machine.Backend{Name: backendIntelNPU, Detect: DetectIntelNPU}

// intelNPUSpec: ids from Linux drivers/accel/ivpu/ivpu_drv.h
// (PCI_DEVICE_ID_MTL 0x7d1d, _ARL 0xad1d, _LNL 0x643e, _PTL_P 0xb03e); newer
// ids are caught by the intel_vpu driver binding. 0x7e4c is the Gaussian &
// Neural-Network Accelerator, not an NPU. Precisions: int8 and fp16 (OpenVINO
// NPU device documentation: the NPU executes INT8 and FP16, FP32 models are
// converted to FP16). The NPU has no memory of its own.
var intelNPUSpec = machine.PCINPUSpec{
	Backend:   backendIntelNPU,
	Kind:      registry.KindIntelNPU,
	Vendor:    "intel",
	PCIVendor: machine.VendorIntel,
	Driver:    "intel_vpu",
	Names: map[int]string{
		0x7d1d: "Intel Meteor Lake NPU",
		0xad1d: "Intel Arrow Lake NPU",
		0x643e: "Intel Lunar Lake NPU",
		0xb03e: "Intel Panther Lake NPU",
	},
	NotNPU:      map[int]bool{0x7e4c: true},
	DefaultName: "Intel NPU",
	Quant:       func(int) []string { return precision.IntelNPU() },
}

// DetectIntelNPU lists the Intel NPUs (intelNPUSpec) on PCI.
func DetectIntelNPU(_ context.Context, m *machine.Machine) machine.Findings {
	return machine.DetectPCINPUs(m, intelNPUSpec)
}
