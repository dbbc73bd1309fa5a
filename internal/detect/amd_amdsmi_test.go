//go:build linux && cgo

package detect

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd/amdsmi/amdsmitest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// amdFixtures are the AMD fixture machines whose in-process AMD SMI
// registry must equal the tool path's: two with rocm-smi (8x MI300X in one
// XGMI hive; one MI250 GCD with only rocm-smi's captured JSON, no sysfs) and
// two without (MI300X and MI308X in CPX mode, from KFD captures).
var amdFixtures = []string{"mi300x-8", "mi250-rocm-smi-gfx9010", "mi300x-8-cpx", "mi308x-8-cpx"}

// amdsmiMachine is the fake AMD SMI machine of a fixture: what its rocm-smi
// prints when it has one, else what its sysfs and KFD tree hold.
func amdsmiMachine(t testing.TB, fixture string) amdsmitest.Machine {
	t.Helper()
	dir := detecttest.MachineDir(t, fixture)
	tool := filepath.Join(dir, "bin", "rocm-smi")
	if _, err := os.Stat(tool); err == nil {
		out, err := exec.Command(tool, amd.ROCmSMIArgs...).Output()
		require.NoError(t, err)
		return amdsmitest.FromRocmSMI(t, out)
	}
	return amdsmitest.FromSysfs(t, filepath.Join(dir, "root"))
}

// amdsmiOptions detects a fixture with the rocm backend only and AMD SMI at
// lib; withTool keeps the fixture's tools on the path.
func amdsmiOptions(t testing.TB, fixture, lib string, withTool bool) Options {
	opts := fixtureOptions(t, fixture, nil)
	opts.Backends = []string{amd.BackendROCm}
	opts.AMDSMILibrary = lib
	if !withTool {
		opts.Path = t.TempDir()
	}
	return opts
}

// asToolPath names rocm-smi where a registry read through AMD SMI names
// amdsmi, so that it can be compared with the tool path's.
func asToolPath(reg *registry.Registry) *registry.Registry {
	for i := range reg.Devices {
		for k, v := range reg.Devices[i].Sources {
			reg.Devices[i].Sources[k] = strings.ReplaceAll(v, amd.SourceAMDSMI, amd.ToolROCmSMI)
		}
	}
	for i := range reg.SystemIO.Interconnects {
		reg.SystemIO.Interconnects[i].Source = strings.ReplaceAll(reg.SystemIO.Interconnects[i].Source, amd.SourceAMDSMI, amd.ToolROCmSMI)
	}
	return reg
}

// countSource counts the device fields whose source is src and the
// interconnects whose source names it.
func countSource(reg *registry.Registry, src string) int {
	n := 0
	for _, d := range reg.Devices {
		for _, v := range d.Sources {
			if v == src {
				n++
			}
		}
	}
	for _, ic := range reg.SystemIO.Interconnects {
		if strings.Contains(ic.Source, src) {
			n++
		}
	}
	return n
}

// Read in-process through AMD SMI (no tool on the path), each fixture gives
// the registry its tool path gives, but for the source labels: the same
// devices, partitions, memory, NUMA nodes, architectures, XGMI hives and
// link counts, and no warning; from a 24.7 library (ROCm 6.3), a 25.3 one
// (ROCm 6.4.0), a 25.5 one that leaves the year unwritten (ROCm 6.4.2) and
// a 26.5 one (ROCm 7) alike.
func TestAMDSMIRegistryEqualsToolPath(t *testing.T) {
	for _, variant := range [][]string{nil, {amdsmitest.V25},
		{amdsmitest.V25, "-DFAKE_V25_MINOR=5", "-DFAKE_V25_RELEASE=1", "-DFAKE_V25_NO_YEAR"}, {amdsmitest.V26}} {
		for _, fixture := range amdFixtures {
			t.Run(strings.Join(append([]string{fixture}, variant...), " "), func(t *testing.T) {
				registryEqualsToolPath(t, fixture, amdsmitest.Build(t, amdsmiMachine(t, fixture), variant...))
			})
		}
	}
}

