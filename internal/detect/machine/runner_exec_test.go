//go:build linux

package machine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// readPIDs reads the process ids a script appended to file, one a line.
func readPIDs(t testing.TB, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err, "the script did not record its pids")
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	return pids
}

// cancelWhenRecorded calls cancel once file holds n pids (or ctx ends).
func cancelWhenRecorded(ctx context.Context, cancel context.CancelFunc, file string, n int) {
	defer cancel()
	for ctx.Err() == nil {
		if b, err := os.ReadFile(file); err == nil && len(strings.Fields(string(b))) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// requireGone waits up to a second for every pid to be gone (or a zombie).
func requireGone(t testing.TB, pids []int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for _, pid := range pids {
		for detecttest.ProcessAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		assert.False(t, detecttest.ProcessAlive(pid), "process %d outlived the run", pid)
	}
}

func TestRunnerFailureModes(t *testing.T) {
	// %P is replaced by a file the script appends its pids to.
	cases := []struct {
		name    string
		body    string
		timeout time.Duration
		wantErr error // nil: success
		check   func(t *testing.T, res Result)
	}{
		{name: "ok", body: `echo $$ >>%P; echo hello`, timeout: 5 * time.Second,
			check: func(t *testing.T, res Result) {
				assert.Equal(t, "hello\n", string(res.Stdout))
				assert.Equal(t, 0, res.ExitCode)
			}},
		{name: "hang", body: `echo $$ >>%P; exec sleep 1000`, timeout: 300 * time.Millisecond, wantErr: ErrTimeout},
		{name: "hang in grandchild", body: `echo $$ >>%P; sleep 1000 & echo $! >>%P; wait`,
			timeout: 300 * time.Millisecond, wantErr: ErrTimeout},
		{name: "ignores SIGTERM", body: `trap '' TERM; echo $$ >>%P; sleep 1000 & echo $! >>%P; wait`,
			timeout: 300 * time.Millisecond, wantErr: ErrTimeout},
		{name: "floods stdout", body: `echo $$ >>%P; sh -c 'echo $$ >>%P; exec yes' | head -c 52428800`,
			timeout: 10 * time.Second, wantErr: ErrTooLarge,
			check: func(t *testing.T, res Result) {
				assert.Len(t, res.Stdout, MaxToolOutput, "kept exactly the cap")
				assert.Less(t, res.Duration, 5*time.Second, "killed while streaming, not at the timeout")
			}},
		{name: "floods stderr", body: `echo $$ >>%P; head -c 10485760 /dev/zero >&2; echo done`,
			timeout: 10 * time.Second,
			check: func(t *testing.T, res Result) {
				assert.Equal(t, "done\n", string(res.Stdout), "stderr is drained while the tool runs")
				assert.Len(t, res.Stderr, maxToolStderr)
			}},
		{name: "prints 1 MiB", body: `echo $$ >>%P; head -c 1048576 /dev/zero`, timeout: 10 * time.Second,
			check: func(t *testing.T, res Result) {
				assert.Len(t, res.Stdout, 1<<20, "more than a pipe buffer comes through whole")
			}},
		{name: "crashes", body: `echo $$ >>%P; echo partial; kill -SEGV $$`, timeout: 5 * time.Second, wantErr: ErrExit,
			check: func(t *testing.T, res Result) {
				assert.Contains(t, res.Err.Error(), "signal")
				w := ToolWarning("x", "tool", nil, res)
				assert.Equal(t, registry.WarnToolFailed, w.Code)
				assert.Nil(t, w.ExitCode, "a signal is not an exit code")
			}},
		{name: "grandchild holds stdout", body: `echo $$ >>%P; (sleep 1000 & echo $! >>%P); echo out; exit 0`,
			timeout: 5 * time.Second,
			check: func(t *testing.T, res Result) {
				assert.Equal(t, "out\n", string(res.Stdout))
				assert.Less(t, res.Duration, 2*time.Second, "did not wait on the grandchild's pipe")
			}},
		{name: "exit 2 with stderr", body: "echo $$ >>%P; echo 'first error line' >&2; echo second >&2; exit 2",
			timeout: 5 * time.Second, wantErr: ErrExit,
			check: func(t *testing.T, res Result) {
				assert.Equal(t, 2, res.ExitCode)
				w := ToolWarning("nvidia", "tool", []string{"-q"}, res)
				assert.Equal(t, registry.WarnToolFailed, w.Code)
				require.NotNil(t, w.ExitCode)
				assert.Equal(t, 2, *w.ExitCode)
				assert.Contains(t, w.Message, "first error line")
				assert.NotContains(t, w.Message, "second")
				assert.Equal(t, "nvidia", w.Backend)
				assert.Equal(t, "tool", w.Tool)
			}},
		{name: "stdin is closed", body: `echo $$ >>%P; cat; echo eof`, timeout: 5 * time.Second,
			check: func(t *testing.T, res Result) {
				assert.Equal(t, "eof\n", string(res.Stdout))
				assert.Less(t, res.Duration, 2*time.Second)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pids")
			detecttest.WriteTool(t, dir, "tool", strings.ReplaceAll(tc.body, "%P", pidFile))
			r := NewExecRunner(dir, tc.timeout)

			start := time.Now()
			res := r.Run(context.Background(), "tool")
			took := time.Since(start)

			assert.Equal(t, filepath.Join(dir, "tool"), res.Path)
			if tc.wantErr == nil {
				require.NoError(t, res.Err)
			} else {
				require.ErrorIs(t, res.Err, tc.wantErr)
			}
			if tc.wantErr == ErrTimeout {
				assert.GreaterOrEqual(t, took, tc.timeout)
				assert.Less(t, took, tc.timeout+time.Second, "returned soon after the timeout")
				w := ToolWarning("b", "tool", nil, res)
				assert.Equal(t, registry.WarnToolTimeout, w.Code)
			}
			if tc.wantErr == ErrTooLarge {
				w := ToolWarning("b", "tool", nil, res)
				assert.Equal(t, registry.WarnOutputTooLarge, w.Code)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
			requireGone(t, readPIDs(t, pidFile))
			detecttest.RequireNoProcessMentioning(t, dir)
		})
	}
}

func TestRunnerResolve(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)

	t.Run("not executable is skipped", func(t *testing.T) {
		a, b := t.TempDir(), t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(a, "tool"), []byte("#!/bin/sh\necho a\n"), 0o644))
		r := NewExecRunner(a, time.Second)
		assert.False(t, r.Has("tool"))
		res := r.Run(context.Background(), "tool")
		require.ErrorIs(t, res.Err, ErrToolMissing)
		assert.Empty(t, res.Path, "nothing ran")

		detecttest.WriteTool(t, b, "tool", "echo b")
		r = NewExecRunner(a+":"+b, time.Second)
		assert.Equal(t, filepath.Join(b, "tool"), r.Resolve("tool"), "search goes on past it")
	})
	t.Run("directory named like the tool is skipped", func(t *testing.T) {
		a, b := t.TempDir(), t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(a, "tool"), 0o755))
		r := NewExecRunner(a, time.Second)
		require.ErrorIs(t, r.Run(context.Background(), "tool").Err, ErrToolMissing)
		detecttest.WriteTool(t, b, "tool", "echo b")
		r = NewExecRunner(a+":"+b, time.Second)
		res := r.Run(context.Background(), "tool")
		require.NoError(t, res.Err)
		assert.Equal(t, "b\n", string(res.Stdout))
	})
	t.Run("relative and empty PATH entries are ignored", func(t *testing.T) {
		a := t.TempDir()
		detecttest.WriteTool(t, a, "tool", "echo rel")
		rel, err := filepath.Rel(wd, a)
		require.NoError(t, err)
		require.False(t, filepath.IsAbs(rel))
		r := NewExecRunner(rel+"::.", time.Second)
		assert.Empty(t, r.path)
		assert.False(t, r.Has("tool"))
		require.ErrorIs(t, r.Run(context.Background(), "tool").Err, ErrToolMissing)
	})
	t.Run("names with a slash or dots never resolve", func(t *testing.T) {
		a := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(a, "sub"), 0o755))
		detecttest.WriteTool(t, filepath.Join(a, "sub"), "tool", "echo x")
		r := NewExecRunner(a, time.Second)
		for _, name := range []string{"sub/tool", "/bin/sh", "", ".", ".."} {
			assert.Empty(t, r.Resolve(name), name)
		}
	})
	t.Run("symlink to an executable resolves to the link", func(t *testing.T) {
		a, b := t.TempDir(), t.TempDir()
		target := detecttest.WriteTool(t, b, "real", "echo via link")
		require.NoError(t, os.Symlink(target, filepath.Join(a, "tool")))
		require.NoError(t, os.Symlink("loop", filepath.Join(a, "loop")))
		require.NoError(t, os.Symlink(filepath.Join(b, "missing"), filepath.Join(a, "dangling")))
		r := NewExecRunner(a, time.Second)
		assert.Equal(t, filepath.Join(a, "tool"), r.Resolve("tool"))
		assert.Empty(t, r.Resolve("loop"))
		assert.Empty(t, r.Resolve("dangling"))
	})
	t.Run("file that is not a program fails, typed", func(t *testing.T) {
		a := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(a, "tool"), []byte("no shebang, no ELF\n"), 0o755))
		res := NewExecRunner(a, time.Second).Run(context.Background(), "tool")
		require.ErrorIs(t, res.Err, ErrExit)
		assert.Equal(t, registry.WarnToolFailed, ToolWarning("b", "tool", nil, res).Code)
	})
}

