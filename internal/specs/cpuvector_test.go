package specs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The cpu-only fixture's Xeon L5640 has SSE4.2 and no AVX (its
// /proc/cpuinfo flags); a CPU of a family without a record is unknown,
// not assumed to lack anything.
func TestCPUVectorByName(t *testing.T) {
	v, ok := CPUVectorByName("Intel(R) Xeon(R) CPU           L5640  @ 2.27GHz")
	assert.True(t, ok)
	assert.False(t, v.AVX2 || v.AVX512)
	assert.Equal(t, "SSE4.2", v.Widest)
	_, ok = CPUVectorByName("Intel(R) Xeon(R) Gold 5218R CPU @ 2.10GHz")
	assert.False(t, ok)
}

// featuresOf is the vocabulary part of a captured flags line.
func featuresOf(line string) []registry.CPUFeature {
	return registry.CPUFeaturesOf(strings.Fields(line))
}

// The detected flags come before the family table. The lines below are
// parts of real captures' flags lines: the cpu-only fixture's L5640
// (testdata/machines/cpu-only/root/proc/cpuinfo) says SSE4.2; the same
// name with flags that list AVX2 (a part or a VM the table's rule does not
// fit; a made-up list) reads AVX2; the qemu-q35-vm fixture's Xeon Gold
// 5218R, which has no record, is read from its flags; arm64 flags
// (graviton3-c7g's Features line) are arm64's.
func TestCPUVectorOfPrefersDetectedFeatures(t *testing.T) {
	westmere := "Intel(R) Xeon(R) CPU           L5640  @ 2.27GHz"
	v, ok := CPUVectorOf(registry.Device{Name: westmere,
		CPUFeatures: featuresOf("fpu vme sse sse2 ht ssse3 cx16 sse4_1 sse4_2 popcnt aes lahf_lm")})
	require.True(t, ok)
	assert.Equal(t, CPUVector{Family: "Intel(R) Xeon(R) CPU L5640 @ 2.27GHz", Arch: registry.CPUArchX86, Widest: "SSE4.2",
		Source: "the CPU's /proc/cpuinfo flags (cpu_features)"}, v)

	v, ok = CPUVectorOf(registry.Device{Name: westmere, CPUFeatures: featuresOf("sse2 sse4_2 avx avx2")})
	require.True(t, ok)
	assert.True(t, v.AVX2)
	assert.False(t, v.AVX512)
	assert.Equal(t, "AVX2", v.Widest)

	v, ok = CPUVectorOf(registry.Device{Name: "Intel(R) Xeon(R) Gold 5218R CPU @ 2.10GHz",
		CPUFeatures: featuresOf("sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2 avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni")})
	require.True(t, ok)
	assert.True(t, v.AVX2 && v.AVX512)
	assert.Equal(t, "AVX-512", v.Widest)

	v, ok = CPUVectorOf(registry.Device{CPUFeatures: featuresOf("fp asimd evtstrm aes pmull asimdhp asimddp sve asimdfhm")})
	require.True(t, ok)
	assert.Equal(t, registry.CPUArchARM64, v.Arch)
	assert.Equal(t, "SVE", v.Widest)
	assert.Equal(t, "this CPU", v.Family)
	assert.False(t, v.AVX2 || v.AVX512)
}

// Without cpu_features (a registry written before they were detected, a
// Mac) the family table answers, and a CPU outside it is unknown.
func TestCPUVectorOfWithoutFeaturesUsesTheFamilyTable(t *testing.T) {
	v, ok := CPUVectorOf(registry.Device{Name: "Intel(R) Xeon(R) CPU           L5640  @ 2.27GHz"})
	require.True(t, ok)
	assert.Equal(t, "Intel Xeon L5640/X5600 (Westmere-EP)", v.Family)
	assert.Equal(t, registry.CPUArchX86, v.Arch)
	assert.False(t, v.AVX2 || v.AVX512)

	_, ok = CPUVectorOf(registry.Device{Name: "Intel(R) Xeon(R) Gold 5218R CPU @ 2.10GHz"})
	assert.False(t, ok)
	// A list mixing architectures says nothing: the table answers.
	_, ok = CPUVectorOf(registry.Device{Name: "Intel(R) Xeon(R) Gold 5218R CPU @ 2.10GHz",
		CPUFeatures: []registry.CPUFeature{registry.CPUFeatureAVX2, registry.CPUFeatureSVE}})
	assert.False(t, ok)
}
