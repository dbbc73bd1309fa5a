package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// machineFS is a Machine over an in-memory tree, for edge cases a fixture
// machine would only clutter.
func machineFS(files map[string]string) *machine.Machine {
	fsys := fstest.MapFS{}
	for name, text := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	m, err := machine.New(machine.Config{FS: fsys, NoExec: true})
	if err != nil {
		panic(err)
	}
	return m
}

func TestParseCPUInfo(t *testing.T) {
	x86 := func(cpu, pkg, cores int) string {
		return "processor\t: " + strconv.Itoa(cpu) + "\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480C\n" +
			"physical id\t: " + strconv.Itoa(pkg) + "\ncpu cores\t: " + strconv.Itoa(cores) + "\nflags\t\t: fpu vme\n\n"
	}
	var twoSockets strings.Builder
	for cpu := 0; cpu < 8; cpu++ {
		twoSockets.WriteString(x86(cpu, cpu%2, 2))
	}
	tests := []struct {
		name string
		in   string
		want machine.CPUInfo
	}{
		{"two sockets with SMT", twoSockets.String(),
			machine.CPUInfo{Name: "Intel(R) Xeon(R) Platinum 8480C", Vendor: "intel", Logical: 8, Physical: 4}},
		{"AMD without physical id (one package)",
			"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen 9 7950X 16-Core Processor\ncpu cores\t: 16\n\n" +
				"processor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen 9 7950X 16-Core Processor\ncpu cores\t: 16\n",
			machine.CPUInfo{Name: "AMD Ryzen 9 7950X 16-Core Processor", Vendor: "amd", Logical: 2, Physical: 16}},
		{"arm64 layout (arch/arm64/kernel/cpuinfo.c): no model name: named from implementer/part",
			"processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm\nCPU implementer\t: 0x41\nCPU architecture: 8\n" +
				"CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\nprocessor\t: 1\nCPU implementer\t: 0x41\n",
			machine.CPUInfo{Name: "ARM Neoverse-N1", Vendor: "arm", Logical: 2, Features: []registry.CPUFeature{registry.CPUFeatureASIMD}}},
		{"Arm Ltd implementer (0x41)", "processor\t: 0\nCPU implementer\t: 0x41\n", machine.CPUInfo{Vendor: "arm", Logical: 1}},
		{"NVIDIA implementer (0x4e, Grace)", "processor\t: 0\nCPU implementer\t: 0x4e\n", machine.CPUInfo{Vendor: "nvidia", Logical: 1}},
		{"garbage core count ignored", "processor\t: 0\ncpu cores\t: lots\n", machine.CPUInfo{Logical: 1}},
		{"empty", "", machine.CPUInfo{}},
		// The first-byte filter (mayBeCPUInfoKey) must not skip a key that
		// strings.TrimSpace would find: leading ASCII and Unicode space.
		{"keys after leading space", " \tprocessor\t: 0\n\u00a0processor: 1\n\u0085model name: M\n  cpu cores: 4\n\vvendor_id: AuthenticAMD\n",
			machine.CPUInfo{Name: "M", Vendor: "amd", Logical: 2, Physical: 4}},
		{"lines the filter skips", "flags\t: processor\nbugs\t: cpu cores : 9\nprocessor\t: 0\nxmodel name: X\n\n:\n", machine.CPUInfo{Logical: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ParseCPUInfo(tc.in))
		})
	}
}

func TestParseMemInfo(t *testing.T) {
	mi := ParseMemInfo("MemTotal:       32614532 kB\nMemFree:         1873412 kB\nMemAvailable:   20000000 kB\n" +
		"HugePages_Total:       0\nHugepagesize:       2048 kB\n")
	assert.Equal(t, int64(32614532)*1024, mi["MemTotal"])
	assert.Equal(t, int64(2048)*1024, mi["Hugepagesize"])
	_, has := mi["HugePages_Total"]
	assert.False(t, has, "counts without kB are not sizes")

	total, free, issues := hostMemory(mi)
	assert.Equal(t, int64(32614532)*1024, total)
	require.NotNil(t, free)
	assert.Equal(t, int64(20000000)*1024, *free)
	assert.Empty(t, issues)
}

