package cli

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The compute partitions of an AMD GPU in CPX mode are named by their
// index ("AMD Instinct MI300X OAM (CPX partition 3)", as detection names
// them), so a node of identical partitions (the mi300x-8-cpx and
// mi308x-8-cpx fixtures) was labelled rocm.product=mixed, which no
// nodeSelector on the product can match, where a node of identical MIG
// slices (a100-80gb-pcie-mig-2x3g) gets its product. The product of a
// partition is its name without the index; partitions of two modes, or of
// two GPU models, stay mixed.
func TestLabelsProductOfIdenticalPartitions(t *testing.T) {
	part := func(i int, gpu, mode string) registry.Device {
		idx := i % 8
		return registry.Device{ID: fmt.Sprintf("rocm:%d", 8+i), Kind: registry.KindROCm, Available: true, Vendor: "amd",
			Name:      fmt.Sprintf("%s (%s partition %d)", gpu, mode, idx),
			Partition: &registry.Partition{Compute: mode, Memory: "NPS1", Index: &idx, Parent: fmt.Sprintf("rocm:%d", i/8)}}
	}
	reg := registry.New()
	for i := range 16 {
		reg.Devices = append(reg.Devices, part(i, "AMD Instinct MI300X OAM", "CPX"))
	}
	l := Labels(reg)
	assert.Equal(t, "AMD-Instinct-MI300X-OAM-CPX-partition", l["ai-hwaccel.io/rocm.product"])
	assert.Equal(t, "AMD-Instinct-MI300X-OAM-CPX-partition", l["ai-hwaccel.io/gpu.product"])

	reg.Devices = append(reg.Devices, part(16, "AMD Instinct MI308X", "CPX"))
	assert.Equal(t, "mixed", Labels(reg)["ai-hwaccel.io/rocm.product"], "two GPU models")
	reg.Devices = append(reg.Devices[:16], part(16, "AMD Instinct MI300X OAM", "DPX"))
	assert.Equal(t, "mixed", Labels(reg)["ai-hwaccel.io/rocm.product"], "two partition modes")
}
