package registry

// Kind is the contract's device kind ("cuda_gpu", "tpu", ...).
type Kind string

// Family groups kinds: cpu, gpu, npu, tpu, ai_asic.
type Family string

// Device kinds, exactly as the wire contract spells them.
const (
	KindCPU           Kind = "cpu"
	KindCUDA          Kind = "cuda_gpu"
	KindROCm          Kind = "rocm_gpu"
	KindMetal         Kind = "metal_gpu"
	KindVulkan        Kind = "vulkan_gpu"
	KindIntelGPU      Kind = "intel_gpu"
	KindIntelNPU      Kind = "intel_npu"
	KindAMDXDNA       Kind = "amd_xdna_npu"
	KindAppleNPU      Kind = "apple_npu"
	KindTPU           Kind = "tpu"
	KindGaudi         Kind = "gaudi"
	KindNeuron        Kind = "aws_neuron"
	KindQualcommAI100 Kind = "qualcomm_ai100"
	KindCerebras      Kind = "cerebras_wse"
	KindGraphcore     Kind = "graphcore_ipu"
	KindGroq          Kind = "groq_lpu"
	KindSamsungNPU    Kind = "samsung_npu"
	KindMediaTekAPU   Kind = "mediatek_apu"
)

// Families.
const (
	FamilyCPU    Family = "cpu"
	FamilyGPU    Family = "gpu"
	FamilyNPU    Family = "npu"
	FamilyTPU    Family = "tpu"
	FamilyAIASIC Family = "ai_asic"
)

var kindFamily = map[Kind]Family{
	KindCPU:           FamilyCPU,
	KindCUDA:          FamilyGPU,
	KindROCm:          FamilyGPU,
	KindMetal:         FamilyGPU,
	KindVulkan:        FamilyGPU,
	KindIntelGPU:      FamilyGPU,
	KindIntelNPU:      FamilyNPU,
	KindAMDXDNA:       FamilyNPU,
	KindAppleNPU:      FamilyNPU,
	KindSamsungNPU:    FamilyNPU,
	KindMediaTekAPU:   FamilyNPU,
	KindTPU:           FamilyTPU,
	KindGaudi:         FamilyAIASIC,
	KindNeuron:        FamilyAIASIC,
	KindQualcommAI100: FamilyAIASIC,
	KindCerebras:      FamilyAIASIC,
	KindGraphcore:     FamilyAIASIC,
	KindGroq:          FamilyAIASIC,
}

// idPrefix is the prefix of device ids ("cuda:0"); kinds without an entry use
// the kind name itself.
var idPrefix = map[Kind]string{
	KindCUDA:  "cuda",
	KindROCm:  "rocm",
	KindMetal: "metal",
}

// Kinds returns every known kind, in contract order.
func Kinds() []Kind {
	return []Kind{KindCPU, KindCUDA, KindROCm, KindMetal, KindVulkan, KindIntelGPU,
		KindIntelNPU, KindAMDXDNA, KindAppleNPU, KindTPU, KindGaudi, KindNeuron,
		KindQualcommAI100, KindCerebras, KindGraphcore, KindGroq, KindSamsungNPU, KindMediaTekAPU}
}

// Valid reports whether k is a kind of the contract.
func (k Kind) Valid() bool { _, ok := kindFamily[k]; return ok }

// Family returns the family of k ("" for an unknown kind).
func (k Kind) Family() Family { return kindFamily[k] }

// IDPrefix returns the prefix used in device ids of this kind: "cuda" for
// cuda_gpu, "rocm" for rocm_gpu, the kind name otherwise.
func (k Kind) IDPrefix() string {
	if p, ok := idPrefix[k]; ok {
		return p
	}
	return string(k)
}

// Valid reports whether f is a family of the contract.
func (f Family) Valid() bool {
	switch f {
	case FamilyCPU, FamilyGPU, FamilyNPU, FamilyTPU, FamilyAIASIC:
		return true
	}
	return false
}
