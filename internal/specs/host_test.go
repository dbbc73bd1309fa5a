package specs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHostMemoryByCPUName checks the CPU families against the names the
// fixture machines' /proc/cpuinfo print (testdata/machines/*/root/proc/cpuinfo)
// and that a CPU outside the table gets no figure (nothing is guessed).
func TestHostMemoryByCPUName(t *testing.T) {
	for _, tc := range []struct {
		name string
		gbs  float64
	}{
		{"AMD EPYC 9354 32-Core Processor", 460.8}, // 12 x DDR5-4800 x 8 B
		{"AMD EPYC 9534 64-Core Processor", 460.8}, // mi300x-8
		{"AMD EPYC 7B13", 204.8},                   // container-vm: 8 x DDR4-3200 x 8 B
		{"AMD EPYC 7313 16-Core Processor", 204.8}, // nvidia-driver-no-tool
		{"Intel(R) Xeon(R) Platinum 8480C", 307.2}, // dgx-h100: 8 x DDR5-4800 x 8 B
		{"Intel(R) Xeon(R) Platinum 8480+", 307.2}, // intel-max-4

		// cpu-only: 3 x DDR3-1333 x 8 B; the E56xx run 1066 MT/s at most.
		{"Intel(R) Xeon(R) CPU           L5640  @ 2.27GHz", 31.992},
		{"Intel(R) Xeon(R) CPU           X5670  @ 2.93GHz", 31.992},
		{"Intel(R) Xeon(R) CPU           E5620  @ 2.40GHz", 0},

		{"13th Gen Intel(R) Core(TM) i9-13900K", 0},
		{"AMD Ryzen 9 7950X 16-Core Processor", 0},
		{"AMD EPYC", 0},
		{"Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz", 0},
		{"", 0},
	} {
		h, ok := HostMemoryByCPUName(tc.name)
		if tc.gbs == 0 {
			assert.False(t, ok, tc.name)
			continue
		}
		if assert.True(t, ok, tc.name) {
			assert.InDelta(t, tc.gbs, h.BandwidthGBs(), 1e-9, tc.name)
			assert.True(t, strings.HasPrefix(h.Source, "https://"), tc.name)
		}
	}
}
