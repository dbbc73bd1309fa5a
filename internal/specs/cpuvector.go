package specs

import "regexp"

// CPUVector is the widest x86 vector extension of a CPU family, for
// engines whose CPU backend needs one (vLLM: engine.CPUFloor). A CPU's
// flags are not in the registry; the family, matched on the model name
// /proc/cpuinfo prints, says what every CPU of it has.
type CPUVector struct {
	Family string
	// Widest is the widest vector extension the family has ("SSE4.2").
	Widest string
	// AVX2 and AVX512 (AVX-512 Foundation, the avx512f flag) say whether
	// the family has them.
	AVX2, AVX512 bool
	Source       string
	match        *regexp.Regexp
}

// cpuVectorFamilies are the CPU families whose vector extensions a
// source states. Only families below an engine's floor need a record: a
// CPU outside them is not refused.
var cpuVectorFamilies = []CPUVector{
	{Family: "Intel Xeon L5640/X5600 (Westmere-EP)", Widest: "SSE4.2",
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
