package machine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Errors a Runner reports in Result.Err (wrapped with detail).
var (
	ErrToolMissing = errors.New("tool not found")
	ErrTimeout     = errors.New("timed out")
	ErrTooLarge    = errors.New("output too large")
	ErrExit        = errors.New("tool failed")
)

// DefaultRunTimeout bounds a tool run, and a detection, when no timeout is given.
const DefaultRunTimeout = 5 * time.Second

// MaxToolOutput caps what a tool may print on stdout; the run is killed past it.
const MaxToolOutput = 4 << 20

// Result is the outcome of one tool run.
type Result struct {
	Path     string // absolute path that ran
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	Err      error // nil on success (exit 0 with output read whole)
	Duration time.Duration
	// LeftRunning counts processes the tool started outside its process
	// group (daemons) that were still running after it exited; the runner
	// killed them. Machine.Tool reports them (WarnToolLeftProcess).
	LeftRunning int
	// StatusLost is set when the host reaped the tool before the runner
	// could read its exit status (it ignores SIGCHLD, or calls waitpid(-1)):
	// Err is nil when the tool printed output, which may be a failure's.
	// Machine.Tool reports it (WarnToolStatusLost).
	StatusLost bool
	// StdoutHeld is set when the tool exited but its stdout did not reach
	// end-of-file: a process that left its group (and was not found by the
	// run's marker) holds it. What the tool printed before it exited is
	// used (Err is nil for a successful exit; issue 23 item 8); Machine.Tool
	// reports it (WarnToolLeftProcess).
	StdoutHeld bool
}

// Runner runs vendor tools. Implementations must be safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, tool string, args ...string) Result
}

// onceRunner runs each distinct command line at most once per detection;
// concurrent callers of the same command share the one run. A tool that timed
// out is not started again in the same detection (a hung driver hangs every
// query), so one hang costs one timeout, not one per query.
type onceRunner struct {
	inner Runner
	mu    sync.Mutex
	calls map[string]*onceCall
	hung  map[string]bool // tools that timed out in this detection
}

type onceCall struct {
	done chan struct{}
	res  Result
}

var _ Runner = (*onceRunner)(nil)

// NewOnceRunner wraps inner so that each distinct command runs once per
// detection (see onceRunner).
func NewOnceRunner(inner Runner) *onceRunner {
	return &onceRunner{inner: inner, calls: map[string]*onceCall{}, hung: map[string]bool{}}
}

// runKey is the key of a run: tool, then each argument after a NUL, built
// in one allocation: adding each argument to the key made one string
// per argument, some 1 KB a detection (docs/performance.md, "Eighth pass").
func runKey(tool string, args []string) string {
	n := len(tool)
	for _, a := range args {
		n += 1 + len(a)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(tool)
	for _, a := range args {
		b.WriteByte(0)
		b.WriteString(a)
	}
	return b.String()
}

func (o *onceRunner) Run(ctx context.Context, tool string, args ...string) Result {
	key := runKey(tool, args)
	o.mu.Lock()
	c, ok := o.calls[key]
	if !ok {
		if o.hung[tool] {
			o.mu.Unlock()
			return Result{Err: fmt.Errorf("not started: %s timed out earlier in this detection: %w", tool, ErrTimeout)}
		}
		c = &onceCall{done: make(chan struct{})}
		o.calls[key] = c
	}
	o.mu.Unlock()
	if ok {
		select {
		case <-c.done:
			return c.res
		case <-ctx.Done():
			return Result{Err: fmt.Errorf("%s: gave up waiting for a shared run: %w", tool, ErrTimeout)}
		}
	}
	// close in a defer: a Runner that panics must not leave sharers waiting.
	// Sharers of a run that panicked see a failure, never an empty success
	// (the error is made only then: most runs of a machine without tools
	// fail at once, and formatting it every time cost as much as the run).
	ran := false
	defer func() {
		if !ran {
			c.res = Result{Err: fmt.Errorf("%s: runner failed: %w", tool, ErrExit)}
		}
		close(c.done)
	}()
	c.res = o.inner.Run(ctx, tool, args...)
	ran = true
	if errors.Is(c.res.Err, ErrTimeout) {
		o.mu.Lock()
		o.hung[tool] = true
		o.mu.Unlock()
	}
	return c.res
}

// Lacks forwards to the inner runner when it can tell (Machine.LacksTool).
func (o *onceRunner) Lacks(tool string) bool {
	l, ok := o.inner.(interface{ Lacks(string) bool })
	return ok && l.Lacks(tool)
}

// Has forwards tool resolution to the inner runner when it can answer.
func (o *onceRunner) Has(tool string) bool {
	if l, ok := o.inner.(interface{ Has(string) bool }); ok {
		return l.Has(tool)
	}
	return true
}
