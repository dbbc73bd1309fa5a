package specs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestTableMatchesDatasheets(t *testing.T) {
	all := records
	require.Equal(t, 161, len(all), "55 datasheet records, 5 more GPUs, TPU v2 and TPU7x, the Radeon 780M, B200, MI325X, MI355X, the GB10, 16 APU graphics identities, H20, V100 PCIe 32GB, GT 640, GT 1030, the Arc Pro B70, 55 discrete GPUs of the last five generations incl. 5 RTX 40 laptop GPUs, RX 7900 XT and GRE with the Navi 31 id record, Raptor Lake-P UHD, MI308X, Tesla K80 (issue 13); the Gaudi, Gaudi2 HL-288 and Gaudi3 single-die PCI ids (identity only); 9 GeForce GTX 16xx identities (issue 28)")
	h100, ok := ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	assert.Equal(t, int64(80e9), h100.MemoryBytes)
	assert.Equal(t, 3350.0, h100.BandwidthGBs)
	assert.Equal(t, 989.4, h100.PeakTFLOPS("bf16"))
	assert.Equal(t, 1979.0, h100.PeakTFLOPS("fp8"))
	assert.Equal(t, 0.0, h100.PeakTFLOPS("int4"))

	mi, ok := ByName("AMD Instinct MI300X")
	require.True(t, ok)
	assert.Equal(t, int64(192<<30), mi.MemoryBytes, "the ROCm table unit is GiB")

	// Inferentia2 bandwidth is stated in GiB/s: 820 GiB/s = 880.5 GB/s.
	inf2, ok := ByName("AWS Inferentia2 (per chip)")
	require.True(t, ok)
	assert.InDelta(t, 880.5, inf2.BandwidthGBs, 0.1)

	t4, ok := ByName("NVIDIA T4")
	require.True(t, ok)
	assert.Equal(t, 65.0, t4.FP16TFLOPS, "the mixed-precision tensor figure")
	assert.Zero(t, t4.BF16TFLOPS, "Turing has no bf16; unknown stays zero")

	assert.Equal(t, []string{"bf16", "fp16", "fp8", "int8"}, h100.TensorPrecisions())
	assert.Equal(t, []string{"fp16", "int8"}, t4.TensorPrecisions(), "Turing: no bf16 figure")

	m1, ok := ByName("Apple M1")
	require.True(t, ok)
	assert.True(t, m1.MemoryIsMaximum)
}

