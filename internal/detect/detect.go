package detect

import (
	"context"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/apple"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/asic"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/aws"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/google"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/host"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/intel"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vulkan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// backends are every detection source, in name order (BackendNames,
// timing): one package per vendor family, plus the host and Vulkan.
var backends = sortedByName([]machine.Backend{
	apple.Backend, asic.Others, host.CPU, host.Environment, intel.Gaudi, host.InfiniBand,
	intel.GPU, intel.NPU, aws.Neuron, host.NUMA, nvidia.Backend, asic.Qualcomm,
	amd.ROCm, host.Storage, google.TPU, vulkan.Backend, amd.XDNA,
})

func sortedByName(list []machine.Backend) []machine.Backend {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list
}

// BackendNames lists the detection backends.
func BackendNames() []string {
	out := make([]string, len(backends))
	for i, b := range backends {
		out[i] = b.Name
	}
	return out
}

// backendGrace is how long Detect waits, past its deadline, for backends to
// finish: their tools are killed at the deadline and a well-behaved backend
// returns within milliseconds. A backend still running after that is
// abandoned (its Go code ignores ctx); the host gets its answer in time.
const backendGrace = 500 * time.Millisecond

// Detect runs every enabled backend in parallel on the machine described by
// opts and returns the merged registry. It returns an error only when the
// machine view itself cannot be built (bad sysroot); every backend failure is
// a warning. The whole detection is bounded by opts.Timeout (and ctx): it
// returns at the latest backendGrace after that deadline, whatever the
// backends do.
func Detect(ctx context.Context, opts Options) (*registry.Registry, error) {
	return detectWith(ctx, opts, backends)
}

// backendJob is one backend of a detection, run on a worker, and its
// outcome. The jobs of a detection are one slice, not a closure each, and a
// backend marks only its own job finished: the closures and the outcomes
// copied through a channel and into a map were 17 allocations and some
// 6 KB per detection (docs/performance.md, "Fourth pass").
type backendJob struct {
	ctx     context.Context
	m       *machine.Machine
	backend machine.Backend
	start   time.Time
	outcome *outcomes

	// Written by run before it marks the job finished; read by the
	// orchestrator only after seeing the mark (the atomic orders the two).
	// A backend abandoned at the deadline writes them when nobody reads
	// them anymore.
	findings machine.Findings
	took     time.Duration
	finished atomic.Bool
}

// outcomes is what the workers of one detection report: how many of their
// jobs are left, and a channel closed by the last to finish, so the
// orchestrator wakes once per detection, not once per backend (a caller of
// the C ABI is a thread Go hands its P to and back on every wake-up:
// docs/performance.md, "Fifth pass").
type outcomes struct {
	left atomic.Int32
	all  chan struct{}
}

// run runs the backend and marks its job finished once the outcome is
// written.
func (j *backendJob) run() {
	j.findings = runBackend(j.ctx, j.m, j.backend)
	j.took = time.Since(j.start)
	j.finished.Store(true)
	if j.outcome.left.Add(-1) == 0 {
		close(j.outcome.all)
	}
}

// runInline runs the backend of j on the calling goroutine (machine/inline.go)
// and reports whether it ran to the end; false when it was refused
// something and must run on a worker, its findings dropped.
func (j *backendJob) runInline() bool {
	j.m.StartInlineBackend()
	f := runBackend(j.ctx, j.m, j.backend)
	if j.m.InlineEscaped() {
		return false
	}
	j.findings, j.took = f, time.Since(j.start)
	j.finished.Store(true)
	return true
}

// detectWith is Detect over an explicit list of backends (tests pass their own).
func detectWith(ctx context.Context, opts Options, list []machine.Backend) (*registry.Registry, error) {
	start := time.Now()
	opts = opts.withDefaults()
	cfg, err := newView(opts)
	if err != nil {
		return nil, err
	}
	cfg.Runner = machine.NewOnceRunner(cfg.Runner)
	m, err := machine.New(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	// Cancelling on return kills the tools of abandoned backends and keeps
	// them from starting new ones.
	defer cancel()

	// With opts.InlineKernelReads, backends first run on this goroutine,
	// one after another, as long as they only read what the kernel's core
	// writes (machine/inline.go): no hand-off between threads at all on a
	// machine without accelerators. The others (all of them without
	// InlineKernelReads) run on workers, those refused something again
	// from the start. Each writes its outcome into its own job and touches
	// nothing else shared, so a backend that finishes after Detect returned
	// writes into a job and a channel nobody reads and exits: no data race,
	// no leak beyond it.
	out := &outcomes{all: make(chan struct{})}
	jobs := takeJobs(len(list))
	allFinished := true
	inline := opts.InlineKernelReads && m.BeginInline()
	pending := 0
	for i, b := range list {
		if !opts.enabled(b.Name) {
			continue
		}
		jobs[i] = backendJob{ctx: ctx, m: m, backend: b, start: time.Now(), outcome: out}
		if inline && jobs[i].runInline() {
			continue
		}
		pending++
	}
	m.EndInline()
	if pending > 0 {
		out.left.Store(int32(pending))
		for i := range jobs {
			if jobs[i].m != nil && !jobs[i].finished.Load() {
				jobs[i].start = time.Now()
				runOnWorker(&jobs[i])
			}
		}
		allFinished = waitOutcomes(ctx, out.all)
	}

	reg := registry.New()
	timing := &registry.Timing{Backends: make(map[string]float64, len(list))}
	var dropped map[string]int // warnings each backend's Findings already dropped; made when one did
	for i, b := range list {
		if !opts.enabled(b.Name) {
			continue
		}
		if !jobs[i].finished.Load() {
			timing.Backends[b.Name] = ms(time.Since(jobs[i].start))
			reg.Warnings = append(reg.Warnings, registry.Warning{Backend: b.Name, Code: registry.WarnBackendTimeout,
				Message: fmt.Sprintf("still running %v after the %v detection deadline; its findings are dropped",
					backendGrace, opts.Timeout)})
			continue
		}
		o := &jobs[i] // its worker wrote it before reporting
		timing.Backends[b.Name] = ms(o.took)
		addFindings(reg, b.Name, o.findings)
		if n := o.findings.DroppedWarnings; n > 0 {
			if dropped == nil {
				dropped = map[string]int{}
			}
			dropped[b.Name] += n
		}
	}
	reg.Warnings = append(reg.Warnings, m.Notes()...)
	reg.Warnings = capWarnings(reg.Warnings, dropped)
	mergeByBusID(reg, m.VendorAt)
	machine.EnrichPCI(m, reg)
	machine.EnrichNICAffinity(m, reg)
	reg.SortDevices()
	reg.Normalize()
	// Names and messages come from the machine: no control or bidirectional
	// formatting character may reach a host that prints them (issue 23 item 11).
	registry.ScrubText(reg)
	if allFinished {
		giveBackJobs(jobs)
	}
	timing.TotalMs = ms(time.Since(start))
	reg.Timing = timing
	return reg, nil
}

// jobSlices holds the jobs slices of finished detections for the next: some
// 4 KB a detection (docs/performance.md, "Eighth pass").
var jobSlices sync.Pool

// takeJobs returns n zero jobs, from jobSlices when it has a slice big enough.
func takeJobs(n int) []backendJob {
	if p, ok := jobSlices.Get().(*[]backendJob); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]backendJob, n)
}

