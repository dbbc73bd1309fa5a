// Package precision is the one table of the numeric precisions a device runs
// natively ("fp32", "bf16", "fp16", "fp8", "int8", "int4", the names of the
// registry's quantizations list). Detection fills a device's list from the
// per-architecture functions here; the planner asks Of for a device whose
// registry gives no list, which answers from the same functions when the
// device names its architecture and from the family's default otherwise.
package precision

import (
	"strconv"
	"strings"
)

// Name is a precision name of the contract: the one vocabulary of the
// registry's quantizations list, the quantization levels of internal/quant
// (quant.FP16 is Level(FP16)) and the datasheet figures of internal/specs
// (Spec.PeakTFLOPS). Lists on the wire stay []string of these names.
type Name string

// The precision names of the contract.
const (
	FP32 Name = "fp32"
	BF16 Name = "bf16"
	FP16 Name = "fp16"
	FP8  Name = "fp8"
	INT8 Name = "int8"
	INT4 Name = "int4"
)

// list returns the names as a fresh []string, so callers may append to or
// edit the result.
func list(ps ...Name) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// CUDA lists the precisions a GPU of compute capability cc ("8.9") runs
// natively. Sources: NVIDIA CUDA C++ Programming Guide, "Compute
// Capabilities" (https://docs.nvidia.com/cuda/cuda-c-programming-guide/),
// and the Tensor Core tables of the Turing (7.5: INT8/INT4 Tensor Cores),
// Ampere (8.0: BF16), Ada (8.9) and Hopper (9.0) FP8 whitepapers; INT8 dot
// products (dp4a) start at 6.1 (Pascal GP102/GP104). fp32 and fp16 are
// always listed; with an unknown cc nothing more is.
func CUDA(cc string) []string {
	q := list(FP32, FP16)
	if ccAtLeast(cc, 8, 0) {
		q = append(q, string(BF16))
	}
	if ccAtLeast(cc, 8, 9) {
		q = append(q, string(FP8))
	}
	if ccAtLeast(cc, 6, 1) {
		q = append(q, string(INT8))
	}
	if ccAtLeast(cc, 7, 5) {
		q = append(q, string(INT4))
	}
	return q
}

// ccAtLeast reports whether compute capability cc ("8.9") is at least
// major.minor. An unknown cc is never at least anything.
func ccAtLeast(cc string, major, minor int) bool {
	ma, mi, ok := parseCC(cc)
	return ok && (ma > major || ma == major && mi >= minor)
}

// ComputeCapability reads a CUDA compute capability ("8.9") as its major
// and minor numbers; ok is false when cc is not one (empty, "pci-id-table"
// or malformed).
func ComputeCapability(cc string) (major, minor int, ok bool) { return parseCC(cc) }

func parseCC(cc string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(cc, ".")
	if !found {
		return 0, 0, false
	}
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || ma < 0 || mi < 0 {
		return 0, 0, false
	}
	return ma, mi, true
}

// AMDGPU lists the precisions of an AMD GPU architecture (gfx target):
//   - gfx942 (CDNA3, MI300): fp8, bf16, fp16 and int8 matrix math (the MI300X
//     record of internal/specs: fp8, fp16/bf16 and int8 dense figures; ROCm
//     docs/conceptual/gpu-arch/mi300.md, https://github.com/ROCm/ROCm).
//   - gfx90a (CDNA2, MI200): bf16, fp16, int8 (the MI250X/MI210 records).
//   - gfx11xx (RDNA3): WMMA on f16, bf16, iu8 and iu4 (AMD "RDNA3 Instruction
//     Set Architecture" reference guide, V_WMMA_* instructions).
//
// int4 is also listed for the CDNA parts because weight-only int4 kernels
// (dequantising to fp16) run on them; unknown architectures get nil.
func AMDGPU(arch string) []string {
	switch {
	case arch == "gfx942":
		return list(FP32, FP16, BF16, FP8, INT8, INT4)
	case arch == "gfx90a", strings.HasPrefix(arch, "gfx11"):
		return list(FP32, FP16, BF16, INT8, INT4)
	}
	return nil
}

// IntelGPU: every Intel GPU since Gen9 runs fp16 natively (Intel graphics
// PRM, "half float" ALU support); the Xe-HPC Max series adds XMX matrix
// engines for bf16 and int8 (Intel Data Center GPU Max Series product brief:
// XMX TF32/BF16/FP16/INT8). A Max card is PCI device 0x0bda or any Intel
// function of display-controller class 0x0380xx (how the Max cards present
// themselves); class is the 24-bit PCI class code.
func IntelGPU(deviceID, class int) []string {
	if deviceID == 0x0bda || class>>8 == 0x0380 {
		return list(FP32, FP16, BF16, INT8)
	}
	return list(FP32, FP16)
}

