package nvidia

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// An NVLink-bridged pair without NVSwitch: nvlink entries per connected pair
// with NV# links; PCIe paths are not interconnects.
func TestNVIDIAInterconnectsWithoutNVSwitch(t *testing.T) {
	topo := "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n" +
		"GPU0\t X \tNV12\tSYS\tSYS\t0-63\t0\t\tN/A\n" +
		"GPU1\tNV12\t X \tSYS\tSYS\t0-63\t0\t\tN/A\n" +
		"GPU2\tSYS\tSYS\t X \tNV4\t64-127\t1\t\tN/A\n" +
		"GPU3\tSYS\tSYS\tNV4\t X \t64-127\t1\t\tN/A\n"
	devs := []nvDevice{
		{dev: registry.Device{ID: "gpu0", ComputeCapability: "8.0"}, index: 0},
		{dev: registry.Device{ID: "gpu1", ComputeCapability: "8.0"}, index: 1},
		{dev: registry.Device{ID: "gpu2", ComputeCapability: "8.6"}, index: 2},
		{dev: registry.Device{ID: "gpu3", ComputeCapability: "8.6"}, index: 3},
	}
	var f machine.Findings
	got := nvidiaInterconnects(&f, []byte(topo), devs, false)
	assert.Empty(t, f.Warnings)
	require.Len(t, got, 2)
	assert.Equal(t, registry.Interconnect{Kind: registry.LinkNVLink, Devices: []string{"gpu0", "gpu1"}, Links: 12,
		BandwidthGBs: 600, Source: "nvidia-smi topo -m"}, got[0])
	assert.Equal(t, registry.Interconnect{Kind: registry.LinkNVLink, Devices: []string{"gpu2", "gpu3"}, Links: 4,
		Source: "nvidia-smi topo -m"}, got[1], "NVLink bandwidth of cc 8.6 parts is not sourced: omitted")

	// The same matrix with an NVSwitch present but GPUs not all connected:
	// still pairs, never a switch domain.
	got = nvidiaInterconnects(&f, []byte(topo), devs, true)
	assert.Len(t, got, 2)
	assert.Equal(t, registry.LinkNVLink, got[0].Kind)

	// Hidden GPUs are not part of any entry.
	got = nvidiaInterconnects(&f, []byte(topo), devs[:1], false)
	assert.Empty(t, got)

	// A matrix without a header is a parse error, not a panic.
	got = nvidiaInterconnects(&f, []byte("garbage\n"), devs, false)
	assert.Empty(t, got)
	require.Len(t, f.Warnings, 1)
	assert.Equal(t, registry.WarnParseError, f.Warnings[0].Code)
}

