package detect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/host"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// hostBackends are the backends of this file's fixtures: the CPU, NUMA,
// NVIDIA and InfiniBand ones. Restricting to them keeps these tests about
// these backends while others are written beside them.
var hostBackends = []string{host.BackendCPU, host.BackendNUMA, nvidia.BackendCUDA, host.BackendIB}

func detectHost(t *testing.T, host string, env map[string]string) *registry.Registry {
	t.Helper()
	opts := fixtureOptions(t, host, env)
	opts.Backends = hostBackends
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	require.NoError(t, reg.Validate())
	return reg
}

func ids(devs []registry.Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.ID
	}
	return out
}

func busIDs(devs []registry.Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.PCIBusID
	}
	return out
}

func intp(v int) *int { return &v }

const h100Bytes = 81559 << 20 // memory.total 81559 MiB (testdata/machines/dgx-h100)

var dgxBuses = []string{"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
	"0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"}

func TestFixtureDGXH100(t *testing.T) {
	reg := detectHost(t, "dgx-h100", nil)
	assert.Empty(t, warningCodes(reg))

	cpus := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpus, 1)
	cpu := cpus[0]
	assert.Equal(t, "cpu:0", cpu.ID)
	assert.Equal(t, "Intel(R) Xeon(R) Platinum 8480C", cpu.Name)
	assert.Equal(t, "intel", cpu.Vendor)
	assert.Equal(t, 112, cpu.Cores)
	assert.Equal(t, 224, cpu.Threads)
	assert.Equal(t, int64(2113429932)*1024, cpu.MemoryBytes)
	require.NotNil(t, cpu.MemoryFreeBytes)
	assert.Equal(t, int64(2050781250)*1024, *cpu.MemoryFreeBytes)

	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 8)
	assert.Equal(t, dgxBuses, busIDs(gpus))
	for i, g := range gpus {
		assert.Equal(t, registry.DeviceID(registry.KindCUDA, i), g.ID)
		assert.Equal(t, "NVIDIA H100 80GB HBM3", g.Name)
		assert.Equal(t, "nvidia", g.Vendor)
		assert.Equal(t, int64(h100Bytes), g.MemoryBytes)
		require.NotNil(t, g.MemoryFreeBytes)
		assert.Equal(t, int64(81106)<<20, *g.MemoryFreeBytes)
		assert.Equal(t, "9.0", g.ComputeCapability)
		assert.Equal(t, "565.57.01", g.DriverVersion)
		assert.InDelta(t, 3350, g.MemoryBandwidthGBs, 0.01)
		assert.Equal(t, []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"}, g.Quantizations)
		assert.Equal(t, &registry.MIG{Mode: "disabled"}, g.MIG)
		assert.Equal(t, "10de:2330", g.PCIID)
		assert.Equal(t, intp(map[bool]int{true: 0, false: 1}[i < 4]), g.NUMANode, "GPU %d", i)
		assert.Equal(t, "nvidia-smi", g.Sources["memory_bytes"])
		assert.Equal(t, "datasheet", g.Sources["memory_bandwidth_gb_s"])
		assert.Empty(t, g.VisibleAs)
	}
	assert.Equal(t, "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1", gpus[0].UUID)

	require.Len(t, reg.SystemIO.NUMANodes, 2)
	assert.Equal(t, registry.NUMANode{ID: 0, MemoryBytes: 1056714966 * 1024, CPUs: "0-55,112-167"}, reg.SystemIO.NUMANodes[0])
	assert.Equal(t, registry.NUMANode{ID: 1, MemoryBytes: 1056714966 * 1024, CPUs: "56-111,168-223"}, reg.SystemIO.NUMANodes[1])

	var nvs, ib, roce []registry.Interconnect
	for _, ic := range reg.SystemIO.Interconnects {
		switch ic.Kind {
		case registry.LinkNVSwitch:
			nvs = append(nvs, ic)
		case registry.LinkInfiniBand:
			ib = append(ib, ic)
		case registry.LinkRoCE:
			roce = append(roce, ic)
		default:
			t.Errorf("unexpected interconnect %+v", ic)
		}
	}
	require.Len(t, nvs, 1, "one NVSwitch domain, not 28 NVLink pairs")
	assert.Equal(t, ids(gpus), nvs[0].Devices)
	assert.Equal(t, 18, nvs[0].Links)
	assert.InDelta(t, 900, nvs[0].BandwidthGBs, 0.01)

	require.Len(t, ib, 8, "mlx5_0..7 active; mlx5_9 is down and skipped")
	for i, ic := range ib {
		assert.Equal(t, "mlx5_"+string(rune('0'+i)), ic.Name)
		assert.InDelta(t, 50, ic.BandwidthGBs, 0.001) // 400 Gb/s / 8
		assert.Equal(t, []string{}, ic.Devices)
	}
	require.Len(t, roce, 1)
	assert.Equal(t, "mlx5_8", roce[0].Name)
	assert.InDelta(t, 25, roce[0].BandwidthGBs, 0.001)
}

