package detect

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/intel"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// copyFixtureMachine copies a fixture machine (symlinks kept as links) into a
// temporary directory so a test can change it, and returns its directory.
func copyFixtureMachine(t *testing.T, name string) string {
	t.Helper()
	src := detecttest.MachineDir(t, name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.IsDir():
			return os.MkdirAll(to, 0o755)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, info.Mode().Perm())
		}
	})
	require.NoError(t, err)
	return dst
}

// detectDir runs a full detection on a machine directory (root/ + bin/).
func detectDir(t *testing.T, dir string, env map[string]string) *registry.Registry {
	t.Helper()
	reg, err := Detect(context.Background(), Options{
		Sysroot: filepath.Join(dir, "root"), Path: filepath.Join(dir, "bin"),
		Timeout: 5 * time.Second, Env: env, LookupEnv: func(string) (string, bool) { return "", false },
	})
	require.NoError(t, err)
	return reg
}

// backendWarnings returns the codes of one backend's warnings, in order.
func backendWarnings(reg *registry.Registry, backend string) []string {
	var out []string
	for _, w := range reg.Warnings {
		if w.Backend == backend {
			out = append(out, w.Code)
		}
	}
	return out
}

var gaudi2Buses = []string{"0000:33:00.0", "0000:34:00.0", "0000:4d:00.0", "0000:4e:00.0",
	"0000:9a:00.0", "0000:9b:00.0", "0000:b3:00.0", "0000:b4:00.0"}

// assertGaudi2Eight checks what every path must agree on for the eight HL-225
// of the captured hl-smi table (testdata/machines/gaudi2-8): bus ids from the
// table, Gaudi 2 from the PCI id, 98304 MiB each (the table's total, the
// datasheet figure). The capture shows no NUMA node or PCIe link.
func assertGaudi2Eight(t *testing.T, devs []registry.Device) {
	t.Helper()
	require.Len(t, devs, 8)
	for i, d := range devs {
		assert.Equal(t, registry.DeviceID(registry.KindGaudi, i), d.ID)
		assert.Equal(t, registry.FamilyAIASIC, d.Family)
		assert.Equal(t, "intel", d.Vendor)
		assert.Equal(t, gaudi2Buses[i], d.PCIBusID)
		assert.Equal(t, "1da3:1020", d.PCIID)
		assert.Equal(t, "gaudi2", d.Architecture)
		assert.Equal(t, int64(98304)<<20, d.MemoryBytes)
		assert.InDelta(t, 2460, d.MemoryBandwidthGBs, 0.001)
		assert.Equal(t, []string{"fp32", "bf16", "fp16", "fp8"}, d.Quantizations)
		assert.True(t, d.Available)
		assert.Nil(t, d.NUMANode)
		assert.Nil(t, d.PCIe)
	}
}

// The public capture is hl-smi's summary table; it has no answer to the
// `-Q ... -f csv` query the backend runs, so the fixture's hl-smi fails it and
// the devices come from sysfs, with the failure reported.
func TestGaudiFixtureHLSMIQueryNotCaptured(t *testing.T) {
	reg := detectFixture(t, "gaudi2-8", nil)
	devs := devicesOfKind(reg, registry.KindGaudi)
	assertGaudi2Eight(t, devs)
	for _, d := range devs {
		assert.Equal(t, "Intel Gaudi 2", d.Name)
		assert.Nil(t, d.MemoryFreeBytes)
		assert.Empty(t, d.DriverVersion)
		assert.Equal(t, "pci-id", d.Sources["memory_bytes"])
	}
	assert.Equal(t, []string{registry.WarnToolFailed, registry.WarnFallback}, backendWarnings(reg, intel.BackendGaudi))
	assertGaudi2ScaleUp(t, reg, 8)
}