func TestParseNvidiaCSV(t *testing.T) {
	// The identity columns; the telemetry ones have their own test
	// (nvidia_telemetry_test.go).
	fields := NVQueryFields[:len(NVQueryFields)-len(NVTelemetryFields)]
	p := func(v int64) *int64 { return &v }
	tests := []struct {
		name   string
		in     string
		want   []nvGPU
		issues []string
	}{
		{
			name: "H100 row",
			in:   "0, NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-000000000000, 00000000:18:00.0, 81559, 81106, 590.48.01, 9.0, Disabled\n",
			want: []nvGPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-00000000-0000-0000-0000-000000000000",
				BusID: "0000:18:00.0", MemoryMiB: p(81559), FreeMiB: p(81106), DriverVersion: "590.48.01", CC: "9.0", MIGMode: "disabled"}},
		},
		{
			name: "placeholders and extra spaces",
			in:   "  1 ,   NVIDIA GeForce RTX 4080 SUPER ,[N/A],00000000:01:00.0,  16376 , [Not Supported], 595.71.05, [Unknown Error] , [N/A]  \r\n\n",
			want: []nvGPU{{Index: 1, Name: "NVIDIA GeForce RTX 4080 SUPER", BusID: "0000:01:00.0", MemoryMiB: p(16376),
				DriverVersion: "595.71.05"}},
		},
		{
			name:   "wrong field count keeps other lines",
			in:     "0, A, GPU-a, 00000000:18:00.0, 1, 1, 1.0, 9.0\n1, B, GPU-b, 00000000:2A:00.0, 2, 1, 1.0, 9.0, Enabled\n",
			want:   []nvGPU{{Index: 1, Name: "B", UUID: "GPU-b", BusID: "0000:2a:00.0", MemoryMiB: p(2), FreeMiB: p(1), DriverVersion: "1.0", CC: "9.0", MIGMode: "enabled"}},
			issues: []string{"parse_error"},
		},
		{
			name:   "absurd and negative memory omitted",
			in:     "0, A, GPU-a, 00000000:18:00.0, 99999999999, -5, 1.0, 9.0, Disabled\n",
			want:   []nvGPU{{Index: 0, Name: "A", UUID: "GPU-a", BusID: "0000:18:00.0", DriverVersion: "1.0", CC: "9.0", MIGMode: "disabled"}},
			issues: []string{"absurd_value", "absurd_value"},
		},
		{
			name:   "memory beyond int64 is absurd too",
			in:     "0, A, GPU-a, 00000000:18:00.0, 99999999999999999999, -99999999999999999999, 1.0, 9.0, Disabled\n",
			want:   []nvGPU{{Index: 0, Name: "A", UUID: "GPU-a", BusID: "0000:18:00.0", DriverVersion: "1.0", CC: "9.0", MIGMode: "disabled"}},
			issues: []string{"absurd_value", "absurd_value"},
		},
		{
			name:   "free above total",
			in:     "0, A, GPU-a, 00000000:18:00.0, 100, 200, 1.0, 9.0, Disabled\n",
			want:   []nvGPU{{Index: 0, Name: "A", UUID: "GPU-a", BusID: "0000:18:00.0", MemoryMiB: p(100), DriverVersion: "1.0", CC: "9.0", MIGMode: "disabled"}},
			issues: []string{"absurd_value"},
		},
		{
			name:   "garbage values drop fields, bad index drops line, duplicate index dropped",
			in:     "x, A, GPU-a, 00000000:18:00.0, 1, 1, 1.0, 9.0, Disabled\n0, A, GPU-a, zz:zz, lots, 1, 1.0, nine, maybe\n0, B, GPU-b, 00000000:19:00.0, 1, 1, 1.0, 9.0, Disabled\n",
			want:   []nvGPU{{Index: 0, Name: "A", UUID: "GPU-a", FreeMiB: p(1), DriverVersion: "1.0"}},
			issues: []string{"parse_error", "parse_error", "parse_error", "parse_error", "parse_error", "parse_error"},
		},
		{name: "empty", in: "", want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, issues, _ := ParseNvidiaCSV([]byte(tc.in), fields)
			assert.Equal(t, tc.want, got)
			var codes []string
			for _, is := range issues {
				codes = append(codes, is.Code)
			}
			assert.Equal(t, tc.issues, codes)
		})
	}
}

func TestNvLinks(t *testing.T) {
	for cell, want := range map[string]int{"NV18": 18, "NV1": 1, "NV": 0, "NVx": 0, "PIX": 0, "SYS": 0, "X": 0, "NV-3": 0, "": 0} {
		assert.Equal(t, want, nvLinks(cell), cell)
	}
}

func TestParseNvidiaProcFiles(t *testing.T) {
	info := parseNvidiaProcInfo("Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 180\nGPU UUID: \t GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1\n" +
		"Video BIOS: \t 96.00.74.00.01\nBus Type: \t PCIe\nBus Location: \t 0000:18:00.0\nDevice Minor: \t 0\nGPU Excluded:\t No\n")
	assert.Equal(t, nvProcInfo{Model: "NVIDIA H100 80GB HBM3", UUID: "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1", BusID: "0000:18:00.0"}, info)

	for text, want := range map[string]string{
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0\n": "550.54.15",
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  (dvs-builder@U16)  Thu Oct 10\n":          "565.57.01",
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.82  Thu Oct 14\n":                                                        "470.82",
		"GCC version: 12.3.0\n":   "",
		"":                        "",
		"NVRM version: garbage\n": "",
	} {
		assert.Equal(t, want, ParseNvidiaProcVersion(text), text)
	}
}

