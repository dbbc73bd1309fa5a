package detect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/apple"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// m3ProMemory is hw.memsize of the macbook-m3-pro fixture: 36 GB.
const m3ProMemory = int64(36) << 30

func TestAppleM3ProFixture(t *testing.T) {
	reg := detectFixture(t, "macbook-m3-pro", nil)
	assert.Empty(t, reg.Warnings)

	gpus := devicesOfKind(reg, registry.KindMetal)
	require.Len(t, gpus, 1)
	g := gpus[0]
	assert.Equal(t, "metal:0", g.ID)
	assert.Equal(t, "Apple M3 Pro", g.Name)
	assert.Equal(t, "apple", g.Vendor)
	assert.True(t, g.Available)
	assert.Equal(t, 18, g.Cores)
	assert.Equal(t, m3ProMemory, g.MemoryBytes)
	assert.True(t, g.MemoryShared, "unified memory is the host's RAM")
	assert.Equal(t, int64(24)<<30, g.MemoryUsableBytes, "Metal's working set: 2/3 of 36 GiB")
	assert.Nil(t, g.MemoryFreeBytes)
	assert.InDelta(t, 150.0, g.MemoryBandwidthGBs, 1e-9) // record "Apple M3 Pro"
	assert.Equal(t, "Metal 3", g.ComputeCapability)
	assert.Equal(t, []string{"fp32", "fp16", "int8", "int4"}, g.Quantizations)
	assert.Equal(t, map[string]string{"name": "system_profiler", "cores": "system_profiler",
		"memory_bytes": "sysctl", "memory_usable_bytes": apple.SourceWorkingSet, "compute_capability": "system_profiler",
		"memory_bandwidth_gb_s": "datasheet"}, g.Sources)
	assert.Empty(t, g.PCIBusID)

	anes := devicesOfKind(reg, registry.KindAppleNPU)
	require.Len(t, anes, 1)
	a := anes[0]
	assert.Equal(t, "Apple Neural Engine", a.Name)
	assert.Equal(t, 16, a.Cores)
	assert.Zero(t, a.MemoryBytes, "the Neural Engine has no memory of its own")
	assert.True(t, a.MemoryShared)
	assert.True(t, a.Available)
	assert.Equal(t, []string{"fp16", "int8"}, a.Quantizations)

	// Only the cpu backend's device: the apple backend adds no second CPU;
	// without /proc the cpu backend describes the host through sysctl.
	cpus := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpus, 1)
	assert.Equal(t, "Apple M3 Pro", cpus[0].Name)
	assert.Equal(t, m3ProMemory, cpus[0].MemoryBytes)
	assert.Equal(t, 12, cpus[0].Cores)
	assert.Equal(t, "sysctl", cpus[0].Sources["memory_bytes"])
	assert.Len(t, reg.Devices, 3)
}

// An M2 Max whose only captured tool is sysctl (no system_profiler): the
// brand string alone makes it an Apple Silicon Mac. Its GPU may use the
// Metal working set llama.cpp printed there, 21845.34 MiB, not the 32 GiB
// (testdata/machines/macbook-m2-max-32gb/README.md).
func TestAppleM2MaxSysctlOnly(t *testing.T) {
	reg := detectFixture(t, "macbook-m2-max-32gb", nil)
	assert.Empty(t, reg.Warnings)
	gpus := devicesOfKind(reg, registry.KindMetal)
	require.Len(t, gpus, 1)
	g := gpus[0]
	assert.Equal(t, "Apple M2 Max", g.Name)
	assert.Equal(t, "sysctl", g.Sources["name"])
	assert.Equal(t, int64(32)<<30, g.MemoryBytes)
	assert.True(t, g.MemoryShared)
	assert.InDelta(t, 21845.34, float64(g.MemoryUsableBytes)/(1<<20), 0.01)
	assert.Equal(t, apple.SourceWorkingSet, g.Sources["memory_usable_bytes"])
	assert.Equal(t, g.MemoryUsableBytes, g.UsableMemory(), "the planner's figure is the cap")
	assert.Zero(t, g.Cores, "no system_profiler: core count unknown")
	assert.InDelta(t, 400.0, g.MemoryBandwidthGBs, 1e-9)
	cpus := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpus, 1)
	assert.Equal(t, "Apple M2 Max", cpus[0].Name)
	assert.Equal(t, int64(32)<<30, cpus[0].MemoryBytes)
}