func TestHostMemoryIssues(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantTotal int64
		wantFree  bool
		codes     []string
	}{
		{"garbage total", "MemTotal:       lots kB\nMemAvailable:   10 kB\n", 0, true, []string{registry.WarnParseError}},
		{"absurd total", "MemTotal:       99999999999999 kB\n", 0, false, []string{registry.WarnAbsurdValue}},
		{"negative total", "MemTotal:       -10 kB\n", 0, false, []string{registry.WarnAbsurdValue}},
		{"total beyond int64", "MemTotal:       99999999999999999999 kB\n", 0, false, []string{registry.WarnAbsurdValue}},
		{"negative available", "MemTotal:       10 kB\nMemAvailable:   -5 kB\n", 10240, false, []string{registry.WarnAbsurdValue}},
		{"available above total", "MemTotal:       10 kB\nMemAvailable:   20 kB\n", 10240, false, []string{registry.WarnAbsurdValue}},
		{"no MemAvailable (old kernel)", "MemTotal:       10 kB\n", 10240, false, nil},
		{"missing unit", "MemTotal:       10\n", 0, false, []string{registry.WarnParseError}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			total, free, issues := hostMemory(ParseMemInfo(tc.in))
			assertHostMemoryKeysSuffice(t, tc.in)
			assert.Equal(t, tc.wantTotal, total)
			assert.Equal(t, tc.wantFree, free != nil)
			var codes []string
			for _, is := range issues {
				codes = append(codes, is.Code)
			}
			assert.Equal(t, tc.codes, codes)
		})
	}
}

func TestCPUBackendEdgeCases(t *testing.T) {
	// No /proc at all: still one CPU device, nothing guessed, no warning.
	f := detectCPU(context.Background(), machineFS(map[string]string{"sys/.keep": ""}))
	require.Len(t, f.Devices, 1)
	d := f.Devices[0]
	assert.Equal(t, registry.KindCPU, d.Kind)
	assert.True(t, d.Available)
	assert.Empty(t, d.Name)
	assert.Zero(t, d.MemoryBytes)
	assert.Nil(t, d.MemoryFreeBytes)
	assert.Empty(t, f.Warnings)

	// Absurd meminfo (negative): the device stays, the warning names the file.
	f = detectCPU(context.Background(), machineFS(map[string]string{
		machine.PathCPUInfo: "processor\t: 0\nmodel name\t: X\n", machine.PathMemInfo: "MemTotal:       -5 kB\n"}))
	require.Len(t, f.Devices, 1)
	assert.Equal(t, 1, f.Devices[0].Cores, "logical count when physical cores are not reported")
	require.Len(t, f.Warnings, 1)
	assert.Equal(t, registry.WarnAbsurdValue, f.Warnings[0].Code)
	assert.Equal(t, "/proc/meminfo", f.Warnings[0].Path)
}

func TestCPUInfoLargerThanMaxFileBytes(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() <= 4*machine.MaxFileBytes; i++ {
		b.WriteString("processor\t: 0\nmodel name\t: Big\nflags\t\t: " + strings.Repeat("avx512f ", 100) + "\n\n")
	}
	f := detectCPU(context.Background(), machineFS(map[string]string{machine.PathCPUInfo: b.String()}))
	require.Len(t, f.Devices, 1)
	assert.Equal(t, "Big", f.Devices[0].Name)
	assert.Greater(t, f.Devices[0].Threads, 100)
	assert.Empty(t, f.Warnings)
}

func FuzzParseCPUInfo(f *testing.F) {
	f.Add("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480C\nphysical id\t: 0\ncpu cores\t: 56\n")
	f.Add("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n")
	f.Add(":\n::\nprocessor\ncpu cores\t: 99999999999\n")
	f.Fuzz(func(t *testing.T, in string) {
		info := ParseCPUInfo(in)
		if info.Logical < 0 || info.Physical < 0 {
			t.Fatalf("negative counts %+v", info)
		}
		if info.Logical > strings.Count(in, "processor") {
			t.Fatalf("%d processors from %d processor lines", info.Logical, strings.Count(in, "processor"))
		}
		if info.Physical > (1<<16)*strings.Count(in, "cpu cores") {
			t.Fatalf("%d cores from %d cpu cores lines", info.Physical, strings.Count(in, "cpu cores"))
		}
	})
}

