//go:build linux

package machine

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Linux constants not in package syscall (include/uapi/linux/wait.h,
// include/uapi/asm-generic/unistd.h; pidfd_send_signal since Linux 5.1,
// waitid with P_PIDFD since 5.4: https://man7.org/linux/man-pages/man2/pidfd_send_signal.2.html).
const (
	pPID               = 1
	pPIDFD             = 3
	sysPidfdSendSignal = 424
)

// leader is the first process of a run: the tool, leader of its own process
// group. It holds a pidfd when the kernel gives one, so that the leader is
// signalled and waited for by handle, never by a number that may be reused.
type leader struct {
	pid   int
	pidfd int // -1: none (kernel before 5.4); then the pid is used
}

// withPidfd asks the kernel for a pidfd of the child being started; the
// returned pointer holds it (or -1) after Start.
func withPidfd(attr *syscall.SysProcAttr) *int {
	fd := -1
	attr.PidFD = &fd
	return &fd
}

func newLeader(pid int, pidfd *int) *leader { return &leader{pid: pid, pidfd: *pidfd} }

// waitExited blocks until the leader has exited, without reaping it
// (WNOWAIT), and reports reaped false (reap is for systems without WNOWAIT):
// nil means it is a zombie nobody has reaped, so its pid, and with
// it its process group id, cannot have been given to another process.
// ECHILD means someone else reaped it: the host ignores SIGCHLD (the kernel
// reaps) or calls waitpid(-1) itself.
func (l *leader) waitExited(reap func() error) (reaped bool, err error) {
	idtype, id := uintptr(pPID), uintptr(l.pid)
	if l.pidfd >= 0 {
		idtype, id = pPIDFD, uintptr(l.pidfd)
	}
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, idtype, id, uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch e {
		case 0:
			return false, nil
		case syscall.EINTR:
			continue
		default:
			return false, e
		}
	}
}

// stop kills a leader that overran its time: the leader alone, by handle (a
// pidfd cannot reach another process, whatever happened to the leader). The
// runner kills the rest of its group once waitExited proves the group id is
// still the leader's.
func (l *leader) stop() {
	if l.pidfd >= 0 {
		_, _, _ = syscall.Syscall6(sysPidfdSendSignal, uintptr(l.pidfd), uintptr(syscall.SIGKILL), 0, 0, 0, 0)
		return
	}
	// No pidfd: the leader is our child and we have not reaped it, so its pid
	// is still its own unless the host reaped it (see docs/abi.md).
	_ = syscall.Kill(l.pid, syscall.SIGKILL)
}

func (l *leader) close() {
	if l.pidfd >= 0 {
		_ = syscall.Close(l.pidfd)
		l.pidfd = -1
	}
}

const (
	prGetChildSubreaper = 37 // include/uapi/linux/prctl.h
	sysPidfdOpen        = 434
	groupReapTimeout    = time.Second
)

// isReaper reports whether orphans are re-parented to this process: it is
// PID 1 of its namespace or a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER).
func isReaper() bool {
	if os.Getpid() == 1 {
		return true
	}
	var v int32
	_, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prGetChildSubreaper, uintptr(unsafe.Pointer(&v)), 0)
	return e == 0 && v != 0
}

