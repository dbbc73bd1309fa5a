package registry

import "slices"

// CPUFeature is an instruction-set extension of the host CPU that
// inference engines select kernels by, spelt as Linux's /proc/cpuinfo
// prints it: the x86 "flags" line (names from
// arch/x86/include/asm/cpufeatures.h of https://github.com/torvalds/linux)
// or the arm64 "Features" line (hwcap_str in arch/arm64/kernel/cpuinfo.c).
// The vocabulary is fixed: a flag outside it is not reported.
type CPUFeature string

// x86 extensions (the "flags" line). sse2 is in every x86-64 CPU and
// marks a list as x86's.
const (
	CPUFeatureSSE2       CPUFeature = "sse2"
	CPUFeatureSSSE3      CPUFeature = "ssse3"
	CPUFeatureSSE41      CPUFeature = "sse4_1"
	CPUFeatureSSE42      CPUFeature = "sse4_2"
	CPUFeatureAVX        CPUFeature = "avx"
	CPUFeatureAVX2       CPUFeature = "avx2"
	CPUFeatureFMA        CPUFeature = "fma"
	CPUFeatureF16C       CPUFeature = "f16c"
	CPUFeatureBMI2       CPUFeature = "bmi2"
	CPUFeatureAVXVNNI    CPUFeature = "avx_vnni"
	CPUFeatureAVX512F    CPUFeature = "avx512f"
	CPUFeatureAVX512BW   CPUFeature = "avx512bw"
	CPUFeatureAVX512CD   CPUFeature = "avx512cd"
	CPUFeatureAVX512DQ   CPUFeature = "avx512dq"
	CPUFeatureAVX512VL   CPUFeature = "avx512vl"
	CPUFeatureAVX512VBMI CPUFeature = "avx512vbmi"
	CPUFeatureAVX512VNNI CPUFeature = "avx512_vnni"
	CPUFeatureAVX512BF16 CPUFeature = "avx512_bf16"
	CPUFeatureAVX512FP16 CPUFeature = "avx512_fp16"
	CPUFeatureAMXTile    CPUFeature = "amx_tile"
	CPUFeatureAMXBF16    CPUFeature = "amx_bf16"
	CPUFeatureAMXInt8    CPUFeature = "amx_int8"
)

// arm64 extensions (the "Features" line). asimd (Advanced SIMD, NEON) is
// in every arm64 CPU Linux runs on and marks a list as arm64's.
const (
	CPUFeatureASIMD    CPUFeature = "asimd"
	CPUFeatureASIMDHP  CPUFeature = "asimdhp"  // fp16 arithmetic
	CPUFeatureASIMDDP  CPUFeature = "asimddp"  // int8 dot product (SDOT/UDOT)
	CPUFeatureASIMDFHM CPUFeature = "asimdfhm" // fp16 multiply-accumulate into fp32
	CPUFeatureI8MM     CPUFeature = "i8mm"     // int8 matrix multiply
	CPUFeatureBF16     CPUFeature = "bf16"
	CPUFeatureSVE      CPUFeature = "sve"
	CPUFeatureSVE2     CPUFeature = "sve2"
	CPUFeatureSVEI8MM  CPUFeature = "svei8mm"
	CPUFeatureSVEBF16  CPUFeature = "svebf16"
	CPUFeatureSME      CPUFeature = "sme"
	CPUFeatureSME2     CPUFeature = "sme2"
)

// CPUArch is the instruction-set architecture a CPU feature belongs to.
type CPUArch string

// Architectures of the CPU feature vocabulary.
const (
	CPUArchX86   CPUArch = "x86"
	CPUArchARM64 CPUArch = "arm64"
)

var cpuFeatureArch = map[CPUFeature]CPUArch{
	CPUFeatureSSE2: CPUArchX86, CPUFeatureSSSE3: CPUArchX86, CPUFeatureSSE41: CPUArchX86,
	CPUFeatureSSE42: CPUArchX86, CPUFeatureAVX: CPUArchX86, CPUFeatureAVX2: CPUArchX86,
	CPUFeatureFMA: CPUArchX86, CPUFeatureF16C: CPUArchX86, CPUFeatureBMI2: CPUArchX86,
	CPUFeatureAVXVNNI: CPUArchX86, CPUFeatureAVX512F: CPUArchX86, CPUFeatureAVX512BW: CPUArchX86,
	CPUFeatureAVX512CD: CPUArchX86, CPUFeatureAVX512DQ: CPUArchX86, CPUFeatureAVX512VL: CPUArchX86,
	CPUFeatureAVX512VBMI: CPUArchX86, CPUFeatureAVX512VNNI: CPUArchX86, CPUFeatureAVX512BF16: CPUArchX86,
	CPUFeatureAVX512FP16: CPUArchX86, CPUFeatureAMXTile: CPUArchX86, CPUFeatureAMXBF16: CPUArchX86,
	CPUFeatureAMXInt8: CPUArchX86,

	CPUFeatureASIMD: CPUArchARM64, CPUFeatureASIMDHP: CPUArchARM64, CPUFeatureASIMDDP: CPUArchARM64,
	CPUFeatureASIMDFHM: CPUArchARM64, CPUFeatureI8MM: CPUArchARM64, CPUFeatureBF16: CPUArchARM64,
	CPUFeatureSVE: CPUArchARM64, CPUFeatureSVE2: CPUArchARM64, CPUFeatureSVEI8MM: CPUArchARM64,
	CPUFeatureSVEBF16: CPUArchARM64, CPUFeatureSME: CPUArchARM64, CPUFeatureSME2: CPUArchARM64,
}

// Valid reports whether f is in the vocabulary.
func (f CPUFeature) Valid() bool { _, ok := cpuFeatureArch[f]; return ok }

// Arch is the architecture f belongs to, "" for a feature outside the
// vocabulary.
func (f CPUFeature) Arch() CPUArch { return cpuFeatureArch[f] }

// CPUFeaturesArch is the architecture a feature list is of: that of its
// features when they agree, "" for an empty list or a mixed one.
func CPUFeaturesArch(fs []CPUFeature) CPUArch {
	var arch CPUArch
	for _, f := range fs {
		a := f.Arch()
		if a == "" || arch != "" && a != arch {
			return ""
		}
		arch = a
	}
	return arch
}

// CPUFeaturesOf keeps the names of names that are in the vocabulary,
// sorted and once each: a /proc/cpuinfo flags line, split.
func CPUFeaturesOf(names []string) []CPUFeature {
	var out []CPUFeature
	for _, n := range names {
		if f := CPUFeature(n); f.Valid() && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}
