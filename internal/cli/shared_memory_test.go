package cli

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func detectedFixture(t *testing.T, name string) *registry.Registry {
	t.Helper()
	reg, err := detectFixture(t, name)(context.Background())
	require.NoError(t, err)
	return reg
}

// Unified memory is memory the accelerator can use, shown as shared, in the
// table, the summary and the NFD labels (issue 28): Strix Halo's 96 GiB GTT
// (memory_usable_bytes), DGX Spark's GB10 and an M3 Pro's Metal working set
// were "—" or "0.0 GiB accelerator memory".
func TestSharedMemoryShownEverywhere(t *testing.T) {
	for _, tc := range []struct {
		machine, kind string
		usable        int64
		cell          string
	}{
		{"strix-halo-128gb", "rocm", 96 << 30, "96.0 GiB shared"},
		{"dgx-spark-gb10", "cuda", 128501256192, "119.7 GiB shared"},
		{"macbook-m3-pro", "metal", 24 << 30, "24.0 GiB shared"},
	} {
		t.Run(tc.machine, func(t *testing.T) {
			reg := detectedFixture(t, tc.machine)
			s := Summarize(reg)
			require.NotNil(t, s.AcceleratorMemoryBytes)
			assert.Equal(t, tc.usable, *s.AcceleratorMemoryBytes)
			assert.Equal(t, tc.usable, s.AcceleratorSharedMemoryBytes)

			var b bytes.Buffer
			require.NoError(t, WriteTable(&b, reg, nil))
			assert.Contains(t, b.String(), tc.cell)
			assert.Contains(t, b.String(), GiB(tc.usable)+" accelerator memory ("+GiB(tc.usable)+" of it shared with the host)")
			assert.NotContains(t, b.String(), "0.0 GiB accelerator memory")

			l := Labels(reg)
			assert.Equal(t, GiBToMiB(tc.usable), l[LabelPrefix+tc.kind+".memory"])
			assert.Equal(t, "true", l[LabelPrefix+tc.kind+".memory.shared"])
		})
	}
}

// GiBToMiB is bytes as the decimal MiB string of a memory label.
func GiBToMiB(b int64) string {
	return strconv.FormatInt(b>>20, 10)
}

// The pci.ids name of Strix Halo is longer than a label value may be; the
// label keeps both model numbers instead of ending in "Radeon-806".
func TestProductLabelKeepsModelNumber(t *testing.T) {
	reg := detectedFixture(t, "strix-halo-128gb")
	l := Labels(reg)
	v := l[LabelPrefix+"gpu.product"]
	assert.Equal(t, "AMD-Strix-Halo-Radeon-Graphics-8050S-8060S", v)
	assert.LessOrEqual(t, len(v), 63)
	assert.Equal(t, "NVIDIA-H100-80GB-HBM3", productLabel("NVIDIA H100 80GB HBM3"), "a short name is only made a label")
	long := productLabel("Vendor Accelerator With A Very Long Marketing Name That Goes On And On Model 9000X")
	assert.LessOrEqual(t, len(long), 63)
	assert.NotContains(t, long, "9000", "words are dropped whole, from the end")
	assert.Equal(t, long, LabelValue(long))
}

// Compute instances of one MIG GPU instance share its memory; the summary
// counts it once (h200-mig-shared-gi: 71424 + 33280 + 2x16384 MiB).
func TestSummaryCountsSharedGPUInstanceOnce(t *testing.T) {
	reg := detectedFixture(t, "h200-mig-shared-gi")
	s := Summarize(reg)
	require.NotNil(t, s.AcceleratorMemoryBytes)
	assert.Equal(t, int64(71424+33280+2*16384)<<20, *s.AcceleratorMemoryBytes)
	assert.Zero(t, s.AcceleratorSharedMemoryBytes)
	assert.Equal(t, 5, s.AcceleratorCount)
}