func TestFixtureDGXH100Visibility(t *testing.T) {
	tests := []struct {
		name     string
		value    string
		wantBus  []string
		warnings []string
	}{
		{"indices reorder", "2,0", []string{dgxBuses[2], dgxBuses[0]}, []string{"cuda/hidden_by_env"}},
		{"uuid prefix", "GPU-7c3cadbd", []string{dgxBuses[1]}, []string{"cuda/hidden_by_env"}},
		{"full uuid", "GPU-33135771-a848-ece1-b61e-489e221d663c", []string{dgxBuses[7]}, []string{"cuda/hidden_by_env"}},
		{"empty hides all", "", nil, []string{"cuda/hidden_by_env"}},
		{"minus one hides all", "-1", nil, []string{"cuda/hidden_by_env"}},
		{"none hides all", "none", nil, []string{"cuda/hidden_by_env"}},
		{"stops at -1", "0,2,-1,1", []string{dgxBuses[0], dgxBuses[2]}, []string{"cuda/hidden_by_env"}},
		{"stops at invalid index", "3,9,1", []string{dgxBuses[3]}, []string{"cuda/visibility_invalid", "cuda/hidden_by_env"}},
		{"unknown uuid", "GPU-ffffffff", nil, []string{"cuda/visibility_invalid", "cuda/hidden_by_env"}},
		{"ambiguous prefix", "GPU-", nil, []string{"cuda/visibility_invalid", "cuda/hidden_by_env"}},
		{"duplicate", "1,1", []string{dgxBuses[1]}, []string{"cuda/visibility_invalid", "cuda/hidden_by_env"}},
		{"all listed", "0,1,2,3,4,5,6,7", dgxBuses, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := detectHost(t, "dgx-h100", map[string]string{nvidia.EnvCUDAVis: tc.value})
			gpus := devicesOfKind(reg, registry.KindCUDA)
			require.Len(t, gpus, len(tc.wantBus))
			for i, g := range gpus {
				assert.Equal(t, tc.wantBus[i], g.PCIBusID)
				assert.Equal(t, registry.DeviceID(registry.KindCUDA, i), g.ID)
				assert.Equal(t, string(rune('0'+i)), g.VisibleAs)
			}
			if tc.warnings == nil {
				assert.Empty(t, warningCodes(reg))
			} else {
				assert.Equal(t, tc.warnings, warningCodes(reg))
			}
			// The NVSwitch domain holds exactly the visible GPUs.
			var domain []string
			for _, ic := range reg.SystemIO.Interconnects {
				if ic.Kind == registry.LinkNVSwitch {
					domain = ic.Devices
				}
			}
			if len(gpus) >= 2 {
				assert.Equal(t, ids(gpus), domain)
			} else {
				assert.Empty(t, domain)
			}
		})
	}
}

// Two L40S of a public akash-network/provider-configs capture
// (testdata/machines/two-nvidia/README.md): nvidia-smi memory, [N/A] fields
// unknown, topo -m not captured.
func TestFixtureTwoNVIDIA(t *testing.T) {
	reg := detectHost(t, "two-nvidia", nil)
	// topo -m was not captured, so it fails; nvlink -s, its fallback, was
	// not captured either and fails too.
	assert.Equal(t, []string{"cuda/tool_failed", "cuda/tool_failed"}, warningCodes(reg))
	assert.Contains(t, reg.Warnings[0].Message, "topo -m")
	assert.Contains(t, reg.Warnings[1].Message, "nvlink -s")

	cpus := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpus, 1)
	assert.Empty(t, cpus[0].Name, "the capture has no /proc/cpuinfo")

	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 2)
	assert.Equal(t, []string{"cuda:0", "cuda:1"}, ids(gpus))
	assert.Equal(t, []string{"0000:01:00.0", "0000:91:00.0"}, busIDs(gpus))
	for _, g := range gpus {
		assert.Equal(t, "NVIDIA L40S", g.Name)
		assert.Equal(t, int64(46068)<<20, g.MemoryBytes)
		assert.Equal(t, "nvidia-smi", g.Sources["memory_bytes"])
		assert.Nil(t, g.MemoryFreeBytes, "[N/A]: not captured")
		assert.Empty(t, g.UUID, "[N/A]: not captured")
		assert.Equal(t, "8.9", g.ComputeCapability)
		assert.Equal(t, []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"}, g.Quantizations)
		assert.Nil(t, g.MIG, "[N/A] MIG mode is unknown, not disabled")
		assert.Equal(t, "595.71.05", g.DriverVersion)
		assert.Equal(t, "10de:26b9", g.PCIID)
		assert.Nil(t, g.NUMANode)
	}
	assert.Empty(t, reg.SystemIO.NUMANodes)
	assert.Empty(t, reg.SystemIO.Interconnects)
}

