//go:build unix

package detect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ExecRunner runs tools found on its own PATH, never the process PATH: each
// tool is resolved to an absolute, executable regular file (relative PATH
// entries are ignored), runs in its own process group with stdin closed and a
// minimal environment, has stdout and stderr read concurrently and capped
// while streaming, and is killed with its whole group (SIGKILL) on timeout or
// overflow without waiting on pipes held open by grandchildren.
type ExecRunner struct {
	path    []string
	timeout time.Duration
	// WaitDelay bounds how long to wait for pipes after the process exits or
	// is killed (a grandchild may hold them open).
	WaitDelay time.Duration
}

var _ Runner = (*ExecRunner)(nil)

// NewExecRunner returns a runner that resolves tools on pathList (a PATH
// value) and bounds each run by timeout.
func NewExecRunner(pathList string, timeout time.Duration) *ExecRunner {
	var dirs []string
	for _, d := range filepath.SplitList(pathList) {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	return &ExecRunner{path: dirs, timeout: timeout, WaitDelay: 100 * time.Millisecond}
}

// Resolve returns the absolute path of tool on the runner's PATH, or "".
func (r *ExecRunner) Resolve(tool string) string {
	if tool == "" || strings.ContainsRune(tool, '/') {
		return ""
	}
	for _, d := range r.path {
		p := filepath.Join(d, tool)
		st, err := os.Stat(p)
		if err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Has reports whether tool resolves (so a missing tool costs no process).
func (r *ExecRunner) Has(tool string) bool { return r.Resolve(tool) != "" }

// Run runs tool with args. It never panics and always returns.
func (r *ExecRunner) Run(ctx context.Context, tool string, args ...string) Result {
	start := time.Now()
	p := r.Resolve(tool)
	if p == "" {
		return Result{Err: fmt.Errorf("%s: %w", tool, ErrToolMissing)}
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Env = []string{"PATH=" + strings.Join(r.path, ":"), "LC_ALL=C", "LANG=C"}
	cmd.Stdin = nil // /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Kill the whole group: a tool that forks helpers must not outlive us.
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return nil
	}
	cmd.WaitDelay = r.WaitDelay
	var overflow sync.Once
	overflowed := false
	stdout := &capWriter{max: MaxToolOutput, onFull: func() {
		overflow.Do(func() { overflowed = true; cancel() })
	}}
	stderr := &capWriter{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	err := cmd.Run()
	// A grandchild still in the group (kept stdout open, ignored SIGTERM)
	// dies with it, whatever happened to the leader.
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := Result{Path: p, Stdout: stdout.bytes(), Stderr: stderr.bytes(), Duration: time.Since(start)}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case overflowed:
		res.Err = fmt.Errorf("printed more than %d bytes: %w", MaxToolOutput, ErrTooLarge)
	case ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		res.Err = fmt.Errorf("no answer within %v: %w", r.timeout, ErrTimeout)
	case err == nil:
	case errors.Is(err, exec.ErrWaitDelay):
		// The tool exited but a child kept its pipes open; the output we have
		// is what the tool printed.
		if res.ExitCode != 0 {
			res.Err = fmt.Errorf("exit status %d: %w", res.ExitCode, ErrExit)
		}
	case errors.Is(err, syscall.ECHILD):
		// The host ignores SIGCHLD, so the kernel reaped the child before we
		// could read its status; the output is complete, the status unknown.
		if len(res.Stdout) == 0 {
			res.Err = fmt.Errorf("status lost (host ignores SIGCHLD) and no output: %w", ErrExit)
		}
	default:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ee.ExitCode() < 0 {
				res.Err = fmt.Errorf("killed by %v: %w", ee.ProcessState, ErrExit)
			} else {
				res.Err = fmt.Errorf("exit status %d: %w", ee.ExitCode(), ErrExit)
			}
		} else {
			res.Err = fmt.Errorf("%v: %w", err, ErrExit)
		}
	}
	return res
}

// capWriter keeps at most max bytes and calls onFull once when more arrive.
type capWriter struct {
	mu     sync.Mutex
	buf    []byte
	max    int
	full   bool
	onFull func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	room := w.max - len(w.buf)
	if len(p) <= room {
		w.buf = append(w.buf, p...)
		w.mu.Unlock()
		return len(p), nil
	}
	if room > 0 {
		w.buf = append(w.buf, p[:room]...)
	}
	first := !w.full
	w.full = true
	w.mu.Unlock()
	if first && w.onFull != nil {
		w.onFull()
	}
	// Keep draining (and discarding) so the child never blocks on a full
	// pipe before the kill lands.
	return len(p), nil
}

func (w *capWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.buf...)
}
