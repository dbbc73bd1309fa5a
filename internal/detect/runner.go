package detect

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Errors a Runner reports in Result.Err (wrapped with detail).
var (
	ErrToolMissing = errors.New("tool not found")
	ErrTimeout     = errors.New("timed out")
	ErrTooLarge    = errors.New("output too large")
	ErrExit        = errors.New("exited with non-zero status")
)

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
}

// Runner runs vendor tools. Implementations must be safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, tool string, args ...string) Result
}

// onceRunner runs each distinct command line at most once per detection;
// concurrent callers of the same command share the one run.
type onceRunner struct {
	inner Runner
	mu    sync.Mutex
	calls map[string]*onceCall
}

type onceCall struct {
	done chan struct{}
	res  Result
}

var _ Runner = (*onceRunner)(nil)

func newOnceRunner(inner Runner) *onceRunner {
	return &onceRunner{inner: inner, calls: map[string]*onceCall{}}
}

func (o *onceRunner) Run(ctx context.Context, tool string, args ...string) Result {
	key := tool
	for _, a := range args {
		key += "\x00" + a
	}
	o.mu.Lock()
	c, ok := o.calls[key]
	if !ok {
		c = &onceCall{done: make(chan struct{})}
		o.calls[key] = c
	}
	o.mu.Unlock()
	if ok {
		select {
		case <-c.done:
			return c.res
		case <-ctx.Done():
			return Result{Err: ErrTimeout}
		}
	}
	c.res = o.inner.Run(ctx, tool, args...)
	close(c.done)
	return c.res
}

// Has forwards tool resolution to the inner runner when it can answer.
func (o *onceRunner) Has(tool string) bool {
	if l, ok := o.inner.(interface{ Has(string) bool }); ok {
		return l.Has(tool)
	}
	return true
}
