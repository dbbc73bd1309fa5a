//go:build linux

package machine

import (
	"syscall"
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
