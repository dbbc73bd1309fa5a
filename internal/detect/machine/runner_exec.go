//go:build unix

package machine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxToolStderr caps what is kept of a tool's stderr: only its first line
// reaches a warning, the rest is drained and dropped so the tool never blocks.
const maxToolStderr = 16 << 10

// ErrOutputIncomplete reports a run whose output was incomplete. The live
// runner no longer fails a run for it: a tool that exited while a process
// outside its group still holds stdout has its output used
// (Result.StdoutHeld). It remains a sentinel of recorded runs (snapshots).
var ErrOutputIncomplete = errors.New("output incomplete")

// defaultDrainTimeout bounds how long a run keeps reading a tool's pipes after
// the tool exited and its process group was killed. Every writer is dead by
// then, so end-of-file normally comes as soon as the reading goroutines get
// the CPU; it is generous because on an oversubscribed machine they may wait
// long for it (64 host threads on 2 cores starved them past 100 ms). Only a
// process that escaped the group can make a run wait this long.
const defaultDrainTimeout = 2 * time.Second

// killedDrainTimeout bounds the reading after a run that was killed (timeout,
// cancellation, overflow): its output is not used, only its stderr may be
// quoted, so the run must not outlive its deadline by more than this.
const killedDrainTimeout = 100 * time.Millisecond

// ExecRunner runs tools found on its own PATH, never the process PATH: each
// tool is resolved to an absolute, executable regular file (relative PATH
// entries are ignored), runs in its own process group with stdin closed and a
// minimal environment, has stdout and stderr read concurrently and capped
// while streaming, and is killed with its whole group (SIGKILL) on timeout or
// overflow. The group is killed again once the tool exits, so every pipe
// writer is dead and reading goes on until end-of-file: output the tool wrote
// before it exited is never dropped, however late the readers get the CPU.
//
// Why each rule (the Rust crate ai-hwaccel 1.2.0, source at
// https://docs.rs/crate/ai-hwaccel/1.2.0/source/; docs/comparison.md): the
// Rust crate read output only after exit (a tool printing more than the 64 KiB
// pipe buffer stalled until killed), accepted relative PATH entries and files
// without the exec bit, passed the whole environment but four loader
// variables, and did not kill on timeout in its async runner.
type ExecRunner struct {
	path    []string
	timeout time.Duration
	// DrainTimeout bounds how long reading goes on after the tool exited and
	// its group was killed, waiting for end-of-file (defaultDrainTimeout).
	// Past it the run fails with ErrOutputIncomplete.
	DrainTimeout time.Duration

	dirsMu sync.Mutex
	dirs   map[string]pathDirSeen // PATH directories as first seen (dirWitness)
}

var _ Runner = (*ExecRunner)(nil)