func TestRunnerEnvironmentIsMinimal(t *testing.T) {
	t.Setenv("PYTHONPATH", "/evil")
	t.Setenv("AI_HWACCEL_TEST_SECRET", "secret")
	dir := t.TempDir()
	detecttest.WriteTool(t, dir, "tool", "env")
	res := NewExecRunner("relative:"+dir, time.Second).Run(context.Background(), "tool")
	require.NoError(t, res.Err)
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		name, value, _ := strings.Cut(line, "=")
		names = append(names, name)
		if name == "PATH" {
			entries := strings.Split(value, ":")
			assert.Equal(t, dir, entries[0], "the runner's absolute entries come first")
			assert.NotContains(t, entries, "relative")
			for _, e := range entries {
				assert.True(t, filepath.IsAbs(e), e)
			}
		}
	}
	// PWD is set by the shell itself, not passed by us.
	assert.Subset(t, []string{"PATH", "LC_ALL", "LANG", "PWD", runMarkerVar}, names)
	assert.NotContains(t, string(res.Stdout), "secret")
	assert.NotContains(t, string(res.Stdout), "/evil")
}

func TestRunnerArgumentsAreNotInterpreted(t *testing.T) {
	dir := t.TempDir()
	detecttest.WriteTool(t, dir, "tool", `for a in "$@"; do echo "[$a]"; done`)
	res := NewExecRunner(dir, time.Second).Run(context.Background(), "tool", "a b", "$(id)", "--x=1;y")
	require.NoError(t, res.Err)
	assert.Equal(t, "[a b]\n[$(id)]\n[--x=1;y]\n", string(res.Stdout))
}