func TestParseNvidiaList(t *testing.T) {
	got := ParseNvidiaList([]byte("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)\n" +
		"  MIG 1g.10gb     Device  0: (UUID: MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee)\n" +
		"GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-0000-0000-0000-000000000000)\n" +
		"No devices were found\n"))
	assert.Equal(t, []nvListGPU{
		{Index: 0, UUID: "GPU-00000000-0000-0000-0000-000000000000", MIG: []nvListMIG{{Profile: "1g.10gb", UUID: "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}}},
		{Index: 1, UUID: "GPU-11111111-0000-0000-0000-000000000000"},
	}, got)
}

func TestNvRejectedField(t *testing.T) {
	assert.Equal(t, "compute_cap", nvRejectedField([]byte("Field \"compute_cap\" is not a valid field to query.\n\n")))
	assert.Equal(t, "compute_cap", nvRejectedField([]byte(`nvidia-smi --query-gpu=...: exit status 2: Field "compute_cap" is not a valid field to query.`)))
	assert.Equal(t, "", nvRejectedField([]byte("ERROR: Option --x is not recognized.")))
}

func FuzzParseNvidiaCSV(f *testing.F) {
	f.Add("0, NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-000000000000, 00000000:18:00.0, 81559, 81106, 590.48.01, 9.0, Disabled\n")
	f.Add("1, NVIDIA GeForce RTX 4080 SUPER, [N/A], 00000000:01:00.0, 16376, [Not Supported], 595.71.05, 8.9, [N/A]\n")
	f.Add("x,,,,,,,,\n\n0, a, b, c, -1, 99999999999999999999, d, e, f")
	f.Add("0, NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-000000000000, 00000000:00:09.0, 81559, 81022, 590.48.01, 9.0, Enabled, [N/A], 71.15, 700.00, 42\n")
	f.Fuzz(func(t *testing.T, in string) {
		gpus, _, _ := ParseNvidiaCSV([]byte(in), NVQueryFields)
		seen := map[int]bool{}
		for _, g := range gpus {
			if g.Index < 0 || seen[g.Index] {
				t.Fatalf("bad or repeated index %d", g.Index)
			}
			seen[g.Index] = true
			if g.MemoryMiB != nil && (*g.MemoryMiB < 0 || *g.MemoryMiB > registry.MaxDeviceMemory>>20) {
				t.Fatalf("memory %d kept", *g.MemoryMiB)
			}
			if g.MemoryMiB != nil && g.FreeMiB != nil && *g.FreeMiB > *g.MemoryMiB {
				t.Fatalf("free above total kept")
			}
			if g.CC != "" && !ccPattern.MatchString(g.CC) {
				t.Fatalf("cc %q kept", g.CC)
			}
			if u := g.Telemetry.UtilPct; u != nil && (*u < 0 || *u > 100) {
				t.Fatalf("utilization %g kept", *u)
			}
		}
	})
}

func FuzzParseNvidiaTopo(f *testing.F) {
	f.Add("\t\x1b[4mGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\nGPU0\t X \t0-19\t0\t\tN/A\n")
	f.Add("\t\x1b[4mGPU0\tGPU1\tNIC0\x1b[0m\nGPU0\t X \tNV18\tPIX\nGPU1\tNV18\t X \tSYS\nNIC0\tPIX\tSYS\t X \n\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_0\n")
	f.Add("        GPU0    GPU1\nGPU0     X      NV4\nGPU1    NV4      X\n")
	f.Fuzz(func(t *testing.T, in string) {
		tp, err := ParseNvidiaTopo([]byte(in))
		if err != nil {
			return
		}
		if len(tp.GPUs) == 0 {
			t.Fatal("no GPUs without an error")
		}
		for k := range tp.Cells {
			if k[0] == k[1] {
				t.Fatalf("self cell %v recorded", k)
			}
		}
	})
}

func FuzzParseNvidiaProcInfo(f *testing.F) {
	f.Add("Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-x\nBus Location: \t 0000:18:00.0\n")
	f.Add("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5\n")
	f.Add("Bus Location: zz\n::::\n")
	f.Fuzz(func(t *testing.T, in string) {
		p := parseNvidiaProcInfo(in)
		if p.BusID != "" && !busIDPattern.MatchString(p.BusID) {
			t.Fatalf("bus id %q kept", p.BusID)
		}
		if v := ParseNvidiaProcVersion(in); v != "" && !driverVersionPattern.MatchString(v) {
			t.Fatalf("version %q", v)
		}
		ParseNvidiaList([]byte(in))
	})
}

// A tool printing 100 000 malformed lines yields the cap's worth of issues
// and a count of the rest, not one message per line (issue 14 item 4).
func TestParseNvidiaCSVIssuesAreBounded(t *testing.T) {
	out := []byte(strings.Repeat("garbage, line\n", 100000))
	gpus, issues, dropped := ParseNvidiaCSV(out, NVQueryFields)
	assert.Empty(t, gpus)
	assert.Len(t, issues, machine.MaxWarningsPerBackend)
	assert.Equal(t, 100000-machine.MaxWarningsPerBackend, dropped)
}
