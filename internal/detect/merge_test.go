package detect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/aws"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/intel"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestNormalizeBusID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"00000000:18:00.0", "0000:18:00.0"},     // nvidia-smi's 8-digit domain
		{"0000:18:00.0", "0000:18:00.0"},         // sysfs form unchanged
		{"18:00.0", "0000:18:00.0"},              // no domain: domain 0
		{"0000:1C:00.0", "0000:1c:00.0"},         // upper case
		{" 0000:18:00.0\n", "0000:18:00.0"},      // spaces
		{"10000:e1:00.0", "10000:e1:00.0"},       // Intel VMD domain: 5 digits kept
		{"00010000:e1:00.0", "10000:e1:00.0"},    // VMD domain zero-padded to 8
		{"0001:00:02.0", "0001:00:02.0"},         // 4-digit non-zero domain
		{"00000001:00:02.0", "0001:00:02.0"},     // padded non-zero domain
		{"abcdef01:00:02.0", "abcdef01:00:02.0"}, // 8 significant digits
		{"not-a-bus-id", "not-a-bus-id"},         // left alone
	} {
		assert.Equal(t, tc.want, machine.NormalizeBusID(tc.in), tc.in)
	}
}

// toolScript is a fake vendor tool that prints out for argv and fails like a
// bad option for anything else.
func toolScript(argv []string, out string) string {
	return "#!/bin/sh\nif [ \"$*\" = \"" + strings.Join(argv, " ") + "\" ]; then\ncat <<'EOF'\n" + out + "\nEOF\nexit 0\nfi\n" +
		"echo \"unrecognized arguments: $*\" >&2\nexit 2\n"
}

