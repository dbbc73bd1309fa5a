package detect

// Benchmarks of issue 8 (docs/performance.md): every vendor-tool and procfs
// parser on the output of a fixture machine, and a whole detection of every
// fixture machine, with its tools answering instantly (their recorded output
// replayed in process) and with its tool scripts really run.
//
//	go test -run xxx -bench . -benchtime=200ms ./internal/detect/

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/aws"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/host"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
)

// toolOutput runs a fixture machine's tool script with the backend's argv
// and returns what it printed: parsers are benchmarked on the fixture
// output, never on text written here.
func toolOutput(b *testing.B, host, tool string, args ...string) []byte {
	b.Helper()
	script := filepath.Join(detecttest.MachineDir(b, host), "bin", tool)
	out, err := exec.Command(script, args...).Output()
	require.NoError(b, err, "%s %v on %s", tool, args, host)
	require.NotEmpty(b, out)
	return out
}

// fixtureFile reads a file of a fixture machine's root tree.
func fixtureFile(b *testing.B, host, rel string) string {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(detecttest.MachineDir(b, host), "root", rel))
	require.NoError(b, err)
	return string(data)
}

func BenchmarkParseNvidiaCSV(b *testing.B) {
	out := toolOutput(b, "dgx-h100", nvidia.ToolNvidiaSMI,
		"--query-gpu="+strings.Join(nvidia.NVQueryFields, ","), "--format=csv,noheader,nounits")
	gpus, issues, _ := nvidia.ParseNvidiaCSV(out, nvidia.NVQueryFields)
	require.Len(b, gpus, 8)
	require.Empty(b, issues)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = nvidia.ParseNvidiaCSV(out, nvidia.NVQueryFields)
	}
}

func BenchmarkParseNvidiaTopo(b *testing.B) {
	out := toolOutput(b, "dgx-h100", nvidia.ToolNvidiaSMI, "topo", "-m")
	_, err := nvidia.ParseNvidiaTopo(out)
	require.NoError(b, err)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = nvidia.ParseNvidiaTopo(out)
	}
}

func BenchmarkParseNvidiaList(b *testing.B) {
	out := toolOutput(b, "dgx-h100", nvidia.ToolNvidiaSMI, "-L")
	require.Len(b, nvidia.ParseNvidiaList(out), 8)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		nvidia.ParseNvidiaList(out)
	}
}

func BenchmarkParseNvidiaProc(b *testing.B) {
	version := fixtureFile(b, "dgx-h100", "proc/driver/nvidia/version")
	require.NotEmpty(b, nvidia.ParseNvidiaProcVersion(version))
	b.ReportAllocs()
	for b.Loop() {
		nvidia.ParseNvidiaProcVersion(version)
	}
}

func BenchmarkParseRocmSMIJSON(b *testing.B) {
	out := toolOutput(b, "mi300x-8", "rocm-smi", amd.ROCmSMIArgs...)
	_, err := amd.ParseRocmSMIJSON(out)
	require.NoError(b, err)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = amd.ParseRocmSMIJSON(out)
	}
}

func BenchmarkParseKFDProperties(b *testing.B) {
	text := fixtureFile(b, "mi300x-8", "sys/class/kfd/kfd/topology/nodes/2/properties")
	require.NotEmpty(b, amd.ParseKFDProperties(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		amd.ParseKFDProperties(text)
	}
}

func BenchmarkParseNeuronLS(b *testing.B) {
	out := toolOutput(b, "trn1-2xlarge", "neuron-ls", aws.NeuronLSArgs...)
	devs, _, err := aws.ParseNeuronLS(out)
	require.NoError(b, err)
	require.NotEmpty(b, devs)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = aws.ParseNeuronLS(out)
	}
}

func BenchmarkParseMemInfo(b *testing.B) {
	text := fixtureFile(b, "dgx-h100", "proc/meminfo")
	require.NotEmpty(b, host.ParseMemInfo(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		host.ParseMemInfo(text)
	}
}

// The dgx-h100 cpuinfo has 224 logical CPUs: the largest procfs file
// detection reads.
func BenchmarkParseCPUInfo(b *testing.B) {
	text := fixtureFile(b, "dgx-h100", "proc/cpuinfo")
	require.Equal(b, 224, host.ParseCPUInfo(text).Logical)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		host.ParseCPUInfo(text)
	}
}

