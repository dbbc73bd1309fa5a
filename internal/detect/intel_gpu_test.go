package detect

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/intel"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// 49136 MiB: memory_physical_size_byte 51522830336 of a Max 1100 in a public
// xpu-smi `discovery -d 0 -j` capture (see testdata/machines/intel-max-1100-x2).
const max1100Bytes = int64(51522830336)

// The two Max 1100 of the capture, from its `discovery -j` device_list.
var max1100Bus = []string{"0000:29:00.0", "0000:9a:00.0"}

// The public capture has `discovery -j` and `discovery -d 0 -j` but no
// `discovery --dump` (the one run the backend makes), so the fixture's xpu-smi
// fails it: the cards come from sysfs, named from the PCI id table, with no
// memory figure, and the failure is a warning.
func TestIntelGPUFixtureMax1100x2(t *testing.T) {
	reg := detectFixtureBackends(t, "intel-max-1100-x2", nil, "intel_gpu")
	gpus := devicesOfKind(reg, registry.KindIntelGPU)
	require.Len(t, gpus, 2)
	assert.Equal(t, max1100Bus, amdTestBusIDs(gpus))
	for i, g := range gpus {
		assert.Equal(t, registry.DeviceID(registry.KindIntelGPU, i), g.ID)
		assert.Equal(t, "Intel Data Center GPU Max 1100", g.Name)
		assert.Equal(t, "pci-id", g.Sources["name"])
		assert.Zero(t, g.MemoryBytes, "no captured --dump: the memory is not guessed")
		assert.False(t, g.MemoryShared)
		assert.Equal(t, "8086:0bda", g.PCIID)
		assert.Equal(t, []string{"fp32", "fp16", "bf16", "int8"}, g.Quantizations)
		assert.Nil(t, g.NUMANode, "the capture shows no NUMA node")
	}
	assert.Equal(t, []string{"intel_gpu/tool_failed"}, warningCodes(reg))
}

// Without xpu-smi the cards are still found; the memory of a Max 1100 has no
// sourced figure to fall back on, so it is omitted rather than guessed.
func TestIntelGPUFixtureMax1100x2WithoutTool(t *testing.T) {
	opts := fixtureOptions(t, "intel-max-1100-x2", nil)
	opts.Backends = []string{"intel_gpu"}
	opts.NoExec = true
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	gpus := devicesOfKind(reg, registry.KindIntelGPU)
	require.Len(t, gpus, 2)
	for _, g := range gpus {
		assert.Equal(t, "Intel Data Center GPU Max 1100", g.Name)
		assert.Equal(t, "pci-id", g.Sources["name"])
		assert.Zero(t, g.MemoryBytes)
		assert.False(t, g.MemoryShared)
	}
	assert.Empty(t, warningCodes(reg))
}

func TestIntelGPUFixtureXPUSMIFails(t *testing.T) {
	opts := fixtureOptions(t, "intel-max-1100-x2", nil)
	opts.Backends = []string{"intel_gpu"}
	opts.Path = t.TempDir()
	writeFakeTool(t, opts.Path, "xpu-smi", "#!/bin/sh\necho 'Error: Level Zero Initialization Error'\nexit 1\n")
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.Len(t, devicesOfKind(reg, registry.KindIntelGPU), 2)
	assert.Equal(t, []string{"intel_gpu/tool_failed"}, warningCodes(reg))
}

func TestIntelGPUFixtureMeteorLakeIGPU(t *testing.T) {
	reg := detectFixtureBackends(t, "intel-core-ultra-laptop", nil, "intel_gpu")
	gpus := devicesOfKind(reg, registry.KindIntelGPU)
	require.Len(t, gpus, 1)
	g := gpus[0]
	assert.Equal(t, "0000:00:02.0", g.PCIBusID)
	assert.Equal(t, "Intel Arc Graphics (Meteor Lake)", g.Name)
	assert.True(t, g.MemoryShared)
	assert.Zero(t, g.MemoryBytes, "system RAM is not GPU memory")
	assert.Nil(t, g.MemoryFreeBytes)
	assert.Empty(t, warningCodes(reg))
}