// Every backend that takes PCI addresses from a vendor tool ignores a row at
// an address where sysfs shows another vendor's function (the hostile
// machine's xpu-smi listed an AMD and an NVIDIA GPU), with a
// conflicting_sources warning, and keeps the row at its own vendor's function.
func TestToolRowsAtAnotherVendorsFunctionAreIgnored(t *testing.T) {
	const own, foreign = "0000:10:00.0", "0000:20:00.0"
	for _, tc := range []struct {
		backend, tool string
		kind          registry.Kind
		ownFn         fakePCI
		foreignFn     fakePCI
		argv          []string
		out           string
	}{
		{nvidia.BackendCUDA, nvidia.ToolNvidiaSMI, registry.KindCUDA,
			fakePCI{Vendor: machine.VendorNVIDIA, Device: 0x2684}, fakePCI{Vendor: machine.VendorAMD, Device: 0x74a1},
			[]string{"--query-gpu=" + strings.Join(nvidia.NVQueryFields, ","), "--format=csv,noheader,nounits"},
			"0, NVIDIA GeForce RTX 4090, GPU-5b8e2c1a-0f3d-4a6e-9c27-81d4f0a3b6e5, 00000000:10:00.0, 24564, 23980, 550.54.15, 8.9, [N/A], [N/A], [N/A], [N/A], [N/A]\n" +
				"1, NVIDIA GeForce RTX 3060, GPU-c3a17f2e-6d84-4b09-a5f1-2e7b9c0d4a68, 00000000:20:00.0, 12288, 11878, 550.54.15, 8.6, [N/A], [N/A], [N/A], [N/A], [N/A]"},
		{amd.BackendROCm, "rocm-smi", registry.KindROCm,
			fakePCI{Vendor: machine.VendorAMD, Device: 0x74a1}, fakePCI{Vendor: machine.VendorNVIDIA, Device: 0x2330},
			amd.ROCmSMIArgs,
			`{"card0": {"PCI Bus": "0000:10:00.0", "VRAM Total Memory (B)": "206141652992", "VRAM Total Used Memory (B)": "297242624", "Card Series": "AMD Instinct MI300X OAM"}, ` +
				`"card1": {"PCI Bus": "0000:20:00.0", "VRAM Total Memory (B)": "206141652992", "VRAM Total Used Memory (B)": "297242624", "Card Series": "AMD Instinct MI300X OAM"}}`},
		{intel.BackendGaudi, "hl-smi", registry.KindGaudi,
			fakePCI{Vendor: machine.VendorHabana, Device: 0x1020}, fakePCI{Vendor: machine.VendorIntel, Device: 0x0bda},
			intel.HLSMIArgs(),
			"0, HL-225, 0000:10:00.0, 98304, 97536, 1.11.0-e6eb0fd, 01P0-HL2080A0-15-TNBS10-20-07-10\n" +
				"1, HL-225, 0000:20:00.0, 98304, 97536, 1.11.0-e6eb0fd, 01P0-HL2080A0-15-TNBS11-20-07-11"},
		{aws.BackendNeuron, "neuron-ls", registry.KindNeuron,
			fakePCI{Vendor: machine.VendorAmazon, Device: 0x7264}, fakePCI{Vendor: machine.VendorNVIDIA, Device: 0x2330},
			aws.NeuronLSArgs,
			`[{"instance_type": "inf2.48xlarge", "neuron_device": 0, "bdf": "0000:10:00.0", "numa_node": "0", "connected_to": [1], "nc_count": 2, "memory_size": 34359738368}, ` +
				`{"instance_type": "inf2.48xlarge", "neuron_device": 1, "bdf": "0000:20:00.0", "numa_node": "0", "connected_to": [0], "nc_count": 2, "memory_size": 34359738368}]`},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			root := t.TempDir()
			tc.ownFn.Addr, tc.ownFn.Accel = own, -1
			tc.foreignFn.Addr, tc.foreignFn.Accel = foreign, -1
			writePCIFunction(t, root, tc.ownFn)
			writePCIFunction(t, root, tc.foreignFn)
			bin := t.TempDir()
			writeFakeTool(t, bin, tc.tool, toolScript(tc.argv, tc.out))
			reg, err := Detect(context.Background(), Options{Sysroot: root, Path: bin, Backends: []string{tc.backend},
				LookupEnv: func(string) (string, bool) { return "", false }})
			require.NoError(t, err)

			devs := devicesOfKind(reg, tc.kind)
			require.Len(t, devs, 1, "%+v", reg.Warnings)
			assert.Equal(t, own, devs[0].PCIBusID)
			assert.Empty(t, reg.SystemIO.Interconnects, "no link to an ignored row")
			require.Equal(t, []string{tc.backend + "/" + registry.WarnConflictingSources}, warningCodes(reg))
			assert.Contains(t, reg.Warnings[0].Message, foreign)
			assert.Equal(t, tc.tool, reg.Warnings[0].Tool)
		})
	}
}

// sysfsVendors is a vendorAt over a fixed map of addresses.
func sysfsVendors(at map[string]int) func(string) (int, bool) {
	return func(bus string) (int, bool) { v, ok := at[bus]; return v, ok }
}

