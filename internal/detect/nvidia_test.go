package detect

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"

	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// fakeNvidiaSMI answers argv lines from a table, optionally slowly, and
// records what ran. An argv not in the table fails like nvidia-smi's unknown
// option (exit 2).
type fakeNvidiaSMI struct {
	answers map[string]machine.Result
	delay   time.Duration
	mu      sync.Mutex
	calls   []string
}

func (f *fakeNvidiaSMI) Run(ctx context.Context, tool string, args ...string) machine.Result {
	line := strings.Join(args, " ")
	f.mu.Lock()
	f.calls = append(f.calls, line)
	f.mu.Unlock()
	if tool != toolNvidiaSMI {
		return machine.Result{Err: fmt.Errorf("%s: %w", tool, machine.ErrToolMissing)}
	}
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		return machine.Result{Err: machine.ErrTimeout}
	}
	if r, ok := f.answers[line]; ok {
		return r
	}
	return machine.Result{ExitCode: 2, Stdout: []byte("ERROR: Option " + args[0] + " is not recognized. Please run 'nvidia-smi -h'.\n\n"),
		Err: fmt.Errorf("exit status 2: %w", machine.ErrExit)}
}

func (f *fakeNvidiaSMI) Has(tool string) bool { return tool == toolNvidiaSMI }

func queryArgv(fields []string) string {
	return "--query-gpu=" + strings.Join(fields, ",") + " --format=csv,noheader,nounits"
}

func ok(out string) machine.Result { return machine.Result{Stdout: []byte(out)} }

func rejectField(name string) machine.Result {
	return machine.Result{ExitCode: 2, Stdout: []byte(`Field "` + name + `" is not a valid field to query.` + "\n\n"),
		Err: fmt.Errorf("exit status 2: %w", machine.ErrExit)}
}

func detectNVWith(t *testing.T, host string, r machine.Runner, env map[string]string) *registry.Registry {
	t.Helper()
	opts := fixtureOptions(t, host, env)
	opts.Backends = []string{backendCUDA}
	opts.Runner = r
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	return reg
}

func TestNVIDIAOldDriverRetriesWithoutRejectedFields(t *testing.T) {
	noCC := []string{"index", "name", "uuid", "pci.bus_id", "memory.total", "memory.free", "driver_version", "mig.mode.current"}
	noCCNoMIG := noCC[:len(noCC)-1]
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{
		queryArgv(nvQueryFields): rejectField("compute_cap"),
		queryArgv(noCC):          rejectField("mig.mode.current"),
		queryArgv(noCCNoMIG): ok("0, NVIDIA GeForce RTX 4090, GPU-5b8e2c1a, 00000000:01:00.0, 24564, 23980, 470.63.01\n" +
			"1, NVIDIA GeForce RTX 3060, GPU-c3a17f2e, 00000000:05:00.0, 12288, 11878, 470.63.01\n"),
		"topo -m": ok("\t\x1b[4mGPU0\tGPU1\tCPU Affinity\x1b[0m\nGPU0\t X \tPHB\t0-31\nGPU1\tPHB\t X \t0-31\n"),
	}}
	reg := detectNVWith(t, "two-nvidia", fake, nil)
	assert.Equal(t, []string{"cuda/fallback"}, warningCodes(reg))
	assert.Contains(t, reg.Warnings[0].Message, "compute_cap, mig.mode.current")
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 2)
	for _, g := range gpus {
		assert.Empty(t, g.ComputeCapability)
		assert.Equal(t, []string{"fp32", "fp16"}, g.Quantizations, "unknown cc: nothing beyond fp32/fp16 is claimed")
		assert.Equal(t, "470.63.01", g.DriverVersion)
	}
	assert.Equal(t, int64(24564)<<20, gpus[0].MemoryBytes)
	// Three query runs and one topo run, nothing else.
	assert.ElementsMatch(t, []string{queryArgv(nvQueryFields), queryArgv(noCC), queryArgv(noCCNoMIG), "topo -m"}, fake.calls)
}

func TestNVIDIARejectedRequiredFieldIsToolFailed(t *testing.T) {
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{queryArgv(nvQueryFields): rejectField("memory.free")}}
	reg := detectNVWith(t, "nvidia-tool-fails", fake, nil)
	assert.Equal(t, []string{"cuda/tool_failed", "cuda/fallback"}, warningCodes(reg))
	assert.Len(t, fake.calls, 1, "a required field is not retried")
}

