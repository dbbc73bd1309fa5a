package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func i64(v int64) *int64 { return &v }
func intp(v int) *int    { return &v }

// dgxLike is a registry shaped like an 8-GPU H100 node (memory sizes from
// the H100 SXM record of internal/specs; 85520809984 bytes is
// what nvidia-smi reports as 81559 MiB). It is built in Go because this
// tests formatting, not parsing.
func dgxLike() *registry.Registry {
	reg := registry.New()
	reg.Devices = append(reg.Devices, registry.Device{ID: "cpu:0", Kind: registry.KindCPU,
		Family: registry.FamilyCPU, Vendor: "intel", Name: "Intel(R) Xeon(R) Platinum 8480C",
		Available: true, MemoryBytes: 2164152250368, MemoryFreeBytes: i64(2100000000000), Cores: 112})
	for i := 0; i < 8; i++ {
		node := 0
		if i >= 4 {
			node = 1
		}
		reg.Devices = append(reg.Devices, registry.Device{
			ID: registry.DeviceID(registry.KindCUDA, i), Kind: registry.KindCUDA, Family: registry.FamilyGPU,
			Index: i, Vendor: "nvidia", Name: "NVIDIA H100 80GB HBM3", Available: true,
			MemoryBytes: 85520809984, MemoryFreeBytes: i64(84960000000), MemoryBandwidthGBs: 3352,
			ComputeCapability: "9.0", Architecture: "hopper", DriverVersion: "550.54.15",
			PCIBusID: []string{"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
				"0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"}[i],
			NUMANode: intp(node)})
	}
	reg.SystemIO.Interconnects = []registry.Interconnect{
		{Kind: "nvswitch", Devices: []string{"cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:4", "cuda:5", "cuda:6", "cuda:7"}, BandwidthGBs: 900},
		{Kind: "infiniband", Name: "mlx5_0", Devices: []string{}, BandwidthGBs: 50, State: "Active"},
	}
	reg.SystemIO.NUMANodes = []registry.NUMANode{{ID: 0, MemoryBytes: 1082076125184, CPUs: "0-55,112-167"},
		{ID: 1, MemoryBytes: 1082076125184, CPUs: "56-111,168-223"}}
	reg.Warnings = []registry.Warning{{Backend: "rocm", Code: "tool_failed", Message: "rocm-smi exited 1:\nno devices"}}
	return reg
}

const dgxTable = `ID      KIND      NAME                             MEMORY      FREE        BW         BUS           NUMA
cpu:0   cpu       Intel(R) Xeon(R) Platinum 8480C  2015.5 GiB  1955.8 GiB  —          —             —
cuda:0  cuda_gpu  NVIDIA H100 80GB HBM3            79.6 GiB    79.1 GiB    3352 GB/s  0000:18:00.0  0
cuda:1  cuda_gpu  NVIDIA H100 80GB HBM3            79.6 GiB    79.1 GiB    3352 GB/s  0000:2a:00.0  0
cuda:2  cuda_gpu  NVIDIA H100 80GB HBM3            79.6 GiB    79.1 GiB    3352 GB/s  0000:3a:00.0  0
cuda:3  cuda_gpu  NVIDIA H100 80GB HBM3            79.6 GiB    79.1 GiB    3352 GB/s  0000:5d:00.0  0
cuda:4  cuda_gpu  NVIDIA H100 80GB HBM3            79.6 GiB    79.1 GiB    3352 GB/s  0000:9a:00.0  1
cuda:5  cuda_gpu  NVIDIA H100 80GB HBM3            79.6 GiB    79.1 GiB    3352 GB/s  0000:ab:00.0  1
cuda:6  cuda_gpu  NVIDIA H100 80GB HBM3            79.6 GiB    79.1 GiB    3352 GB/s  0000:ba:00.0  1
cuda:7  cuda_gpu  NVIDIA H100 80GB HBM3            79.6 GiB    79.1 GiB    3352 GB/s  0000:db:00.0  1
Total: 9 devices, 8 accelerators, 637.2 GiB accelerator memory, 2015.5 GiB host memory

Interconnects:
  KIND        NAME    BW        LINKS  STATE   DEVICES
  nvswitch    —       900 GB/s  —      —       cuda:0-7
  infiniband  mlx5_0  50 GB/s   —      Active  —

NUMA nodes:
  NODE  MEMORY      CPUS
  0     1007.8 GiB  0-55,112-167
  1     1007.8 GiB  56-111,168-223

Warnings (1):
  [rocm] tool_failed: rocm-smi exited 1:\nno devices
`

func TestWriteTableGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, dgxLike(), nil))
	assert.Equal(t, dgxTable, b.String())
}

func TestWriteTableUnknownsAndEmptySections(t *testing.T) {
	reg := registry.New()
	reg.Devices = []registry.Device{
		{ID: "cpu:0", Kind: registry.KindCPU, Available: true},
		{ID: "intel_gpu:0", Kind: registry.KindIntelGPU, Available: true, Name: "Intel Arc\tGraphics",
			MemoryBytes: 16 << 30, MemoryShared: true, MemoryFreeBytes: i64(0)},
		{ID: "tpu:0", Kind: registry.KindTPU, Available: false, MemoryBytes: 512 << 10},
	}
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, reg, nil))
	lines := strings.Split(b.String(), "\n")
	assert.Equal(t, "cpu:0        cpu        —                    —                —        —   —    —", lines[1])
	// Known zero free memory prints as 0.0, shared memory is marked, a tab in
	// a name is escaped (it does not break the row), tiny memory is not
	// rounded to zero.
	assert.Equal(t, `intel_gpu:0  intel_gpu  Intel Arc\tGraphics  16.0 GiB shared  0.0 GiB  —   —    —`, lines[2])
	assert.Equal(t, "tpu:0        tpu        — (unavailable)      <0.1 GiB         —        —   —    —", lines[3])
	// Shared memory is counted as such (issue 28); the unavailable TPU not counted.
	assert.Equal(t, "Total: 3 devices, 1 accelerator, 16.0 GiB accelerator memory (16.0 GiB of it shared with the host)", lines[4])
	assert.Contains(t, b.String(), "\nInterconnects: none\n")
	assert.Contains(t, b.String(), "\nNUMA nodes: none reported\n")
	assert.True(t, strings.HasSuffix(b.String(), "\nWarnings: none\n"))
	assert.NotContains(t, b.String(), " 0 GB/s")
}

func TestUnits(t *testing.T) {
	assert.Equal(t, "79.6 GiB", GiB(85520809984))
	assert.Equal(t, "0.0 GiB", GiB(0))
	assert.Equal(t, "<0.1 GiB", GiB(1))
	assert.Equal(t, "0.1 GiB", GiB(gib/10))
	assert.Equal(t, "—", sizeCell(0))
	assert.Equal(t, "—", freeCell(nil))
	assert.Equal(t, "3352 GB/s", GBs(3352))
	assert.Equal(t, "25.6 GB/s", GBs(25.6))
	assert.Equal(t, "31.5 GB/s", GBs(31.5077))
	assert.Equal(t, "—", GBs(0))
	assert.Equal(t, "+1.0", deltaGiB(gib))
	assert.Equal(t, "-0.5", deltaGiB(-gib/2))
	assert.Equal(t, "", deltaGiB(gib/100))
}