func TestLookupByPrintedName(t *testing.T) {
	cases := []struct {
		printed string
		want    string // "" = no match
	}{
		// nvidia-smi -L / --query-gpu=name (https://github.com/utkuozdemir/nvidia_gpu_exporter internal/captures).
		{"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"},
		{"NVIDIA H100 PCIe", "NVIDIA H100 PCIe 80GB"},
		{"NVIDIA H100 NVL", "NVIDIA H100 NVL"},
		{"NVIDIA H200", "NVIDIA H200 SXM 141GB"},
		{"NVIDIA H200 NVL", "NVIDIA H200 NVL"},
		{"NVIDIA L40S", "NVIDIA L40S"},
		{"NVIDIA L40", "NVIDIA L40"},
		{"NVIDIA L4", "NVIDIA L4"},
		{"NVIDIA A40", "NVIDIA A40"},
		{"NVIDIA A10", "NVIDIA A10"},
		{"NVIDIA A10G", "NVIDIA A10G (AWS G5)"},
		{"NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB"},
		{"NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB"},
		{"NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB"},
		{"NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe 40GB"},
		{"Tesla T4", "NVIDIA T4"},
		{"Tesla V100-SXM2-32GB", "NVIDIA Tesla V100 SXM2 (16GB launch; 32GB variant exists)"},
		{"Tesla P100-PCIE-16GB", ""},
		{"NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"},
		{"NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090"},
		{"NVIDIA GeForce RTX 3090 Ti", "NVIDIA GeForce RTX 3090 Ti"},
		{"NVIDIA GeForce RTX 3060", "NVIDIA GeForce RTX 3060 (12GB)"},
		{"NVIDIA GeForce RTX 4080", "NVIDIA GeForce RTX 4080 (16GB)"},
		{"NVIDIA GeForce RTX 4080 SUPER", "NVIDIA GeForce RTX 4080 SUPER"},
		{"NVIDIA GeForce RTX 2080 SUPER", "NVIDIA GeForce RTX 2080 SUPER"},
		// Records added after the 55 datasheet records, as nvidia-smi prints them.
		{"NVIDIA RTX A6000", "NVIDIA RTX A6000"},
		{"NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada Generation"},
		{"Quadro RTX 6000", ""}, // Turing, 2018: another part
		{"NVIDIA RTX A5000", "NVIDIA RTX A5000"},
		{"NVIDIA RTX 4000 Ada Generation", "NVIDIA RTX 4000 Ada Generation"}, // no sourced bandwidth: no record
		{"NVIDIA GeForce RTX 3080", "NVIDIA GeForce RTX 3080 (10GB)"},
		{"NVIDIA GeForce RTX 3080 Ti", ""}, // no opened page states its figures: identity only
		{"NVIDIA GeForce RTX 4070 Ti", "NVIDIA GeForce RTX 4070 Ti"},
		{"NVIDIA GeForce RTX 4070", "NVIDIA GeForce RTX 4070"},
		{"NVIDIA GeForce RTX 4070 Ti SUPER", "NVIDIA GeForce RTX 4070 Ti SUPER"},
		{"NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090"},
		{"NVIDIA GeForce RTX 5090 D", ""},
		{"NVIDIA GeForce ...", ""},
		// rocm-smi --showproductname (testdata/machines/mi300x-8).
		{"AMD Instinct MI300X OAM", "AMD Instinct MI300X"},
		{"AMD Instinct MI250X", "AMD Instinct MI250X"},
		{"AMD Instinct MI250", "AMD Instinct MI250"},
		{"AMD Instinct MI300A", "AMD Instinct MI300A"},
		{"AMD Radeon RX 7900 XTX", "AMD Radeon RX 7900 XTX"},
		{"AMD Radeon RX 7900 XT", "AMD Radeon RX 7900 XT"},
		{"AMD Radeon RX 7900 GRE", "AMD Radeon RX 7900 GRE"},
		// hl-smi -q Product Name (testdata/machines/gaudi2-8).
		{"HL-225", "Intel Gaudi2 (HL-225)"},
		{"Intel Gaudi 3", "Intel Gaudi3"},
		// TPU generations.
		{"TPU v4", "Google TPU v4 (per chip)"},
		{"TPU v5e", "Google TPU v5e (per chip)"},
		{"TPU v5 lite", "Google TPU v5e (per chip)"},
		{"TPU v5p", "Google TPU v5p (per chip)"},
		{"TPU v6e", "Google TPU v6e Trillium (per chip)"},
		{"TPU7x", ""},
		{"AMD Radeon 780M Graphics", ""}, // identity only: no datasheet figure
		{"NVIDIA GB10", "NVIDIA GB10 (DGX Spark)"},
		{"NVIDIA B200", "NVIDIA B200 SXM"},
		{"AMD Instinct MI325X OAM", "AMD Instinct MI325X"},
		{"AMD Instinct MI355X", "AMD Instinct MI355X"},
		{"AWS Inferentia2", "AWS Inferentia2 (per chip)"},
		{"Trainium2", "AWS Trainium2 (per chip)"},
		{"Apple M2 Ultra", "Apple M2 Ultra"},
		{"Apple M3 Max", ""}, // two bins with different bandwidth
		{"Apple M4 Max", ""},
		{"Intel(R) Arc(TM) A770 Graphics", "Intel Arc A770 16GB"},
		{"", ""},
		{"   ", ""},
	}
	for _, c := range cases {
		t.Run(c.printed, func(t *testing.T) {
			s, ok := Lookup(c.printed)
			if c.want == "" {
				assert.False(t, ok, "matched %q", s.Name)
				return
			}
			require.True(t, ok)
			assert.Equal(t, c.want, s.Name)
		})
	}
}

func TestNormalize(t *testing.T) {
	assert.Equal(t, "80gb h100 hbm3", Normalize("NVIDIA H100 80GB HBM3"))
	assert.Equal(t, "225 hl", Normalize("HL-225"))
	assert.Equal(t, "a770 arc", Normalize("Intel(R) Arc(TM) A770 Graphics"))
	assert.Equal(t, Normalize("A100-SXM4-80GB"), Normalize("a100 sxm4 80gb"))
}