// giveBackJobs clears the jobs and keeps them for takeJobs. Only a detection
// whose every worker finished may give them back: a worker touches its job
// until it reports (backendJob.run), an abandoned one after the detection
// returned.
func giveBackJobs(jobs []backendJob) {
	clear(jobs)
	jobSlices.Put(&jobs)
}

// waitOutcomes waits until all is closed (every backend handed to a worker
// has finished) or backendGrace has passed since ctx ended, and reports
// whether all was closed. Backends whose jobs are not marked finished then
// are the ones abandoned.
func waitOutcomes(ctx context.Context, all <-chan struct{}) bool {
	select {
	case <-all:
		return true
	case <-ctx.Done():
	}
	t := time.NewTimer(backendGrace)
	defer t.Stop()
	select {
	case <-all:
		return true
	case <-t.C:
		return false
	}
}

// runBackend runs one backend, turning a panic into a warning so one broken
// backend never takes the others (or the host) down.
func runBackend(ctx context.Context, m *machine.Machine, b machine.Backend) (f machine.Findings) {
	defer func() {
		if p := recover(); p != nil {
			f = machine.Findings{}
			f.Warn(b.Name, registry.WarnPanic, "backend failed: %v (%s)", p, firstStackLine(debug.Stack()))
		}
	}()
	return b.Detect(ctx, m)
}

func firstStackLine(s []byte) string {
	// Skip the goroutine header and the panic frames; keep it short.
	if len(s) > 300 {
		s = s[:300]
	}
	return machine.CleanText(string(s))
}

// addFindings folds one backend's findings into reg, making device keys
// unique per backend so two backends cannot collide.
func addFindings(reg *registry.Registry, backend string, f machine.Findings) {
	key := func(id string) string { return backend + "|" + id }
	for i, d := range f.Devices {
		if d.ID == "" {
			d.ID = fmt.Sprintf("%s#%d", d.Kind, i)
		}
		d.ID = key(d.ID)
		if d.MIG != nil && d.MIG.Parent != "" {
			mig := *d.MIG // a MIG instance names its parent by the backend's id
			mig.Parent = key(mig.Parent)
			d.MIG = &mig
		}
		if d.Partition != nil { // likewise a partition and its GPU
			d.Partition = d.Partition.Renamed(key)
		}
		reg.Devices = append(reg.Devices, d)
	}
	for _, ic := range f.Interconnects {
		devs := make([]string, len(ic.Devices))
		for j, id := range ic.Devices {
			devs[j] = key(id)
		}
		ic.Devices = devs
		reg.SystemIO.Interconnects = append(reg.SystemIO.Interconnects, ic)
	}
	reg.SystemIO.NUMANodes = append(reg.SystemIO.NUMANodes, f.NUMANodes...)
	reg.SystemIO.Storage = append(reg.SystemIO.Storage, f.Storage...)
	if f.Environment != nil {
		reg.SystemIO.Environment = f.Environment
	}
	reg.Warnings = append(reg.Warnings, f.Warnings...)
}

// capWarnings keeps the first machine.MaxWarningsPerBackend warnings of each
// backend, in order, and adds for each backend that had more one
// warnings_dropped warning with the count (dropped adds what the backend's
// Findings dropped already; nil when none did). Backends that append to Findings.Warnings
// directly are capped here.
func capWarnings(ws []registry.Warning, dropped map[string]int) []registry.Warning {
	kept := map[string]int{}
	out := ws[:0]
	var order []string
	for _, w := range ws {
		if kept[w.Backend] >= machine.MaxWarningsPerBackend {
			if dropped == nil {
				dropped = map[string]int{}
			}
			dropped[w.Backend]++
			continue
		}
		kept[w.Backend]++
		out = append(out, w)
	}
	for b, n := range dropped {
		if n > 0 {
			order = append(order, b)
		}
	}
	sort.Strings(order)
	for _, b := range order {
		out = append(out, registry.Warning{Backend: b, Code: registry.WarnWarningsDropped,
			Message: fmt.Sprintf("%d more warnings dropped (at most %d per backend)", dropped[b], machine.MaxWarningsPerBackend)})
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
