package specs

import "regexp"

// HostMemory is the memory interface of one socket of a CPU family: its
// channels and the fastest memory the family supports. A CPU's memory
// bandwidth is not detected; the planner credits a CPU the datasheet figure
// of its family (one socket: llama.cpp runs a model from one NUMA node's
// memory unless told otherwise).
type HostMemory struct {
	Family   string
	Channels int
	MTs      int    // mega-transfers per second per channel
	Source   string // the page stating channels and speed
	match    *regexp.Regexp
}

// BandwidthGBs is channels × MT/s × 8 bytes (a 64-bit channel), in GB/s.
func (h HostMemory) BandwidthGBs() float64 {
	return float64(h.Channels) * float64(h.MTs) * 8 / 1000
}

// hostFamilies are the CPU families with a sourced memory interface, matched
// on the model name /proc/cpuinfo prints. CPUs outside them (client parts,
// whose channels and speed depend on the board; other server generations)
// get no figure.
var hostFamilies = []HostMemory{
	{Family: "AMD EPYC 9004 (Genoa)", Channels: 12, MTs: 4800,
		Source: "https://www.tomshardware.com/news/amd-confirms-12-ddr5-memory-channels-on-genoa (twelve 64-bit DDR5 channels, 460.8 GB/s per socket)",
		match:  regexp.MustCompile(`\bEPYC\s+9\d\d4[A-Z]*\b`)},
	{Family: "AMD EPYC 7002/7003 (Rome, Milan)", Channels: 8, MTs: 3200,
		Source: "https://www.tomshardware.com/news/amd-confirms-12-ddr5-memory-channels-on-genoa (current-generation EPYC: eight channels, 204.8 GB/s with DDR4-3200)",
		match:  regexp.MustCompile(`\bEPYC\s+7[0-9A-Z]{2}[23][A-Z]*\b`)},
	{Family: "Intel Xeon Platinum 84xx (Sapphire Rapids)", Channels: 8, MTs: 4800,
		Source: "https://www.servethehome.com/intel-xeon-max-9480-deep-dive-intel-has-64gb-hbm2e-onboard-like-a-gpu-or-ai-accelerator/3/ (Xeon Platinum 8480+: 8 channels of DDR5, DDR5-4800 DIMMs)",
		match:  regexp.MustCompile(`\bXeon\(R\)\s+Platinum\s+84\d\d[A-Z+]*|\bXeon\s+Platinum\s+84\d\d[A-Z+]*`)},
	// Only the L5640 and the X56xx: the other L56xx and the E56xx run their
	// memory at 1066 MT/s at most (same source).
	{Family: "Intel Xeon L5640/X5600 (Westmere-EP)", Channels: 3, MTs: 1333,
		Source: "https://manualshive.com/en/manual/ibm/7944e2u/3620105?page=6 (IBM System x3620 M3 product guide: Xeon 5500/5600 memory controllers have three channels each; the L5640 and X56xx support 1333 MHz memory)",
		match:  regexp.MustCompile(`\bXeon\(R\)\s+CPU\s+(L5640|X56\d\d)\b`)},
}

// HostMemoryByCPUName returns the memory interface of the family of the CPU
// named name, false when the family is not in the table.
func HostMemoryByCPUName(name string) (HostMemory, bool) {
	for _, h := range hostFamilies {
		if h.match.MatchString(name) {
			return h, true
		}
	}
	return HostMemory{}, false
}