func TestIntelGPUParseXPUDump(t *testing.T) {
	out := "Device ID,Device Name,UUID,Driver Version,PCI BDF Address,Memory Physical Size\n" +
		`0,"Intel(R) Data Center GPU Max 1100","00000000-0000-0029-0000-002f0bda8086","I915_23.10.72_PSB_231129.76","0000:29:00.0","49136.00 MiB"` + "\n" +
		`,"Intel(R) Data Center GPU Max 1100","","","0000:9a:00.0",""` + "\n"
	devs, err := intel.ParseXPUDump(out)
	require.NoError(t, err)
	require.Len(t, devs, 2)
	assert.Equal(t, intel.XPUDevice{ID: 0, Name: "Intel(R) Data Center GPU Max 1100", UUID: "00000000-0000-0029-0000-002f0bda8086",
		Driver: "I915_23.10.72_PSB_231129.76", BusID: "0000:29:00.0", MemoryBytes: max1100Bytes}, devs[0])
	assert.Equal(t, -1, devs[1].ID, "a device in bad state has no id")
	assert.Zero(t, devs[1].MemoryBytes)

	// Columns are found by label: another order parses the same.
	devs, err = intel.ParseXPUDump("PCI BDF Address,Device ID,Memory Physical Size\n\"0000:29:00.0\",3,\"1024.50 MiB\"\n")
	require.NoError(t, err)
	require.Len(t, devs, 1)
	assert.Equal(t, 3, devs[0].ID)
	assert.Equal(t, int64(1024.5*(1<<20)), devs[0].MemoryBytes)

	_, err = intel.ParseXPUDump("")
	assert.Error(t, err)
	_, err = intel.ParseXPUDump("Device ID,Device Name\n0,\"x\"\n")
	assert.Error(t, err, "no BDF column: nothing can be matched")
}

func TestIntelGPUParseMiB(t *testing.T) {
	type result struct {
		bytes  int64
		absurd bool
	}
	tests := map[string]result{"49136.00 MiB": {max1100Bytes, false}, "0.00 MiB": {}, "NaN MiB": {}, "": {}, "12 GiB": {},
		"-5 MiB": {0, true}, "Inf MiB": {0, true}, "1e30 MiB": {0, true}, "99999999999999999999.00 MiB": {0, true}}
	for in, want := range tests {
		b, absurd := intel.ParseXPUMiB(in)
		assert.Equal(t, want, result{b, absurd}, in)
	}
}

// xpuDumpRow is one `discovery --dump 1,2,4,8,11,16` row in the shape
// of intel/xpumanager doc/smi_user_guide.md (https://github.com/intel/xpumanager), with the values of the intel-max-1100-x2 capture.
func xpuDumpRow(id int, bus string) string {
	return fmt.Sprintf(`%d,"Intel(R) Data Center GPU Max 1100","00000000-0000-0029-0000-002f0bda8086","I915_23.10.72_PSB_231129.76","%s","49136.00 MiB"`+"\n", id, bus)
}

// xpuSMIScript prints a dump header and the given rows.
func xpuSMIScript(rows ...string) string {
	return "#!/bin/sh\ncat <<'EOF'\nDevice ID,Device Name,UUID,Driver Version,PCI BDF Address,Memory Physical Size\n" +
		strings.Join(rows, "") + "EOF\n"
}