// registryEqualsToolPath is TestAMDSMIRegistryEqualsToolPath for one
// fixture and fake library.
func registryEqualsToolPath(t *testing.T, fixture, lib string) {
	want, err := Detect(context.Background(), amdsmiOptions(t, fixture, AMDSMIOff, true))
	require.NoError(t, err)
	require.NotEmpty(t, want.Devices)
	got, err := Detect(context.Background(), amdsmiOptions(t, fixture, lib, false))
	require.NoError(t, err)
	toolFields := countSource(want, amd.ToolROCmSMI)
	if fixture == "mi300x-8" || fixture == "mi250-rocm-smi-gfx9010" {
		assert.Positive(t, toolFields, "the tool path uses rocm-smi")
	}
	assert.Equal(t, toolFields, countSource(got, amd.SourceAMDSMI), "every rocm-smi figure is AMD SMI's")
	assert.Zero(t, countSource(got, amd.ToolROCmSMI), "rocm-smi did not run")
	got = asToolPath(got)
	assert.Equal(t, want.Devices, got.Devices)
	assert.Equal(t, want.SystemIO.Interconnects, got.SystemIO.Interconnects)
	assert.Equal(t, want.Warnings, got.Warnings)
}

// The figures that come only from the tool on the rocm-smi fixtures come
// from AMD SMI: the MI250 GCD's name, bus and gfx target (gfx90a from
// target_graphics_version 9010); the MI300X hive's 28 XGMI links.
func TestAMDSMIToolOnlyFigures(t *testing.T) {
	lib := amdsmitest.Build(t, amdsmiMachine(t, "mi250-rocm-smi-gfx9010"))
	reg, err := Detect(context.Background(), amdsmiOptions(t, "mi250-rocm-smi-gfx9010", lib, false))
	require.NoError(t, err)
	require.Len(t, reg.Devices, 1)
	d := reg.Devices[0]
	assert.Equal(t, "0000:29:00.0", d.PCIBusID)
	assert.Equal(t, "gfx90a", d.Architecture)
	assert.Equal(t, amd.SourceAMDSMI, d.Sources["architecture"])
	assert.Equal(t, amd.SourceAMDSMI, d.Sources["name"])

	lib = amdsmitest.Build(t, amdsmiMachine(t, "mi300x-8"))
	reg, err = Detect(context.Background(), amdsmiOptions(t, "mi300x-8", lib, false))
	require.NoError(t, err)
	require.Len(t, reg.SystemIO.Interconnects, 1)
	ic := reg.SystemIO.Interconnects[0]
	assert.Equal(t, registry.LinkXGMI, ic.Kind)
	assert.Equal(t, 28, ic.Links, "8 GPUs, every pair one hop")
	assert.Equal(t, "sysfs+"+amd.SourceAMDSMI, ic.Source)
}

// A library whose amdsmi_init fails (no amdgpu driver loaded) is not used:
// a fallback warning says why and rocm-smi answers as without AMD SMI.
func TestAMDSMIInitFailureFallsBackToRocmSMI(t *testing.T) {
	want, err := Detect(context.Background(), amdsmiOptions(t, "mi300x-8", AMDSMIOff, true))
	require.NoError(t, err)
	lib := amdsmitest.Build(t, amdsmiMachine(t, "mi300x-8"), "-DFAKE_INIT_RETURN=34")
	got, err := Detect(context.Background(), amdsmiOptions(t, "mi300x-8", lib, true))
	require.NoError(t, err)
	assert.Equal(t, want.Devices, got.Devices)
	assert.Equal(t, want.SystemIO.Interconnects, got.SystemIO.Interconnects)
	require.Len(t, got.Warnings, len(want.Warnings)+1)
	w := got.Warnings[len(got.Warnings)-1]
	assert.Equal(t, registry.WarnFallback, w.Code)
	assert.Contains(t, w.Message, "amdsmi_init: AMDSMI_STATUS_DRIVER_NOT_LOADED")
	assert.Contains(t, w.Message, "using rocm-smi")
}