// An Intel Mac: no Apple GPU or Neural Engine, sysctl's failure on the
// hw.perflevel names is no warning, and system_profiler (whose fixture
// script fails on any argument) never runs.
func TestAppleIntelMacHasNoAppleDevice(t *testing.T) {
	reg := detectFixture(t, "macbook-pro-11-3-intel", nil)
	cpus := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpus, 1)
	assert.Equal(t, "Intel(R) Core(TM) i7-4850HQ CPU @ 2.30GHz", cpus[0].Name)
	assert.Equal(t, int64(16<<30), cpus[0].MemoryBytes)
	assert.Empty(t, devicesOfKind(reg, registry.KindMetal))
	assert.Empty(t, devicesOfKind(reg, registry.KindAppleNPU))
	assert.Empty(t, warningCodes(reg))
}

// Linux machines have no system_profiler: the apple backend stays silent.
func TestAppleAbsentOnLinuxFixtures(t *testing.T) {
	for _, name := range []string{"cpu-only", "dgx-h100", "slimbook-hero-rtx4060-igpu"} {
		t.Run(name, func(t *testing.T) {
			reg := detectFixture(t, name, nil)
			assert.Empty(t, devicesOfKind(reg, registry.KindMetal))
			assert.Empty(t, devicesOfKind(reg, registry.KindAppleNPU))
			for _, w := range reg.Warnings {
				assert.NotEqual(t, apple.BackendApple, w.Backend, w.Message)
			}
		})
	}
}

// appleMachine is the macbook-m3-pro fixture with its tools copied to a
// temporary bin/, where a test replaces one by a script of its own.
func appleMachine(t *testing.T, fixture string, replace map[string]string) Options {
	t.Helper()
	opts := fixtureOptions(t, fixture, nil)
	bin := t.TempDir()
	for _, tool := range []string{apple.ToolSysctl, apple.ToolSPProf} {
		b, err := os.ReadFile(filepath.Join(opts.Path, tool))
		require.NoError(t, err)
		if body, ok := replace[tool]; ok {
			b = []byte(body)
		}
		writeFakeTool(t, bin, tool, string(b))
	}
	opts.Path = bin
	return opts
}

func detectAppleOnly(t *testing.T, opts Options) *registry.Registry {
	t.Helper()
	reg, err := detectWith(context.Background(), opts, []machine.Backend{{Name: apple.BackendApple, Detect: apple.DetectApple}})
	require.NoError(t, err)
	return reg
}

func TestAppleToolFailures(t *testing.T) {
	tests := []struct {
		name      string
		replace   map[string]string
		wantCodes []string
		wantGPU   bool
		wantName  string
		wantCores int
	}{
		{
			name:      "system_profiler fails: the GPU stays, named by sysctl",
			replace:   map[string]string{apple.ToolSPProf: "#!/bin/sh\necho 'system_profiler: crashed' >&2\nexit 3\n"},
			wantCodes: []string{"apple/tool_failed"},
			wantGPU:   true, wantName: "Apple M3 Pro",
		},
		{
			name:      "system_profiler prints garbage",
			replace:   map[string]string{apple.ToolSPProf: "#!/bin/sh\necho '{\"SPDisplaysDataType\" : [ {'\n"},
			wantCodes: []string{"apple/parse_error"},
			wantGPU:   true, wantName: "Apple M3 Pro",
		},
		{
			name:      "system_profiler lists no Apple GPU",
			replace:   map[string]string{apple.ToolSPProf: "#!/bin/sh\necho '{\"SPDisplaysDataType\" : [ ]}'\n"},
			wantCodes: []string{"apple/parse_error"},
			wantGPU:   true, wantName: "Apple M3 Pro",
		},
		{
			name:      "sysctl fails on a name it should know",
			replace:   map[string]string{apple.ToolSysctl: "#!/bin/sh\necho \"sysctl: unknown oid 'hw.memsize'\" >&2\nexit 1\n"},
			wantCodes: []string{"apple/tool_failed"},
		},
		{
			name:      "sysctl prints nothing",
			replace:   map[string]string{apple.ToolSysctl: "#!/bin/sh\nexit 0\n"},
			wantCodes: []string{"apple/tool_failed"},
		},
		{
			name:      "hw.memsize garbage: GPU without memory",
			replace:   map[string]string{apple.ToolSysctl: "#!/bin/sh\nprintf '%s\\n' 'lots' 'Apple M3 Pro' 12 6 6\n"},
			wantCodes: []string{"apple/parse_error"},
			wantGPU:   true, wantName: "Apple M3 Pro", wantCores: 18,
		},
		{
			name:      "sppci_cores not a number",
			replace:   map[string]string{apple.ToolSPProf: "#!/bin/sh\necho '{\"SPDisplaysDataType\":[{\"spdisplays_vendor\":\"sppci_vendor_Apple\",\"sppci_cores\":\"many\",\"sppci_model\":\"Apple M3 Pro\"}]}'\n"},
			wantCodes: []string{"apple/parse_error"},
			wantGPU:   true, wantName: "Apple M3 Pro",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := detectAppleOnly(t, appleMachine(t, "macbook-m3-pro", tt.replace))
			assert.Equal(t, tt.wantCodes, warningCodes(reg))
			gpus := devicesOfKind(reg, registry.KindMetal)
			if !tt.wantGPU {
				assert.Empty(t, reg.Devices)
				return
			}
			require.Len(t, gpus, 1)
			assert.Equal(t, tt.wantName, gpus[0].Name)
			assert.Equal(t, tt.wantCores, gpus[0].Cores)
			if gpus[0].MemoryBytes > 0 {
				assert.True(t, gpus[0].MemoryShared)
			}
		})
	}
}