func TestLookupPCIID(t *testing.T) {
	cases := map[string]string{
		"10de:2330": "NVIDIA H100 SXM5 80GB",
		"10DE:2684": "NVIDIA GeForce RTX 4090",
		"1002:74a1": "AMD Instinct MI300X",
		"1da3:1020": "Intel Gaudi2 (HL-225)",
		"1ae0:006f": "Google TPU v6e Trillium (per chip)",
		"1d0f:7364": "AWS Trainium2 (per chip)",
	}
	for id, want := range cases {
		s, ok := LookupPCIID(id)
		require.True(t, ok, id)
		assert.Equal(t, want, s.Name, id)
	}
	_, ok := LookupPCIID("1ae0:0027") // v2 and v3 share it
	assert.False(t, ok)
	_, ok = LookupPCIID("10de:22a3") // NVSwitch, not an accelerator
	assert.False(t, ok)
	_, ok = LookupPCIID("1002:15bf") // Radeon 780M: identity only
	assert.False(t, ok)
}

func TestForDevice(t *testing.T) {
	gib := int64(1 << 30)
	t.Run("pci id wins over a truncated name", func(t *testing.T) {
		d := registry.Device{Name: "NVIDIA GeForce ...", PCIID: "10de:2684", MemoryBytes: 24564 << 20}
		s, ok := ForDevice(&d)
		require.True(t, ok)
		assert.Equal(t, "NVIDIA GeForce RTX 4090", s.Name)
	})
	t.Run("H100 reporting 81559 MiB", func(t *testing.T) {
		d := registry.Device{Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20}
		s, ok := ForDevice(&d)
		require.True(t, ok)
		assert.Equal(t, 3350.0, s.BandwidthGBs)
	})
	t.Run("RTX 3060 8 GB is another SKU", func(t *testing.T) {
		d := registry.Device{Name: "NVIDIA GeForce RTX 3060", MemoryBytes: 8 * gib}
		_, ok := ForDevice(&d)
		assert.False(t, ok)
	})
	t.Run("MI300X 206141652992 bytes", func(t *testing.T) {
		d := registry.Device{Name: "AMD Instinct MI300X OAM", MemoryBytes: 206141652992}
		_, ok := ForDevice(&d)
		assert.True(t, ok)
	})
	t.Run("Gaudi2 98304 MiB", func(t *testing.T) {
		d := registry.Device{Name: "HL-225", MemoryBytes: 98304 << 20}
		_, ok := ForDevice(&d)
		assert.True(t, ok)
	})
	t.Run("V100 32 GB keeps the 16 GB record", func(t *testing.T) {
		d := registry.Device{Name: "Tesla V100-SXM2-32GB", MemoryBytes: 32 * gib}
		_, ok := ForDevice(&d)
		assert.True(t, ok)
	})
	t.Run("Apple unified memory is a maximum", func(t *testing.T) {
		d := registry.Device{Name: "Apple M1 Max", MemoryBytes: 32 * gib}
		s, ok := ForDevice(&d)
		require.True(t, ok)
		assert.Equal(t, 400.0, s.BandwidthGBs)
	})
	t.Run("RTX 3080 12 GB is another SKU than the 10 GB record", func(t *testing.T) {
		d := registry.Device{Name: "NVIDIA GeForce RTX 3080", MemoryBytes: 12288 << 20}
		_, ok := ForDevice(&d)
		assert.False(t, ok)
		d.MemoryBytes = 10240 << 20
		s, ok := ForDevice(&d)
		require.True(t, ok)
		assert.Equal(t, 760.0, s.BandwidthGBs)
	})
	t.Run("RTX A6000 reporting 49140 MiB", func(t *testing.T) {
		d := registry.Device{Name: "NVIDIA RTX A6000", MemoryBytes: 49140 << 20}
		s, ok := ForDevice(&d)
		require.True(t, ok)
		assert.Equal(t, 768.0, s.BandwidthGBs)
		assert.Equal(t, 154.8, s.PeakTFLOPS("fp16"))
	})
	t.Run("unknown memory does not block", func(t *testing.T) {
		d := registry.Device{Name: "NVIDIA L40S"}
		_, ok := ForDevice(&d)
		assert.True(t, ok)
	})
}
