package api

import (
	"context"
	"path/filepath"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/snapshot"
)

// LibraryVersion is written in every snapshot's manifest: the library's
// version, HWACCEL_VERSION_STRING in include/ai_hwaccel.h (a test keeps them
// equal).
const LibraryVersion = "0.2.0"

// snapshotOptions checks the snapshot options of the wire (docs/snapshots.md)
// and copies them into opts: "snapshot" replays an archive, "snapshot_out"
// captures one, "snapshot_keep_ids" keeps identifiers in the capture. Paths
// must be absolute, as the path option's entries: a library must not depend
// on its host's working directory.
func snapshotOptions(w wireOptions, opts *detect.Options) error {
	if w.Snapshot != nil {
		if !filepath.IsAbs(*w.Snapshot) {
			return errs.New(errs.InvalidArgument, "options: snapshot %q is not an absolute path", *w.Snapshot)
		}
		if w.Sysroot != nil || w.Path != nil {
			return errs.New(errs.InvalidArgument, "options: snapshot replays a captured machine; sysroot and path name this one")
		}
		if w.SnapshotOut != nil {
			return errs.New(errs.InvalidArgument, "options: snapshot and snapshot_out exclude each other")
		}
		opts.Snapshot = *w.Snapshot
	}
	if w.SnapshotOut != nil {
		if !filepath.IsAbs(*w.SnapshotOut) {
			return errs.New(errs.InvalidArgument, "options: snapshot_out %q is not an absolute path", *w.SnapshotOut)
		}
		opts.SnapshotOut = *w.SnapshotOut
	} else if w.SnapshotKeepIDs {
		return errs.New(errs.InvalidArgument, "options: snapshot_keep_ids needs snapshot_out")
	}
	opts.SnapshotKeepIDs = w.SnapshotKeepIDs
	return nil
}

// captureTo runs a detection recorded into a snapshot and writes the
// archive to opts.SnapshotOut. The manifest keeps the options that shape
// detection, not the host paths (sysroot, PATH) nor the env option (its
// values can be identifiers; the variables detection consulted are in the
// archive, scrubbed).
func captureTo(ctx context.Context, opts detect.Options) (*registry.Registry, error) {
	type recordedOptions struct {
		Backends  []string `json:"backends,omitempty"`
		Exclude   []string `json:"exclude,omitempty"`
		NoExec    bool     `json:"no_exec,omitempty"`
		TimeoutMs float64  `json:"timeout_ms,omitempty"`
	}
	so := snapshot.Options{LibraryVersion: LibraryVersion, Created: time.Now(), KeepIDs: opts.SnapshotKeepIDs,
		DetectOptions: recordedOptions{opts.Backends, opts.Exclude, opts.NoExec, float64(opts.Timeout) / float64(time.Millisecond)}}
	reg, rec, err := detect.Capture(ctx, opts, so)
	if err != nil {
		return nil, detectionError(err)
	}
	if err := rec.WriteFile(opts.SnapshotOut); err != nil {
		return nil, errs.Wrap(errs.InvalidArgument, err, "snapshot_out")
	}
	return reg, nil
}

// detectionError is the error object of a failed detection: its own code
// when it has one (a refused snapshot is invalid_argument), else
// detection_failed.
func detectionError(err error) error {
	if errs.CodeOf(err) != errs.Internal {
		return err
	}
	return errs.Wrap(errs.DetectionFailed, err, "detect")
}