// assertGaudi2ScaleUp checks the one scale-up domain of n Gaudi 2 OAM
// modules: kind roce, the device ids, 21 ports of 100 Gb/s, 262.5 GB/s per
// device per direction (docs.habana.ai "Intel Gaudi Network Configuration"
// quotes 21*12.5 GB/s = 262.5 GB/s unidirectional for Gaudi 2).
func assertGaudi2ScaleUp(t *testing.T, reg *registry.Registry, n int) {
	t.Helper()
	require.Len(t, reg.SystemIO.Interconnects, 1)
	ic := reg.SystemIO.Interconnects[0]
	assert.Equal(t, registry.LinkRoCE, ic.Kind)
	assert.Equal(t, "Intel Gaudi 2 scale-up", ic.Name)
	var want []string
	for i := 0; i < n; i++ {
		want = append(want, registry.DeviceID(registry.KindGaudi, i))
	}
	assert.Equal(t, want, ic.Devices)
	assert.Equal(t, 21, ic.Links)
	assert.InDelta(t, 12.5, ic.LinkBandwidthGBs, 1e-9)
	assert.InDelta(t, 262.5, ic.BandwidthGBs, 1e-9)
	assert.Equal(t, "pci-id", ic.Source)
}

// The PCIe card (HL-288, 1da3:1021) is a Gaudi 2 without the baseboard's
// all-to-all wiring: several of them make no scale-up domain.
func TestGaudiPCIeCardsHaveNoScaleUp(t *testing.T) {
	dir := copyFixtureMachine(t, "gaudi2-8")
	for _, bus := range gaudi2Buses {
		f := filepath.Join(dir, "root", "sys", "bus", "pci", "devices", bus, "device")
		require.NoError(t, os.WriteFile(f, []byte("0x1021\n"), 0o644))
	}
	reg := detectDir(t, dir, nil)
	assert.Len(t, devicesOfKind(reg, registry.KindGaudi), 8)
	assert.Empty(t, reg.SystemIO.Interconnects)
}

// Gaudi 3 OAM modules (1da3:1060) on the same baseboard: 21 ports of
// 200 Gb/s, 525 GB/s per device per direction (the cited page's Gaudi 3
// figure). The gaudi2-8 tree with its device ids changed: only the domain is
// under test.
func TestGaudi3ScaleUpBandwidth(t *testing.T) {
	dir := copyFixtureMachine(t, "gaudi2-8")
	for _, bus := range gaudi2Buses {
		f := filepath.Join(dir, "root", "sys", "bus", "pci", "devices", bus, "device")
		require.NoError(t, os.WriteFile(f, []byte("0x1060\n"), 0o644))
	}
	reg := detectDir(t, dir, nil)
	require.Len(t, reg.SystemIO.Interconnects, 1)
	ic := reg.SystemIO.Interconnects[0]
	assert.Equal(t, "Intel Gaudi 3 scale-up", ic.Name)
	assert.Len(t, ic.Devices, 8)
	assert.InDelta(t, 25, ic.LinkBandwidthGBs, 1e-9)
	assert.InDelta(t, 525, ic.BandwidthGBs, 1e-9)
}

// One OAM module alone is no domain.
func TestGaudiOneModuleHasNoScaleUp(t *testing.T) {
	bin := t.TempDir()
	writeFakeTool(t, bin, "hl-smi", toolScript(intel.HLSMIArgs(),
		"0, HL-225, 0000:33:00.0, 98304, 97536, 1.21.1-bfcec49, N/A"))
	reg, err := Detect(context.Background(), Options{Sysroot: t.TempDir(), Path: bin, Backends: []string{intel.BackendGaudi},
		LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	require.Len(t, devicesOfKind(reg, registry.KindGaudi), 1)
	assert.Empty(t, reg.SystemIO.Interconnects)
}

func TestGaudiFixtureFallbackWithoutHLSMI(t *testing.T) {
	dir := copyFixtureMachine(t, "gaudi2-8")
	require.NoError(t, os.Remove(filepath.Join(dir, "bin", "hl-smi")))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindGaudi)
	assertGaudi2Eight(t, devs)
	for _, d := range devs {
		assert.Equal(t, "Intel Gaudi 2", d.Name)
		assert.Nil(t, d.MemoryFreeBytes, "free memory is unknown without hl-smi")
		assert.Empty(t, d.DriverVersion)
		assert.Equal(t, "pci-id", d.Sources["memory_bytes"])
	}
	assert.Equal(t, []string{registry.WarnFallback}, backendWarnings(reg, intel.BackendGaudi))
}

func TestGaudiFixtureHLSMIFailsThenFallback(t *testing.T) {
	dir := copyFixtureMachine(t, "gaudi2-8")
	script := "#!/bin/sh\necho 'hl-smi: failed to open device' >&2\nexit 3\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "hl-smi"), []byte(script), 0o755))
	reg := detectDir(t, dir, nil)
	assertGaudi2Eight(t, devicesOfKind(reg, registry.KindGaudi))
	assert.Equal(t, []string{registry.WarnToolFailed, registry.WarnFallback}, backendWarnings(reg, intel.BackendGaudi))
}

func TestGaudiFixtureFallbackMissingAccelNode(t *testing.T) {
	dir := copyFixtureMachine(t, "gaudi2-8")
	require.NoError(t, os.Remove(filepath.Join(dir, "bin", "hl-smi")))
	require.NoError(t, os.Remove(filepath.Join(dir, "root", "dev", "accel", "accel3")))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindGaudi)
	require.Len(t, devs, 8)
	for _, d := range devs {
		// accel3 is hl-smi's AIP 3, 0000:9a:00.0 (README: accelN = AIP index).
		assert.Equal(t, d.PCIBusID != "0000:9a:00.0", d.Available, d.PCIBusID)
	}
	assert.Equal(t, []string{registry.WarnFallback, registry.WarnDeviceUnusable}, backendWarnings(reg, intel.BackendGaudi))
}

