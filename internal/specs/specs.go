// Package specs is the table of accelerator parts (records.go): per part its
// PCI ids, names, memory, memory bandwidth, dense tensor throughput per
// precision and interconnect, each figure with its source, with lookup by
// the name a detection tool prints or by PCI vendor:device id.
//
// The planner uses it only to fill figures detection could not measure
// (memory bandwidth, peak FLOPS); it never replaces a detected value.
package specs

import "github.com/ai-hwaccel/ai-hwaccel/internal/precision"

// Spec is one part record. A zero figure is unknown (no source states it),
// never a default.
type Spec struct {
	Name     string // the record's name, e.g. "NVIDIA H100 SXM5 80GB"
	Vendor   string
	Category Category
	// Memory is the kind of DRAM the part carries (class.go says where each
	// record's class comes from); MemoryUnknown when no source or generation
	// fact says.
	Memory MemoryClass

	// Identity. PCIIDs are the "vvvv:dddd" ids (lower-case hex) of the
	// part; ProductName is the name the vendor driver and tool print, for
	// detection without the tool; Arch is the NVIDIA compute capability
	// ("9.0") or the AMD gfx target ("gfx942"); IdentitySource cites them.
	PCIIDs         []string
	ProductName    string
	Arch           string
	IdentitySource string
	// Aliases are other names tools print for the part (matching rules in
	// match.go); NameAmbiguous records are never matched by name.
	Aliases       []string
	NameAmbiguous bool

	// MemoryBytes is the device memory; when MemoryIsMaximum it is the largest
	// configuration sold (Apple unified memory, "up to" cards), not the part's.
	MemoryBytes     int64
	MemoryIsMaximum bool
	// MemoryUnit is the unit the source states the memory in: "GB" (read as
	// 10^9 into MemoryBytes) or "GiB" (2^30); "" when no memory is given.
	MemoryUnit string
	// MemoryBinary is the evidence that a "GB" figure is really GiB ("" when
	// there is none); DeviceMemoryBytes reads it.
	MemoryBinary string
	// MemoryVaries: the name covers several memory sizes with the same
	// bandwidth and compute, so ForDevice skips its memory check.
	MemoryVaries bool
	// SharedPCIIDs are ids the part shares with boards of other memory
	// sizes (pci.ids gives 1002:744c to the RX 7900 XT, XTX and GRE). The
	// id itself belongs to an identity-only record named as pci.ids names
	// it; ByPCIIDMemory picks this record when the device's memory says
	// which board it is.
	SharedPCIIDs []string
	BandwidthGBs float64 // memory bandwidth, GB/s (10^9 B/s)

	// Dense (no sparsity) peak tensor throughput, TFLOPS (TOPS for int8).
	BF16TFLOPS float64
	FP16TFLOPS float64
	FP8TFLOPS  float64
	INT8TOPS   float64
	// FP16AccumFP16TFLOPS is the dense FP16 tensor peak with FP16
	// accumulation where the datasheet states it apart from FP16TFLOPS (FP32
	// accumulation): GeForce parts run FP16-accumulate MMA at twice the rate
	// (NVIDIA Ada architecture whitepaper, RTX 4090: 330.3 against 165.2
	// TFLOPS). 0 where the two are one figure or the page states none. It is
	// the peak of llama.cpp's cuBLAS GEMM, which accumulates in FP16
	// (cublasGemmEx with CUBLAS_COMPUTE_16F in ggml_cuda_op_mul_mat_cublas).
	FP16AccumFP16TFLOPS float64
	// GPUFP32TFLOPS is the FP32 peak of a GPU without tensor figures (Apple
	// GPUs: cores x 128 FP32 ALUs x 2 FLOPs per FMA x clock), of the
	// configuration with GPUCores GPU cores (for a name sold with several,
	// the largest). It is not a tensor figure: PeakTFLOPS and
	// TensorPrecisions do not read it; the planner's llama.cpp Metal prompt
	// model does (internal/plan, prefillPath).
	GPUFP32TFLOPS float64
	GPUCores      int

	// Interconnect names the device-to-device link; InterconnectGBs is the
	// datasheet figure per device, which for NVLink, Infinity Fabric and ICI
	// is the bidirectional aggregate (both directions added).
	Interconnect    string
	InterconnectGBs float64

	// Source is the page the record's figures come from; FigureSources, keyed
	// by field name ("BandwidthGBs"), the page of a figure from elsewhere.
	Source        string
	FigureSources map[string]string
}

// PeakTFLOPS returns the dense peak for a precision name of the contract
// ("bf16", "fp16", "fp8", "int8": internal/precision's names); 0 when the
// datasheet gives none. fp32 and int4 have no tensor figure in the table and
// return 0.
func (s *Spec) PeakTFLOPS(name string) float64 {
	switch precision.Name(name) {
	case precision.BF16:
		return s.BF16TFLOPS
	case precision.FP16:
		return s.FP16TFLOPS
	case precision.FP8:
		return s.FP8TFLOPS
	case precision.INT8:
		return s.INT8TOPS
	}
	return 0
}

// tensorOrder is the contract's order of the precisions a record can state a
// dense tensor figure for.
var tensorOrder = []precision.Name{precision.BF16, precision.FP16, precision.FP8, precision.INT8}

// TensorPrecisions lists the precisions the record states a dense tensor
// figure for, in the contract's order (bf16, fp16, fp8, int8): the
// precisions the datasheet says the part accelerates. Which precisions a
// device runs at all is internal/precision's table.
func (s *Spec) TensorPrecisions() []string {
	var out []string
	for _, p := range tensorOrder {
		if s.PeakTFLOPS(string(p)) > 0 {
			out = append(out, string(p))
		}
	}
	return out
}

// hasFigures reports whether the record states any datasheet figure (an
// identity-only record such as the Radeon 780M states none).
func (s *Spec) hasFigures() bool {
	return s.MemoryBytes > 0 || s.BandwidthGBs > 0 || s.BF16TFLOPS > 0 || s.FP16TFLOPS > 0 ||
		s.FP8TFLOPS > 0 || s.INT8TOPS > 0 || s.InterconnectGBs > 0 || s.GPUFP32TFLOPS > 0
}

// ByName returns the record whose name is exactly name.
func ByName(name string) (Spec, bool) {
	for _, s := range records {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Datasheet is ByName (the name detection's generation tables use).
func Datasheet(name string) (Spec, bool) { return ByName(name) }