// NewExecRunner returns a runner that resolves tools on pathList (a PATH
// value) and bounds each run by timeout (DefaultTimeout when not positive).
// Relative and empty entries of pathList are dropped: resolution must not
// depend on the host's working directory.
func NewExecRunner(pathList string, timeout time.Duration) *ExecRunner {
	if timeout <= 0 {
		timeout = DefaultRunTimeout
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
	return &ExecRunner{path: dirs, timeout: timeout, DrainTimeout: defaultDrainTimeout}
}

// Resolve returns the absolute path of tool on the runner's PATH, or "".
// Directories, special files and files this process may not execute are
// skipped, and the search goes on to the next PATH entry as a shell's would
// (issue 23 item 10: a first nvidia-smi that is not executable for us, the
// second good, must run the second).
func (r *ExecRunner) Resolve(tool string) string {
	if tool == "" || strings.ContainsRune(tool, '/') || tool == "." || tool == ".." {
		return ""
	}
	for _, d := range r.path {
		w, ok := r.dirWitness(d)
		if !ok || absentOnPath.absent(d, w, tool) {
			continue
		}
		p := filepath.Join(d, tool)
		st, err := os.Stat(p)
		if err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 && executable(p) {
			return p
		}
		if errors.Is(err, fs.ErrNotExist) {
			absentOnPath.remember(d, w, tool, p)
		}
	}
	return ""
}

// dirWitness is directory d's state as this runner first saw it: one stat
// per directory per runner (a runner serves one detection), then tools known
// absent from it are not looked up again (pathAbsences).
func (r *ExecRunner) dirWitness(d string) (dirWitness, bool) {
	r.dirsMu.Lock()
	defer r.dirsMu.Unlock()
	if w, ok := r.dirs[d]; ok {
		return w.w, w.ok
	}
	w, ok := witnessOf(d)
	if r.dirs == nil {
		r.dirs = map[string]pathDirSeen{}
	}
	r.dirs[d] = pathDirSeen{w: w, ok: ok}
	return w, ok
}

// pathDirSeen is a PATH directory as a runner saw it; ok is false when it is
// not a directory.
type pathDirSeen struct {
	w  dirWitness
	ok bool
}

// Has reports whether tool resolves (so a missing tool costs no process).
func (r *ExecRunner) Has(tool string) bool { return r.Resolve(tool) != "" }

// Lacks reports that tool does not resolve on the runner's PATH: a run would
// fail as missing (Machine.LacksTool).
func (r *ExecRunner) Lacks(tool string) bool { return r.Resolve(tool) == "" }

// systemPath is appended to the PATH a tool sees (never to the PATH tools are
// resolved on): vendor tools are scripts too (rocm-smi starts with
// "#!/usr/bin/env python3") and need the system's programs, which live in
// root-owned directories.
var systemPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// toolEnv is the whole environment a tool gets: a PATH of absolute
// directories (the runner's, then the system's) and the C locale (so numbers
// and labels are printed the way parsers expect). Nothing else: no
// LD_PRELOAD, LD_LIBRARY_PATH, PYTHONPATH (rocm-smi is Python) or host secrets.
func (r *ExecRunner) toolEnv(token string) []string {
	dirs := append([]string(nil), r.path...)
	for _, d := range systemPath {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return []string{"PATH=" + strings.Join(dirs, ":"), "LC_ALL=C", "LANG=C", runMarkerVar + "=" + token}
}

// runMarkerVar names the environment variable that marks every process of
// one run with a fresh random token: processes inherit it through fork,
// setsid and exec, so sweepRun finds a daemon the tool left behind, and
// nothing else, without cgroups.
const runMarkerVar = "AI_HWACCEL_TOOL_RUN"

// newRunToken returns 128 random bits in hex.
func newRunToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// toolMissingError is ErrToolMissing for one tool ("nvidia-smi: tool not
// found", as fmt.Errorf("%s: %w") wrote it), made without fmt: a detection on
// a machine without the vendors' tools makes several (docs/performance.md,
// "Eighth pass").
type toolMissingError string

func (e toolMissingError) Error() string { return string(e) + ": " + ErrToolMissing.Error() }

// Unwrap makes errors.Is(err, ErrToolMissing) hold.
func (e toolMissingError) Unwrap() error { return ErrToolMissing }

// Run runs tool with args. It never panics and always returns, at the latest
// killedDrainTimeout after the earlier of ctx's deadline and the runner's
// timeout (unless the kernel cannot kill the tool: a process in an
// uninterruptible sleep dies only when its system call returns).
func (r *ExecRunner) Run(ctx context.Context, tool string, args ...string) Result {
	start := time.Now()
	p := r.Resolve(tool)
	if p == "" {
		return Result{Err: toolMissingError(tool)}
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
		cancel() // await kills the tool and its group
	}}
	stderr := &capWriter{max: maxToolStderr}
	outPipe, err := newOutputPipe()
	if err != nil {
		return Result{Path: p, Err: fmt.Errorf("creating stdout pipe: %v: %w", err, ErrExit), Duration: time.Since(start)}
	}
	errPipe, err := newOutputPipe()
	if err != nil {
		outPipe.abandon()
		return Result{Path: p, Err: fmt.Errorf("creating stderr pipe: %v: %w", err, ErrExit), Duration: time.Since(start)}
	}
	token := newRunToken()
	cmd := r.command(p, args, token, outPipe.w, errPipe.w)
	status, err := wrapForStatus(cmd)
	if err != nil {
		outPipe.abandon()
		errPipe.abandon()
		return Result{Path: p, Err: fmt.Errorf("creating status pipe: %v: %w", err, ErrExit), Duration: time.Since(start)}
	}
	pidfd := withPidfd(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		outPipe.abandon()
		errPipe.abandon()
		if status != nil {
			status.abandon()
		}
		// Not an executable format, permission denied, ...
		return Result{Path: p, Err: fmt.Errorf("%v: %w", err, ErrExit), Duration: time.Since(start)}
	}
	lead := newLeader(cmd.Process.Pid, pidfd)
	defer lead.close()
	outPipe.start(stdout)
	errPipe.start(stderr)
	statusOut := &capWriter{max: 64}
	if status != nil {
		status.start(statusOut)
	}

	err = r.await(ctx, cmd, lead)
	// A daemon the tool started left its group and survived the group kill;
	// killing it also lets a stdout it held reach end-of-file.
	escaped := sweepRun([]byte(runMarkerVar+"="+token+"\x00"), lead.pid)
	exited := time.Now()
	deadline := r.drainDeadline(ctx, exited)
	stdoutComplete := outPipe.finish(deadline)
	errPipe.finish(deadline)
	exitCode := -1
	if status != nil && status.finish(deadline) {
		// The wrapper shell reaped the tool and printed its status: the
		// host took only the shell's (issue 23 item 1).
		if code, ok := parseWrappedStatus(statusOut.bytes()); ok && (err == nil || errors.Is(err, syscall.ECHILD)) {
			exitCode = code
			err = nil
			if code != 0 {
				err = &wrappedExitError{code: code}
			}
		}
	}

	res := Result{Path: p, Stdout: stdout.bytes(), Stderr: stderr.bytes(), Duration: time.Since(start), LeftRunning: escaped}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if exitCode >= 0 {
		res.ExitCode = exitCode
	}
	res.Err = r.classify(ctx, err, overflowed.Load(), len(res.Stdout))
	res.StatusLost = errors.Is(err, syscall.ECHILD)
	res.StdoutHeld = !stdoutComplete && res.Err == nil
	if res.StatusLost && status == nil && ctx.Err() == nil && noteHostReaps() {
		// The host reaps children it did not start (waitpid(-1)): from now
		// on every run goes through the status wrapper, this one again.
		return r.Run(ctx, tool, args...)
	}
	return res
}

// await waits for the tool to exit (killing it at ctx's end) and reaps it.
// Whatever happened to the leader, nothing it started may outlive the run: a
// child that kept stdout open, or one that ignores SIGTERM, is killed with
// the leader's whole group (SIGKILL). The group is signalled by number only
// while the leader is a zombie nobody has reaped: its group id cannot have
// been reused then, so the signal cannot reach another process group
// (TestRunnerSignalsOnlyItsOwnGroup). With every writer dead, the pipes reach
// end-of-file once the readers have taken what is buffered.
func (r *ExecRunner) await(ctx context.Context, cmd *exec.Cmd, lead *leader) error {
	type exit struct {
		reaped bool
		err    error
	}
	exited := make(chan exit, 1)
	go func() {
		reaped, err := lead.waitExited(cmd.Wait)
		exited <- exit{reaped, err}
	}()
	var x exit
	select {
	case x = <-exited:
	case <-ctx.Done():
		lead.stop()
		x = <-exited
	}
	if x.reaped {
		return x.err
	}
	if x.err == nil {
		killGroup(lead.pid)
		reapGroup(lead.pid)
	}
	// Reap the leader; if the host reaped it already (x.err is ECHILD), this
	// reports ECHILD too: the exit status is lost.
	return cmd.Wait()
}

// drainDeadline is when reading stops waiting for end-of-file, for a tool
// that exited at exited: DrainTimeout later, but never past the run's own
// deadline by more than killedDrainTimeout, and only killedDrainTimeout after
// a run that was killed.
func (r *ExecRunner) drainDeadline(ctx context.Context, exited time.Time) time.Time {
	if ctx.Err() != nil {
		return exited.Add(killedDrainTimeout)
	}
	d := exited.Add(r.DrainTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Add(killedDrainTimeout).Before(d) {
		d = dl.Add(killedDrainTimeout)
	}
	return d
}

// command builds the exec.Cmd for one run, writing to the pipes' write ends.
// The run's deadline is enforced by await, not by os/exec: os/exec's Cancel
// may run after the leader was reaped.
func (r *ExecRunner) command(p string, args []string, token string, stdout, stderr *os.File) *exec.Cmd {
	cmd := exec.Command(p, args...)
	cmd.Env = r.toolEnv(token)
	cmd.Dir = "/"
	cmd.Stdin = nil // the null device: a tool that prompts gets EOF at once
	// *os.File outputs are handed to the child as they are: os/exec starts no
	// copying goroutines and so has nothing to give up on. Our own readers
	// (outputPipe) drain them while the tool runs, so no pipe buffer can fill
	// up and stall it. (os/exec's own copying is bounded by WaitDelay from
	// the moment the tool exits; under CPU starvation that cut off output the
	// tool had already written.)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// killGroup sends SIGKILL (SIGTERM can be ignored) to the process group
// whose id is pgid. Callers guarantee the group is the run's (see await);
// a test replaces it to check that.
var killGroup = func(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// classify turns the outcome of cmd.Wait into Result.Err (nil for success).
// Whether stdout reached end-of-file does not matter: by the time reading
// stops the tool has exited and its group is dead, so everything the tool
// printed was read; only a process that left the group can still hold the
// pipe, and what it might add is not the tool's output (issue 23 item 8:
// such runs failed with "output incomplete" and lost a complete answer).
func (r *ExecRunner) classify(ctx context.Context, err error, overflowed bool, stdoutLen int) error {
	// The host ignores SIGCHLD, so the kernel reaped the child before we could
	// read its status (waitpid(2), NOTES: with SIGCHLD set to SIG_IGN
	// "children that terminate do not become zombies" and a wait fails with
	// ECHILD; https://man7.org/linux/man-pages/man2/waitpid.2.html): only the
	// status is unknown, so output that reached end-of-file counts.
	statusLost := errors.Is(err, syscall.ECHILD)
	switch {
	case overflowed:
		return fmt.Errorf("printed more than %d bytes: %w", MaxToolOutput, ErrTooLarge)
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("killed after %v: %w", r.timeout.Round(time.Millisecond), ErrTimeout)
	case statusLost && stdoutLen > 0:
		return nil
	case statusLost:
		return fmt.Errorf("exit status lost (host ignores SIGCHLD) and no output: %w", ErrExit)
	}
	var we *wrappedExitError
	if errors.As(err, &we) {
		if we.signaled() {
			return fmt.Errorf("killed by signal %v (status %d from the wrapper shell): %w", syscall.Signal(we.code-128), we.code, ErrExit)
		}
		return fmt.Errorf("exit status %d: %w", we.code, ErrExit)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Errorf("killed by signal %v: %w", ws.Signal(), ErrExit)
		}
		return fmt.Errorf("exit status %d: %w", ee.ExitCode(), ErrExit)
	}
	return fmt.Errorf("%v: %w", err, ErrExit)
}

// wrappedExitError is a non-zero exit status reported by the status
// wrapper (wrapForStatus): the shell's $?, 128+n for a tool killed by
// signal n.
type wrappedExitError struct{ code int }

func (e *wrappedExitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func (e *wrappedExitError) signaled() bool { return e.code > 128 && e.code <= 128+64 }

// parseWrappedStatus reads the status line the wrapper shell printed.
func parseWrappedStatus(b []byte) (int, bool) {
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return code, err == nil && code >= 0 && code <= 255
}

// outputPipe carries one output stream of a tool into a capWriter through a
// goroutine of our own, so that we, not os/exec, decide when reading stops.
type outputPipe struct {
	r, w *os.File
	done chan struct{} // closed when the reader has stopped
	eof  bool          // the reader saw end-of-file; read after done
}

func newOutputPipe() (*outputPipe, error) {
	r, w, err := os.Pipe() // close-on-exec; r is non-blocking, so deadlines work
	if err != nil {
		return nil, err
	}
	return &outputPipe{r: r, w: w, done: make(chan struct{})}, nil
}

// abandon closes both ends of a pipe no tool was started on.
func (p *outputPipe) abandon() {
	_ = p.r.Close()
	_ = p.w.Close()
}

// start closes our copy of the write end (the child has its own; end-of-file
// comes when every holder has closed it) and starts copying into dst.
func (p *outputPipe) start(dst io.Writer) {
	_ = p.w.Close()
	go p.copy(dst)
}

func (p *outputPipe) copy(dst io.Writer) {
	defer close(p.done)
	defer p.r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := p.r.Read(buf)
		_, _ = dst.Write(buf[:n])
		switch {
		case err == io.EOF:
			p.eof = true
			return
		case errors.Is(err, os.ErrDeadlineExceeded):
			p.eof = p.takeBuffered(dst, buf)
			return
		case err != nil:
			return
		}
	}
}

// takeBuffered copies what is in the pipe right now, without waiting for
// more, and reports whether it found end-of-file. It runs when the drain
// deadline passed: the tool has exited, so everything it wrote is in the
// buffer, and only a process outside its group can still be writing.
func (p *outputPipe) takeBuffered(dst io.Writer, buf []byte) (eof bool) {
	// An expired deadline makes every read fail before it reads; lift it.
	if p.r.SetReadDeadline(time.Time{}) != nil {
		return false
	}
	rc, err := p.r.SyscallConn()
	if err != nil {
		return false
	}
	_ = rc.Read(func(fd uintptr) bool {
		for {
			n, err := syscall.Read(int(fd), buf)
			if n > 0 {
				_, _ = dst.Write(buf[:n])
				continue
			}
			if err == syscall.EINTR {
				continue
			}
			eof = n == 0 && err == nil
			return true // EAGAIN (empty) or end-of-file: never wait for more
		}
	})
	return eof
}

// finish waits for the reader to see end-of-file, until deadline at the
// latest, and reports whether it did. The deadline makes the reader take what
// is buffered and stop; the reader closes the read end.
func (p *outputPipe) finish(deadline time.Time) (eof bool) {
	if p.r.SetReadDeadline(deadline) == nil {
		<-p.done
		return p.eof
	}
	// Not pollable (os.Pipe always is on Linux, unless registering with the
	// poller failed): a blocked read cannot be interrupted, so stop waiting
	// and leave the reader to end when the last writer goes.
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-p.done:
		return p.eof
	case <-timer.C:
		return false
	}
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