// A device sysfs shows but hl-smi does not list is unusable. The fake hl-smi
// answers the backend's query with the captured table's values (index, name,
// bus id, total, total minus used, driver version; no uuid) in the -Q CSV
// layout of hl-smi's documentation (https://docs.habana.ai/en/latest/Management_and_Monitoring/Embedded_System_Tools_Guide/System_Management_Interface_Tool.html), leaving out the row of 0000:9b:00.0 as
// hl-smi does for a device that failed to load. Not a capture: it tests the
// merge, not the parser.
func TestGaudiFixtureDeviceMissingFromHLSMI(t *testing.T) {
	dir := copyFixtureMachine(t, "gaudi2-8")
	rows := "0, HL-225, 0000:33:00.0, 98304, 3341, 1.21.1-bfcec49, N/A\n" +
		"1, HL-225, 0000:34:00.0, 98304, 97536, 1.21.1-bfcec49, N/A\n" +
		"2, HL-225, 0000:4e:00.0, 98304, 7953, 1.21.1-bfcec49, N/A\n" +
		"3, HL-225, 0000:9a:00.0, 98304, 7948, 1.21.1-bfcec49, N/A\n" +
		"5, HL-225, 0000:b3:00.0, 98304, 7952, 1.21.1-bfcec49, N/A\n" +
		"6, HL-225, 0000:b4:00.0, 98304, 15797, 1.21.1-bfcec49, N/A\n" +
		"7, HL-225, 0000:4d:00.0, 98304, 12378, 1.21.1-bfcec49, N/A"
	writeFakeTool(t, filepath.Join(dir, "bin"), "hl-smi", toolScript(intel.HLSMIArgs(), rows))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindGaudi)
	require.Len(t, devs, 8, "the device sysfs sees is still listed")
	for i, d := range devs {
		assert.Equal(t, gaudi2Buses[i], d.PCIBusID)
		assert.Equal(t, d.PCIBusID != "0000:9b:00.0", d.Available, d.PCIBusID)
	}
	assert.Equal(t, int64(97536)<<20, *devs[1].MemoryFreeBytes, "34:00.0 uses 768 MiB of 98304")
	assert.Equal(t, []string{registry.WarnDeviceUnusable}, backendWarnings(reg, intel.BackendGaudi))
	assertGaudi2ScaleUp(t, reg, 8) // the unlisted module is still wired to the others
}

// An absurd hl-smi memory figure is an absurd_value warning naming the tool;
// the device stays, without that figure.
func TestGaudiAbsurdMemoryIsReported(t *testing.T) {
	bin := t.TempDir()
	writeFakeTool(t, bin, "hl-smi", toolScript(intel.HLSMIArgs(),
		"0, HL-225, 0000:33:00.0, 99999999999999, 97536, 1.11.0-e6eb0fd, 01P0-HL2080A0-15-TNBS10-20-07-10"))
	reg, err := Detect(context.Background(), Options{Sysroot: t.TempDir(), Path: bin, Backends: []string{intel.BackendGaudi},
		LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	devs := devicesOfKind(reg, registry.KindGaudi)
	require.Len(t, devs, 1)
	assert.Zero(t, devs[0].MemoryBytes)
	assert.Equal(t, []string{"gaudi/absurd_value"}, warningCodes(reg))
	assert.Equal(t, "hl-smi", reg.Warnings[0].Tool)
}
