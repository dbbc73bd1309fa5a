package machine

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingRunner is a test Runner that counts runs per command line and
// answers through fn.
type countingRunner struct {
	mu    sync.Mutex
	calls map[string]int
	fn    func(ctx context.Context, tool string, args []string) Result
	has   map[string]bool // nil: every tool is present
}

func (c *countingRunner) Run(ctx context.Context, tool string, args ...string) Result {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[strings.Join(append([]string{tool}, args...), " ")]++
	c.mu.Unlock()
	if c.fn == nil {
		return Result{Stdout: []byte(tool + " " + strings.Join(args, " "))}
	}
	return c.fn(ctx, tool, args)
}

func (c *countingRunner) Has(tool string) bool { return c.has == nil || c.has[tool] }

func (c *countingRunner) count(cmdline string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[cmdline]
}

func (c *countingRunner) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.calls {
		n += v
	}
	return n
}

func TestRunnerOnceSharesConcurrentRuns(t *testing.T) {
	release := make(chan struct{})
	inner := &countingRunner{fn: func(ctx context.Context, tool string, args []string) Result {
		<-release
		return Result{Stdout: []byte("answer")}
	}}
	o := NewOnceRunner(inner)
	const n = 16
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := o.Run(context.Background(), "nvidia-smi", "-q")
			if res.Err == nil && string(res.Stdout) == "answer" {
				ok.Add(1)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let every caller arrive while the run is in flight
	close(release)
	wg.Wait()
	assert.Equal(t, int32(n), ok.Load())
	assert.Equal(t, 1, inner.count("nvidia-smi -q"))

	// A later identical call reuses the answer; other arguments run anew.
	o.Run(context.Background(), "nvidia-smi", "-q")
	o.Run(context.Background(), "nvidia-smi", "-L")
	o.Run(context.Background(), "nvidia-smi", "-q", "")
	assert.Equal(t, 1, inner.count("nvidia-smi -q"))
	assert.Equal(t, 1, inner.count("nvidia-smi -L"))
	assert.Equal(t, 3, inner.total(), `"-q" and "-q" "" are different command lines`)
}

func TestRunnerOnceSkipsToolThatHung(t *testing.T) {
	inner := &countingRunner{fn: func(ctx context.Context, tool string, args []string) Result {
		if tool == "rocm-smi" {
			return Result{Err: ErrTimeout}
		}
		return Result{Stdout: []byte("ok")}
	}}
	o := NewOnceRunner(inner)
	require.ErrorIs(t, o.Run(context.Background(), "rocm-smi", "--showid").Err, ErrTimeout)
	res := o.Run(context.Background(), "rocm-smi", "--showmeminfo", "vram")
	require.ErrorIs(t, res.Err, ErrTimeout)
	assert.Contains(t, res.Err.Error(), "timed out earlier")
	assert.Equal(t, 0, inner.count("rocm-smi --showmeminfo vram"), "a hung tool is not started again")
	require.NoError(t, o.Run(context.Background(), "hl-smi", "-L").Err, "other tools are unaffected")
}

func TestRunnerOnceWaiterGivesUpAtItsDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	inner := &countingRunner{fn: func(ctx context.Context, tool string, args []string) Result {
		<-release
		return Result{}
	}}
	o := NewOnceRunner(inner)
	go o.Run(context.Background(), "xpu-smi", "discovery")
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := o.Run(ctx, "xpu-smi", "discovery")
	require.ErrorIs(t, res.Err, ErrTimeout)
	assert.Less(t, time.Since(start), time.Second)
}

func TestRunnerOncePanickingRunnerFailsSharers(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	inner := &countingRunner{fn: func(ctx context.Context, tool string, args []string) Result {
		close(entered)
		<-release
		panic("runner bug")
	}}
	o := NewOnceRunner(inner)
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		o.Run(context.Background(), "hl-smi")
	}()
	<-entered
	shared := make(chan Result, 1)
	go func() { shared <- o.Run(context.Background(), "hl-smi") }()
	time.Sleep(20 * time.Millisecond)
	close(release)
	assert.Equal(t, "runner bug", <-panicked)
	select {
	case res := <-shared:
		require.ErrorIs(t, res.Err, ErrExit, "a sharer sees a failure, not an empty success")
	case <-time.After(2 * time.Second):
		t.Fatal("sharer of a panicked run never returned")
	}
}

func TestRunnerOnceForwardsHas(t *testing.T) {
	o := NewOnceRunner(&countingRunner{has: map[string]bool{"hl-smi": true}})
	assert.True(t, o.Has("hl-smi"))
	assert.False(t, o.Has("nvidia-smi"))
}