func BenchmarkParseNodeCPUList(b *testing.B) {
	text := strings.TrimSpace(fixtureFile(b, "dgx-h100", "sys/devices/system/node/node0/cpulist"))
	cpus, err := host.ParseCPUList(text)
	require.NoError(b, err)
	require.Len(b, cpus, 112)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = host.ParseCPUList(text)
	}
}

// recordingRunner runs the real tools and keeps every result (and every
// tool lookup) so that a replayRunner can answer the same detection again
// without starting a process.
type recordingRunner struct {
	inner *machine.ExecRunner
	mu    sync.Mutex
	runs  map[string]machine.Result
	has   map[string]bool
}

func runKey(tool string, args []string) string {
	return tool + "\x00" + strings.Join(args, "\x00")
}

func (r *recordingRunner) Run(ctx context.Context, tool string, args ...string) machine.Result {
	res := r.inner.Run(ctx, tool, args...)
	r.mu.Lock()
	r.runs[runKey(tool, args)] = res
	r.mu.Unlock()
	return res
}

func (r *recordingRunner) Has(tool string) bool {
	ok := r.inner.Has(tool)
	r.mu.Lock()
	r.has[tool] = ok
	r.mu.Unlock()
	return ok
}

// replayRunner is a machine whose tools answer instantly: each run returns
// the recorded result (stdout copied, as a real run allocates it).
type replayRunner struct {
	runs map[string]machine.Result
	has  map[string]bool
}

func (r *replayRunner) Run(_ context.Context, tool string, args ...string) machine.Result {
	res, ok := r.runs[runKey(tool, args)]
	if !ok {
		return machine.Result{Err: machine.ErrToolMissing}
	}
	res.Stdout = append([]byte(nil), res.Stdout...)
	return res
}

func (r *replayRunner) Has(tool string) bool { return r.has[tool] }

// instantToolOptions returns fixture options whose runner replays the
// machine's tools, recorded from one real detection.
func instantToolOptions(b *testing.B, host string) Options {
	b.Helper()
	opts := fixtureOptions(b, host, nil)
	rec := &recordingRunner{inner: machine.NewExecRunner(opts.Path, opts.Timeout), runs: map[string]machine.Result{}, has: map[string]bool{}}
	opts.Runner = rec
	_, err := Detect(context.Background(), opts)
	require.NoError(b, err)
	opts.Runner = &replayRunner{runs: rec.runs, has: rec.has}
	return opts
}

// benchMachines lists the fixture machines detection is benchmarked on:
// all of them but "hostile", whose tools hang until the timeout on purpose.
func benchMachines(b *testing.B) []string {
	entries, err := os.ReadDir(filepath.Join("..", "..", "testdata", "machines"))
	require.NoError(b, err)
	var names []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "hostile" {
			names = append(names, e.Name())
		}
	}
	require.NotEmpty(b, names)
	return names
}

// BenchmarkDetectFixture is one whole detection of each fixture machine with
// instant tools: every backend, sysfs and procfs reads, merge, PCI
// enrichment and sorting, no process started. "slow-tools" is the dgx-h100
// tree, so its instant figure is dgx-h100's.
func BenchmarkDetectFixture(b *testing.B) {
	for _, name := range benchMachines(b) {
		b.Run(name, func(b *testing.B) {
			opts := instantToolOptions(b, name)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Detect(context.Background(), opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDetectFixtureExec is the same detection with the fixture's tool
// scripts really started (fork, exec of /bin/sh, pipes, reaping), the way a
// host's detection runs vendor tools. slow-tools' script sleeps 50 ms.
func BenchmarkDetectFixtureExec(b *testing.B) {
	for _, name := range []string{"dgx-h100", "mi300x-8", "gaudi2-8", "cpu-only", "slow-tools"} {
		b.Run(name, func(b *testing.B) {
			opts := fixtureOptions(b, name, nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Detect(context.Background(), opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCacheHit is a detection answered from the cache: key, lookup and
// the deep copy every caller gets.
func BenchmarkCacheHit(b *testing.B) {
	opts := instantToolOptions(b, "dgx-h100")
	opts.CacheTTL = 1 << 62
	c := NewCache()
	reg, err := c.Detect(context.Background(), opts)
	require.NoError(b, err)
	require.Len(b, reg.Devices, 9)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Detect(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}