func TestCompactIDs(t *testing.T) {
	cases := map[string][]string{
		"":                      nil,
		"cuda:0":                {"cuda:0"},
		"cuda:0-2,cuda:5":       {"cuda:0", "cuda:1", "cuda:2", "cuda:5"},
		"cuda:1,cuda:0":         {"cuda:1", "cuda:0"},
		"cuda:0-1,rocm:2-3,x":   {"cuda:0", "cuda:1", "rocm:2", "rocm:3", "x"},
		"tpu:0,aws_neuron:0-1":  {"tpu:0", "aws_neuron:0", "aws_neuron:1"},
		"a:b,a:b":               {"a:b", "a:b"},
		"intel_npu:0,cpu:0":     {"intel_npu:0", "cpu:0"},
		"cuda:3-4,cuda:4":       {"cuda:3", "cuda:4", "cuda:4"},
		"gaudi:0-7":             {"gaudi:0", "gaudi:1", "gaudi:2", "gaudi:3", "gaudi:4", "gaudi:5", "gaudi:6", "gaudi:7"},
		"cuda:-1,cuda:0":        {"cuda:-1", "cuda:0"},
		"metal:0,metal:2,cpu:0": {"metal:0", "metal:2", "cpu:0"},
	}
	for want, ids := range cases {
		assert.Equal(t, want, CompactIDs(ids), "%v", ids)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize(dgxLike())
	assert.Equal(t, 1, s.SchemaVersion)
	assert.Equal(t, 9, s.DeviceCount)
	assert.Equal(t, 9, s.AvailableCount)
	assert.Equal(t, 8, s.AcceleratorCount)
	assert.Equal(t, map[string]int{"cpu": 1, "gpu": 8, "npu": 0, "tpu": 0, "ai_asic": 0}, s.Families)
	assert.Equal(t, map[string]int{"cpu": 1, "cuda_gpu": 8}, s.Kinds)
	require.NotNil(t, s.AcceleratorMemoryBytes)
	assert.Equal(t, int64(8*85520809984), *s.AcceleratorMemoryBytes)
	assert.Equal(t, int64(2164152250368), s.HostMemoryBytes)
	require.NotNil(t, s.BestDevice)
	assert.Equal(t, "cuda:0", s.BestDevice.ID)
	assert.Equal(t, []string{"infiniband", "nvswitch"}, s.Interconnects)
	assert.Equal(t, 2, s.NUMANodeCount)
	assert.Equal(t, 1, s.WarningCount)
}

func TestSummarizeUnknownMemoryAndBest(t *testing.T) {
	reg := registry.New()
	reg.Devices = []registry.Device{
		{ID: "cpu:0", Kind: registry.KindCPU, Available: true},
		{ID: "tpu:0", Kind: registry.KindTPU, Available: true},
	}
	s := Summarize(reg)
	assert.Nil(t, s.AcceleratorMemoryBytes, "all accelerator memory unknown: no sum, not 0")
	assert.Equal(t, 1, s.AcceleratorsMemoryUnknown)

	reg.Devices = append(reg.Devices,
		registry.Device{ID: "cuda:0", Kind: registry.KindCUDA, Available: true, MemoryBytes: 24 << 30, MemoryBandwidthGBs: 936},
		registry.Device{ID: "cuda:1", Kind: registry.KindCUDA, Available: true, MemoryBytes: 24 << 30, MemoryBandwidthGBs: 1008},
		registry.Device{ID: "rocm:0", Kind: registry.KindROCm, Available: false, MemoryBytes: 192 << 30})
	s = Summarize(reg)
	require.NotNil(t, s.AcceleratorMemoryBytes)
	assert.Equal(t, int64(48<<30), *s.AcceleratorMemoryBytes)
	assert.Equal(t, "cuda:1", s.BestDevice.ID, "equal memory: more bandwidth wins; unavailable never best")

	reg.Devices = reg.Devices[:1]
	s = Summarize(reg)
	assert.Nil(t, s.BestDevice)
	require.NotNil(t, s.AcceleratorMemoryBytes)
	assert.Equal(t, int64(0), *s.AcceleratorMemoryBytes)
}

func TestLabelsDGX(t *testing.T) {
	l := Labels(dgxLike())
	assert.Equal(t, map[string]string{
		"ai-hwaccel.io/accelerator.count":       "8",
		"ai-hwaccel.io/accelerator.present":     "true",
		"ai-hwaccel.io/gpu.count":               "8",
		"ai-hwaccel.io/gpu.family":              "hopper",
		"ai-hwaccel.io/gpu.memory":              "81559",
		"ai-hwaccel.io/gpu.product":             "NVIDIA-H100-80GB-HBM3",
		"ai-hwaccel.io/gpu.vendor":              "nvidia",
		"ai-hwaccel.io/cuda.count":              "8",
		"ai-hwaccel.io/cuda.memory":             "81559",
		"ai-hwaccel.io/cuda.product":            "NVIDIA-H100-80GB-HBM3",
		"ai-hwaccel.io/cuda.vendor":             "nvidia",
		"ai-hwaccel.io/cuda.driver":             "550.54.15",
		"ai-hwaccel.io/cuda.compute_capability": "9.0",
		"ai-hwaccel.io/cuda.family":             "hopper",
		"ai-hwaccel.io/interconnect":            "nvswitch",
		"ai-hwaccel.io/interconnect.nvswitch":   "true",
		"ai-hwaccel.io/interconnect.infiniband": "true",
		"ai-hwaccel.io/numa.count":              "2",
	}, l)
}

func TestLabelsMixedAndUnknown(t *testing.T) {
	reg := registry.New()
	reg.Devices = []registry.Device{
		{ID: "cpu:0", Kind: registry.KindCPU, Available: true, Name: "x"},
		{ID: "rocm:0", Kind: registry.KindROCm, Available: true, Vendor: "amd", Name: "AMD Instinct MI300X", MemoryBytes: 192 << 30},
		{ID: "rocm:1", Kind: registry.KindROCm, Available: true, Vendor: "amd", Name: "AMD Instinct MI250X", MemoryBytes: 64 << 30},
		{ID: "aws_neuron:0", Kind: registry.KindNeuron, Available: true, Vendor: "aws"},
		{ID: "gaudi:0", Kind: registry.KindGaudi, Available: false, Name: "HL-325L", MemoryBytes: 128 << 30},
		{ID: "intel_gpu:0", Kind: registry.KindIntelGPU, Available: true, MemoryBytes: 16 << 30, MemoryShared: true},
	}
	reg.SystemIO.Interconnects = []registry.Interconnect{{Kind: "ethernet", Devices: []string{}}}
	l := Labels(reg)
	assert.Equal(t, "mixed", l["ai-hwaccel.io/rocm.product"])
	assert.Equal(t, "amd", l["ai-hwaccel.io/rocm.vendor"])
	assert.Equal(t, "65536", l["ai-hwaccel.io/rocm.memory"], "smallest device, MiB")
	assert.Equal(t, "1", l["ai-hwaccel.io/aws_neuron.count"])
	assert.Equal(t, "1", l["ai-hwaccel.io/ai_asic.count"], "unavailable gaudi not counted")
	assert.NotContains(t, l, "ai-hwaccel.io/aws_neuron.memory", "unknown memory is omitted")
	assert.NotContains(t, l, "ai-hwaccel.io/aws_neuron.product")
	assert.NotContains(t, l, "ai-hwaccel.io/gaudi.count")
	assert.NotContains(t, l, "ai-hwaccel.io/gpu.family", "no architecture known")
	assert.NotContains(t, l, "ai-hwaccel.io/interconnect", "ethernet is not a scale-up link")
	assert.NotContains(t, l, "ai-hwaccel.io/numa.count")
	assert.Equal(t, "true", l["ai-hwaccel.io/interconnect.ethernet"])
	assert.Equal(t, "4", l["ai-hwaccel.io/accelerator.count"])
	assert.Equal(t, "16384", l["ai-hwaccel.io/intel_gpu.memory"], "shared memory the GPU can use, marked shared")
	assert.Equal(t, "true", l["ai-hwaccel.io/intel_gpu.memory.shared"])
	assert.NotContains(t, l, "ai-hwaccel.io/gpu.memory", "the family mixes shared and dedicated memory")
}

func TestLabelsCPUOnly(t *testing.T) {
	reg := registry.New()
	reg.Devices = []registry.Device{{ID: "cpu:0", Kind: registry.KindCPU, Available: true}}
	assert.Equal(t, map[string]string{"ai-hwaccel.io/accelerator.count": "0",
		"ai-hwaccel.io/accelerator.present": "false"}, Labels(reg))
}

func TestLabelValue(t *testing.T) {
	cases := map[string]string{
		"NVIDIA H100 80GB HBM3":           "NVIDIA-H100-80GB-HBM3",
		"Intel(R) Xeon(R) Platinum 8480C": "Intel-R-Xeon-R-Platinum-8480C",
		"  -- odd --  ":                   "odd",
		"550.54.15":                       "550.54.15",
		"a__b":                            "a__b",
		"ÄÖÜ":                             "",
		"GPU ü 9":                         "GPU-9",
		"":                                "",
		strings.Repeat("a", 62) + " b":    strings.Repeat("a", 62),
		strings.Repeat("x", 70):           strings.Repeat("x", 63),
	}
	for in, want := range cases {
		assert.Equal(t, want, LabelValue(in), "%q", in)
	}
}

func TestFeatureFile(t *testing.T) {
	out := FeatureFile(map[string]string{"ai-hwaccel.io/b": "2", "ai-hwaccel.io/a": "1"},
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)))
	assert.Equal(t, "# Written by ai-hwaccel nfd; see docs/kubernetes.md.\n"+
		"# +expiry-time=2026-01-02T02:04:05Z\n"+
		"ai-hwaccel.io/a=1\nai-hwaccel.io/b=2\n", string(out))
	assert.NotContains(t, string(FeatureFile(map[string]string{"k": "v"}, time.Time{})), "expiry")
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ai-hwaccel")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o600))
	require.NoError(t, WriteFileAtomic(path, []byte("new\n")))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")
	assert.Error(t, WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x")))
}

