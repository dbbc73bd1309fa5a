package specs

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// CPUVector is the widest vector extension of a CPU, for engines whose CPU
// backend needs one (vLLM: engine.CPUFloor). It comes from the extensions
// detected on the CPU (registry.Device.CPUFeatures, its /proc/cpuinfo
// flags) when the registry has them; else from a table of CPU families,
// matched on the model name /proc/cpuinfo prints (CPUVectorOf).
type CPUVector struct {
	// Family names what the vector was read for: the CPU's own name when
	// it comes from the CPU's detected features, else the family.
	Family string
	// Arch is the CPU's architecture (x86 for every family record).
	Arch registry.CPUArch
	// Widest is the widest vector extension the CPU has ("SSE4.2").
	Widest string
	// AVX2 and AVX512 (AVX-512 Foundation, the avx512f flag) say whether
	// the CPU has them.
	AVX2, AVX512 bool
	Source       string
	match        *regexp.Regexp
}

// cpuVectorFamilies are the CPU families whose vector extensions a
// source states. They serve only a registry without cpu_features (one
// written before they were detected, a Mac, a cpuinfo without a flags
// line); a detected CPU's own flags come first, so a VM that masks an
// extension or a part the table does not know is read as it is. Only
// families below an engine's floor need a record: a CPU outside them is
// not refused.
var cpuVectorFamilies = []CPUVector{
	{Family: "Intel Xeon L5640/X5600 (Westmere-EP)", Arch: registry.CPUArchX86, Widest: "SSE4.2",
		Source: "the flags line of an L5640's /proc/cpuinfo (sse sse2 ssse3 sse4_1 sse4_2, no avx, avx2 or avx512f): testdata/machines/cpu-only, unpacked verbatim from https://github.com/jaypipes/ghw/blob/fedd4fe/testdata/snapshots/linux-amd64-8581cf3a529e5d8b97ea876eade2f60d.tar.gz",
		match:  regexp.MustCompile(`\bXeon\(R\)\s+CPU\s+(L5640|X56\d\d)\b`)},
}

// CPUVectorByName returns the vector extensions of the family of the CPU
// named name, false when the family has no record.
func CPUVectorByName(name string) (CPUVector, bool) {
	for _, v := range cpuVectorFamilies {
		if v.match.MatchString(name) {
			return v, true
		}
	}
	return CPUVector{}, false
}

// CPUVectorOf returns the vector extensions of CPU device d: from its
// detected cpu_features when it has them (of one architecture), else from
// its family's record (CPUVectorByName); false when neither says.
func CPUVectorOf(d registry.Device) (CPUVector, bool) {
	if v, ok := cpuVectorOfFeatures(d.CPUFeatures); ok {
		v.Family = strings.Join(strings.Fields(d.Name), " ")
		if v.Family == "" {
			v.Family = "this CPU"
		}
		return v, true
	}
	return CPUVectorByName(d.Name)
}

// widestVector lists each architecture's vector extensions, widest first,
// with the name a reason prints.
var widestVector = map[registry.CPUArch][]struct {
	feature registry.CPUFeature
	name    string
}{
	registry.CPUArchX86: {
		{registry.CPUFeatureAVX512F, "AVX-512"}, {registry.CPUFeatureAVX2, "AVX2"}, {registry.CPUFeatureAVX, "AVX"},
		{registry.CPUFeatureSSE42, "SSE4.2"}, {registry.CPUFeatureSSE41, "SSE4.1"}, {registry.CPUFeatureSSSE3, "SSSE3"},
		{registry.CPUFeatureSSE2, "SSE2"},
	},
	registry.CPUArchARM64: {
		{registry.CPUFeatureSVE2, "SVE2"}, {registry.CPUFeatureSVE, "SVE"}, {registry.CPUFeatureASIMD, "ASIMD (NEON)"},
	},
}

// cpuVectorOfFeatures reads a vector from detected features; false for an
// empty list or one mixing architectures.
func cpuVectorOfFeatures(fs []registry.CPUFeature) (CPUVector, bool) {
	arch := registry.CPUFeaturesArch(fs)
	if arch == "" {
		return CPUVector{}, false
	}
	v := CPUVector{Arch: arch, Source: "the CPU's /proc/cpuinfo flags (cpu_features)",
		AVX2:   slices.Contains(fs, registry.CPUFeatureAVX2),
		AVX512: slices.Contains(fs, registry.CPUFeatureAVX512F)}
	ladder := widestVector[arch]
	v.Widest = "less than " + ladder[len(ladder)-1].name
	for _, w := range ladder {
		if slices.Contains(fs, w.feature) {
			v.Widest = w.name
			break
		}
	}
	return v, true
}
