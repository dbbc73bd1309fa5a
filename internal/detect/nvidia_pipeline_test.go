package detect

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
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
	if tool != nvidia.ToolNvidiaSMI {
		return machine.Result{Err: fmt.Errorf("%s: %w", tool, machine.ErrToolMissing)}
	}
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		return machine.Result{Err: machine.ErrTimeout}
	}
	if r, ok := f.answers[line]; ok {
		if line == queryArgv(nvidia.NVQueryFields) {
			r.Stdout = withTelemetryNA(r.Stdout)
		}
		return r
	}
	return machine.Result{ExitCode: 2, Stdout: []byte("ERROR: Option " + args[0] + " is not recognized. Please run 'nvidia-smi -h'.\n\n"),
		Err: fmt.Errorf("exit status 2: %w", machine.ErrExit)}
}

func (f *fakeNvidiaSMI) Has(tool string) bool { return tool == nvidia.ToolNvidiaSMI }

// withTelemetryNA completes rows written with the identity columns only
// (tests about identity, MIG and topology) with the telemetry columns as
// nvidia-smi prints readings it does not have: "[N/A]".
func withTelemetryNA(out []byte) []byte {
	identity := len(nvidia.NVQueryFields) - len(nvidia.NVTelemetryFields)
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" && strings.Count(l, ",") == identity-1 {
			lines[i] = l + strings.Repeat(", [N/A]", len(nvidia.NVTelemetryFields))
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

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
	opts.Backends = []string{nvidia.BackendCUDA}
	opts.Runner = r
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	return reg
}

func TestNVIDIAOldDriverRetriesWithoutRejectedFields(t *testing.T) {
	noCC := append([]string{"index", "name", "uuid", "pci.bus_id", "memory.total", "memory.free", "driver_version", "mig.mode.current"},
		nvidia.NVTelemetryFields...)
	noCCNoMIG := append([]string{"index", "name", "uuid", "pci.bus_id", "memory.total", "memory.free", "driver_version"},
		nvidia.NVTelemetryFields...)
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{
		queryArgv(nvidia.NVQueryFields): rejectField("compute_cap"),
		queryArgv(noCC):                 rejectField("mig.mode.current"),
		queryArgv(noCCNoMIG): ok("0, NVIDIA GeForce RTX 4090, GPU-5b8e2c1a, 00000000:01:00.0, 24564, 23980, 470.63.01, [N/A], [N/A], [N/A], [N/A]\n" +
			"1, NVIDIA GeForce RTX 3060, GPU-c3a17f2e, 00000000:91:00.0, 12288, 11878, 470.63.01, [N/A], [N/A], [N/A], [N/A]\n"),
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
	assert.ElementsMatch(t, []string{queryArgv(nvidia.NVQueryFields), queryArgv(noCC), queryArgv(noCCNoMIG), "topo -m"}, fake.calls)
}

func TestNVIDIARejectedRequiredFieldIsToolFailed(t *testing.T) {
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{queryArgv(nvidia.NVQueryFields): rejectField("memory.free")}}
	reg := detectNVWith(t, "nvidia-tool-fails", fake, nil)
	assert.Equal(t, []string{"cuda/tool_failed", "cuda/fallback"}, warningCodes(reg))
	assert.Len(t, fake.calls, 1, "a required field is not retried")
}

