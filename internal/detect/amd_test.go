package detect

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// detectFixtureBackends runs a detection of a fixture machine with only the
// named backends, so these tests do not depend on backends other files own.
func detectFixtureBackends(t *testing.T, name string, env map[string]string, backends ...string) *registry.Registry {
	t.Helper()
	opts := fixtureOptions(t, name, env)
	opts.Backends = backends
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	return reg
}

// MI300X figures of the fixture (testdata/machines/mi300x-8).
const (
	mi300xVRAM = int64(206141652992)
	mi300xUsed = int64(297242624)
	mi300xGTT  = int64(1082331758592)
)

var mi300xBus = []string{"0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0",
	"0000:85:00.0", "0000:a5:00.0", "0000:c5:00.0", "0000:e5:00.0"}

// The four GPUs of the mi300x-4-sysfs fixture, in rocm-smi's order, with the
// unique ids rocm-smi -a and rocminfo show for them (its captures/).
var (
	mi300x4Bus   = []string{"0000:26:00.0", "0000:46:00.0", "0000:65:00.0", "0000:85:00.0"}
	mi300x4UUIDs = []string{"8d1457e2c20f59d2", "b4fa34630e85d42a", "e8986800e182538a", "eff71edc82169115"}
)

func amdTestIDs(devs []registry.Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.ID
	}
	return out
}

func amdTestBusIDs(devs []registry.Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.PCIBusID
	}
	return out
}

// assertMI300X checks the eight GPUs every MI300X fixture must give.
func assertMI300X(t *testing.T, reg *registry.Registry, memSource string) {
	t.Helper()
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 8)
	assert.Equal(t, mi300xBus, amdTestBusIDs(gpus))
	for i, g := range gpus {
		assert.Equal(t, registry.DeviceID(registry.KindROCm, i), g.ID)
		assert.Equal(t, "AMD Instinct MI300X OAM", g.Name)
		assert.Equal(t, "amd", g.Vendor)
		assert.Equal(t, mi300xVRAM, g.MemoryBytes, "VRAM only: no GTT or CXL added")
		require.NotNil(t, g.MemoryFreeBytes)
		assert.Equal(t, mi300xVRAM-mi300xUsed, *g.MemoryFreeBytes)
		assert.Equal(t, mi300xGTT, g.GTTBytes)
		assert.False(t, g.MemoryShared)
		assert.Equal(t, "gfx942", g.Architecture)
		assert.Equal(t, float64(5300), g.MemoryBandwidthGBs)
		assert.Equal(t, []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"}, g.Quantizations)
		assert.Equal(t, "1002:74a1", g.PCIID)
		require.NotNil(t, g.NUMANode)
		assert.Equal(t, i/4, *g.NUMANode, "GPUs 0-3 on socket 0, 4-7 on socket 1")
		assert.Equal(t, memSource, g.Sources["memory_bytes"])
		assert.Equal(t, "kfd", g.Sources["architecture"])
	}
}

func TestROCmFixtureMI300X8(t *testing.T) {
	reg := detectFixtureBackends(t, "mi300x-8", nil, "rocm")
	assertMI300X(t, reg, "sysfs")
	assert.Empty(t, warningCodes(reg))
	require.Len(t, reg.SystemIO.Interconnects, 1)
	ic := reg.SystemIO.Interconnects[0]
	assert.Equal(t, registry.LinkXGMI, ic.Kind)
	assert.Equal(t, amdTestIDs(devicesOfKind(reg, registry.KindROCm)), ic.Devices)
	assert.Equal(t, 28, ic.Links, "8 GPUs fully connected: 8*7/2 one-hop XGMI pairs")
	assert.Equal(t, "sysfs+rocm-smi", ic.Source)
	assert.Zero(t, ic.BandwidthGBs, "no sourced per-GPU Infinity Fabric figure")
	assert.Equal(t, 64.0, ic.LinkBandwidthGBs, "per link and direction: 16 lanes x 32 Gbps (CDNA 3 white paper)")
}

