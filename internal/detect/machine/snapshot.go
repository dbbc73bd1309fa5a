package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/snapshot"
)

// This file connects the machine view to internal/snapshot: a capture reads
// the sysroot through a snapshot.Recorder (SysrootSource, Config.Source) and
// runs tools through RecordingRunner; a replay reads the archive as
// Config.FS and answers tools with SnapshotRunner.

// maxRecordedFile is how much of one file a capture reads: the most a
// snapshot member may hold. Detection asks for at most 16 MiB of
// /proc/cpuinfo (internal/detect/host) and 64 KiB of anything else; only a
// /proc/cpuinfo over 8 MiB (thousands of CPUs) replays truncated.
var maxRecordedFile = int(snapshot.DefaultLimits.MaxMemberBytes)

// SysrootSource is the sysroot dir as a snapshot.Source, for a Recorder: it
// reads with the view's own rules (os.Root, so no link leads out of dir;
// regular files only; no open that blocks), each file whole up to
// maxRecordedFile so that every later read of it, whatever its limit, is
// answered on replay as it was live.
func SysrootSource(dir string) (snapshot.Source, error) {
	if _, err := statSysroot(dir); err != nil {
		return nil, err
	}
	root, err := openSysroot(dir)
	if err != nil {
		return nil, err
	}
	return sysrootSource{dirSource{root: root}}, nil
}

type sysrootSource struct{ d dirSource }

func (s sysrootSource) ReadFile(name string) ([]byte, error) {
	var out []byte
	err := s.d.readFile(name, maxRecordedFile, true, func(b []byte) { out = bytes.Clone(b) })
	return out, err
}

func (s sysrootSource) ReadDir(name string) ([]fs.DirEntry, error) { return s.d.readDir(name) }
func (s sysrootSource) ReadLink(name string) (string, error)       { return s.d.readLink(name) }
func (s sysrootSource) Stat(name string) (fs.FileInfo, error)      { return s.d.stat(name) }

func (s sysrootSource) Lstat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrInvalid}
	}
	return s.d.root.Lstat(name)
}

// viaSource is the view's source over a snapshot.Source (a capture's
// Recorder). A file comes whole and the view's limit is applied here, with
// the same outcome as on the live tree: a head read gets the first limit
// bytes, a longer file is an error.
type viaSource struct{ src snapshot.Source }

func (s viaSource) readFile(name string, limit int, head bool, use func([]byte)) error {
	b, err := s.src.ReadFile(name)
	if err != nil {
		return err
	}
	return readLimited(bytes.NewReader(b), name, int64(len(b)), limit, head, use)
}

func (s viaSource) readDir(name string) ([]fs.DirEntry, error) { return s.src.ReadDir(name) }
func (s viaSource) readLink(name string) (string, error)       { return s.src.ReadLink(name) }
func (s viaSource) stat(name string) (fs.FileInfo, error)      { return s.src.Stat(name) }

// RecordingRunner runs tools through inner and records every run that found
// its tool, and every lookup that found one, in rec. It belongs below the
// per-detection NewOnceRunner, so each command line is recorded once.
func RecordingRunner(inner Runner, rec *snapshot.Recorder) Runner {
	return recordingRunner{inner: inner, rec: rec}
}

type recordingRunner struct {
	inner Runner
	rec   *snapshot.Recorder
}

func (r recordingRunner) Run(ctx context.Context, tool string, args ...string) Result {
	res := r.inner.Run(ctx, tool, args...)
	if !errors.Is(res.Err, ErrToolMissing) {
		r.rec.RecordTool(append([]string{tool}, args...), toolResultOf(tool, res))
	}
	return res
}

// Lacks asks the inner runner and records nothing: a tool that is not
// there is not recorded either way (Recorder.RecordTool).
func (r recordingRunner) Lacks(tool string) bool {
	l, ok := r.inner.(interface{ Lacks(string) bool })
	return ok && l.Lacks(tool)
}

func (r recordingRunner) Has(tool string) bool {
	has := true
	if l, ok := r.inner.(interface{ Has(string) bool }); ok {
		has = l.Has(tool)
	}
	if has {
		r.rec.RecordToolFound(tool)
	}
	return has
}

// toolResultOf is the archive's form of a run. The failure text is kept
// whole, for replay to give the same warning, with the resolved path of the
// tool (which names the user's directories) replaced by the tool's name.
func toolResultOf(tool string, res Result) snapshot.ToolResult {
	out := snapshot.ToolResult{Stdout: res.Stdout, Stderr: res.Stderr, ExitStatus: res.ExitCode,
		TimedOut: errors.Is(res.Err, ErrTimeout)}
	if res.Err != nil {
		out.Error = res.Err.Error()
		if res.Path != "" {
			out.Error = strings.ReplaceAll(out.Error, res.Path, tool)
		}
	}
	return out
}

// RecordingEnv is lookup that records every variable it is asked for in rec.
func RecordingEnv(lookup func(string) (string, bool), rec *snapshot.Recorder) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := lookup(name)
		rec.RecordEnv(name, v, ok)
		return v, ok
	}
}

// SnapshotRunner answers tool runs from a snapshot: the recorded output,
// exit status and failure, and ErrToolMissing for a command line the
// archive does not hold. No process is started.
func SnapshotRunner(s *snapshot.Snapshot) Runner { return snapshotRunner{s} }

type snapshotRunner struct{ s *snapshot.Snapshot }

func (r snapshotRunner) Run(_ context.Context, tool string, args ...string) Result {
	rec, ok := r.s.Tool(append([]string{tool}, args...)...)
	if !ok {
		return Result{Err: fmt.Errorf("%s: not in the snapshot: %w", tool, ErrToolMissing)}
	}
	return Result{Stdout: rec.Stdout, Stderr: rec.Stderr, ExitCode: rec.ExitStatus, Err: replayedErr(rec)}
}

func (r snapshotRunner) Has(tool string) bool { return r.s.HasTool(tool) }

// Lacks: the capture neither found tool on PATH nor ran it, so every run of
// it replays as missing.
func (r snapshotRunner) Lacks(tool string) bool { return !r.s.HasTool(tool) }

// replayedSentinels are the kinds of failure a Runner reports, most specific
// first; a recorded failure text ends with the kind it wrapped.
var replayedSentinels = []error{ErrTooLarge, ErrOutputIncomplete, ErrTimeout, ErrExit}

// replayedErr rebuilds a recorded failure: its text as it was, wrapping the
// kind it was (ErrExit when the text names none), so warnings read the same
// and callers that test the kind decide the same.
func replayedErr(rec snapshot.ToolResult) error {
	if rec.Error == "" && !rec.TimedOut {
		return nil
	}
	kind := ErrExit
	if rec.TimedOut {
		kind = ErrTimeout
	} else {
		for _, k := range replayedSentinels {
			if strings.HasSuffix(rec.Error, k.Error()) {
				kind = k
				break
			}
		}
	}
	msg := rec.Error
	if msg == "" {
		msg = kind.Error()
	}
	return &replayedError{msg: msg, kind: kind}
}

type replayedError struct {
	msg  string
	kind error
}

func (e *replayedError) Error() string { return e.msg }
func (e *replayedError) Unwrap() error { return e.kind }