// reapGroup runs after the group pgid was killed, while its leader is still
// an unreaped zombie (so every process in that group is certainly the run's).
// In a host that is PID 1 or a subreaper, the processes the tool forked are
// re-parented to the host when their parent dies, and nobody else will ever
// reap them: they would stay zombies. It reaps each member that is this
// process's child, waiting up to groupReapTimeout for the killed members to
// die and be re-parented. Elsewhere orphans go to another reaper and it does
// nothing.
func reapGroup(pgid int) {
	if !isReaper() {
		return
	}
	self := os.Getpid()
	deadline := time.Now().Add(groupReapTimeout)
	for {
		left := 0
		for _, p := range groupMembers(pgid) {
			if p.pid == pgid {
				continue // the leader: reaped by cmd.Wait
			}
			if p.ppid != self || !reapChild(p.pid, self, pgid) {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type procEntry struct{ pid, ppid int }

// groupMembers lists the processes (zombies included) whose process group is pgid.
func groupMembers(pgid int) []procEntry {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []procEntry
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if ppid, pg, ok := statParentGroup(pid); ok && pg == pgid {
			out = append(out, procEntry{pid, ppid})
		}
	}
	return out
}

// statParentGroup reads the parent and process group of pid from /proc/<pid>/stat.
func statParentGroup(pid int) (ppid, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp ...": comm may hold anything, so split after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	return ppid, pgrp, err1 == nil && err2 == nil
}

// reapChild reaps pid if it has exited, through a pidfd opened first and then
// checked to be self's child in group pgid, so that a pid reused in between
// is never waited for. It reports whether pid is gone.
func reapChild(pid, self, pgid int) bool {
	fd, _, e := syscall.RawSyscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if e != 0 {
		return e == syscall.ESRCH
	}
	defer syscall.Close(int(fd))
	if ppid, pg, ok := statParentGroup(pid); !ok || ppid != self || pg != pgid {
		return !ok
	}
	var info [128]byte
	_, _, e = syscall.Syscall6(syscall.SYS_WAITID, pPIDFD, fd, uintptr(unsafe.Pointer(&info[0])),
		syscall.WEXITED|syscall.WNOHANG, 0, 0)
	// WNOHANG on a child still dying leaves si_pid zero: not gone yet.
	return e == 0 && *(*int32)(unsafe.Pointer(&info[siPidOffset])) != 0
}

// siPidOffset is where siginfo_t keeps si_pid: after three ints, aligned to
// a pointer (the union that holds it contains pointers).
const siPidOffset = (12 + unsafe.Sizeof(uintptr(0)) - 1) &^ (unsafe.Sizeof(uintptr(0)) - 1)

// sweepRun kills every live process whose environment carries the run's
// marker (runMarkerVar=token, from toolEnv): what the tool started and that
// survived the group kill because it left the group (a daemon: fork, setsid,
// fork). The marker is a fresh random token, so a process carrying it is
// certainly the run's; each is signalled through a pidfd opened before the
// marker is checked again, so a pid reused in between is never hit. A host
// that is a reaper also reaps them. It returns how many processes outside
// the run's group (pgid) it killed.
func sweepRun(marker []byte, pgid int) (escaped int) {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	self := os.Getpid()
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self || !hasMarker(pid, marker) {
			continue
		}
		fd, _, e := syscall.RawSyscall(sysPidfdOpen, uintptr(pid), 0, 0)
		if e != 0 {
			continue
		}
		if hasMarker(pid, marker) {
			_, _, e = syscall.Syscall6(sysPidfdSendSignal, fd, uintptr(syscall.SIGKILL), 0, 0, 0, 0)
			if _, pg, ok := statParentGroup(pid); e == 0 && ok && pg != pgid {
				escaped++
			}
			reapKilled(int(fd), pid, self)
		}
		_ = syscall.Close(int(fd))
	}
	return escaped
}

// hasMarker reports whether pid's environment holds marker (a whole
// NUL-terminated entry). A zombie's environment reads empty.
func hasMarker(pid int, marker []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && bytes.Contains(b, marker)
}

// reapKilled reaps a process just killed through fd when it is self's child
// (a reaper host inherits daemons), waiting up to groupReapTimeout for it to die.
func reapKilled(fd, pid, self int) {
	if !isReaper() {
		return
	}
	deadline := time.Now().Add(groupReapTimeout)
	for time.Now().Before(deadline) {
		if ppid, _, ok := statParentGroup(pid); !ok || ppid != self {
			return
		}
		var info [128]byte
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPIDFD, uintptr(fd), uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOHANG, 0, 0)
		if e != 0 || *(*int32)(unsafe.Pointer(&info[siPidOffset])) != 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// The status wrapper (issue 23 item 1). A host that ignores SIGCHLD (SIG_IGN
// or SA_NOCLDWAIT) has the kernel reap every child it has the moment it
// exits, so no wait of ours can read a tool's exit status (a failing
// nvidia-smi then passed for one whose status was merely lost). The kernel
// decides by the parent's disposition and resets a child's exit signal to
// SIGCHLD at execve (measured: a child cloned with SIGURG as exit signal
// shows 17 in /proc/<pid>/stat field 38 once it has exec'd), so no flag of
// the tool's own start can keep the status. Instead, in such a host, the
// tool runs under a shell whose SIGCHLD disposition is reset to the default
// (GNU env --default-signal, coreutils 8.31+): the shell is the host's child
// and is reaped by the kernel, the tool is the shell's child and is waited
// for by it, and the shell writes the tool's status ($?, 128+n for signal n)
// to a pipe of ours (descriptor 3, closed for the tool itself).
const (
	wrapperEnv    = "/usr/bin/env"
	wrapperShell  = "/bin/sh"
	wrapperScript = `"$0" "$@" 3>&-; echo $? >&3`
	saNoCldWait   = 2 // include/uapi/asm-generic/signal-defs.h
	sigIgn        = 1
)

// hostDropsChildStatus reports whether the kernel reaps this process's
// children by itself: SIGCHLD ignored or SA_NOCLDWAIT (sigaction(2)).
func hostDropsChildStatus() bool {
	var sa struct {
		handler  uintptr
		flags    uint64
		restorer uintptr
		mask     uint64
	}
	_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGCHLD), 0,
		uintptr(unsafe.Pointer(&sa)), 8, 0, 0)
	return e == 0 && (sa.handler == sigIgn || sa.flags&saNoCldWait != 0)
}

// hostReaps is set once a run lost its status although SIGCHLD is not
// ignored: a host thread reaps children it did not start (waitpid(-1),
// wait()), which cannot be seen beforehand. Every later run is wrapped.
var hostReaps atomic.Bool

// noteHostReaps records that the host reaps our children and reports
// whether a wrapped run can now keep the status (so the run is worth
// repeating).
func noteHostReaps() bool {
	if !useStatusWrapper || !wrapperOK() {
		return false
	}
	hostReaps.Store(true)
	return true
}

// useStatusWrapper is false only in tests of the fallback: without the
// wrapper (no GNU env), a run with output is used and flagged StatusLost.
var useStatusWrapper = true

var wrapperOK = sync.OnceValue(func() bool {
	for _, p := range []string{wrapperEnv, wrapperShell} {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return false
		}
	}
	// The status may be lost here too: the output is the proof.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, wrapperEnv, "--default-signal=CHLD", wrapperShell, "-c", "echo ok").Output()
	return string(out) == "ok\n"
})