// xpu-smi's PCI addresses are believed only where sysfs shows an Intel
// function: a row naming an AMD or NVIDIA function, or an address the PCI
// tree lacks, is reported and dropped (the hostile machine turned an AMD
// MI300X into "intel_gpu:0").
func TestIntelGPUXPURowsNeedAnIntelFunction(t *testing.T) {
	root := t.TempDir()
	for _, p := range []fakePCI{
		{Addr: "0000:18:00.0", Vendor: machine.VendorNVIDIA, Device: 0x2330, Accel: -1},
		{Addr: "0000:1c:00.0", Vendor: machine.VendorAMD, Device: 0x74a1, Accel: -1},
		{Addr: "0000:29:00.0", Vendor: machine.VendorIntel, Device: 0x0bda, Accel: -1},
	} {
		writePCIFunction(t, root, p)
	}
	bin := t.TempDir()
	writeFakeTool(t, bin, "xpu-smi", xpuSMIScript(xpuDumpRow(0, "0000:18:00.0"), xpuDumpRow(1, "0000:1c:00.0"),
		xpuDumpRow(2, "0000:29:00.0"), xpuDumpRow(3, "0000:77:00.0")))
	reg, err := Detect(context.Background(), Options{Sysroot: root, Path: bin, Backends: []string{intel.BackendIntelGPU},
		LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)

	gpus := devicesOfKind(reg, registry.KindIntelGPU)
	require.Len(t, gpus, 1)
	assert.Equal(t, "0000:29:00.0", gpus[0].PCIBusID)
	assert.Equal(t, max1100Bytes, gpus[0].MemoryBytes)
	assert.Equal(t, []string{"intel_gpu/conflicting_sources", "intel_gpu/conflicting_sources",
		"intel_gpu/conflicting_sources"}, warningCodes(reg))
	for i, bus := range []string{"0000:18:00.0", "0000:1c:00.0", "0000:77:00.0"} {
		assert.Contains(t, reg.Warnings[i].Message, bus)
		assert.Equal(t, "xpu-smi", reg.Warnings[i].Tool)
	}
}

// Without any PCI tree (a container without /sys) nothing contradicts
// xpu-smi, so its rows stand.
func TestIntelGPUXPURowsWithoutPCITree(t *testing.T) {
	bin := t.TempDir()
	writeFakeTool(t, bin, "xpu-smi", xpuSMIScript(xpuDumpRow(0, "0000:29:00.0")))
	reg, err := Detect(context.Background(), Options{Sysroot: t.TempDir(), Path: bin, Backends: []string{intel.BackendIntelGPU},
		LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	gpus := devicesOfKind(reg, registry.KindIntelGPU)
	require.Len(t, gpus, 1)
	assert.Equal(t, "0000:29:00.0", gpus[0].PCIBusID)
	assert.Empty(t, warningCodes(reg))
}

// The hostile xpu-smi's memory figures (1e20 MiB, a negative one) are left
// out with absurd_value warnings naming the tool.
func TestIntelGPUXPUAbsurdMemoryIsReported(t *testing.T) {
	root := t.TempDir()
	for _, addr := range []string{"0000:29:00.0", "0000:3a:00.0"} {
		writePCIFunction(t, root, fakePCI{Addr: addr, Vendor: machine.VendorIntel, Device: 0x0bda, Accel: -1})
	}
	bin := t.TempDir()
	writeFakeTool(t, bin, "xpu-smi", xpuSMIScript(
		`0,"Intel(R) Data Center GPU Max 1100","u0","I915","0000:29:00.0","99999999999999999999.00 MiB"`+"\n",
		`1,"Intel(R) Data Center GPU Max 1100","u1","I915","0000:3a:00.0","-49136.00 MiB"`+"\n"))
	reg, err := Detect(context.Background(), Options{Sysroot: root, Path: bin, Backends: []string{intel.BackendIntelGPU},
		LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	gpus := devicesOfKind(reg, registry.KindIntelGPU)
	require.Len(t, gpus, 2)
	for _, g := range gpus {
		assert.Zero(t, g.MemoryBytes)
	}
	assert.Equal(t, []string{"intel_gpu/absurd_value", "intel_gpu/absurd_value"}, warningCodes(reg))
	for _, w := range reg.Warnings {
		assert.Equal(t, "xpu-smi", w.Tool)
	}
}