// TestNVIDIATopologyRunsBesideQuery: with slow tools, a two-GPU detection
// takes about one tool run, not two.
func TestNVIDIATopologyRunsBesideQuery(t *testing.T) {
	const delay = 300 * time.Millisecond
	fake := &fakeNvidiaSMI{delay: delay, answers: map[string]machine.Result{
		queryArgv(nvidia.NVQueryFields): ok("0, NVIDIA GeForce RTX 4090, GPU-5b8e2c1a, 00000000:01:00.0, 24564, 23980, 550.54.15, 8.9, [N/A]\n" +
			"1, NVIDIA GeForce RTX 3060, GPU-c3a17f2e, 00000000:91:00.0, 12288, 11878, 550.54.15, 8.6, [N/A]\n"),
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
		queryArgv(nvidia.NVQueryFields): ok("0, Tesla V100-SXM2-16GB, GPU-0f1e2d3c, 00000000:00:04.0, 16160, 15800, 525.125.06, 7.0, [N/A]\n"),
	}}
	// The one V100 of nvidia-tool-fails, as if its driver worked.
	reg := detectNVWith(t, "nvidia-tool-fails", fake, nil)
	assert.Empty(t, warningCodes(reg))
	assert.Equal(t, []string{queryArgv(nvidia.NVQueryFields)}, fake.calls)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	assert.Equal(t, int64(16160)<<20, gpus[0].MemoryBytes)
	assert.Equal(t, "0000:00:04.0", gpus[0].PCIBusID)
}

func TestNVIDIANoExecFallsBackToSysfs(t *testing.T) {
	opts := fixtureOptions(t, "dgx-h100", nil)
	opts.Backends = []string{nvidia.BackendCUDA}
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
	// The NVSwitch functions in sysfs still give the fabric (issue 13):
	// one nvswitch domain of the eight GPUs, without link counts.
	require.Len(t, reg.SystemIO.Interconnects, 1)
	ic := reg.SystemIO.Interconnects[0]
	assert.Equal(t, registry.LinkNVSwitch, ic.Kind)
	assert.Len(t, ic.Devices, 8)
	assert.Zero(t, ic.Links, "link counts need the tool")
}

func TestNVIDIAQueryGarbageFallsBack(t *testing.T) {
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{queryArgv(nvidia.NVQueryFields): ok("this is not csv\n")}}
	reg := detectNVWith(t, "nvidia-tool-fails", fake, nil)
	assert.Equal(t, []string{"cuda/parse_error", "cuda/tool_failed", "cuda/fallback"}, warningCodes(reg))
	assert.Len(t, devicesOfKind(reg, registry.KindCUDA), 1)
}

func TestNVIDIAMIGVisibility(t *testing.T) {
	listing := "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-9c73eb7b-8d6d-6c0e-dc13-97873e2ede40)\n" +
		"  MIG 1g.10gb     Device  0: (UUID: MIG-a686709d-6dc2-542a-8851-0d2508448c10)\n" +
		"  MIG 1g.10gb     Device  1: (UUID: MIG-53864714-0a66-5df2-9007-9268e30d9a72)\n" +
		"GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-c92e2d5d-4a69-f1cd-4df0-305f8606705a)\n"
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{
		queryArgv(nvidia.NVQueryFields): ok(
			"0, NVIDIA A100-SXM4-80GB, GPU-9c73eb7b-8d6d-6c0e-dc13-97873e2ede40, 00000000:01:00.0, 81920, 81000, 550.54.15, 8.0, Enabled\n" +
				"1, NVIDIA A100-SXM4-80GB, GPU-c92e2d5d-4a69-f1cd-4df0-305f8606705a, 00000000:91:00.0, 81920, 81000, 550.54.15, 8.0, Disabled\n"),
		"-L":      ok(listing),
		"topo -m": ok("\t\x1b[4mGPU0\tGPU1\x1b[0m\nGPU0\t X \tNV12\nGPU1\tNV12\t X \n"),
	}}
	reg := detectNVWith(t, "two-nvidia", fake, map[string]string{nvidia.EnvCUDAVis: "MIG-53864714-0a66-5df2-9007-9268e30d9a72"})
	// This fake answers no `nvidia-smi -q`: the slice keeps its profile's
	// figure, with a fallback warning.
	assert.Equal(t, []string{"cuda/fallback", "cuda/hidden_by_env"}, warningCodes(reg))
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 2, "the named instance and its parent")
	assert.Equal(t, int64(10e9), gpus[1].MemoryBytes)
	assert.Equal(t, "0000:01:00.0", gpus[0].PCIBusID)
	assert.False(t, gpus[0].Available)
	require.NotNil(t, gpus[0].MIG)
	assert.Equal(t, "enabled", gpus[0].MIG.Mode)
	assert.Equal(t, []string{"MIG-a686709d-6dc2-542a-8851-0d2508448c10", "MIG-53864714-0a66-5df2-9007-9268e30d9a72"},
		gpus[0].MIG.Children)
	assert.Equal(t, "MIG-53864714-0a66-5df2-9007-9268e30d9a72", gpus[1].UUID)
	assert.Equal(t, "0", gpus[1].VisibleAs)
	assert.Contains(t, fake.calls, "-L")

	// The older MIG-GPU-<uuid>/<gi>/<ci> form names the parent directly.
	reg = detectNVWith(t, "two-nvidia", fake, map[string]string{nvidia.EnvCUDAVis: "MIG-GPU-c92e2d5d-4a69-f1cd-4df0-305f8606705a/1/0"})
	gpus = devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	assert.Equal(t, "0000:91:00.0", gpus[0].PCIBusID)

	// A MIG id nobody has is invalid.
	reg = detectNVWith(t, "two-nvidia", fake, map[string]string{nvidia.EnvCUDAVis: "MIG-00000000-0000-0000-0000-000000000000"})
	assert.Empty(t, devicesOfKind(reg, registry.KindCUDA))
	assert.Equal(t, []string{"cuda/fallback", "cuda/visibility_invalid", "cuda/hidden_by_env"}, warningCodes(reg))
}