func TestWatchDeltasMatchByID(t *testing.T) {
	// Three refreshes; between the 1st and 2nd, cuda:1 loses 2 GiB and the
	// device order changes, so a row-index match would attribute deltas to
	// the wrong device. Between 2nd and 3rd, cuda:0 disappears.
	mk := func(order []string, free map[string]int64) *registry.Registry {
		reg := registry.New()
		for _, id := range order {
			reg.Devices = append(reg.Devices, registry.Device{ID: id, Kind: registry.KindCUDA,
				Available: true, MemoryBytes: 80 << 30, MemoryFreeBytes: i64(free[id])})
		}
		return reg
	}
	regs := []*registry.Registry{
		mk([]string{"cuda:0", "cuda:1"}, map[string]int64{"cuda:0": 70 << 30, "cuda:1": 60 << 30}),
		mk([]string{"cuda:1", "cuda:0"}, map[string]int64{"cuda:0": 70 << 30, "cuda:1": 58 << 30}),
		mk([]string{"cuda:1"}, map[string]int64{"cuda:1": 59 << 30}),
	}
	calls, sleeps := 0, 0
	var b bytes.Buffer
	w := Watch{Interval: 2 * time.Second, Count: 3,
		Detect: func(context.Context) (*registry.Registry, error) { calls++; return regs[calls-1], nil },
		Sleep: func(_ context.Context, d time.Duration) error {
			assert.Equal(t, 2*time.Second, d)
			sleeps++
			return nil
		},
		Now: func() time.Time { return time.Date(2026, 1, 1, 12, 0, calls, 0, time.UTC) }}
	require.NoError(t, w.Run(context.Background(), &b))
	assert.Equal(t, 3, calls)
	assert.Equal(t, 2, sleeps, "no sleep after the last refresh")
	out := b.String()
	parts := strings.Split(out, "ai-hwaccel watch: refresh ")
	require.Len(t, parts, 4)
	assert.Contains(t, parts[1], "1 of 3 at 12:00:01, every 2s")
	assert.NotContains(t, parts[1], "(+", "first refresh has no deltas")
	assert.Regexp(t, `cuda:1 .* 58\.0 GiB \(-2\.0\)`, parts[2])
	assert.Regexp(t, `cuda:0 .* 70\.0 GiB  `, parts[2], "unchanged device shows no delta")
	assert.Regexp(t, `cuda:1 .* 59\.0 GiB \(\+1\.0\)`, parts[3])
	assert.NotContains(t, out, "\x1b[", "no escape codes unless Clear")
}

func TestWatchStops(t *testing.T) {
	reg := registry.New()
	detect := func(context.Context) (*registry.Registry, error) { return reg, nil }

	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	w := Watch{Interval: time.Second, Detect: detect, Clear: true, Sleep: func(ctx context.Context, _ time.Duration) error {
		n++
		if n == 3 {
			cancel()
			return ctx.Err()
		}
		return nil
	}}
	var b bytes.Buffer
	require.NoError(t, w.Run(ctx, &b), "an interrupt ends the loop normally")
	assert.Equal(t, 3, strings.Count(b.String(), "\x1b[H\x1b[2J"))

	boom := errors.New("boom")
	w = Watch{Interval: time.Second, Detect: func(context.Context) (*registry.Registry, error) { return nil, boom }}
	assert.ErrorIs(t, w.Run(context.Background(), &b), boom)

	assert.Error(t, Watch{Detect: detect}.Run(context.Background(), &b), "zero interval refused")

	// The real sleeper returns early when the context ends.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	assert.Error(t, sleepCtx(ctx, time.Hour))
	assert.Less(t, time.Since(start), time.Second)
	assert.NoError(t, sleepCtx(context.Background(), time.Millisecond))
}
