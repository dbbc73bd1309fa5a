package specs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
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
	assert.Equal(t, 11, n)
	_, ok := Datasheet("no such part")
	assert.False(t, ok)
}

// TestRecordsAreWellFormed: one record per name and per PCI id, every record
// cites where its figures come from, and a figure from another page names it.
func TestRecordsAreWellFormed(t *testing.T) {
	names := map[string]bool{}
	ids := map[string]string{}
	fields := map[string]bool{"MemoryBytes": true, "BandwidthGBs": true, "BF16TFLOPS": true, "FP16TFLOPS": true,
		"FP8TFLOPS": true, "INT8TOPS": true, "FP16AccumFP16TFLOPS": true, "Interconnect": true, "InterconnectGBs": true,
		"GPUFP32TFLOPS": true}
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

// TestXGMIPerLinkGBs: the MI300X's and MI325X's 896 GB/s over their seven
// links is 128 GB/s a link both ways, the white paper's 16 lanes at 32 Gbps
// each way (x16 x 32 / 8 = 64 GB/s, internal/detect/amd's cdna3XGMILinkGBs);
// parts without a sourced mesh give 0.
func TestXGMIPerLinkGBs(t *testing.T) {
	for _, name := range []string{"AMD Instinct MI300X", "AMD Instinct MI325X"} {
		s, ok := ByName(name)
		require.True(t, ok, name)
		assert.Equal(t, 896.0, s.InterconnectGBs, name)
		assert.Contains(t, s.FigureSources["InterconnectGBs"], "amd-cdna-3-white-paper.pdf", name)
		assert.Equal(t, 2*16*32/8.0, XGMIPerLinkGBs(s), name)
	}
	for _, name := range []string{"AMD Instinct MI250X", "AMD Instinct MI308X", "NVIDIA H100 SXM5 80GB"} {
		s, ok := ByName(name)
		require.True(t, ok, name)
		assert.Zero(t, XGMIPerLinkGBs(s), name)
	}
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
		assert.Equal(t, IntegratedGPU, s.Category, id)
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

// TestSharedPCIIDGroups: an id several boards share (SharedPCIIDs) belongs to
// one identity-only record, named as pci.ids names it, and to two or more
// boards, each sized; no id is both a record's own and shared otherwise.
func TestSharedPCIIDGroups(t *testing.T) {
	boards := map[string][]Spec{}
	for _, s := range records {
		for _, id := range s.SharedPCIIDs {
			assert.Positive(t, s.MemoryBytes, "%s: a board of shared id %s has no memory", s.Name, id)
			assert.Contains(t, s.IdentitySource, "https://pci-ids.ucw.cz/read/PC/"+id[:4]+"/"+id[5:], s.Name)
			boards[id] = append(boards[id], s)
		}
	}
	require.NotEmpty(t, boards)
	for id, bs := range boards {
		assert.GreaterOrEqual(t, len(bs), 2, id)
		own, ok := ByPCIID(id)
		require.True(t, ok, id)
		assert.False(t, own.hasFigures(), "%s: the id's own record is identity only", id)
		assert.NotEmpty(t, own.ProductName, id)
	}
}

// TestByPCIIDMemory: the RX 7900 boards share 1002:744c; the VRAM amdgpu
// reports (mem_info_vram_total, a little under the board's GiB) picks the
// board; no or odd memory leaves the id's own record, named as pci.ids names
// it.
func TestByPCIIDMemory(t *testing.T) {
	for mem, want := range map[int64]string{
		20<<30 - 16<<20: "AMD Radeon RX 7900 XT",
		24<<30 - 16<<20: "AMD Radeon RX 7900 XTX",
		16 << 30:        "AMD Radeon RX 7900 GRE",
		0:               "AMD Navi 31 (Radeon RX 7900 XT / XTX / GRE / 7900M)",
		12 << 30:        "AMD Navi 31 (Radeon RX 7900 XT / XTX / GRE / 7900M)",
	} {
		s, ok := ByPCIIDMemory("1002:744C", mem)
		require.True(t, ok, mem)
		assert.Equal(t, want, s.Name, mem)
	}
	s, ok := ByPCIIDMemory("1002:744c", 0)
	require.True(t, ok)
	assert.Equal(t, "AMD Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]", s.ProductName)
	assert.Equal(t, "gfx1100", s.Arch)
	s, ok = ByPCIIDMemory("10de:2330", 80<<30) // an unshared id: ByPCIID's record
	require.True(t, ok)
	assert.Equal(t, "NVIDIA H100 SXM5 80GB", s.Name)
	s, ok = ForDevice(&registry.Device{PCIID: "1002:744c", MemoryBytes: 20<<30 - 16<<20})
	require.True(t, ok)
	assert.Equal(t, 800.0, s.BandwidthGBs)
	_, ok = ForDevice(&registry.Device{PCIID: "1002:744c"})
	assert.False(t, ok, "no memory: the id's record has no figures, and no name to go by")
}

// TestFixtureGapIDs: ids of fixture machines the table lacked (issue 13
// item 3) name their parts as pci.ids does.
func TestFixtureGapIDs(t *testing.T) {
	for id, name := range map[string]string{
		"10de:28a0": "NVIDIA GeForce RTX 4060 Laptop GPU", // slimbook-hero-rtx4060-igpu
		"8086:a7a8": "Intel Raptor Lake-P [UHD Graphics]", // slimbook-hero-rtx4060-igpu
		"1002:74a2": "AMD Instinct MI308X",                // mi308x-8-cpx
		"1002:1586": "AMD Strix Halo [Radeon Graphics / Radeon 8050S Graphics / Radeon 8060S Graphics]",
		"10de:102d": "Tesla K80", // nvidia-driver-no-tool
		"8086:e20b": "Intel Arc B580 Graphics",
		"8086:e223": "Intel Arc Pro B70", // zimaos-arc-pro-b70-unbound
	} {
		p, ok := LookupPart(id)
		require.True(t, ok, id)
		assert.Equal(t, name, p.Name, id)
		assert.Contains(t, p.Source, "https://", id)
	}
	k80, ok := LookupPCIID("10de:102d")
	require.True(t, ok)
	assert.Equal(t, int64(12e9), k80.MemoryBytes)
	assert.Equal(t, 240.0, k80.BandwidthGBs)
	assert.Equal(t, "3.7", k80.Arch)
}

// Every NVIDIA record that a PCI id identifies names its compute capability:
// without nvidia-smi (a container without the tool) the record is all that
// tells which precisions the GPU runs, and a GPU without one is offered
// fp32 and fp16 only, so a plan refuses bf16, fp8 and every GGUF type on an
// H200 (as it did before its record had one).
func TestNVIDIARecordsNameTheirComputeCapability(t *testing.T) {
	for _, r := range records {
		if r.Vendor != "NVIDIA" || len(r.PCIIDs) == 0 {
			continue
		}
		assert.NotEmpty(t, r.Arch, "%s (%v) has no compute capability", r.Name, r.PCIIDs)
	}
}

// TestAppleRecordsStateFP32Peak: every Apple record carries the GPU's FP32
// peak (the Metal prompt model's compute figure) with the core count it is
// of and the page it comes from, and the peak is cores x 128 ALUs x 2
// FLOPs at an Apple GPU clock: 1.27 GHz (M1, from its 2.6 TFLOPS over 8
// cores) to 1.68 GHz (the 32-core M4 Max on hmc-tech.com), so a mistyped
// figure or core count fails.
func TestAppleRecordsStateFP32Peak(t *testing.T) {
	n := 0
	for _, s := range records {
		if s.Category != AppleSoC {
			continue
		}
		n++
		require.Positive(t, s.GPUCores, s.Name)
		assert.Contains(t, s.FigureSources["GPUFP32TFLOPS"], "https://", s.Name)
		ghz := s.GPUFP32TFLOPS * 1000 / float64(s.GPUCores*128*2)
		assert.InDelta(t, 1.475, ghz, 0.21, "%s: %.2f TFLOPS over %d cores is %.3f GHz", s.Name, s.GPUFP32TFLOPS, s.GPUCores, ghz)
	}
	assert.Equal(t, 17, n)
}
