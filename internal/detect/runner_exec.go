//go:build unix

package detect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxToolStderr caps what is kept of a tool's stderr: only its first line
// reaches a warning, the rest is drained and dropped so the tool never blocks.
const maxToolStderr = 16 << 10

// defaultWaitDelay bounds how long a run waits for a tool's pipes once the
// tool has exited or been killed: a grandchild that escaped the kill (or a
// daemon it started) may hold them open forever.
const defaultWaitDelay = 100 * time.Millisecond

// ExecRunner runs tools found on its own PATH, never the process PATH: each
// tool is resolved to an absolute, executable regular file (relative PATH
// entries are ignored), runs in its own process group with stdin closed and a
// minimal environment, has stdout and stderr read concurrently and capped
// while streaming, and is killed with its whole group (SIGKILL) on timeout or
// overflow without waiting on pipes held open by grandchildren.
//
// Why each rule (../shared/reference-study.md §5.1, §7.2 #1, #2, #18): the
// Rust crate read output only after exit (a tool printing more than the 64 KiB
// pipe buffer stalled until killed), accepted relative PATH entries and files
// without the exec bit, passed the whole environment but four loader
// variables, and did not kill on timeout in its async runner.
type ExecRunner struct {
	path    []string
	timeout time.Duration
	// WaitDelay bounds how long to wait for pipes after the process exits or
	// is killed (a grandchild may hold them open).
	WaitDelay time.Duration
}

var _ Runner = (*ExecRunner)(nil)

// NewExecRunner returns a runner that resolves tools on pathList (a PATH
// value) and bounds each run by timeout (DefaultTimeout when not positive).
// Relative and empty entries of pathList are dropped: resolution must not
// depend on the host's working directory.
func NewExecRunner(pathList string, timeout time.Duration) *ExecRunner {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var dirs []string
	seen := map[string]bool{}
	for _, d := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return &ExecRunner{path: dirs, timeout: timeout, WaitDelay: defaultWaitDelay}
}

// Resolve returns the absolute path of tool on the runner's PATH, or "".
// Directories, special files and files without an exec bit are skipped, and
// the search goes on to the next PATH entry as a shell's would.
func (r *ExecRunner) Resolve(tool string) string {
	if tool == "" || strings.ContainsRune(tool, '/') || tool == "." || tool == ".." {
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

// systemPath is appended to the PATH a tool sees (never to the PATH tools are
// resolved on): vendor tools are scripts too (rocm-smi starts with
// "#!/usr/bin/env python3") and need the system's programs, which live in
// root-owned directories.
var systemPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// toolEnv is the whole environment a tool gets: a PATH of absolute
// directories (the runner's, then the system's) and the C locale (so numbers
// and labels are printed the way parsers expect). Nothing else: no
// LD_PRELOAD, LD_LIBRARY_PATH, PYTHONPATH (rocm-smi is Python) or host secrets.
func (r *ExecRunner) toolEnv() []string {
	dirs := append([]string(nil), r.path...)
	for _, d := range systemPath {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return []string{"PATH=" + strings.Join(dirs, ":"), "LC_ALL=C", "LANG=C"}
}

// Run runs tool with args. It never panics and always returns, at the latest
// WaitDelay after the earlier of ctx's deadline and the runner's timeout.
func (r *ExecRunner) Run(ctx context.Context, tool string, args ...string) Result {
	start := time.Now()
	p := r.Resolve(tool)
	if p == "" {
		return Result{Err: fmt.Errorf("%s: %w", tool, ErrToolMissing)}
	}
	if ctx.Err() != nil {
		// The detection is over; starting a process now would only be killed.
		return Result{Path: p, Err: fmt.Errorf("not started, detection deadline passed: %w", ErrTimeout)}
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()

	var overflowed atomic.Bool
	stdout := &capWriter{max: MaxToolOutput, onFull: func() {
		overflowed.Store(true)
		cancel() // kills the group through cmd.Cancel
	}}
	stderr := &capWriter{max: maxToolStderr}
	cmd := r.command(ctx, p, args, stdout, stderr)

	err := cmd.Run()
	// Whatever happened to the leader, nothing it started may outlive the run:
	// a child that kept stdout open, or one that ignores SIGTERM, dies here.
	// The group id stays reserved while any member lives, so this cannot hit
	// an unrelated process group.
	killGroup(cmd)

	res := Result{Path: p, Stdout: stdout.bytes(), Stderr: stderr.bytes(), Duration: time.Since(start)}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	res.Err = r.classify(ctx, cmd, err, overflowed.Load(), len(res.Stdout))
	return res
}

// command builds the exec.Cmd for one run.
func (r *ExecRunner) command(ctx context.Context, p string, args []string, stdout, stderr *capWriter) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Env = r.toolEnv()
	cmd.Dir = "/"
	cmd.Stdin = nil // the null device: a tool that prompts gets EOF at once
	// Stdout and stderr are not *os.File, so os/exec copies each in its own
	// goroutine while the tool runs: no pipe buffer can fill up and stall it.
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// SIGKILL to the whole group: SIGTERM can be ignored, and helpers the
		// tool forked must die with it.
		killGroup(cmd)
		return nil
	}
	cmd.WaitDelay = r.WaitDelay
	return cmd
}

// killGroup sends SIGKILL to the process group the run created.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// classify turns the outcome of cmd.Run into Result.Err (nil for success).
func (r *ExecRunner) classify(ctx context.Context, cmd *exec.Cmd, err error, overflowed bool, stdoutLen int) error {
	exitedOK := cmd.ProcessState != nil && cmd.ProcessState.Success()
	switch {
	case overflowed:
		return fmt.Errorf("printed more than %d bytes: %w", MaxToolOutput, ErrTooLarge)
	case err == nil:
		return nil
	case errors.Is(err, exec.ErrWaitDelay) && exitedOK:
		// The tool exited 0 but a child kept its pipes open; what we have is
		// everything the tool printed before it exited.
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("killed after %v: %w", r.timeout.Round(time.Millisecond), ErrTimeout)
	case errors.Is(err, syscall.ECHILD):
		// The host ignores SIGCHLD, so the kernel reaped the child before we
		// could read its status (../shared/cabi-notes.md §1.1). The pipes
		// reached EOF, so the output is complete; only the status is unknown.
		if stdoutLen == 0 {
			return fmt.Errorf("exit status lost (host ignores SIGCHLD) and no output: %w", ErrExit)
		}
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Errorf("killed by signal %v: %w", ws.Signal(), ErrExit)
		}
		return fmt.Errorf("exit status %d: %w", ee.ExitCode(), ErrExit)
	}
	// Start failed: not an executable format, permission denied, ...
	return fmt.Errorf("%v: %w", err, ErrExit)
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