func TestFixtureNVIDIADriverNoTool(t *testing.T) {
	reg := detectHost(t, "nvidia-driver-no-tool", nil)
	assert.Equal(t, []string{"cuda/fallback"}, warningCodes(reg))
	assert.Contains(t, reg.Warnings[0].Message, "not installed")

	// A Colab VM of 2018 (testdata/machines/nvidia-driver-no-tool/README.md):
	// one K80 known only from procfs and sysfs.
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	g := gpus[0]
	assert.Equal(t, "0000:00:04.0", g.PCIBusID)
	assert.Equal(t, "GPU-be0a1aaf-c92d-ce5e-6d53-1f064e6842f6", g.UUID)
	assert.Equal(t, "Tesla K80", g.Name)
	assert.Equal(t, "procfs", g.Sources["name"])
	assert.True(t, g.Available)
	assert.Empty(t, g.DriverVersion, "no /proc/driver/nvidia/version in the capture")
	assert.Nil(t, g.MemoryFreeBytes)
	assert.Equal(t, "10de:102d", g.PCIID)
	assert.Empty(t, reg.SystemIO.Interconnects)

	cpus := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpus, 1)
	assert.Equal(t, "Intel(R) Xeon(R) CPU @ 2.30GHz", cpus[0].Name)
	assert.Equal(t, 1, cpus[0].Cores)
	assert.Equal(t, 2, cpus[0].Threads)

	// The fallback honours CUDA_VISIBLE_DEVICES too (UUID from procfs).
	reg = detectHost(t, "nvidia-driver-no-tool", map[string]string{nvidia.EnvCUDAVis: "GPU-be0a1aaf"})
	gpus = devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	assert.Equal(t, "0000:00:04.0", gpus[0].PCIBusID)
	assert.Equal(t, []string{"cuda/fallback"}, warningCodes(reg))
	reg = detectHost(t, "nvidia-driver-no-tool", map[string]string{nvidia.EnvCUDAVis: "GPU-a1b2"})
	assert.Empty(t, devicesOfKind(reg, registry.KindCUDA))
	assert.Equal(t, []string{"cuda/fallback", "cuda/visibility_invalid", "cuda/hidden_by_env"}, warningCodes(reg))
}

// A GCE VM whose NVIDIA module failed to build: nvidia-smi is installed but
// cannot reach a driver, the V100 is bound to none
// (testdata/machines/nvidia-tool-fails/README.md).
func TestFixtureNVIDIAToolFails(t *testing.T) {
	reg := detectHost(t, "nvidia-tool-fails", nil)
	assert.Equal(t, []string{"cuda/tool_failed", "cuda/fallback"}, warningCodes(reg))
	w := reg.Warnings[0]
	require.NotNil(t, w.ExitCode)
	assert.Equal(t, 9, *w.ExitCode)
	assert.Equal(t, "nvidia-smi", w.Tool)
	assert.Contains(t, w.Message, "couldn't communicate with the NVIDIA driver")
	assert.Contains(t, reg.Warnings[1].Message, "failed")

	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	g := gpus[0]
	assert.Equal(t, "cuda:0", g.ID)
	assert.Equal(t, "Tesla V100-SXM2-16GB", g.Name, "from the PCI id 10de:1db1")
	assert.Equal(t, "pci-id-table", g.Sources["name"])
	assert.Equal(t, "0000:00:04.0", g.PCIBusID)
	assert.Empty(t, g.DriverVersion, "no driver loaded")
	assert.Nil(t, g.NUMANode)
	// No driver is bound to the GPU: seen, not usable, and says why (issue
	// 13 item 4).
	assert.False(t, g.Available)
	assert.Equal(t, "no driver bound", g.UnavailableReason)

	cpus := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpus, 1)
	assert.Empty(t, cpus[0].Name, "the capture has no /proc/cpuinfo")
}

// The same failure with the GPU bound to the nvidia driver (the module
// loaded, nvidia-smi still unable to reach it): the reason is nvidia-smi's.
func TestNVIDIAUnreachableDriverMakesBoundGPUUnavailable(t *testing.T) {
	root := detecttest.CopyFixtureRoot(t, "nvidia-tool-fails")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/bus/pci/drivers/nvidia"), 0o755))
	require.NoError(t, os.Symlink("../../../bus/pci/drivers/nvidia", filepath.Join(root, "sys/devices/pci0000:00/0000:00:04.0/driver")))
	opts := fixtureOptions(t, "nvidia-tool-fails", nil)
	opts.Sysroot = root
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	assert.False(t, gpus[0].Available)
	assert.Contains(t, gpus[0].UnavailableReason, "couldn't communicate with the NVIDIA driver")
}