func TestParseNvidiaTopo(t *testing.T) {
	// The single-GPU H100 `topo -m` of the nvidia_gpu_exporter capture
	// (https://github.com/utkuozdemir/nvidia_gpu_exporter internal/captures).
	tp, err := nvidia.ParseNvidiaTopo([]byte("\t\x1b[4mGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\nGPU0\t X \t0-19\t0\t\tN/A\n"))
	require.NoError(t, err)
	assert.Equal(t, []int{0}, tp.GPUs)
	assert.Empty(t, tp.Cells)

	// The dgx-h100 fixture's matrix, with NIC rows and legends.
	out := runFixtureTool(t, "dgx-h100", nvidia.ToolNvidiaSMI, "topo", "-m")
	tp, err = nvidia.ParseNvidiaTopo(out)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, tp.GPUs)
	assert.Len(t, tp.Cells, 56)
	assert.Equal(t, "NV18", tp.Link(0, 7))
	assert.Equal(t, "NV18", tp.Link(7, 0))
	assert.Equal(t, "mlx5_3", tp.NICs["NIC3"])
	assert.Len(t, tp.NICs, 10)

	// Space-separated matrices (tabs expanded by a console) still parse.
	tp, err = nvidia.ParseNvidiaTopo([]byte("        GPU0    GPU1    CPU Affinity\nGPU0     X      NV4     0-7\nGPU1    NV4      X      0-7\n"))
	require.NoError(t, err)
	assert.Equal(t, "NV4", tp.Link(0, 1))

	_, err = nvidia.ParseNvidiaTopo([]byte("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"))
	assert.Error(t, err)
}

func TestNVIDIAFabric(t *testing.T) {
	m, err := NewMachine(fixtureOptions(t, "dgx-h100", nil))
	require.NoError(t, err)
	fab := nvidia.ReadNvidiaFabric(m)
	assert.Len(t, fab.GPUs, 8, "NVSwitch functions are not GPUs")
	assert.True(t, fab.NVSwitch)

	m, err = NewMachine(fixtureOptions(t, "two-nvidia", nil))
	require.NoError(t, err)
	fab = nvidia.ReadNvidiaFabric(m)
	assert.Len(t, fab.GPUs, 2)
	assert.False(t, fab.NVSwitch)
}

// runFixtureTool runs a fixture machine's fake tool through the real runner.
func runFixtureTool(t *testing.T, host, tool string, args ...string) []byte {
	t.Helper()
	opts := fixtureOptions(t, host, nil)
	res := machine.NewExecRunner(opts.Path, 5*time.Second).Run(context.Background(), tool, args...)
	require.NoError(t, res.Err)
	return res.Stdout
}
