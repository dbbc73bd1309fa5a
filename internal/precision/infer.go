package precision

import (
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Of lists the precisions of a device whose registry entry gives none (a
// registry written by hand or by another tool): the per-architecture answer
// above when the device names an architecture this table knows (compute
// capability for CUDA, gfx target for ROCm, generation for TPU, Gaudi and
// Neuron, PCI id for AMD XDNA), else the family default of familyDefaults,
// which assumes the family's current parts. nil for an unknown kind.
func Of(d *registry.Device) []string {
	if q := byArchitecture(d); q != nil {
		return q
	}
	return familyDefault(d)
}

// byArchitecture is the per-architecture answer, nil when the device does
// not name an architecture the table knows.
func byArchitecture(d *registry.Device) []string {
	switch d.Kind {
	case registry.KindCUDA:
		if _, _, ok := parseCC(d.ComputeCapability); ok {
			return CUDA(d.ComputeCapability)
		}
	case registry.KindROCm:
		return AMDGPU(d.Architecture)
	case registry.KindTPU:
		return TPU(d.Architecture)
	case registry.KindGaudi:
		return Gaudi(d.Architecture)
	case registry.KindNeuron:
		return Neuron(d.Architecture)
	case registry.KindAMDXDNA:
		if id, ok := pciDevice(d.PCIID); ok {
			return AMDXDNA(id)
		}
	case registry.KindMetal:
		return Metal()
	case registry.KindAppleNPU:
		return AppleNeuralEngine()
	case registry.KindCPU:
		return CPU()
	case registry.KindIntelNPU:
		return IntelNPU()
	case registry.KindGroq:
		return Groq()
	}
	return nil
}

// pciDevice reads the device half of a "vvvv:dddd" PCI id.
func pciDevice(id string) (int, bool) {
	_, dev, ok := strings.Cut(id, ":")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(dev), 16, 16)
	return int(v), err == nil
}

// familyDefault is the answer for a device of a known kind whose
// architecture is not named: what the family's current parts run, each line
// inferred from the per-architecture facts above (a CUDA GPU of unknown
// compute capability is taken to be at least Turing, so int8 and int4; a ROCm
// GPU of unknown gfx target to be CDNA2/RDNA3-like, with fp8 when its name
// says MI300/MI325/MI355 (CDNA3/CDNA4, gfx942/gfx950)). Families without a
// per-architecture source (Vulkan, Intel GPU without its PCI class, Qualcomm,
// Cerebras, Graphcore, Samsung and MediaTek NPUs) keep the planner's
// long-standing defaults.
func familyDefault(d *registry.Device) []string {
	switch d.Kind {
	case registry.KindCUDA:
		return list(FP32, FP16, INT8, INT4)
	case registry.KindROCm:
		if q := amdFamily(d.Architecture); q != nil {
			return q
		}
		q := list(FP32, FP16, BF16, INT8, INT4)
		n := strings.ToLower(d.Name + " " + d.Architecture)
		for _, cdna3 := range []string{"mi300", "mi325", "mi355", "gfx942", "gfx950"} {
			if strings.Contains(n, cdna3) {
				return append(q, string(FP8))
			}
		}
		return q
	case registry.KindVulkan:
		return list(FP32, FP16, INT8, INT4)
	case registry.KindIntelGPU:
		return list(FP32, FP16, BF16, INT8, INT4)
	case registry.KindTPU:
		return list(FP32, BF16, INT8)
	case registry.KindAMDXDNA, registry.KindSamsungNPU, registry.KindMediaTekAPU:
		return list(INT8, INT4)
	case registry.KindGaudi:
		return list(FP32, BF16, FP16, FP8, INT8)
	case registry.KindNeuron, registry.KindCerebras:
		return list(FP32, BF16, FP16, INT8)
	case registry.KindQualcommAI100:
		return list(FP16, INT8, INT4)
	case registry.KindGraphcore:
		return list(FP32, FP16, INT8)
	}
	return nil
}

// amdFamily answers a gfx target the per-target table (AMDGPU) lacks by its
// family, from the AMD instruction set guides of each family
// (https://gpuopen.com/amd-gpu-architecture-programming-documentation/):
//   - RDNA2, gfx1030-gfx1037 (RX 6000, Radeon PRO W6000, the 680M/660M
//     APUs gfx1035/gfx1036): no matrix unit; packed fp16 and the
//     V_DOT4_I32_I8 int8 dot product, no bf16 arithmetic. int4 as
//     dequantized weights.
//   - Vega APUs, gfx900-gfx90c (Raven, Renoir, Cezanne gfx90c): packed fp16
//     ("rapid packed math"); int8/int4 as dequantized weights; no bf16.
//   - CDNA1, gfx908 (MI100): MFMA on fp32, fp16, bf16 and int8.
//   - CDNA4, gfx950 (MI350/MI355X): MFMA adds fp8 (and fp6/fp4, outside this
//     vocabulary) to CDNA3's list.
//   - RDNA4, gfx1200/gfx1201 (RX 9000, Radeon AI PRO R9700): WMMA on fp16,
//     bf16, fp8/bf8, iu8 and iu4.
//
// nil for a target of no known family (the caller's ROCm default applies).
func amdFamily(arch string) []string {
	switch {
	case strings.HasPrefix(arch, "gfx103") && len(arch) == 7:
		return list(FP32, FP16, INT8, INT4)
	case arch == "gfx900" || arch == "gfx902" || arch == "gfx904" || arch == "gfx906" || arch == "gfx909" || arch == "gfx90c":
		return list(FP32, FP16, INT8, INT4)
	case arch == "gfx908":
		return list(FP32, FP16, BF16, INT8, INT4)
	case arch == "gfx950", strings.HasPrefix(arch, "gfx120"):
		return list(FP32, FP16, BF16, FP8, INT8, INT4)
	}
	return nil
}