// Devices of different vendors at one bus id are never merged: the one whose
// vendor sysfs shows there is kept as it is, the other dropped with a
// conflicting_sources warning (the hostile machine's xpu-smi rows absorbed an
// MI300X and gave an H100 driver_version "I915").
func TestMergeByBusIDNeverMergesVendors(t *testing.T) {
	const amdBus, nvBus, unseen = "0000:1c:00.0", "0000:18:00.0", "0000:77:00.0"
	rocm := registry.Device{ID: "rocm|" + amdBus, Kind: registry.KindROCm, Vendor: "amd", PCIBusID: amdBus,
		Name: "AMD Instinct MI300X OAM", MemoryBytes: 206141652992}
	xpuAtAMD := registry.Device{ID: "intel_gpu|xpu:" + amdBus, Kind: registry.KindIntelGPU, Vendor: "intel", PCIBusID: amdBus,
		Name: "Intel(R) Data Center GPU Max 1100", DriverVersion: "I915", UUID: "u"}
	cuda := registry.Device{ID: "cuda|" + nvBus, Kind: registry.KindCUDA, Vendor: "nvidia", PCIBusID: nvBus, Name: "NVIDIA H100"}
	xpuAtNV := xpuAtAMD
	xpuAtNV.ID, xpuAtNV.PCIBusID = "intel_gpu|xpu:"+nvBus, nvBus
	vulkanAMD := registry.Device{ID: "vulkan|0", Kind: registry.KindVulkan, Vendor: "amd", PCIBusID: unseen, Name: "AMD Radeon"}
	cudaUnseen := registry.Device{ID: "cuda|" + unseen, Kind: registry.KindCUDA, Vendor: "nvidia", PCIBusID: unseen}
	vulkanNV := registry.Device{ID: "vulkan|1", Kind: registry.KindVulkan, Vendor: "nvidia", PCIBusID: nvBus,
		DriverVersion: "565.77", PCIID: "10de:2330"}
	gaudi := registry.Device{ID: "gaudi|hl0", Kind: registry.KindGaudi, Vendor: "intel", PCIBusID: amdBus, PCIID: "1da3:1020"}
	sysfs := sysfsVendors(map[string]int{amdBus: machine.VendorAMD, nvBus: machine.VendorNVIDIA})

	for _, tc := range []struct {
		name     string
		in       []registry.Device
		want     []registry.Device
		warnedBy []string // backend of each conflicting_sources warning
	}{
		{"sysfs decides, native first", []registry.Device{rocm, xpuAtAMD}, []registry.Device{rocm}, []string{"intel_gpu"}},
		{"sysfs decides, impostor first", []registry.Device{xpuAtAMD, rocm}, []registry.Device{rocm}, []string{"intel_gpu"}},
		{"nothing filled from another vendor", []registry.Device{cuda, xpuAtNV}, []registry.Device{cuda}, []string{"intel_gpu"}},
		{"same vendor names, other PCI vendor", []registry.Device{xpuAtAMD, gaudi}, []registry.Device{xpuAtAMD}, []string{"gaudi"}},
		{"no sysfs: the native kind wins", []registry.Device{vulkanAMD, cudaUnseen}, []registry.Device{cudaUnseen}, []string{"vulkan"}},
		{"same vendor still merges", []registry.Device{cuda, vulkanNV}, []registry.Device{func() registry.Device {
			d := cuda
			d.DriverVersion, d.PCIID = "565.77", "10de:2330"
			return d
		}()}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registry.New()
			reg.Devices = append(reg.Devices, tc.in...)
			mergeByBusID(reg, sysfs)
			assert.Equal(t, tc.want, reg.Devices)
			var by []string
			for _, w := range reg.Warnings {
				assert.Equal(t, registry.WarnConflictingSources, w.Code)
				assert.Contains(t, w.Message, tc.in[0].PCIBusID)
				by = append(by, w.Backend)
			}
			assert.Equal(t, tc.warnedBy, by)
		})
	}
}

// The hostile machine's xpu-smi names an AMD MI300X and an NVIDIA H100 as
// Intel GPUs: neither becomes an Intel GPU, neither is filled from its row.
func TestHostileXPUSMIRowsDoNotBecomeIntelGPUs(t *testing.T) {
	opts := fixtureOptions(t, "hostile", nil)
	src := opts.Path
	opts.Path = t.TempDir()
	b, err := os.ReadFile(filepath.Join(src, "xpu-smi"))
	require.NoError(t, err)
	writeFakeTool(t, opts.Path, "xpu-smi", string(b))
	opts.Backends = []string{nvidia.BackendCUDA, amd.BackendROCm, intel.BackendIntelGPU}
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)

	assert.Empty(t, devicesOfKind(reg, registry.KindIntelGPU))
	rocm := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, rocm, 1)
	assert.Equal(t, "amd", rocm[0].Vendor)
	assert.Equal(t, "1002:74a1", rocm[0].PCIID)
	for _, d := range devicesOfKind(reg, registry.KindCUDA) {
		assert.NotEqual(t, "I915", d.DriverVersion)
		assert.NotEqual(t, "u", d.UUID)
	}
	assert.Contains(t, warningCodes(reg), intel.BackendIntelGPU+"/"+registry.WarnConflictingSources)
}