// TestNVIDIATopologyRunsBesideQuery: with slow tools, a two-GPU detection
// takes about one tool run, not two.
func TestNVIDIATopologyRunsBesideQuery(t *testing.T) {
	const delay = 300 * time.Millisecond
	fake := &fakeNvidiaSMI{delay: delay, answers: map[string]machine.Result{
		queryArgv(nvQueryFields): ok("0, NVIDIA GeForce RTX 4090, GPU-5b8e2c1a, 00000000:01:00.0, 24564, 23980, 550.54.15, 8.9, [N/A]\n" +
			"1, NVIDIA GeForce RTX 3060, GPU-c3a17f2e, 00000000:05:00.0, 12288, 11878, 550.54.15, 8.6, [N/A]\n"),
		"topo -m": ok("\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\nGPU0\t X \tPHB\t0-31\t0\t\tN/A\nGPU1\tPHB\t X \t0-31\t0\t\tN/A\n"),
	}}
	start := time.Now()
	reg := detectNVWith(t, "two-nvidia", fake, nil)
	took := time.Since(start)
	assert.Empty(t, warningCodes(reg))
	assert.Len(t, devicesOfKind(reg, registry.KindCUDA), 2)
	assert.Len(t, fake.calls, 2)
	assert.Less(t, took, delay*17/10, "query and topo -m must run concurrently (took %v)", took)
}

func TestNVIDIASingleGPUSkipsTopology(t *testing.T) {
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{
		queryArgv(nvQueryFields): ok("0, NVIDIA A40, GPU-0f1e2d3c, 00000000:4F:00.0, 46068, 45403, 550.127.05, 8.6, Disabled\n"),
	}}
	reg := detectNVWith(t, "nvidia-tool-fails", fake, nil)
	assert.Empty(t, warningCodes(reg))
	assert.Equal(t, []string{queryArgv(nvQueryFields)}, fake.calls)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	assert.Equal(t, int64(46068)<<20, gpus[0].MemoryBytes)
	assert.Equal(t, "0000:4f:00.0", gpus[0].PCIBusID)
}

func TestNVIDIANoExecFallsBackToSysfs(t *testing.T) {
	opts := fixtureOptions(t, "dgx-h100", nil)
	opts.Backends = []string{backendCUDA}
	opts.NoExec = true
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, []string{"cuda/fallback"}, warningCodes(reg))
	assert.Contains(t, reg.Warnings[0].Message, "no_exec")
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 8)
	for i, g := range gpus {
		assert.Equal(t, dgxBuses[i], g.PCIBusID)
		assert.Equal(t, "NVIDIA H100 80GB HBM3", g.Name)
		assert.Equal(t, int64(80)<<30, g.MemoryBytes)
		assert.Equal(t, "565.57.01", g.DriverVersion)
	}
	assert.Empty(t, reg.SystemIO.Interconnects, "no topology without the tool")
}

func TestNVIDIAQueryGarbageFallsBack(t *testing.T) {
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{queryArgv(nvQueryFields): ok("this is not csv\n")}}
	reg := detectNVWith(t, "nvidia-tool-fails", fake, nil)
	assert.Equal(t, []string{"cuda/parse_error", "cuda/tool_failed", "cuda/fallback"}, warningCodes(reg))
	assert.Len(t, devicesOfKind(reg, registry.KindCUDA), 1)
}

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