func TestRunnerContext(t *testing.T) {
	t.Run("done context starts nothing", func(t *testing.T) {
		dir := t.TempDir()
		marker := filepath.Join(dir, "ran")
		detecttest.WriteTool(t, dir, "tool", "touch "+marker)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res := NewExecRunner(dir, time.Second).Run(ctx, "tool")
		require.ErrorIs(t, res.Err, ErrTimeout)
		assert.NoFileExists(t, marker)
	})
	t.Run("caller deadline shorter than the runner's", func(t *testing.T) {
		// The deadline runs from before the shell starts: on a loaded
		// machine the script may not reach its first line within it (seen
		// on 2 cores shared by six test runs), and then there is no pid to
		// check. Such a try proves nothing and is run again; a try whose
		// script started must leave nothing behind.
		for try := 0; try < 5; try++ {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pids")
			detecttest.WriteTool(t, dir, "tool", "echo $$ >>"+pidFile+"; exec sleep 1000")
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			start := time.Now()
			res := NewExecRunner(dir, time.Minute).Run(ctx, "tool")
			cancel()
			require.ErrorIs(t, res.Err, ErrTimeout)
			assert.Less(t, time.Since(start), 2*time.Second)
			if _, err := os.Stat(pidFile); err == nil {
				requireGone(t, readPIDs(t, pidFile))
				return
			}
		}
		t.Fatal("in 5 tries the script never reached its first line within the 200 ms deadline")
	})
	t.Run("caller cancels mid-run", func(t *testing.T) {
		// Cancelled once the script has recorded both pids (its shell and
		// the background sleep), not after a fixed time the script may not
		// have reached its first line in.
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "pids")
		detecttest.WriteTool(t, dir, "tool", "echo $$ >>"+pidFile+"; sleep 1000 & echo $! >>"+pidFile+"; wait")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go cancelWhenRecorded(ctx, cancel, pidFile, 2)
		res := NewExecRunner(dir, time.Minute).Run(ctx, "tool")
		require.ErrorIs(t, res.Err, ErrTimeout)
		requireGone(t, readPIDs(t, pidFile))
	})
}