// assertMI300X4 checks the four GPUs of mi300x-4-sysfs: what its captures
// give (name, memory, gfx target, ids) and nothing they lack (free memory,
// GTT, NUMA node).
func assertMI300X4(t *testing.T, reg *registry.Registry) {
	t.Helper()
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 4)
	assert.Equal(t, mi300x4Bus, amdTestBusIDs(gpus))
	for i, g := range gpus {
		assert.Equal(t, registry.DeviceID(registry.KindROCm, i), g.ID)
		assert.Equal(t, "AMD Instinct MI300X OAM", g.Name)
		assert.Equal(t, mi300x4UUIDs[i], g.UUID)
		assert.Equal(t, mi300xVRAM, g.MemoryBytes, "rocminfo's pool of 201310208 KB")
		assert.Equal(t, "sysfs", g.Sources["memory_bytes"])
		assert.Nil(t, g.MemoryFreeBytes, "mem_info_vram_used not captured")
		assert.Zero(t, g.GTTBytes, "mem_info_gtt_total not captured")
		assert.Nil(t, g.NUMANode, "numa_node not captured")
		assert.Equal(t, "gfx942", g.Architecture)
		assert.Equal(t, "kfd", g.Sources["architecture"])
		assert.Equal(t, "1002:74a1", g.PCIID)
		assert.Equal(t, float64(5300), g.MemoryBandwidthGBs)
	}
}

func TestROCmFixtureMI300X4SysfsOnly(t *testing.T) {
	reg := detectFixtureBackends(t, "mi300x-4-sysfs", nil, "rocm")
	assertMI300X4(t, reg)
	assert.Empty(t, warningCodes(reg))
	assert.Empty(t, reg.SystemIO.Interconnects, "no XGMI hive id was captured: no hive is invented")
}

func TestROCmFixtureHIPVisibleDevices(t *testing.T) {
	reg := detectFixtureBackends(t, "mi300x-8", map[string]string{"HIP_VISIBLE_DEVICES": "0,1"}, "rocm")
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 2)
	assert.Equal(t, mi300xBus[:2], amdTestBusIDs(gpus))
	assert.Equal(t, []string{"rocm/hidden_by_env"}, warningCodes(reg))
	require.Len(t, reg.SystemIO.Interconnects, 1)
	assert.Equal(t, []string{"rocm:0", "rocm:1"}, reg.SystemIO.Interconnects[0].Devices)
	assert.Equal(t, 1, reg.SystemIO.Interconnects[0].Links)
}

func TestROCmFixtureVisibilityVariables(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantBus []string
		hidden  bool
	}{
		{"one index", map[string]string{"HIP_VISIBLE_DEVICES": "3"}, mi300x4Bus[3:4], true},
		// rocminfo's Uuid of the GPU at 0000:65:00.0.
		{"ROCR uuid", map[string]string{"ROCR_VISIBLE_DEVICES": "GPU-e8986800e182538a"}, mi300x4Bus[2:3], true},
		{"ROCR then HIP", map[string]string{"ROCR_VISIBLE_DEVICES": "1,2,3", "HIP_VISIBLE_DEVICES": "2"}, mi300x4Bus[3:4], true},
		{"stops at an invalid entry", map[string]string{"HIP_VISIBLE_DEVICES": "1,9,2"}, mi300x4Bus[1:2], true},
		{"all listed", map[string]string{"HIP_VISIBLE_DEVICES": "0,1,2,3"}, mi300x4Bus, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := detectFixtureBackends(t, "mi300x-4-sysfs", tt.env, "rocm")
			gpus := devicesOfKind(reg, registry.KindROCm)
			assert.Equal(t, tt.wantBus, amdTestBusIDs(gpus))
			if tt.hidden {
				assert.Equal(t, []string{"rocm/hidden_by_env"}, warningCodes(reg))
			} else {
				assert.Empty(t, warningCodes(reg))
			}
			if len(gpus) < 2 {
				assert.Empty(t, reg.SystemIO.Interconnects, "a hive of one visible GPU is no interconnect")
			}
		})
	}
}