// TestFixtureCPUOnly runs every registered backend: a server without an
// accelerator (a real two-socket Xeon L5640 snapshot: 82 PCI functions, a
// Matrox BMC VGA) has exactly one device and nothing to warn about.
func TestFixtureCPUOnly(t *testing.T) {
	reg := detectFixture(t, "cpu-only", nil)
	require.NoError(t, reg.Validate())
	assert.Empty(t, warningCodes(reg))
	require.Len(t, reg.Devices, 1)
	cpu := reg.Devices[0]
	assert.Equal(t, "cpu:0", cpu.ID)
	assert.Equal(t, registry.KindCPU, cpu.Kind)
	// The ghw snapshot's /proc/cpuinfo model name, its runs of spaces
	// collapsed (host.ParseCPUInfo).
	assert.Equal(t, "Intel(R) Xeon(R) CPU L5640 @ 2.27GHz", cpu.Name)
	assert.Equal(t, 12, cpu.Cores)
	assert.Equal(t, 24, cpu.Threads)
	assert.Equal(t, int64(65921280)*1024, cpu.MemoryBytes)
	require.NotNil(t, cpu.MemoryFreeBytes)
	assert.Equal(t, int64(63844924)*1024, *cpu.MemoryFreeBytes)
	assert.Equal(t, []string{"fp32", "fp16", "bf16", "int8", "int4"}, cpu.Quantizations)
	assert.Equal(t, []registry.NUMANode{
		{ID: 0, MemoryBytes: 33771839488, CPUs: "0,2,4,6,8,10,12,14,16,18,20,22"},
		{ID: 1, MemoryBytes: 33731551232, CPUs: "1,3,5,7,9,11,13,15,17,19,21,23"},
	}, reg.SystemIO.NUMANodes)
	assert.Empty(t, reg.SystemIO.Interconnects)
}

// The MIG UUIDs of the nvidia-mig capture (masked by its collector: zeroed
// but for the instance number; testdata/machines/nvidia-mig/README.md).
var migInstances = []string{"MIG-00000000-0000-0000-0000-000000000000", "MIG-00000001-0000-0000-0000-000000000001",
	"MIG-00000002-0000-0000-0000-000000000002", "MIG-00000003-0000-0000-0000-000000000003"}

func TestFixtureNVIDIAMIG(t *testing.T) {
	reg := detectHost(t, "nvidia-mig", nil)
	assert.Empty(t, warningCodes(reg))
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 5, "the parent GPU and its four MIG instances (nvidia_mig_test.go)")
	g := gpus[0]
	assert.Equal(t, "cuda:0", g.ID)
	assert.Equal(t, "0000:00:09.0", g.PCIBusID)
	assert.Equal(t, int64(h100Bytes), g.MemoryBytes)
	require.NotNil(t, g.MemoryFreeBytes)
	assert.Equal(t, int64(81022)<<20, *g.MemoryFreeBytes)
	assert.Equal(t, "590.48.01", g.DriverVersion)
	assert.Equal(t, "GPU-00000000-0000-0000-0000-000000000000", g.UUID)
	assert.Equal(t, "9.0", g.ComputeCapability)
	assert.Nil(t, g.NUMANode, "the capture says GPU NUMA ID N/A; no numa_node")
	assert.Equal(t, &registry.MIG{Mode: "enabled", Children: migInstances}, g.MIG)
	assert.Empty(t, reg.SystemIO.Interconnects)
	assert.Empty(t, reg.SystemIO.NUMANodes, "the capture has no NUMA information")
	cpus := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpus, 1)
	assert.Zero(t, cpus[0].Cores, "the capture has no /proc/cpuinfo")
	assert.Zero(t, cpus[0].MemoryBytes, "the capture has no /proc/meminfo")

	// A MIG instance in CUDA_VISIBLE_DEVICES is visible alone; the other
	// three are hidden, the parent is kept unavailable beside it.
	reg = detectHost(t, "nvidia-mig", map[string]string{nvidia.EnvCUDAVis: migInstances[2]})
	assert.Equal(t, []string{"cuda/hidden_by_env"}, warningCodes(reg))
	gpus = devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 2)
	assert.False(t, gpus[0].Available)
	assert.Equal(t, migInstances[2], gpus[1].UUID)
	assert.Equal(t, "0", gpus[1].VisibleAs)
}