func TestRunnerConcurrentRuns(t *testing.T) {
	dir := t.TempDir()
	detecttest.WriteTool(t, dir, "tool", `echo "$1"; head -c 200000 /dev/zero >&2`)
	r := NewExecRunner(dir, 10*time.Second)
	const n = 16
	out := make(chan string, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			res := r.Run(context.Background(), "tool", strconv.Itoa(i))
			if res.Err != nil {
				out <- res.Err.Error()
				return
			}
			out <- strings.TrimSpace(string(res.Stdout))
		}(i)
	}
	got := map[string]bool{}
	for i := 0; i < n; i++ {
		got[<-out] = true
	}
	for i := 0; i < n; i++ {
		assert.True(t, got[strconv.Itoa(i)], "run %d", i)
	}
}

// sigchldChildEnv marks the re-executed test binary that ignores SIGCHLD.
const sigchldChildEnv = "AI_HWACCEL_TEST_SIGCHLD_IGNORED"

// TestRunnerSIGCHLDIgnored proves that a host which set SIGCHLD to SIG_IGN
// (the kernel then reaps children itself and waitid fails with ECHILD) still
// gets the tool's output. It re-runs this test binary in a child process,
// because ignoring SIGCHLD in the test process itself would change every
// other test.
func TestRunnerSIGCHLDIgnored(t *testing.T) {
	if dir := os.Getenv(sigchldChildEnv); dir != "" {
		sigchldChild(t, dir)
		return
	}
	dir := t.TempDir()
	detecttest.WriteTool(t, dir, "tool", `echo "output survives"`)
	detecttest.WriteTool(t, dir, "empty", `exit 3`)
	runChildTest(t, "TestRunnerSIGCHLDIgnored", sigchldChildEnv, dir, "SIGCHLD ignored: checked")
}

// runChildTest re-runs test in a child process of this test binary, with
// env set to dir, and requires it to pass and print done: for tests that
// change process-wide state (signal dispositions, prctl) other tests must
// not see.
func runChildTest(t *testing.T, test, env, dir, done string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env+"="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child test failed:\n%s", out)
	assert.Contains(t, string(out), done)
}

func sigchldChild(t *testing.T, dir string) {
	// signal.Ignore sets the kernel disposition to SIG_IGN for SIGCHLD, as
	// signal(SIGCHLD, SIG_IGN) in a C host would.
	signal.Ignore(syscall.SIGCHLD)
	require.True(t, signal.Ignored(syscall.SIGCHLD))
	kills := recordGroupKills(t)

	// Show the premise: plain os/exec now reports ECHILD.
	err := exec.Command(filepath.Join(dir, "tool")).Run()
	require.ErrorIs(t, err, syscall.ECHILD, "the kernel did not auto-reap; premise of the test does not hold")

	r := NewExecRunner(dir, 5*time.Second)
	res := r.Run(context.Background(), "tool")
	require.NoError(t, res.Err)
	assert.Equal(t, "output survives\n", string(res.Stdout))

	// Issue 23 item 1: the status wrapper keeps the status, so a good tool
	// is a plain success (it was tool_status_lost) ...
	assert.False(t, res.StatusLost)
	m, err := New(Config{Sysroot: t.TempDir(), Runner: r})
	require.NoError(t, err)
	_, _, ok := m.Tool(context.Background(), "cuda", "tool")
	require.True(t, ok, "the output is used")
	assert.Empty(t, m.Notes())

	// ... and a failing one fails with its own exit status.
	res = r.Run(context.Background(), "empty")
	require.ErrorIs(t, res.Err, ErrExit)
	assert.Contains(t, res.Err.Error(), "exit status 3")
	assert.Equal(t, 3, res.ExitCode)
	assert.False(t, res.StatusLost)

	// Without the wrapper (a system without GNU env) the status is lost:
	// the output is used, flagged, and no output is a failure.
	useStatusWrapper = false
	defer func() { useStatusWrapper = true }()
	res = r.Run(context.Background(), "tool")
	require.NoError(t, res.Err)
	assert.True(t, res.StatusLost)
	m, err = New(Config{Sysroot: t.TempDir(), Runner: r})
	require.NoError(t, err)
	_, _, ok = m.Tool(context.Background(), "cuda", "tool")
	require.True(t, ok, "the output is used")
	notes := m.Notes()
	require.Len(t, notes, 1, "a failing tool's output must not pass for a success")
	assert.Equal(t, registry.WarnToolStatusLost, notes[0].Code)
	assert.Contains(t, notes[0].Message, "output survives")
	res = r.Run(context.Background(), "empty")
	require.ErrorIs(t, res.Err, ErrExit, "no output and no status is a failure")
	n, bad := kills()
	assert.Empty(t, bad)
	assert.Zero(t, n, "the kernel reaped the leader: its group id may be reused, so it is never signalled")
	fmt.Println("SIGCHLD ignored: checked")
}