// wrapForStatus makes cmd run its tool under the status wrapper when the
// host drops child statuses and the wrapper works, and returns the pipe the
// status arrives on; nil (and cmd unchanged) otherwise.
func wrapForStatus(cmd *exec.Cmd) (*outputPipe, error) {
	if !useStatusWrapper || !hostDropsChildStatus() && !hostReaps.Load() || !wrapperOK() {
		return nil, nil
	}
	p, err := newOutputPipe()
	if err != nil {
		return nil, err
	}
	// sh -c script $0 $@: $0 is the tool's absolute path, $@ its arguments.
	cmd.Args = append([]string{wrapperEnv, "--default-signal=CHLD", wrapperShell, "-c", wrapperScript}, cmd.Args...)
	cmd.Path = wrapperEnv
	cmd.ExtraFiles = []*os.File{p.w}
	return p, nil
}

// atEaccess is AT_EACCESS (include/uapi/linux/fcntl.h): check with the
// effective ids, as execve does.
const (
	atEaccess = 0x200
	atFdcwd   = -100 // AT_FDCWD: a relative path is resolved from the working directory (p is absolute)
)

// executable reports whether this process may execute p: faccessat(2) X_OK
// with the effective ids, so an exec bit for another user only, or a noexec
// mount, counts as not executable (execve would fail with EACCES).
func executable(p string) bool {
	return syscall.Faccessat(atFdcwd, p, 1 /* X_OK */, atEaccess) == nil
}
