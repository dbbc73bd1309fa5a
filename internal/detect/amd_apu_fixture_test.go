package detect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// An AMD APU's mem_info_vram_total is the BIOS carve-out: it is reported as
// such, never as memory of the GPU's own; the GTT window is what ROCm lets a
// process use (testdata/machines/strix-halo-128gb/README.md: HIP reports
// "Total VRAM: 98304 MiB" = the 96 GiB GTT).
func TestROCmFixtureAPUMemoryFigures(t *testing.T) {
	for _, tc := range []struct {
		machine             string
		pciID               string
		carveout, gtt, used int64
	}{
		{"strix-halo-128gb", "1002:1586", 4 << 30, 96 << 30, 96 << 30},
		// The ThinkPad P16s (Krackan) has an 8 GiB carve-out (the snap's
		// mem_info_vram_total read) and no captured GTT: usable stays unknown.
		{"thinkpad-p16s-krackan", "1002:1114", 8 << 30, 0, 0},
		// The Cezanne capture gives no GTT byte count: usable stays unknown.
		{"asus-g14-cezanne-apu", "1002:1638", 512 << 20, 0, 0},
	} {
		t.Run(tc.machine, func(t *testing.T) {
			reg := detectFixtureBackends(t, tc.machine, nil, "rocm")
			gpus := devicesOfKind(reg, registry.KindROCm)
			require.Len(t, gpus, 1)
			g := gpus[0]
			assert.Equal(t, tc.pciID, g.PCIID)
			assert.True(t, g.MemoryShared, "an APU's memory is system RAM")
			assert.Zero(t, g.MemoryBytes, "the carve-out is not memory of the GPU's own")
			assert.Nil(t, g.MemoryFreeBytes, "free carve-out does not bound a ROCm process")
			assert.Equal(t, tc.carveout, g.MemoryCarveoutBytes)
			assert.Equal(t, "sysfs mem_info_vram_total (BIOS UMA carve-out)", g.Sources["memory_carveout_bytes"])
			assert.Equal(t, tc.gtt, g.GTTBytes)
			assert.Equal(t, tc.used, g.MemoryUsableBytes)
			if tc.used > 0 {
				assert.Equal(t, "sysfs mem_info_gtt_total (ROCm maps APU memory through GTT)", g.Sources["memory_usable_bytes"])
			} else {
				assert.NotContains(t, g.Sources, "memory_usable_bytes")
			}
			assert.NotContains(t, g.Sources, "memory_bytes")
		})
	}
}

// rocm-smi's "GFX Version": "gfx9010" is gfx90a (an MI250 GCD), and its
// precisions come from the CDNA2 row of the precision table.
func TestROCmFixtureMI250GfxVersion(t *testing.T) {
	reg := detectFixtureBackends(t, "mi250-rocm-smi-gfx9010", nil, "rocm")
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 1)
	g := gpus[0]
	assert.Equal(t, "gfx90a", g.Architecture)
	assert.Equal(t, "rocm-smi", g.Sources["architecture"])
	assert.Equal(t, []string{"fp32", "fp16", "bf16", "int8", "int4"}, g.Quantizations)
	assert.NotContains(t, g.Sources, "quantizations", "a known target is not inferred")
}

// A GPU whose gfx target the precision table lacks (Strix Halo: no KFD, no
// architecture in its part record) still gets precisions, marked inferred.
func TestROCmFixtureUnknownArchPrecisionsInferred(t *testing.T) {
	// The Strix Halo's id 1002:1586 is gfx1151 in the part table (LLVM's
	// processor list), so its precisions are the RDNA3 family's.
	reg := detectFixtureBackends(t, "strix-halo-128gb", nil, "rocm")
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 1)
	assert.Equal(t, "gfx1151", gpus[0].Architecture)
	assert.Equal(t, "pci-id", gpus[0].Sources["architecture"])
	assert.Equal(t, []string{"fp32", "fp16", "bf16", "int8", "int4"}, gpus[0].Quantizations)
	assert.Empty(t, gpus[0].Sources["quantizations"])

	// The same machine with a device id no table knows: no architecture,
	// the ROCm family's precisions, said to be inferred.
	dir := copyFixtureMachine(t, "strix-halo-128gb")
	dev := filepath.Join(dir, "root/sys/devices/pci0000:00/0000:00:08.1/0000:c5:00.0/device")
	require.NoError(t, os.WriteFile(dev, []byte("0x15ff\n"), 0o644))
	opts := Options{Sysroot: filepath.Join(dir, "root"), Path: filepath.Join(dir, "bin"), Env: map[string]string{},
		LookupEnv: func(string) (string, bool) { return "", false }, Backends: []string{"rocm"}}
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	gpus = devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 1)
	assert.Empty(t, gpus[0].Architecture)
	assert.Equal(t, []string{"fp32", "fp16", "bf16", "int8", "int4"}, gpus[0].Quantizations)
	assert.Equal(t, "inferred from the ROCm family (gfx target unknown not in the precision table)", gpus[0].Sources["quantizations"])
}