// TestRunnerLeakCheckSeesLeftovers shows the leftover scan used above can
// fail: a process started outside the runner, with the tool directory only in
// its environment, is found until it is killed.
func TestRunnerLeakCheckSeesLeftovers(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sleep", "1000")
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin"}
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// Start returns once the exec has closed the child's close-on-exec
	// descriptors (Go's status pipe; fs/exec.c begin_new_exec), but the new
	// image's arguments and environment are readable from /proc only once
	// the ELF loader has set mm->arg_start and env_start (fs/binfmt_elf.c
	// create_elf_tables), later: on a loaded machine the first scan can
	// miss them (a clean-clone CI run did), so it is repeated for up to two
	// seconds.
	found := detecttest.ProcessesMentioning(dir)
	for deadline := time.Now().Add(2 * time.Second); len(found) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		found = detecttest.ProcessesMentioning(dir)
	}
	assert.Len(t, found, 1)
	require.True(t, detecttest.ProcessAlive(cmd.Process.Pid))
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.False(t, detecttest.ProcessAlive(cmd.Process.Pid))
	assert.Empty(t, detecttest.ProcessesMentioning(dir))
}

// TestRunnerEscapedGrandchildIsReported: a child that leaves the process
// group (setsid) and drops its environment cannot be found (neither by group
// nor by the run's marker) and may keep stdout open. The run must not hang
// on it, and (issue 23 item 8) must use what the tool printed before it
// exited, flagged StdoutHeld (a tool_left_process warning), instead of
// failing with "output incomplete" as it did.
func TestRunnerEscapedGrandchildIsReported(t *testing.T) {
	setsid, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("no setsid program on this machine")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	// env -i drops the run's marker, so sweepRun cannot find the child either.
	// The tool prints only once the child has written its pid, i.e. after
	// setsid took it out of the tool's process group: a fixed sleep let a
	// loaded machine end the tool first, and the group's clean-up killed the
	// child before it escaped (seen once at load 20 on 2 CPUs).
	detecttest.WriteTool(t, dir, "tool", "n=$(cat "+pidFile+" 2>/dev/null | wc -l); env -i "+setsid+" sh -c 'echo $$ >>"+pidFile+"; exec sleep 1000' & "+
		"while [ \"$(cat "+pidFile+" 2>/dev/null | wc -l)\" -le \"$n\" ]; do sleep 0.05; done; echo out")
	r := NewExecRunner(dir, 10*time.Second)
	require.Equal(t, defaultDrainTimeout, r.DrainTimeout)
	r.DrainTimeout = 500 * time.Millisecond
	start := time.Now()
	res := r.Run(context.Background(), "tool")
	took := time.Since(start)
	defer func() {
		// Both runs below left one escaped sleep each.
		for _, pid := range readPIDs(t, pidFile) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	require.NoError(t, res.Err, "the tool exited 0 after printing its output")
	assert.True(t, res.StdoutHeld)
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, "out\n", string(res.Stdout), "what the tool printed is used")
	assert.GreaterOrEqual(t, took, r.DrainTimeout, "waited for end-of-file")
	assert.Less(t, took, r.DrainTimeout+time.Second, "the escaped child's open stdout did not hold the run")

	m, err := New(Config{Sysroot: t.TempDir(), Runner: r})
	require.NoError(t, err)
	out, w, ok := m.Tool(context.Background(), "cuda", "tool")
	require.True(t, ok, "the output is used: %v", w)
	assert.Equal(t, "out\n", string(out))
	notes := m.Notes()
	require.Len(t, notes, 1)
	assert.Equal(t, registry.WarnToolLeftProcess, notes[0].Code)
	assert.Contains(t, notes[0].Message, "kept its stdout open")
}