// A library of a version whose struct layouts this build does not read
// (a 25 minor whose declarations were not at hand, 25.2) is refused right
// after amdsmi_init, before any struct is read, with a warning; rocm-smi
// answers.
func TestAMDSMIUnknownVersionFallsBackToRocmSMI(t *testing.T) {
	lib := amdsmitest.Build(t, amdsmiMachine(t, "mi300x-8"), amdsmitest.V25, "-DFAKE_V25_MINOR=2")
	reg, err := Detect(context.Background(), amdsmiOptions(t, "mi300x-8", lib, true))
	require.NoError(t, err)
	assert.Positive(t, countSource(reg, amd.ToolROCmSMI))
	require.NotEmpty(t, reg.Warnings)
	w := reg.Warnings[len(reg.Warnings)-1]
	assert.Equal(t, registry.WarnFallback, w.Code)
	assert.Contains(t, w.Message, "unsupported library version")
	assert.Contains(t, w.Message, "25.2.0")
}

// A driver that hangs inside AMD SMI costs one detection its deadline, no
// more; later detections in the process skip AMD SMI at once and ask
// rocm-smi.
func TestAMDSMIHangIsBoundedByTheDetectionTimeout(t *testing.T) {
	opts := amdsmiOptions(t, "mi300x-8", amdsmitest.Build(t, amdsmiMachine(t, "mi300x-8"), "-DFAKE_HANG"), true)
	reg := detectPastHungLibrary(t, opts)
	assert.Positive(t, countSource(reg, amd.ToolROCmSMI))
}

// Steady-state detection of the mi300x-8 fixture (every backend, no
// cache), the GPUs read through AMD SMI in-process (the fake libamd_smi.so
// answering the fixture's rocm-smi figures) against the same detection
// running the fixture's rocm-smi script. Figures in docs/performance.md
// ("AMD SMI in-process"); they measure the fake library, not ROCm's.
//
//	go test -run xxx -bench 'DetectMI300X8' -benchtime=2s ./internal/detect/
func BenchmarkDetectMI300X8AMDSMI(b *testing.B) {
	benchDetectAMD(b, amdsmitest.Build(b, amdsmiMachine(b, "mi300x-8")), nil)
}

func BenchmarkDetectMI300X8RocmSMI(b *testing.B) {
	benchDetectAMD(b, AMDSMIOff, nil)
}

// The same with the rocm backend alone: the part the library replaces.
func BenchmarkDetectMI300X8RocmBackendAMDSMI(b *testing.B) {
	benchDetectAMD(b, amdsmitest.Build(b, amdsmiMachine(b, "mi300x-8")), []string{amd.BackendROCm})
}

func BenchmarkDetectMI300X8RocmBackendRocmSMI(b *testing.B) {
	benchDetectAMD(b, AMDSMIOff, []string{amd.BackendROCm})
}

func benchDetectAMD(b *testing.B, lib string, backends []string) {
	opts := fixtureOptions(b, "mi300x-8", nil)
	opts.AMDSMILibrary = lib
	opts.Backends = backends
	reg, err := Detect(context.Background(), opts) // loads and initialises AMD SMI once
	require.NoError(b, err)
	require.Empty(b, reg.Warnings)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Detect(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}

// A VRAM figure AMD SMI gives as 2^64-1 (what a broken sysfs read becomes)
// is reported as absurd and left out, as the same figure from rocm-smi is.
func TestAMDSMIAbsurdVRAM(t *testing.T) {
	m := amdsmiMachine(t, "mi250-rocm-smi-gfx9010")
	broken := uint64(math.MaxUint64)
	m.Processors[0].VRAMTotal = &broken
	reg, err := Detect(context.Background(), amdsmiOptions(t, "mi250-rocm-smi-gfx9010", amdsmitest.Build(t, m), false))
	require.NoError(t, err)
	require.Len(t, reg.Devices, 1)
	assert.NotEqual(t, amd.SourceAMDSMI, reg.Devices[0].Sources["memory_bytes"])
	require.Len(t, reg.Warnings, 1)
	assert.Equal(t, registry.WarnAbsurdValue, reg.Warnings[0].Code)
	assert.Contains(t, reg.Warnings[0].Message, "18446744073709551615")
}