func TestNVIDIAMIGVisibility(t *testing.T) {
	listing := "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-9c73eb7b-8d6d-6c0e-dc13-97873e2ede40)\n" +
		"  MIG 1g.10gb     Device  0: (UUID: MIG-a686709d-6dc2-542a-8851-0d2508448c10)\n" +
		"  MIG 1g.10gb     Device  1: (UUID: MIG-53864714-0a66-5df2-9007-9268e30d9a72)\n" +
		"GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-c92e2d5d-4a69-f1cd-4df0-305f8606705a)\n"
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{
		queryArgv(nvQueryFields): ok(
			"0, NVIDIA A100-SXM4-80GB, GPU-9c73eb7b-8d6d-6c0e-dc13-97873e2ede40, 00000000:01:00.0, 81920, 81000, 550.54.15, 8.0, Enabled\n" +
				"1, NVIDIA A100-SXM4-80GB, GPU-c92e2d5d-4a69-f1cd-4df0-305f8606705a, 00000000:05:00.0, 81920, 81000, 550.54.15, 8.0, Disabled\n"),
		"-L":      ok(listing),
		"topo -m": ok("\t\x1b[4mGPU0\tGPU1\x1b[0m\nGPU0\t X \tNV12\nGPU1\tNV12\t X \n"),
	}}
	reg := detectNVWith(t, "two-nvidia", fake, map[string]string{envCUDAVis: "MIG-53864714-0a66-5df2-9007-9268e30d9a72"})
	assert.Equal(t, []string{"cuda/hidden_by_env"}, warningCodes(reg))
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	assert.Equal(t, "0000:01:00.0", gpus[0].PCIBusID)
	require.NotNil(t, gpus[0].MIG)
	assert.Equal(t, "enabled", gpus[0].MIG.Mode)
	assert.Equal(t, []string{"MIG-a686709d-6dc2-542a-8851-0d2508448c10", "MIG-53864714-0a66-5df2-9007-9268e30d9a72"},
		gpus[0].MIG.Children)
	assert.Contains(t, fake.calls, "-L")

	// The older MIG-GPU-<uuid>/<gi>/<ci> form names the parent directly.
	reg = detectNVWith(t, "two-nvidia", fake, map[string]string{envCUDAVis: "MIG-GPU-c92e2d5d-4a69-f1cd-4df0-305f8606705a/1/0"})
	gpus = devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	assert.Equal(t, "0000:05:00.0", gpus[0].PCIBusID)

	// A MIG id nobody has is invalid.
	reg = detectNVWith(t, "two-nvidia", fake, map[string]string{envCUDAVis: "MIG-00000000-0000-0000-0000-000000000000"})
	assert.Empty(t, devicesOfKind(reg, registry.KindCUDA))
	assert.Equal(t, []string{"cuda/visibility_invalid", "cuda/hidden_by_env"}, warningCodes(reg))
}

func TestParseNvidiaCSV(t *testing.T) {
	fields := nvQueryFields
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
			got, issues := parseNvidiaCSV([]byte(tc.in), fields)
			assert.Equal(t, tc.want, got)
			var codes []string
			for _, is := range issues {
				codes = append(codes, is.Code)
			}
			assert.Equal(t, tc.issues, codes)
		})
	}
}

func TestParseNvidiaTopo(t *testing.T) {
	// The single-GPU H100 sample of formats.md.
	tp, err := parseNvidiaTopo([]byte("\t\x1b[4mGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\nGPU0\t X \t0-19\t0\t\tN/A\n"))
	require.NoError(t, err)
	assert.Equal(t, []int{0}, tp.GPUs)
	assert.Empty(t, tp.Cells)

	// The dgx-h100 fixture's matrix, with NIC rows and legends.
	out := runFixtureTool(t, "dgx-h100", toolNvidiaSMI, "topo", "-m")
	tp, err = parseNvidiaTopo(out)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, tp.GPUs)
	assert.Len(t, tp.Cells, 56)
	assert.Equal(t, "NV18", tp.Link(0, 7))
	assert.Equal(t, "NV18", tp.Link(7, 0))
	assert.Equal(t, "mlx5_3", tp.NICs["NIC3"])
	assert.Len(t, tp.NICs, 10)

	// Space-separated matrices (tabs expanded by a console) still parse.
	tp, err = parseNvidiaTopo([]byte("        GPU0    GPU1    CPU Affinity\nGPU0     X      NV4     0-7\nGPU1    NV4      X      0-7\n"))
	require.NoError(t, err)
	assert.Equal(t, "NV4", tp.Link(0, 1))

	_, err = parseNvidiaTopo([]byte("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"))
	assert.Error(t, err)
}

func TestNvLinks(t *testing.T) {
	for cell, want := range map[string]int{"NV18": 18, "NV1": 1, "NV": 0, "NVx": 0, "PIX": 0, "SYS": 0, "X": 0, "NV-3": 0, "": 0} {
		assert.Equal(t, want, nvLinks(cell), cell)
	}
}