// TestRunnerEscapedGrandchildAfterTimeout: a killed run waits only
// killedDrainTimeout for a pipe an escaped child holds, so it still returns
// soon after its deadline.
func TestRunnerEscapedGrandchildAfterTimeout(t *testing.T) {
	setsid, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("no setsid program on this machine")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	detecttest.WriteTool(t, dir, "tool", setsid+" sh -c 'echo $$ >>"+pidFile+"; exec sleep 1000' & exec sleep 1000")
	const timeout = 300 * time.Millisecond
	start := time.Now()
	res := NewExecRunner(dir, timeout).Run(context.Background(), "tool")
	took := time.Since(start)
	pids := readPIDs(t, pidFile)
	defer func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	require.ErrorIs(t, res.Err, ErrTimeout)
	// The grandchild holds the pipe for 1000 s: returning within seconds
	// shows the run did not wait for it. The slack is wide because this is
	// a property, not a speed target: at a load average of 21 on 2 CPUs
	// the run took 1.13 s against 300 ms + 100 ms (session of 2026-11-28).
	assert.Less(t, took, timeout+killedDrainTimeout+5*time.Second)
}

// TestOutputPipeTakesBufferedAtDeadline: when the drain deadline passes with
// the pipe still open, what is in the pipe buffer (written by a tool that has
// exited) is still taken, whether or not the reader got to it in time.
func TestOutputPipeTakesBufferedAtDeadline(t *testing.T) {
	p, err := newOutputPipe()
	require.NoError(t, err)
	writer := p.w
	p.w, err = os.Open(os.DevNull) // start closes this instead: writer stays open, as an escaped child's would
	require.NoError(t, err)
	defer writer.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), 3000) // 48000 bytes: fits a 64 KiB pipe buffer
	_, err = writer.Write(data)
	require.NoError(t, err)
	// A deadline already past: the reader's first read fails at once, so
	// only the final non-waiting copy can deliver the data.
	require.NoError(t, p.r.SetReadDeadline(time.Now().Add(-time.Second)))
	dst := &capWriter{max: 1 << 20}
	p.start(dst)
	start := time.Now()
	eof := p.finish(time.Now().Add(-time.Second))
	assert.False(t, eof, "the writer is still open")
	assert.Less(t, time.Since(start), time.Second)
	assert.Equal(t, data, dst.bytes())
}

// TestRunnerKeepsOutputUnderCPUStarvation: a tool that printed its output and
// exited 0 must come back with all of it even when the goroutines reading the
// pipes get no CPU for a while after the exit. (os/exec's WaitDelay used to
// close the pipes 100 ms after the exit and the partial read counted as the
// whole output; tests/c/test_threads.c with HWACCEL_STRESS_TOOLS=1 found it.)
func TestRunnerKeepsOutputUnderCPUStarvation(t *testing.T) {
	if testing.Short() {
		t.Skip("CPU stress")
	}
	dir := t.TempDir()
	// ~100 KB (more than a 64 KiB pipe buffer), then a marker line.
	detecttest.WriteTool(t, dir, "tool", `head -c 100000 /dev/zero | tr '\0' x; echo; echo "end $1"`)

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	stop := make(chan struct{})
	var burners sync.WaitGroup
	for range 8 {
		burners.Add(1)
		go func() {
			defer burners.Done()
			for x := 0; ; x++ {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 1e5; i++ {
					x ^= i
				}
			}
		}()
	}
	defer func() { close(stop); burners.Wait() }()

	r := NewExecRunner(dir, time.Minute)
	const n = 64
	results := make([]Result, n)
	var runs sync.WaitGroup
	for i := range n {
		runs.Add(1)
		go func() {
			defer runs.Done()
			results[i] = r.Run(context.Background(), "tool", strconv.Itoa(i))
		}()
	}
	runs.Wait()
	short := 0
	for i, res := range results {
		want := fmt.Sprintf("end %d\n", i)
		if !assert.NoError(t, res.Err, "run %d", i) {
			continue
		}
		// Compare lengths, not the 100 KB: a failure message must stay readable.
		if len(res.Stdout) != 100000+1+len(want) || !bytes.HasSuffix(res.Stdout, []byte(want)) {
			short++
			t.Errorf("run %d: got %d bytes ending %q, want %d ending %q", i, len(res.Stdout),
				res.Stdout[max(0, len(res.Stdout)-10):], 100000+1+len(want), want)
		}
	}
	assert.Zero(t, short, "runs that exited 0 but lost output")
}

