// Package cputime is the CPU time this process has used (user and system,
// getrusage(RUSAGE_SELF)), for tests that bound a call's work by CPU time:
// on a loaded machine wall time measures the load, not the call (a
// 60000-layer plan took 13.1 s of wall time on 2 shared cores and 5-6 s
// on an idle one; internal/plan's hostile_test.go). Test files import it
// (internal/plan, capi); no library or command code does, so nothing of
// it, nor of package testing, is linked into libai_hwaccel.so or the CLI
// (TestOnlyTestsImportIt).
package cputime

import (
	"syscall"
	"testing"
	"time"
)

// Process is the CPU time (user and system) the process has used so far;
// a test that cannot read it fails.
func Process(t testing.TB) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