func TestAppleNoExecRunsNothing(t *testing.T) {
	opts := fixtureOptions(t, "macbook-m3-pro", nil)
	opts.NoExec = true
	reg := detectAppleOnly(t, opts)
	assert.Empty(t, reg.Devices)
	assert.Empty(t, reg.Warnings)
}

// The fixture's own system_profiler output, through the parser.
func TestParseSPDisplaysFixture(t *testing.T) {
	opts := fixtureOptions(t, "macbook-m3-pro", nil)
	res := machine.NewExecRunner(opts.Path, opts.Timeout).Run(context.Background(), apple.ToolSPProf, apple.SPDisplaysArgs...)
	require.NoError(t, res.Err)
	ds, err := apple.ParseSPDisplays(res.Stdout)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	e, ok := apple.AppleGPUEntry(ds)
	require.True(t, ok)
	assert.Equal(t, "Apple M3 Pro", e.Model)
	cores, ok := e.GPUCores()
	assert.True(t, ok)
	assert.Equal(t, 18, cores)
}

// macHostCPU is the hook for the cpu backend on a machine without /proc.
func TestMacHostCPU(t *testing.T) {
	tests := []struct {
		fixture string
		want    registry.Device
	}{
		{"macbook-m3-pro", registry.Device{ID: "cpu", Kind: registry.KindCPU, Available: true,
			Name: "Apple M3 Pro", Vendor: "apple", Cores: 12, Threads: 12, MemoryBytes: m3ProMemory,
			Quantizations: precision.CPU(),
			Sources:       map[string]string{"name": "sysctl", "vendor": "sysctl", "cores": "sysctl", "memory_bytes": "sysctl"}}},
		// osquery/osquery#1501's MacBookPro11,3: cpu_logical_cores 8.
		{"macbook-pro-11-3-intel", registry.Device{ID: "cpu", Kind: registry.KindCPU, Available: true,
			Name: "Intel(R) Core(TM) i7-4850HQ CPU @ 2.30GHz", Vendor: "intel", Cores: 8, Threads: 8,
			MemoryBytes: 16 << 30, Quantizations: precision.CPU(),
			Sources: map[string]string{"name": "sysctl", "vendor": "sysctl", "cores": "sysctl", "memory_bytes": "sysctl"}}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			m, err := NewMachine(fixtureOptions(t, tt.fixture, nil))
			require.NoError(t, err)
			d, ok := apple.MacHostCPU(context.Background(), m, precision.CPU())
			require.True(t, ok)
			assert.Equal(t, tt.want, d)
		})
	}
	m, err := NewMachine(fixtureOptions(t, "cpu-only", nil))
	require.NoError(t, err)
	_, ok := apple.MacHostCPU(context.Background(), m, precision.CPU())
	assert.False(t, ok, "no system_profiler: not a Mac")
}
