package specs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeviceMemoryBytes(t *testing.T) {
	cases := []struct {
		record string
		want   int64
	}{
		{"NVIDIA H100 SXM5 80GB", 80 << 30},          // "GB", binary per nvidia-smi
		{"NVIDIA GeForce RTX 3060 (12GB)", 12 << 30}, // "GB", binary
		{"Intel Gaudi2 (HL-225)", 98304 << 20},       // hl-smi 98304 MiB
		{"Intel Gaudi3", 0},                          // "128 GB": no evidence either way
		{"Google TPU v4 (per chip)", 32 << 30},       // stated in GiB
		{"Google TPU v5p (per chip)", 95 << 30},      // "GB" record, GiB on the v5p page
		{"AWS Inferentia (Inf1, per chip)", 8 << 30}, // stated in GiB
		{"AWS Trainium2 (per chip)", 96 << 30},       // stated in GiB
		{"NVIDIA L4", 0},                             // "GB" not confirmed binary
		{"Apple M1", 0},                              // a maximum, not the part's
		{"Google TPU v2 (per chip)", 16 << 30},       // extra record (tpu_info)
		{"Google TPU7x (per chip)", 192 << 30},       // extra record (tpu_info)
	}
	for _, c := range cases {
		s, ok := Datasheet(c.record)
		require.True(t, ok, c.record)
		assert.Equal(t, c.want, DeviceMemoryBytes(s), c.record)
	}
}

func TestMemoryBinaryOnlyOnGBRecords(t *testing.T) {
	n := 0
	for _, s := range records {
		if s.MemoryBinary != "" {
			n++
			assert.Equal(t, "GB", s.MemoryUnit, s.Name)
		}
	}
	assert.Equal(t, 10, n)
	_, ok := Datasheet("no such part")
	assert.False(t, ok)
}

// TestRecordsAreWellFormed: one record per name and per PCI id, every record
// cites where its figures come from, and a figure from another page names it.
func TestRecordsAreWellFormed(t *testing.T) {
	names := map[string]bool{}
	ids := map[string]string{}
	fields := map[string]bool{"MemoryBytes": true, "BandwidthGBs": true, "BF16TFLOPS": true, "FP16TFLOPS": true,
		"FP8TFLOPS": true, "INT8TOPS": true, "Interconnect": true, "InterconnectGBs": true}
	for _, s := range records {
		assert.False(t, names[s.Name], "record %s listed twice", s.Name)
		names[s.Name] = true
		for _, id := range s.PCIIDs {
			assert.Regexp(t, `^[0-9a-f]{4}:[0-9a-f]{4}$`, id, s.Name)
			assert.Empty(t, ids[id], "%s names %s and %s", id, ids[id], s.Name)
			ids[id] = s.Name
		}
		if s.hasFigures() {
			assert.Contains(t, s.Source, "http", s.Name)
		}
		if len(s.PCIIDs) > 0 || s.ProductName != "" || s.Arch != "" {
			assert.NotEmpty(t, s.IdentitySource, s.Name)
		}
		for f, src := range s.FigureSources {
			assert.True(t, fields[f], "%s: FigureSources key %q is not a figure", s.Name, f)
			assert.NotEmpty(t, src, s.Name)
		}
	}
}

// TestFigureSourcesOfFilledFigures: the TPU v5p ICI and RTX 4080 bandwidth,
// which their records' own pages lack, carry their pages.
func TestFigureSourcesOfFilledFigures(t *testing.T) {
	v5p, ok := ByName("Google TPU v5p (per chip)")
	require.True(t, ok)
	assert.Equal(t, 1200.0, v5p.InterconnectGBs)
	assert.Contains(t, v5p.FigureSources["InterconnectGBs"], "docs.cloud.google.com/tpu/docs/v5p")
	r4080, ok := ByName("NVIDIA GeForce RTX 4080 (16GB)")
	require.True(t, ok)
	assert.Equal(t, 716.8, r4080.BandwidthGBs)
	assert.Contains(t, r4080.FigureSources["BandwidthGBs"], "pcmasters.de")
}

func TestLookupPart(t *testing.T) {
	p, ok := LookupPart("10DE:2330 ")
	require.True(t, ok)
	assert.Equal(t, "NVIDIA H100 80GB HBM3", p.Name)
	assert.Equal(t, "9.0", p.Arch)
	assert.Contains(t, p.Source, "https://developer.nvidia.com/cuda-gpus")
	p, ok = LookupPart("1002:74a1")
	require.True(t, ok)
	assert.Equal(t, "gfx942", p.Arch)
	p, ok = LookupPart("1002:15bf")
	require.True(t, ok)
	assert.Equal(t, "gfx1103", p.Arch)
	_, ok = LookupPart("10de:ffff")
	assert.False(t, ok)
	_, ok = LookupPart("1da3:1020") // Gaudi 2: figures, no identity facts
	assert.False(t, ok)
}

func TestNVLinkPerLinkGBs(t *testing.T) {
	assert.Equal(t, 50.0, NVLinkPerLinkGBs("9.0")) // 900 / 18
	assert.Equal(t, 50.0, NVLinkPerLinkGBs("8.0")) // 600 / 12
	assert.Zero(t, NVLinkPerLinkGBs("8.6"))
	assert.Zero(t, NVLinkPerLinkGBs(""))
}

// TestAPUIdentities: the APU ids issue 13 names are in the table, from the PCI
// ID repository, as integrated GPUs without figures (no datasheet lookup
// finds them), each with its gfx target (LLVM AMDGPU processor table), which
// LookupPart gives detection.
func TestAPUIdentities(t *testing.T) {
	for id, arch := range map[string]string{"1002:15d8": "gfx902", "1002:1638": "gfx90c", "1002:1681": "gfx1035",
		"1002:164e": "gfx1036", "1002:1900": "gfx1103", "1002:150e": "gfx1150", "1002:1586": "gfx1151",
		"1002:1114": "gfx1152", "1002:15bf": "gfx1103"} {
		s, ok := ByPCIID(id)
		require.True(t, ok, id)
		assert.Equal(t, "integrated_gpu", s.Category, id)
		assert.False(t, s.hasFigures(), id)
		_, ok = LookupPCIID(id)
		assert.False(t, ok, id)
		p, ok := LookupPart(id)
		require.True(t, ok, id)
		assert.Equal(t, arch, p.Arch, id)
		if id != "1002:15bf" {
			assert.Contains(t, s.IdentitySource, "https://pci-ids.ucw.cz/read/PC/1002/"+id[5:], id)
			assert.Contains(t, s.IdentitySource, "https://llvm.org/docs/AMDGPUUsage.html", id)
		}
	}
	s, ok := ByPCIID(" 1002:1586 ")
	require.True(t, ok)
	assert.Contains(t, s.Name, "Strix Halo")
	_, ok = ByPCIID("1002:ffff")
	assert.False(t, ok)
}

// TestPCIIDsOfDatasheetRecords: ids added from the PCI ID repository find
// their datasheet records.
func TestPCIIDsOfDatasheetRecords(t *testing.T) {
	for id, want := range map[string]string{
		"10de:20b2": "NVIDIA A100 SXM4 80GB",
		"10de:1db5": "NVIDIA Tesla V100 SXM2 (16GB launch; 32GB variant exists)",
		"10de:27b8": "NVIDIA L4",
		"1002:740f": "AMD Instinct MI210",
		"1da3:1060": "Intel Gaudi3",
	} {
		s, ok := LookupPCIID(id)
		require.True(t, ok, id)
		assert.Equal(t, want, s.Name, id)
	}
}
