//go:build unix && !linux

package machine

import (
	"os/exec"
	"syscall"
)

// leader is the first process of a run (see runner_proc_linux.go). Without
// pidfds and waitid(WNOWAIT) portable across these systems, the leader is
// reaped first (reap is cmd.Wait), and the runner never signals its group by
// number afterwards: only while the leader runs (timeout, overflow).
type leader struct{ pid int }

func withPidfd(*syscall.SysProcAttr) *int { return nil }

func newLeader(pid int, _ *int) *leader { return &leader{pid: pid} }

func (l *leader) waitExited(reap func() error) (reaped bool, err error) { return true, reap() }

func (l *leader) close() {}

// stop kills the running leader's whole group: the runner has not reaped the
// leader yet, so its group id is still its own (unless the host reaps
// children it did not start; docs/abi.md).
func (l *leader) stop() { _ = syscall.Kill(-l.pid, syscall.SIGKILL) }

// reapGroup: re-parented orphans are reaped only on Linux (see runner_proc_linux.go).
func reapGroup(int) {}

// sweepRun: finding a run's escaped processes by their environment needs
// /proc and pidfds (runner_proc_linux.go); elsewhere it finds none.
func sweepRun([]byte, int) int { return 0 }

// wrapForStatus: the status wrapper is for Linux hosts that ignore SIGCHLD
// (runner_proc_linux.go); elsewhere tools run as they are.
func wrapForStatus(*exec.Cmd) (*outputPipe, error) { return nil, nil }

// noteHostReaps: no status wrapper outside Linux, so a lost status stays lost.
func noteHostReaps() bool { return false }

// executable: elsewhere the exec bits Resolve checks are the test.
func executable(string) bool { return true }