// The ThinkPad P16s's Radeon 860M (Krackan, 1002:1114, a display
// controller of class 0x0380, not a VGA one): an APU whose 8 GiB BIOS
// carve-out is not memory of its own, named and given its gfx target by the
// part table (the capture has no product_name and no KFD GPU node).
func TestROCmFixtureKrackanAPU(t *testing.T) {
	reg := detectFixtureBackends(t, "thinkpad-p16s-krackan", nil, "rocm")
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 1)
	g := gpus[0]
	assert.Equal(t, "0000:c4:00.0", g.PCIBusID)
	assert.Equal(t, "1002:1114", g.PCIID)
	assert.True(t, g.Available)
	assert.True(t, g.MemoryShared, "an APU's VRAM is a UMA carve-out")
	assert.Equal(t, int64(8<<30), g.MemoryCarveoutBytes, "the carve-out, not memory of its own")
	assert.Zero(t, g.MemoryBytes)
	assert.Zero(t, g.GTTBytes, "no GTT figure was captured")
	assert.Zero(t, g.MemoryUsableBytes, "unknown, not guessed")
	assert.Equal(t, "gfx1152", g.Architecture)
	assert.Equal(t, "pci-id", g.Sources["architecture"])
	assert.Equal(t, "AMD Krackan [Radeon 840M / 860M Graphics]", g.Name)
	assert.Equal(t, "part table", g.Sources["name"])
	assert.Equal(t, []string{"fp32", "fp16", "bf16", "int8", "int4"}, g.Quantizations)
	assert.Empty(t, warningCodes(reg))
}

// A failing rocm-smi is a warning; sysfs figures are still reported.
func TestROCmToolFailureKeepsSysfs(t *testing.T) {
	opts := fixtureOptions(t, "mi300x-4-sysfs", nil)
	opts.Backends = []string{"rocm"}
	opts.Path = t.TempDir()
	writeFakeTool(t, opts.Path, "rocm-smi", "#!/bin/sh\necho 'ERROR: rsmi_init failed' >&2\nexit 1\n")
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	assertMI300X4(t, reg)
	assert.Equal(t, []string{"rocm/tool_failed"}, warningCodes(reg))
}

func TestROCmGarbageOutputIsParseError(t *testing.T) {
	opts := fixtureOptions(t, "mi300x-4-sysfs", nil)
	opts.Backends = []string{"rocm"}
	opts.Path = t.TempDir()
	writeFakeTool(t, opts.Path, "rocm-smi", "#!/bin/sh\necho 'WARNING: no JSON today'\n")
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.Len(t, devicesOfKind(reg, registry.KindROCm), 4)
	assert.Equal(t, []string{"rocm/parse_error"}, warningCodes(reg))
}

func writeFakeTool(t *testing.T, dir, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755))
}

// Cards are ordered numerically: card10 after card2 (the old crate sorted
// names, putting card10 first).
func TestAMDListDRMCardsNumericOrder(t *testing.T) {
	root := t.TempDir()
	mk := func(card int, bus string) {
		dev := filepath.Join(root, "sys/devices/pci0000:00", bus)
		require.NoError(t, os.MkdirAll(filepath.Join(dev, "drm", "card"+strconv.Itoa(card)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dev, "vendor"), []byte("0x1002\n"), 0o644))
		require.NoError(t, os.Symlink("../../../"+bus, filepath.Join(dev, "drm", "card"+strconv.Itoa(card), "device")))
		require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/class/drm"), 0o755))
		require.NoError(t, os.Symlink("../../devices/pci0000:00/"+bus+"/drm/card"+strconv.Itoa(card),
			filepath.Join(root, "sys/class/drm", "card"+strconv.Itoa(card))))
	}
	mk(10, "0000:0a:00.0")
	mk(2, "0000:02:00.0")
	mk(1, "0000:01:00.0")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/class/drm/card1-DP-1"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/class/drm/renderD128"), 0o755))
	m, err := NewMachine(Options{Sysroot: root})
	require.NoError(t, err)
	cards := machine.ListDRMCards(m)
	var got []int
	for _, c := range cards {
		got = append(got, c.N)
	}
	assert.Equal(t, []int{1, 2, 10}, got)
	assert.Equal(t, "0000:0a:00.0", cards[2].BusID)
	assert.Equal(t, machine.VendorAMD, cards[2].Vendor)
}