// procStat returns the state and parent of pid from /proc/<pid>/stat, ok
// false when there is no such process (reaped).
func procStat(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, 0, false
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0][0], ppid, true
}

// recordGroupKills replaces killGroup for the test with one that records, for
// each group signalled, whether its leader was at that moment an unreaped
// zombie child of this process (the only state in which the group id
// certainly still belongs to the run), then signals as before.
func recordGroupKills(t *testing.T) func() (kills int, unsafe []string) {
	var mu sync.Mutex
	var n int
	var bad []string
	orig := killGroup
	killGroup = func(pgid int) {
		state, ppid, ok := procStat(pgid)
		mu.Lock()
		n++
		if !ok || state != 'Z' || ppid != os.Getpid() {
			bad = append(bad, fmt.Sprintf("group %d signalled with its leader in state %q, parent %d, present %v", pgid, state, ppid, ok))
		}
		mu.Unlock()
		orig(pgid)
	}
	t.Cleanup(func() { killGroup = orig })
	return func() (int, []string) {
		mu.Lock()
		defer mu.Unlock()
		return n, append([]string(nil), bad...)
	}
}

// TestRunnerSignalsOnlyItsOwnGroup: the runner signals a tool's process
// group by number only while the leader is a zombie it has not reaped. After
// reaping, the pid and so the group id may belong to another process group
// (issue 14 item 8: kill(-pid) after the reap killed whatever reused it).
func TestRunnerSignalsOnlyItsOwnGroup(t *testing.T) {
	kills := recordGroupKills(t)
	dir := t.TempDir()
	detecttest.WriteTool(t, dir, "ok", "echo fine")
	detecttest.WriteTool(t, dir, "forks", "sleep 1000 & echo forked")
	detecttest.WriteTool(t, dir, "fails", "exit 3")
	detecttest.WriteTool(t, dir, "hangs", "sleep 1000 & exec sleep 1000")
	r := NewExecRunner(dir, 300*time.Millisecond)
	assert.NoError(t, r.Run(context.Background(), "ok").Err)
	assert.NoError(t, r.Run(context.Background(), "forks").Err)
	assert.ErrorIs(t, r.Run(context.Background(), "fails").Err, ErrExit)
	assert.ErrorIs(t, r.Run(context.Background(), "hangs").Err, ErrTimeout)
	n, bad := kills()
	assert.Equal(t, 4, n, "every run's group is killed once the leader exited")
	assert.Empty(t, bad)
	detecttest.RequireNoProcessMentioning(t, dir)
}

const subreaperChildEnv = "AI_HWACCEL_TEST_SUBREAPER"

// TestRunnerSubreaperHostKeepsNoZombies: a host that is PID 1 of its
// container or a child subreaper inherits every process a tool leaves
// behind, and nobody else reaps them (issue 14 item 7: 60 zombies after 25
// detections). The runner kills the tool's group and reaps the members
// re-parented to the host. Run in a re-executed test binary, because making
// the test process a subreaper would change every other test.
func TestRunnerSubreaperHostKeepsNoZombies(t *testing.T) {
	if dir := os.Getenv(subreaperChildEnv); dir != "" {
		subreaperChild(t, dir)
		return
	}
	dir := t.TempDir()
	// A helper that outlives the tool, one whose parent (a subshell) exits
	// first, and one that exits on its own before the tool does.
	detecttest.WriteTool(t, dir, "forks", "sleep 1000 & sh -c 'sleep 1000 &'; sh -c 'true &'; sleep 0.05; echo out")
	runChildTest(t, "TestRunnerSubreaperHostKeepsNoZombies", subreaperChildEnv, dir, "subreaper: checked")
	detecttest.RequireNoProcessMentioning(t, dir)
}