func FuzzParseMemInfo(f *testing.F) {
	f.Add("MemTotal:       32614532 kB\nMemFree:         1873412 kB\nMemAvailable:   20000000 kB\n")
	f.Add("MemTotal: 9223372036854775807 kB\nMemAvailable: -1 kB\n")
	f.Add("HugePages_Total:       0\n")
	f.Fuzz(func(t *testing.T, in string) {
		total, free, _ := hostMemory(ParseMemInfo(in))
		assertHostMemoryKeysSuffice(t, in)
		if total < 0 || total > machine.MaxHostMemory {
			t.Fatalf("total %d kept", total)
		}
		if free != nil && (*free < 0 || total > 0 && *free > total) {
			t.Fatalf("free %d kept with total %d", *free, total)
		}
	})
}

// cpuTreeMachine is the view of a scratch sysroot holding files.
func cpuTreeMachine(t *testing.T, files map[string]string) (*machine.Machine, string) {
	t.Helper()
	root := detecttest.WriteTree(t, files, nil)
	m, err := machine.New(machine.Config{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	return m, root
}

func TestCPUInfoFIFOIsRefusedNotWaitedOn(t *testing.T) {
	f := detectWithCPUInfoFIFO(t, detectCPU)
	require.Len(t, f.Devices, 1)
	require.Len(t, f.Warnings, 1)
	assert.Equal(t, "/"+machine.PathCPUInfo, f.Warnings[0].Path)
	assert.Contains(t, f.Warnings[0].Message, "not a regular file")
}

// detectWithCPUInfoFIFO runs a backend on a machine whose /proc/cpuinfo is
// a FIFO with no writer, failing the test if it has not returned within two
// seconds (then a writer is opened to release it).
func detectWithCPUInfoFIFO(t *testing.T, detect func(context.Context, *machine.Machine) machine.Findings) machine.Findings {
	t.Helper()
	m, root := cpuTreeMachine(t, map[string]string{"proc/.keep": ""})
	fifo := filepath.Join(root, machine.PathCPUInfo)
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan machine.Findings, 1)
	go func() { done <- detect(t.Context(), m) }()
	select {
	case f := <-done:
		return f
	case <-time.After(2 * time.Second):
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("the backend blocked on a FIFO at /proc/cpuinfo")
		return machine.Findings{}
	}
}

func TestCPUInfoLongerThanReadBufferFromDisk(t *testing.T) {
	var b strings.Builder
	n := 0
	for ; b.Len() <= 3*machine.MaxFileBytes; n++ {
		b.WriteString("processor\t: " + strconv.Itoa(n) + "\nmodel name\t: Big\nflags\t\t: " + strings.Repeat("avx512f ", 100) + "\n\n")
	}
	m, _ := cpuTreeMachine(t, map[string]string{machine.PathCPUInfo: b.String()})
	f := detectCPU(t.Context(), m)
	require.Len(t, f.Devices, 1)
	assert.Equal(t, n, f.Devices[0].Threads)
	assert.Empty(t, f.Warnings)
}

// arm64 cpuinfo has no "model name": the core is named from its
// implementer/part (the graviton fixtures' captured first lines).
func TestParseCPUInfoNamesARMCores(t *testing.T) {
	n2 := "processor\t: 0\nBogoMIPS\t: 243.75\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n"
	assert.Equal(t, "ARM Neoverse-N1", ParseCPUInfo(n2).Name)
	unknown := "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xfff\n"
	assert.Equal(t, "", ParseCPUInfo(unknown).Name)
	x86 := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\n"
	assert.Equal(t, "Intel(R) Xeon(R)", ParseCPUInfo(x86).Name)
}

// fixtureCPU is the CPU device the cpu backend reports on a fixture
// machine's sysroot.
func fixtureCPU(t *testing.T, name string) registry.Device {
	t.Helper()
	m, err := machine.New(machine.Config{Sysroot: filepath.Join(detecttest.MachineDir(t, name), "root"), NoExec: true})
	require.NoError(t, err)
	f := detectCPU(context.Background(), m)
	require.Len(t, f.Devices, 1)
	return f.Devices[0]
}

// The CPU's instruction-set extensions come from the flags/Features line
// of real captures: the vocabulary's part of it, sorted, source procfs.
func TestCPUFeaturesFromFixtures(t *testing.T) {
	// f is the features named, sorted (not through the filter under test).
	f := func(names string) []registry.CPUFeature {
		var out []registry.CPUFeature
		for _, n := range strings.Fields(names) {
			out = append(out, registry.CPUFeature(n))
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		machine string
		want    []registry.CPUFeature
	}{
		// x86 with AVX-512 and AMX: the real H200 VM's 16 vCPUs
		// (captures/cpuinfo.txt).
		{"h200-vm", f("sse2 ssse3 sse4_1 sse4_2 avx avx2 fma f16c bmi2 avx_vnni avx512f avx512bw avx512cd " +
			"avx512dq avx512vl avx512vbmi avx512_vnni avx512_bf16 avx512_fp16 amx_tile amx_bf16 amx_int8")},
		// x86 with AVX-512 and no AMX: a Xeon Gold 5218R guest (ghw's
		// linux-amd64-accel snapshot).
		{"qemu-q35-vm", f("sse2 ssse3 sse4_1 sse4_2 avx avx2 fma f16c bmi2 avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni")},
		// x86 with AVX2 and no AVX-512: a 2018 Colab VM.
		{"nvidia-driver-no-tool", f("sse2 ssse3 sse4_1 sse4_2 avx avx2 fma f16c bmi2")},
		// x86 without AVX: the Westmere L5640 of ghw's snapshot.
		{"cpu-only", f("sse2 ssse3 sse4_1 sse4_2")},
		// arm64: Graviton2 (Neoverse-N1) and Graviton3 (Neoverse-V1, SVE).
		{"graviton2-t4g-small", f("asimd asimdhp asimddp")},
		{"graviton3-c7g", f("asimd asimdhp asimddp asimdfhm sve")},
	}
	for _, tc := range tests {
		t.Run(tc.machine, func(t *testing.T) {
			d := fixtureCPU(t, tc.machine)
			assert.Equal(t, tc.want, d.CPUFeatures)
			assert.True(t, slices.IsSorted(d.CPUFeatures))
			assert.Equal(t, "procfs", d.Sources["cpu_features"])
		})
	}
	// No flags line (the mi300x-8 capture's cpuinfo has only processor,
	// vendor and model name lines): unknown, not "none".
	d := fixtureCPU(t, "mi300x-8")
	assert.Nil(t, d.CPUFeatures)
	assert.NotContains(t, d.Sources, "cpu_features")
}

// Flags outside the vocabulary are not passed through, and only the first
// CPU's line is read.
func TestParseCPUInfoFeatures(t *testing.T) {
	in := "processor\t: 0\nflags\t\t: fpu sse2 hypervisor avx512f avx2 avx512f made_up\n\n" +
		"processor\t: 1\nflags\t\t: fpu sse2 amx_tile\n"
	assert.Equal(t, []registry.CPUFeature{registry.CPUFeatureAVX2, registry.CPUFeatureAVX512F, registry.CPUFeatureSSE2},
		ParseCPUInfo(in).Features)
	assert.Nil(t, ParseCPUInfo("processor\t: 0\nvmx flags\t: ept vpid\n").Features, "the vmx flags line is not the flags line")
}

// The remembered cpuinfo's features are not the device's: a caller changing
// a registry must not change the next detection's answer.
func TestCPUFeaturesAreCopiedFromTheMemo(t *testing.T) {
	m, err := machine.New(machine.Config{Sysroot: filepath.Join(detecttest.MachineDir(t, "cpu-only"), "root"), NoExec: true})
	require.NoError(t, err)
	first := detectCPU(context.Background(), m).Devices[0]
	require.NotEmpty(t, first.CPUFeatures)
	first.CPUFeatures[0] = "changed"
	again := detectCPU(context.Background(), m).Devices[0]
	assert.Equal(t, registry.CPUFeatureSSE2, again.CPUFeatures[0])
}

// firstTwoFields splits as strings.Fields does (ParseMemInfo used it).
func FuzzFirstTwoFields(f *testing.F) {
	for _, s := range []string{"", "  32614532 kB", "1 kB extra", "\t\u00a0 7\u2003kB ", "x\xffy kB", "kB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fields := strings.Fields(s)
		first, second, count := firstTwoFields(s)
		assert.Equal(t, min(len(fields), 3), count)
		if len(fields) > 0 {
			assert.Equal(t, fields[0], first)
		}
		if len(fields) > 1 {
			assert.Equal(t, fields[1], second)
		}
	})
}

// assertHostMemoryKeysSuffice checks that the CPU backend's meminfo map of
// hostMemoryKeys only gives hostMemory the answer of the whole map.
func assertHostMemoryKeysSuffice(t *testing.T, text string) {
	t.Helper()
	total, free, issues := hostMemory(ParseMemInfo(text))
	only := map[string]int64{}
	parseMemInfoInto(only, text, hostMemoryKeys)
	total2, free2, issues2 := hostMemory(only)
	assert.Equal(t, total, total2, "total")
	assert.Equal(t, free, free2, "free")
	assert.Equal(t, issues, issues2, "issues")
	lines := map[string]int64{}
	parseMemInfoLines(lines, []byte(text), hostMemoryKeys)
	assert.Equal(t, only, lines, "parsed from the bytes, line by line")
}

// The CPU backend parses /proc/meminfo in the read's callback
// (parseMemInfoLines): on the machines' verbatim captures it gives what the
// whole file's map gives, and makes no string of the file (the two lines it
// keeps fit the conversion's stack buffer).
func TestParseMemInfoLinesOfCaptures(t *testing.T) {
	for _, name := range []string{"cpu-only", "dgx-h100", "h200-vm", "mi300x-8", "docker-cgroup-v1-128m"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "machines", name, "root", "proc", "meminfo"))
		require.NoError(t, err, name)
		assertHostMemoryKeysSuffice(t, string(b))
		whole := ParseMemInfo(string(b))
		require.Positive(t, whole["MemTotal"], name)
		mi := make(map[string]int64, len(hostMemoryKeys))
		allocs := testing.AllocsPerRun(20, func() { parseMemInfoLines(mi, b, hostMemoryKeys) })
		assert.Zero(t, allocs, name)
		assert.Equal(t, whole["MemTotal"], mi["MemTotal"], name)
		assert.Equal(t, whole["MemAvailable"], mi["MemAvailable"], name)
	}
}

// The x86 brand string is 48 bytes of CPUID padded with spaces, and older
// Intel parts pad inside it: the cpu-only fixture's Xeon (ghw's snapshot,
// verbatim) reads "Intel(R) Xeon(R) CPU           L5640  @ 2.27GHz" in
// /proc/cpuinfo, which the kernel trims only at the ends
// (arch/x86/kernel/cpu/common.c get_model_name). The registry's name
// collapses each run of spaces to one, as VyOS's CPU summary does
// ("Strip extra whitespace from CPU model names, /proc/cpuinfo is prone
// to that", vyos/vyos-1x src/op_mode/cpu_summary.py); lscpu and ghw pass
// the runs through, and a table column or a log line then shows them.
func TestCPUNameCollapsesSpaceRuns(t *testing.T) {
	assert.Equal(t, "Intel(R) Xeon(R) CPU L5640 @ 2.27GHz", fixtureCPU(t, "cpu-only").Name)
	x86 := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t:   Intel(R) Core(TM)2 Duo CPU     E8400  @ 3.00GHz \t\n"
	assert.Equal(t, "Intel(R) Core(TM)2 Duo CPU E8400 @ 3.00GHz", ParseCPUInfo(x86).Name)
}
