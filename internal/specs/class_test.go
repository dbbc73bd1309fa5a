package specs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The memory class agrees with the bandwidth rule it replaced in the planner
// (a data center GPU or ASIC at 1000 GB/s or more carries HBM, below it GDDR)
// on every record with a bandwidth, except the V100s: HBM2 at 900 GB/s (NVIDIA
// Tesla V100 datasheet, "32 GB HBM2, 900 GB/s", the V100 PCIe record's source),
// and the A30: HBM2 at 933 GB/s (its record's bandwidth source).
func TestMemoryClassAgreesWithOldBandwidthRule(t *testing.T) {
	hbmBelow := map[string]bool{
		"NVIDIA Tesla V100 SXM2 (16GB launch; 32GB variant exists)": true,
		"NVIDIA Tesla V100 PCIe 32GB":                               true,
		"NVIDIA A30":                                                true,
	}
	n := 0
	for _, s := range records {
		if s.BandwidthGBs == 0 || (s.Category != DatacenterGPU && s.Category != DatacenterASIC) {
			continue
		}
		n++
		if hbmBelow[s.Name] {
			assert.Equal(t, MemoryHBM2, s.Memory, s.Name)
			assert.Less(t, s.BandwidthGBs, 1000.0, s.Name)
			continue
		}
		assert.Equal(t, s.BandwidthGBs >= 1000, s.Memory.HBM(), "%s: %v GB/s, %q", s.Name, s.BandwidthGBs, s.Memory)
	}
	assert.Greater(t, n, 30)
	for _, s := range records {
		if s.Category == TPU {
			assert.True(t, s.Memory.HBM(), s.Name)
		}
	}
}

// A memory type the record's own name, product name or aliases spell out is
// its class ("NVIDIA H100 80GB HBM3", "GH200 (144GB HBM3e)").
func TestMemoryClassMatchesNamedMemory(t *testing.T) {
	classes := []MemoryClass{MemoryHBM3e, MemoryHBM3, MemoryHBM2e, MemoryHBM2, MemoryGDDR6X, MemoryGDDR7, MemoryGDDR6, MemoryLPDDR5X}
	n := 0
	for _, s := range records {
		names := strings.ToLower(s.Name + " " + s.ProductName + " " + strings.Join(s.Aliases, " "))
		for _, c := range classes {
			if strings.Contains(names, strings.ToLower(string(c))) {
				n++
				assert.Equal(t, c, s.Memory, s.Name)
				break
			}
		}
	}
	assert.GreaterOrEqual(t, n, 4)
}

// Integrated GPUs use host memory and Apple SoCs their unified memory; the
// memory of a discrete board is never "system" or "unified".
func TestMemoryClassByCategory(t *testing.T) {
	for _, s := range records {
		switch s.Category {
		case IntegratedGPU:
			assert.Equal(t, MemorySystem, s.Memory, s.Name)
		case AppleSoC:
			assert.Equal(t, MemoryUnified, s.Memory, s.Name)
		default:
			assert.NotEqual(t, MemorySystem, s.Memory, s.Name)
			assert.NotEqual(t, MemoryUnified, s.Memory, s.Name)
		}
	}
}
