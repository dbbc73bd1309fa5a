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

func TestBinaryGBNamesGBRecords(t *testing.T) {
	for name := range binaryGB {
		s, ok := ByName(name)
		require.True(t, ok, "binaryGB names a record: %s", name)
		assert.Equal(t, "GB", s.MemoryUnit, name)
	}
}

func TestExtraRecordsAreNotInTable(t *testing.T) {
	for _, e := range extraRecords {
		_, ok := ByName(e.Name)
		assert.False(t, ok, "%s is now a devices.json record: drop the extra", e.Name)
		assert.NotEmpty(t, e.Source)
	}
	_, ok := Datasheet("no such part")
	assert.False(t, ok)
}

func TestSupplementsFillOnlyMissingFigures(t *testing.T) {
	v5p, ok := ByName("Google TPU v5p (per chip)")
	require.True(t, ok)
	assert.Equal(t, 1200.0, v5p.InterconnectGBs)
	assert.Contains(t, v5p.Source, "docs.cloud.google.com/tpu/docs/v5p")

	stated := []Spec{{Name: "Google TPU v5p (per chip)", InterconnectGBs: 999, Source: "x"}}
	applySupplements(stated)
	assert.Equal(t, 999.0, stated[0].InterconnectGBs, "a stated figure wins")
	assert.Equal(t, "x", stated[0].Source)
	for name := range supplements {
		_, ok := ByName(name)
		assert.True(t, ok, "supplement for a missing record: %s", name)
	}
}

func TestRTX4080BandwidthSupplement(t *testing.T) {
	s, ok := ByName("NVIDIA GeForce RTX 4080 (16GB)")
	require.True(t, ok)
	assert.Equal(t, 716.8, s.BandwidthGBs)
	assert.Contains(t, s.Source, "memory_bandwidth_gb_s: ")
	stated := []Spec{{Name: "NVIDIA GeForce RTX 4080 (16GB)", BandwidthGBs: 700, Source: "x"}}
	applySupplements(stated)
	assert.Equal(t, 700.0, stated[0].BandwidthGBs, "a stated figure wins")
	assert.Equal(t, "x", stated[0].Source)
}

// TestHandRecords: every hand-kept record is new (not also a devices.json
// record), cites a page for what it states, states a bandwidth (its reason to
// exist) and is found by its own name.
func TestHandRecords(t *testing.T) {
	names := map[string]int{}
	for _, s := range All() {
		names[s.Name]++
	}
	for _, h := range handRecords {
		assert.Equal(t, 1, names[h.Name], "%s is listed once (drop the hand record if devices.json gained it)", h.Name)
		assert.Contains(t, h.Source, "https://", h.Name)
		assert.Positive(t, h.BandwidthGBs, h.Name)
		assert.Positive(t, h.MemoryBytes, h.Name)
		assert.Equal(t, "GB", h.MemoryUnit, h.Name)
		if h.FP16TFLOPS > 0 {
			assert.Contains(t, h.Source, "fp16/bf16 dense", h.Name)
		}
		got, ok := Lookup(h.Name)
		require.True(t, ok, h.Name)
		assert.Equal(t, h.Name, got.Name)
	}
}

func TestLookupPart(t *testing.T) {
	p, ok := LookupPart("10DE:2330 ")
	require.True(t, ok)
	assert.Equal(t, Part{Name: "NVIDIA H100 80GB HBM3", Arch: "9.0", Source: nvidiaPartSource}, p)
	p, ok = LookupPart("1002:74a1")
	require.True(t, ok)
	assert.Equal(t, "gfx942", p.Arch)
	_, ok = LookupPart("10de:ffff")
	assert.False(t, ok)
	// Every NVIDIA part has a datasheet record by the same id.
	for id := range parts {
		if id[:4] == "10de" {
			_, ok := LookupPCIID(id)
			assert.True(t, ok, id)
		}
	}
}

func TestNVLinkPerLinkGBs(t *testing.T) {
	assert.Equal(t, 50.0, NVLinkPerLinkGBs("9.0")) // 900 / 18
	assert.Equal(t, 50.0, NVLinkPerLinkGBs("8.0")) // 600 / 12
	assert.Zero(t, NVLinkPerLinkGBs("8.6"))
	assert.Zero(t, NVLinkPerLinkGBs(""))
}