// Metal: Metal kernels of the common engines run fp32 and fp16 and
// dequantize int8/int4 weights. bf16 is left out: llama.cpp's Metal backend
// finds bfloat on every Apple GPU family 6+ device but runs BF16 tensors only
// when built with GGML_METAL_USE_BF16, which defaults to OFF
// (ggml/src/ggml-metal/ggml-metal.m ggml_metal_supports_op and
// ggml/CMakeLists.txt at https://github.com/ggml-org/llama.cpp/tree/c392e5094deaf2d1a7c18683214f007fad3fe42b).
func Metal() []string { return list(FP32, FP16, INT8, INT4) }

// MetalTraining: the precisions training frameworks run on an Apple GPU,
// Metal's and bf16: PyTorch's MPS backend, through which a Mac trains, runs
// bf16 from macOS 14 (https://github.com/pytorch/pytorch/pull/119641) and
// autocasts to it (https://github.com/pytorch/pytorch/issues/139386), and
// Hugging Face's Trainer accepts bf16 there
// (https://github.com/huggingface/transformers/pull/40458, which notes that
// M1 and M2 emulate it: the memory is bf16's, the speed no better than
// fp32's). Inference lists (Metal) keep llama.cpp's rule.
func MetalTraining() []string { return list(FP32, FP16, BF16) }

// AppleNeuralEngine: Core ML runs the Neural Engine in fp16 and int8 weights.
func AppleNeuralEngine() []string { return list(FP16, INT8) }

// CPU: the precisions a CPU can run through common inference engines;
// whether they are worth using is the planner's decision.
func CPU() []string { return list(FP32, FP16, BF16, INT8, INT4) }

// TPU lists the precisions of a Cloud TPU generation (the registry
// architecture "v2" ... "7x"): BF16 everywhere, FP32 as the accumulate/master
// type; INT8 from v4 on, where the Cloud TPU pages give INT8 TOPS (the v4,
// v5e, v5p and v6e records of internal/specs). TPU7x: no INT8 source. nil for
// an unknown generation.
func TPU(arch string) []string {
	switch arch {
	case "v2", "v3", "7x":
		return list(FP32, BF16)
	case "v4", "v5e", "v5p", "v6e":
		return list(FP32, BF16, INT8)
	}
	return nil
}

// Gaudi lists the precisions of an Intel Gaudi generation ("gaudi",
// "gaudi2", "gaudi3"). Gaudi 2 and 3: FP8 (E4M3/E5M2) with BF16/FP16/FP32
// as the high-precision types (Intel Neural Compressor "FP8 Quantization" for
// Gaudi2/HPU; the Gaudi records' fp16/bf16 and fp8 figures); INT8 is left out:
// no source names it. First-generation Gaudi (HL-2000) is a BF16/FP32
// training chip. nil for an unknown generation.
func Gaudi(arch string) []string {
	switch arch {
	case "gaudi2", "gaudi3":
		return list(FP32, BF16, FP16, FP8)
	case "gaudi":
		return list(FP32, BF16)
	}
	return nil
}

// Neuron lists the precisions of an AWS Neuron generation (AWS Neuron
// documentation, https://awsdocs-neuron.readthedocs-hosted.com: "Data Types",
// "NeuronCore-v1 Architecture", "Inferentia2 Architecture"):
//   - inferentia (NeuronCore-v1): FP32, FP16, BF16 and INT8 tensor inputs;
//   - inferentia2 and trainium (NeuronCore-v2): "380 INT8 TOPS, 190
//     FP16/BF16/cFP8/TF32 TFLOPS, 47.5 FP32 TFLOPS" (Inferentia2 page; the
//     same NeuronCore-v2 data types on Trainium);
//   - trainium2: an FP8 figure, no INT8 figure.
//
// nil for an unknown generation.
func Neuron(arch string) []string {
	switch arch {
	case "inferentia":
		return list(FP32, BF16, FP16, INT8)
	case "inferentia2", "trainium":
		return list(FP32, BF16, FP16, FP8, INT8)
	case "trainium2":
		return list(FP32, BF16, FP16, FP8)
	}
	return nil
}

// Groq: GroqChip, 188 TFLOPS FP16 and 750 TOPS INT8 (the Argonne Leadership
// Computing Facility's GroqRack documentation of the GroqCard).
func Groq() []string { return list(FP16, INT8) }

// IntelNPU: the Intel NPU (Meteor Lake and later) runs int8 and fp16
// (OpenVINO NPU device documentation: the NPU executes INT8 and FP16, FP32
// models are converted to FP16).
func IntelNPU() []string { return list(INT8, FP16) }

// AMDXDNA lists the precisions of an AMD XDNA NPU by PCI device id (AMD
// Ryzen AI Software documentation, "Model quantization"): INT8 on the first
// XDNA generation (0x1502, Phoenix/Hawk Point), INT8 and BF16 on XDNA 2
// (0x17f0, Strix) and any later id.
func AMDXDNA(deviceID int) []string {
	if deviceID == 0x1502 {
		return list(INT8)
	}
	return list(INT8, BF16)
}