func subreaperChild(t *testing.T, dir string) {
	const prSetChildSubreaper = 36
	_, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	require.Zero(t, e, "prctl(PR_SET_CHILD_SUBREAPER)")
	r := NewExecRunner(dir, 5*time.Second)
	for i := 0; i < 25; i++ {
		res := r.Run(context.Background(), "forks")
		require.NoError(t, res.Err)
		require.Equal(t, "out\n", string(res.Stdout))
	}
	var zombies, alive []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, ppid, ok := procStat(pid); ok && ppid == os.Getpid() {
			if state == 'Z' {
				zombies = append(zombies, pid)
			} else {
				alive = append(alive, pid)
			}
		}
	}
	assert.Empty(t, zombies, "zombie children of the subreaper host")
	assert.Empty(t, alive, "live children of the subreaper host")
	fmt.Println("subreaper: checked")
}

// TestRunnerDaemonIsKilledAndReported: a tool that daemonizes (fork, setsid,
// fork, stdio to /dev/null) leaves a process that neither the group kill nor
// the pipes see (issue 14 item 9). The runner finds it by the run's marker,
// kills it and counts it, and Machine.Tool reports it.
func TestRunnerDaemonIsKilledAndReported(t *testing.T) {
	setsid, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("no setsid program on this machine")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	detecttest.WriteTool(t, dir, "daemonizes", setsid+" sh -c '(echo $$ >>"+pidFile+"; exec sleep 1000) </dev/null >/dev/null 2>&1 &' </dev/null >/dev/null 2>&1; sleep 0.1; echo out")
	r := NewExecRunner(dir, 5*time.Second)
	res := r.Run(context.Background(), "daemonizes")
	pids := readPIDs(t, pidFile)
	defer func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	require.NoError(t, res.Err)
	assert.Equal(t, "out\n", string(res.Stdout))
	assert.Equal(t, 1, res.LeftRunning)
	requireGone(t, pids)

	m, err := New(Config{Sysroot: t.TempDir(), Runner: r})
	require.NoError(t, err)
	out, w, ok := m.Tool(context.Background(), "cuda", "daemonizes")
	require.True(t, ok)
	assert.Nil(t, w)
	assert.Equal(t, "out\n", string(out))
	notes := m.Notes()
	require.Len(t, notes, 1)
	assert.Equal(t, registry.WarnToolLeftProcess, notes[0].Code)
	assert.Equal(t, "cuda", notes[0].Backend)
	assert.Contains(t, notes[0].Message, "left 1 process(es) running")
	detecttest.RequireNoProcessMentioning(t, dir)
}

const notOursChildEnv = "AIHW_TEST_NOT_OURS_DIRS"

// TestRunnerSkipsToolNotExecutableForUs: issue 23 item 10. The first
// nvidia-smi on PATH has an exec bit, but only for its owner (root), and the
// process runs as another user; the second is good. A shell runs the second;
// so must the runner (it ran the first, and execve failed with EACCES).
// The check runs in a child of the test binary that drops to uid/gid 65534.
func TestRunnerSkipsToolNotExecutableForUs(t *testing.T) {
	if dirs := os.Getenv(notOursChildEnv); dirs != "" {
		notOursChild(t, dirs)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: to own a tool another user may not execute, and to become that user")
	}
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{filepath.Dir(base), base} {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	for _, d := range []string{a, b} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(a, "tool"), []byte("#!/bin/sh\necho a\n"), 0o700))
	detecttest.WriteTool(t, b, "tool", "echo b")
	runChildTest(t, "TestRunnerSkipsToolNotExecutableForUs", notOursChildEnv, a+":"+b, "not executable for us: checked")
}

func notOursChild(t *testing.T, dirs string) {
	require.NoError(t, syscall.Setgid(65534))
	require.NoError(t, syscall.Setuid(65534))
	r := NewExecRunner(dirs, 5*time.Second)
	res := r.Run(context.Background(), "tool")
	require.NoError(t, res.Err)
	assert.Equal(t, "b\n", string(res.Stdout), "the second, executable tool ran")
	fmt.Println("not executable for us: checked")
}

// A tool that is not on the PATH fails with ErrToolMissing and its name,
// in the words fmt.Errorf("%s: %w") gave it before the eighth pass.
func TestExecRunnerMissingTool(t *testing.T) {
	res := NewExecRunner(t.TempDir(), time.Second).Run(context.Background(), "nvidia-smi", "-L")
	require.Error(t, res.Err)
	assert.ErrorIs(t, res.Err, ErrToolMissing)
	assert.Equal(t, "nvidia-smi: tool not found", res.Err.Error())
	assert.Empty(t, res.Path)
}
