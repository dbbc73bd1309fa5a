package detect

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// liveNoTools is a detection of this machine with an empty PATH, as
// BenchmarkDetectLive and the C harness make it.
func liveNoTools(t *testing.T) Options {
	t.Helper()
	if st, err := os.Stat("/sys/bus/pci"); err != nil || !st.IsDir() {
		t.Skip("no sysfs at /sys")
	}
	return Options{Sysroot: "/", LookupEnv: func(name string) (string, bool) {
		if name == "PATH" {
			return "", true
		}
		return os.LookupEnv(name)
	}}
}

// TestInlineRunsAnswerAsWorkers: a detection of this machine whose backends
// run on the caller (machine/inline.go) finds what the same detection with
// every backend on a worker finds. The memory figures move between two
// detections, so devices are compared by identity and memory total.
func TestInlineRunsAnswerAsWorkers(t *testing.T) {
	opts := liveNoTools(t)
	workers, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	opts.InlineKernelReads = true
	inline, err := Detect(context.Background(), opts)
	require.NoError(t, err)

	type identity struct {
		ID, Name string
		Kind     registry.Kind
		Memory   int64
	}
	ids := func(r *registry.Registry) (out []identity) {
		for _, d := range r.Devices {
			out = append(out, identity{d.ID, d.Name, d.Kind, d.MemoryBytes})
		}
		return out
	}
	require.NotEmpty(t, ids(inline), "the host CPU at least")
	assert.Equal(t, ids(workers), ids(inline))
	assert.Equal(t, workers.Warnings, inline.Warnings)
	assert.Equal(t, workers.SystemIO.Environment, inline.SystemIO.Environment)
	assert.Equal(t, workers.SystemIO.Storage, inline.SystemIO.Storage)
	assert.Equal(t, len(workers.SystemIO.NUMANodes), len(inline.SystemIO.NUMANodes))
	assert.Equal(t, BackendNames(), sortedKeys(inline.Timing.Backends), "every backend timed")
}

func sortedKeys(m map[string]float64) []string {
	var out []string
	for _, n := range BackendNames() {
		if _, ok := m[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// fixedRunner answers every tool with out.
type fixedRunner struct{ out string }

func (r fixedRunner) Run(context.Context, string, ...string) machine.Result {
	return machine.Result{Stdout: []byte(r.out)}
}

// TestInlineRunEscapesToWorker: a backend that reads a file the kernel's
// core does not write, or runs a tool that resolves, is run again on a
// worker, and its findings are the worker run's; one that reads only core
// files runs once, on the caller.
func TestInlineRunEscapesToWorker(t *testing.T) {
	opts := liveNoTools(t)
	opts.InlineKernelReads = true
	opts.Runner = fixedRunner{out: "tool output"}
	var coreRuns, fileRuns, toolRuns atomic.Int32
	named := func(name string, runs *atomic.Int32, read func(m *machine.Machine) string) machine.Backend {
		return machine.Backend{Name: name, Detect: func(ctx context.Context, m *machine.Machine) machine.Findings {
			runs.Add(1)
			var f machine.Findings
			f.Devices = append(f.Devices, registry.Device{ID: "0", Kind: registry.KindCPU, Name: name + ": " + read(m)})
			return f
		}}
	}
	list := []machine.Backend{
		named("core", &coreRuns, func(m *machine.Machine) string {
			_, err := m.ReadString(machine.PathMemInfo)
			return errText(err)
		}),
		named("file", &fileRuns, func(m *machine.Machine) string {
			_, err := m.ReadString("proc/version") // procfs, not on the inline list
			return errText(err)
		}),
		named("tool", &toolRuns, func(m *machine.Machine) string {
			out, _, ok := m.Tool(context.Background(), "tool", "some-tool")
			if !ok {
				return "no output"
			}
			return string(out)
		}),
	}
	reg, err := detectWith(context.Background(), opts, list)
	require.NoError(t, err)
	var names []string
	for _, d := range reg.Devices {
		names = append(names, d.Name)
	}
	assert.ElementsMatch(t, []string{"core: read", "file: read", "tool: tool output"}, names)
	assert.Equal(t, int32(1), coreRuns.Load(), "core reads run once, inline")
	assert.Equal(t, int32(2), fileRuns.Load(), "refused inline, run again on a worker")
	assert.Equal(t, int32(2), toolRuns.Load(), "refused inline, run again on a worker")
	assert.Empty(t, reg.Warnings)
}

func errText(err error) string {
	if err != nil {
		return err.Error()
	}
	return "read"
}