// rocm-smi fills a sysfs GPU by bus id, adds a GPU sysfs did not show (a
// container without /sys) and drops a bus-less card it cannot match.
func TestROCmMergeSMI(t *testing.T) {
	sysfs := []amd.AMDGPU{{Card: 1, SMIIndex: -1, Dev: registry.Device{ID: "0000:05:00.0", PCIBusID: "0000:05:00.0",
		Kind: registry.KindROCm, MemoryBytes: mi300xVRAM}}}
	rep := amd.ROCmSMIReport{Cards: []amd.ROCmSMICard{
		{Index: 0, BusID: "0000:05:00.0", Name: "AMD Instinct MI300X OAM", VRAMTotal: 1, VRAMUsed: -1, NUMANode: -1},
		{Index: 1, BusID: "0000:26:00.0", Name: "AMD Instinct MI300X OAM", VRAMTotal: mi300xVRAM, VRAMUsed: mi300xUsed, NUMANode: 0},
		{Index: 2, Name: "no bus", VRAMTotal: mi300xVRAM, VRAMUsed: -1, NUMANode: -1},
	}}
	got := amd.MergeRocmSMI(sysfs, rep)
	require.Len(t, got, 2)
	assert.Equal(t, "AMD Instinct MI300X OAM", got[0].Dev.Name)
	assert.Equal(t, "rocm-smi", got[0].Dev.Sources["name"])
	assert.Equal(t, mi300xVRAM, got[0].Dev.MemoryBytes, "the sysfs figure stays")
	assert.Equal(t, 0, got[0].SMIIndex)
	assert.Equal(t, "0000:26:00.0", got[1].Dev.PCIBusID)
	assert.Equal(t, mi300xVRAM, got[1].Dev.MemoryBytes)
	assert.Equal(t, "rocm-smi", got[1].Dev.Sources["memory_bytes"])
	require.NotNil(t, got[1].Dev.MemoryFreeBytes)
	assert.Equal(t, mi300xVRAM-mi300xUsed, *got[1].Dev.MemoryFreeBytes)
	require.NotNil(t, got[1].Dev.NUMANode)
	assert.Equal(t, 0, *got[1].Dev.NUMANode)

	// With no sysfs GPU at all, a bus-less card is the only view there is.
	alone := amd.MergeRocmSMI(nil, amd.ROCmSMIReport{Cards: rep.Cards[2:]})
	require.Len(t, alone, 1)
	assert.Equal(t, "rocm-smi:2", alone[0].Dev.ID)
}

// The hostile MI300X's sysfs VRAM is 2^64-1 and its used VRAM -1: both are
// left out with absurd_value warnings naming the attribute.
func TestAMDSysfsAbsurdMemoryIsReported(t *testing.T) {
	opts := fixtureOptions(t, "hostile", nil)
	opts.Backends = []string{amd.BackendROCm}
	opts.NoExec = true // hostile rocm-smi only times out
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 1)
	assert.Zero(t, gpus[0].MemoryBytes)
	assert.Nil(t, gpus[0].MemoryFreeBytes)
	var paths []string
	for _, w := range reg.Warnings {
		if w.Code == registry.WarnAbsurdValue {
			paths = append(paths, w.Path)
		}
	}
	dir := "/sys/class/drm/card1/device/"
	assert.Equal(t, []string{dir + "mem_info_vram_total", dir + "mem_info_vram_used"}, paths)
}

// rocm-smi figures of 1 EiB or negative are left out with absurd_value
// warnings (they were dropped silently).
func TestAMDRocmSMIAbsurdMemoryIsReported(t *testing.T) {
	bin := t.TempDir()
	writeFakeTool(t, bin, "rocm-smi", toolScript(amd.ROCmSMIArgs,
		`{"card0": {"PCI Bus": "0000:05:00.0", "VRAM Total Memory (B)": "1152921504606846976", "VRAM Total Used Memory (B)": "297242624", "Card Series": "AMD Instinct MI300X OAM"}, `+
			`"card1": {"PCI Bus": "0000:26:00.0", "VRAM Total Memory (B)": "206141652992", "VRAM Total Used Memory (B)": "-1", "Card Series": "AMD Instinct MI300X OAM"}}`))
	reg, err := Detect(context.Background(), Options{Sysroot: t.TempDir(), Path: bin, Backends: []string{amd.BackendROCm},
		LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 2)
	assert.Zero(t, gpus[0].MemoryBytes)
	assert.Nil(t, gpus[0].MemoryFreeBytes)
	assert.Equal(t, int64(206141652992), gpus[1].MemoryBytes)
	assert.Nil(t, gpus[1].MemoryFreeBytes)
	assert.Equal(t, []string{"rocm/absurd_value", "rocm/absurd_value"}, warningCodes(reg))
	for _, w := range reg.Warnings {
		assert.Equal(t, "rocm-smi", w.Tool)
	}
}
