package detect

import (
	"context"
	"os"
	"testing"
)

// BenchmarkDetectLive is a steady-state detection of the machine running the
// benchmark with no tools (an empty PATH: sysfs and procfs only), the case
// issue 28 compares with the Rust crate in one process. Its figure depends on
// the machine; docs/performance.md says on which one each was taken.
func BenchmarkDetectLive(b *testing.B) { benchmarkDetectLive(b, false) }

// BenchmarkDetectLiveInline is BenchmarkDetectLive with the backends run on
// the caller's goroutine as far as their reads allow (Options.InlineKernelReads,
// off by default; docs/performance.md, "Fifth pass").
func BenchmarkDetectLiveInline(b *testing.B) { benchmarkDetectLive(b, true) }

// benchmarkDetectLive is steady-state detection of this machine with an
// empty PATH, one warm-up detection first, inline or not.
func benchmarkDetectLive(b *testing.B, inline bool) {
	opts := Options{Sysroot: "/", InlineKernelReads: inline, LookupEnv: func(name string) (string, bool) {
		if name == "PATH" {
			return "", true
		}
		return os.LookupEnv(name)
	}}
	benchmarkDetect(b, opts)
}

// benchmarkDetect times steady-state detections with opts, one warm-up
// detection first.
func benchmarkDetect(b *testing.B, opts Options) {
	if _, err := Detect(context.Background(), opts); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Detect(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDetectLiveHostPath is steady-state detection of this machine with
// the process's own PATH, as a host that sets none detects: every tool-based
// backend looks its tools up on it (ExecRunner.Resolve; the absences it
// remembers, path_absent.go).
func BenchmarkDetectLiveHostPath(b *testing.B) { benchmarkDetect(b, Options{Sysroot: "/"}) }
