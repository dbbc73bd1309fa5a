package apple

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

func TestParseSysctlHost(t *testing.T) {
	tests := []struct {
		name   string
		out    string
		want   sysctlHost
		issues []string
	}{
		{"apple silicon", "38654705664\nApple M3 Pro\n12\n6\n6\n",
			sysctlHost{MemoryBytes: 38654705664, Brand: "Apple M3 Pro", LogicalCPUs: 12, PerfLevel0: 6, PerfLevel1: 6}, nil},
		{"intel mac: a prefix", "17179869184\nIntel(R) Core(TM) i9-9880H CPU @ 2.30GHz\n16\n",
			sysctlHost{MemoryBytes: 17179869184, Brand: "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz", LogicalCPUs: 16}, nil},
		{"memsize not a number", "lots\nApple M1\n8\n", sysctlHost{Brand: "Apple M1", LogicalCPUs: 8}, []string{"parse_error"}},
		{"memsize beyond 1 PiB", "9223372036854775807\nApple M1\n", sysctlHost{Brand: "Apple M1"}, []string{"absurd_value"}},
		{"memsize overflows int64", "99999999999999999999\nApple M1\n", sysctlHost{Brand: "Apple M1"}, []string{"absurd_value"}},
		{"memsize zero", "0\nApple M1\n", sysctlHost{Brand: "Apple M1"}, []string{"absurd_value"}},
		{"ncpu garbage", "8589934592\nApple M1\n-4\n4\nx\n", sysctlHost{MemoryBytes: 8589934592, Brand: "Apple M1", PerfLevel0: 4},
			[]string{"parse_error", "parse_error"}},
		{"empty", "", sysctlHost{}, nil},
		{"escape in brand", "8589934592\n\x1b[31mApple M1\x1b[0m\n", sysctlHost{MemoryBytes: 8589934592, Brand: "Apple M1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, issues := parseSysctlHost(tt.out)
			assert.Equal(t, tt.want, got)
			var codes []string
			for _, is := range issues {
				codes = append(codes, is.Code)
			}
			assert.Equal(t, tt.issues, codes)
		})
	}
}

func TestIsAppleSilicon(t *testing.T) {
	for brand, want := range map[string]bool{
		"Apple M1": true, "Apple M3 Pro": true, "Apple M4 Max": true, "Apple M10": true,
		"Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz": false, "Apple Silicon": false,
		"Apple M": false, "": false, "apple m1": false,
	} {
		assert.Equal(t, want, isAppleSilicon(brand), brand)
	}
}

// Bandwidth from the part table (internal/specs/records_apple.go); the binned Max chips only by a GPU core
// count a record names.
func TestAppleBandwidth(t *testing.T) {
	tests := []struct {
		chip  string
		cores int
		want  float64
	}{
		{"Apple M1", 8, 68.25},
		{"Apple M2 Pro", 19, 200},
		{"Apple M3 Pro", 18, 150},
		{"Apple M3", 10, 100},
		{"Apple M4 Pro", 20, 273},
		{"Apple M3 Max", 30, 300},
		{"Apple M3 Max", 40, 400},
		{"Apple M3 Max", 0, 0},
		{"Apple M4 Max", 40, 546},
		{"Apple M4 Max", 32, 0}, // the lower bin: no record states its core count
		{"Apple M5", 10, 0},
		{"Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz", 0, 0},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, appleBandwidth(tt.chip, tt.cores), 1e-9, "%s %d cores", tt.chip, tt.cores)
	}
}

func TestMetalSupport(t *testing.T) {
	assert.Equal(t, "Metal 3", metalSupport("spdisplays_metal3"))
	assert.Equal(t, "Metal 4", metalSupport("spdisplays_metal4"))
	assert.Empty(t, metalSupport("spdisplays_supported"))
	assert.Empty(t, metalSupport(""))
}

// FuzzAppleParsers feeds arbitrary text to the sysctl and system_profiler
// parsers: no panic, no figure outside its sane range, names stay clean.
func FuzzAppleParsers(f *testing.F) {
	f.Add("38654705664\nApple M3 Pro\n12\n6\n6\n", []byte(`{"SPDisplaysDataType":[{"_name":"Apple M3 Pro","sppci_model":"Apple M3 Pro","sppci_cores":"18","spdisplays_vendor":"sppci_vendor_Apple","spdisplays_mtlgpufamilysupport":"spdisplays_metal3"}]}`))
	f.Add("-1\n\x1b[31mApple\n99999999999999999999\nx\n", []byte(`{"SPDisplaysDataType":[{"sppci_cores":"-5"}]}`))
	f.Add("18446744073709551615\n", []byte(`{"SPDisplaysDataType":{}}`))
	f.Fuzz(func(t *testing.T, sysctl string, sp []byte) {
		h, _ := parseSysctlHost(sysctl)
		if h.MemoryBytes < 0 || h.MemoryBytes > machine.MaxHostMemory {
			t.Fatalf("memory %d out of range", h.MemoryBytes)
		}
		for _, n := range []int{h.LogicalCPUs, h.PerfLevel0, h.PerfLevel1} {
			if n < 0 || n > maxMacCPUs {
				t.Fatalf("cpu count %d out of range", n)
			}
		}
		if machine.CleanText(h.Brand) != h.Brand {
			t.Fatalf("brand %q is not clean", h.Brand)
		}
		ds, err := ParseSPDisplays(sp)
		if err != nil {
			return
		}
		if d, ok := AppleGPUEntry(ds); ok {
			if n, ok := d.GPUCores(); ok && (n < 0 || n > 1024) {
				t.Fatalf("gpu cores %d out of range", n)
			}
			_ = metalSupport(d.Metal)
			_ = appleBandwidth(machine.CleanText(d.Model), 0)
		}
	})
}

// The Metal working-set rule against llama.cpp's logged
// recommendedMaxWorkingSetSize (ggml prints MiB as "MB") on Macs of known
// RAM, each from a public issue (the URLs are in metalWorkingSet's comment).
func TestMetalWorkingSetMatchesCaptures(t *testing.T) {
	tests := []struct {
		ramGiB  int64
		wantMiB float64
		url     string
	}{
		{16, 10922.67, "https://github.com/abetlen/llama-cpp-python/issues/687"},
		{32, 21845.34, "https://github.com/ollama/ollama/issues/434"},
		{32, 21845.34, "https://github.com/ggml-org/llama.cpp/pull/2011"},
		{64, 49152.00, "https://github.com/ggml-org/llama.cpp/issues/1870"},
		{96, 73728.00, "https://github.com/ggml-org/llama.cpp/issues/3213"},
	}
	for _, tt := range tests {
		got := metalWorkingSet(tt.ramGiB << 30)
		assert.InDelta(t, tt.wantMiB, float64(got)/(1<<20), 0.01, "%d GiB (%s)", tt.ramGiB, tt.url)
	}
}

// Sizes without a capture follow the lower fraction below 64 GiB (the
// larger one is not shown for them), and the rule never exceeds the RAM.
func TestMetalWorkingSetRule(t *testing.T) {
	for gib, want := range map[int64]int64{
		8: (8 << 30) * 2 / 3, 18: (18 << 30) * 2 / 3, 24: 16 << 30, 36: 24 << 30, 48: 32 << 30,
		128: 96 << 30, 192: 144 << 30,
	} {
		assert.Equal(t, want, metalWorkingSet(gib<<30), "%d GiB", gib)
	}
	assert.Zero(t, metalWorkingSet(0))
	assert.Zero(t, metalWorkingSet(-1))
}