func TestNvQuantizations(t *testing.T) {
	tests := map[string][]string{
		"":     {"fp32", "fp16"},
		"6.0":  {"fp32", "fp16"},
		"6.1":  {"fp32", "fp16", "int8"},
		"7.0":  {"fp32", "fp16", "int8"},
		"7.5":  {"fp32", "fp16", "int8", "int4"},
		"8.0":  {"fp32", "fp16", "bf16", "int8", "int4"},
		"8.6":  {"fp32", "fp16", "bf16", "int8", "int4"},
		"8.9":  {"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
		"9.0":  {"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
		"10.0": {"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
	}
	for cc, want := range tests {
		assert.Equal(t, want, nvQuantizations(cc), cc)
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
		assert.Equal(t, want, parseNvidiaProcVersion(text), text)
	}
}

func TestParseNvidiaList(t *testing.T) {
	got := parseNvidiaList([]byte("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)\n" +
		"  MIG 1g.10gb     Device  0: (UUID: MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee)\n" +
		"GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-0000-0000-0000-000000000000)\n" +
		"No devices were found\n"))
	assert.Equal(t, []nvListGPU{
		{Index: 0, UUID: "GPU-00000000-0000-0000-0000-000000000000", MIG: []string{"MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}},
		{Index: 1, UUID: "GPU-11111111-0000-0000-0000-000000000000"},
	}, got)
}

func TestNvRejectedField(t *testing.T) {
	assert.Equal(t, "compute_cap", nvRejectedField([]byte("Field \"compute_cap\" is not a valid field to query.\n\n")))
	assert.Equal(t, "compute_cap", nvRejectedField([]byte(`nvidia-smi --query-gpu=...: exit status 2: Field "compute_cap" is not a valid field to query.`)))
	assert.Equal(t, "", nvRejectedField([]byte("ERROR: Option --x is not recognized.")))
}

func TestNVIDIAFabric(t *testing.T) {
	m, err := NewMachine(fixtureOptions(t, "dgx-h100", nil))
	require.NoError(t, err)
	fab := readNvidiaFabric(m)
	assert.Len(t, fab.gpus, 8, "NVSwitch functions are not GPUs")
	assert.True(t, fab.nvswitch)

	m, err = NewMachine(fixtureOptions(t, "two-nvidia", nil))
	require.NoError(t, err)
	fab = readNvidiaFabric(m)
	assert.Len(t, fab.gpus, 2, "HDMI audio functions are not GPUs")
	assert.False(t, fab.nvswitch)
}

// runFixtureTool runs a fixture machine's fake tool through the real runner.
func runFixtureTool(t *testing.T, host, tool string, args ...string) []byte {
	t.Helper()
	opts := fixtureOptions(t, host, nil)
	res := machine.NewExecRunner(opts.Path, 5*time.Second).Run(context.Background(), tool, args...)
	require.NoError(t, res.Err)
	return res.Stdout
}

func FuzzParseNvidiaCSV(f *testing.F) {
	f.Add("0, NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-000000000000, 00000000:18:00.0, 81559, 81106, 590.48.01, 9.0, Disabled\n")
	f.Add("1, NVIDIA GeForce RTX 4080 SUPER, [N/A], 00000000:01:00.0, 16376, [Not Supported], 595.71.05, 8.9, [N/A]\n")
	f.Add("x,,,,,,,,\n\n0, a, b, c, -1, 99999999999999999999, d, e, f")
	f.Fuzz(func(t *testing.T, in string) {
		gpus, _ := parseNvidiaCSV([]byte(in), nvQueryFields)
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
		}
	})
}

func FuzzParseNvidiaTopo(f *testing.F) {
	f.Add("\t\x1b[4mGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\nGPU0\t X \t0-19\t0\t\tN/A\n")
	f.Add("\t\x1b[4mGPU0\tGPU1\tNIC0\x1b[0m\nGPU0\t X \tNV18\tPIX\nGPU1\tNV18\t X \tSYS\nNIC0\tPIX\tSYS\t X \n\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_0\n")
	f.Add("        GPU0    GPU1\nGPU0     X      NV4\nGPU1    NV4      X\n")
	f.Fuzz(func(t *testing.T, in string) {
		tp, err := parseNvidiaTopo([]byte(in))
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
		if v := parseNvidiaProcVersion(in); v != "" && !driverVersionPattern.MatchString(v) {
			t.Fatalf("version %q", v)
		}
		parseNvidiaList([]byte(in))
	})
}
