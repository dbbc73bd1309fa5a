package nvidia

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// nvidia-smi and procfs print "Graphics Device" (or "NVIDIA Graphics
// Device") for a card their driver predates, as in the nvidia-smi tables of
// public bug reports (e.g. driver 440.33.01 "|   0  Graphics Device     On
// |"); such a name is no product name and the PCI id names the card.
func TestIsProductNameRejectsPlaceholders(t *testing.T) {
	for _, s := range []string{"", "Unknown", "Graphics Device", "NVIDIA Graphics Device", "N/A", "[N/A]"} {
		assert.False(t, isProductName(s), s)
	}
	for _, s := range []string{"NVIDIA GeForce GTX 1660", "NVIDIA H200", "Tesla V100-PCIE-32GB"} {
		assert.True(t, isProductName(s), s)
	}
}
