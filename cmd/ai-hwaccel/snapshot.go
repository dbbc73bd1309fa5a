package main

import (
	"fmt"
	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
	"os"
	"path/filepath"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/snapshot"
)

// defaultSnapshotFile is where `ai-hwaccel snapshot` writes without -o.
const defaultSnapshotFile = "ai-hwaccel-snapshot.tar.gz"

// snapshot runs a detection with everything it reads recorded and writes
// the archive (docs/snapshots.md), through the "snapshot_out" option of the
// library, as a host would.
func (a *app) snapshot(args []string) error {
	f := newFlags("snapshot", "  ai-hwaccel snapshot [-o FILE] [--keep-ids] [detection flags]",
		"Detects this machine and writes what the detection read to one gzip-compressed tar: the\n"+
			"files of /sys, /proc and /dev it opened or listed, every vendor tool run (argv, output, exit\n"+
			"status) and the environment variables it consulted. MAC and IP addresses are never kept;\n"+
			"serial numbers and UUIDs only with --keep-ids. Attach the file to a bug report: anyone can\n"+
			"replay it with 'ai-hwaccel --snapshot FILE' (docs/snapshots.md). Read it first: tar tzvf FILE.")
	var out string
	var keepIDs bool
	f.StringVar(&out, "output", defaultSnapshotFile, "write the archive to `FILE`")
	f.StringVar(&out, "o", defaultSnapshotFile, "same as --output")
	f.hidden["o"] = true
	f.BoolVar(&keepIDs, "keep-ids", false, "keep serial numbers and UUIDs (for a bug that depends on them)")
	f.group("Flags", "output", "keep-ids")
	d := &detectFlags{}
	d.register(f)
	if err := f.parse(a, args); err != nil {
		return ignoreHelp(err)
	}
	if f.isSet("snapshot") {
		return usagef("snapshot", "--snapshot replays a captured machine; a capture reads this one")
	}
	if out == "" {
		return usagef("snapshot", "--output needs a file name")
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return usagef("snapshot", "--output %q: %v", out, err)
	}
	opts, err := d.options(f)
	if err != nil {
		return err
	}
	if opts == nil {
		opts = map[string]any{}
	}
	opts["snapshot_out"] = abs
	if keepIDs {
		opts["snapshot_keep_ids"] = true
	}
	optsJSON, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	reg, err := a.detectRegistry(optsJSON)
	if err != nil {
		return err
	}
	return a.describeSnapshot(abs, len(reg.Devices))
}

// describeSnapshot tells what was written and how to look at it.
func (a *app) describeSnapshot(file string, devices int) error {
	s, err := snapshot.Open(file)
	if err != nil {
		return fmt.Errorf("the snapshot written cannot be read back: %w", err)
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	m := s.Manifest()
	ids := "serial numbers and UUIDs replaced"
	if m.KeptIDs {
		ids = "serial numbers and UUIDs kept"
	}
	_, err = fmt.Fprint(a.stdout, cli.Plurals(fmt.Sprintf("wrote %s: %d bytes, %d device(s) detected, %d tool run(s), %d environment variable(s); %s.\n"+
		"Check what it holds with: tar tzvf %s\nReplay it with: ai-hwaccel --table --snapshot %s\n",
		file, st.Size(), devices, len(m.Tools), len(m.Env), ids, file, file)))
	return err
}

// snapshotOption adds the "snapshot" option of --snapshot FILE to o: an
// absolute path (the library refuses a relative one), and no sysroot or
// path, which name this machine.
func (d *detectFlags) snapshotOption(f *flags, o map[string]any) error {
	if d.snapshot == "" {
		return usagef(f.cmd, "--snapshot needs a file name")
	}
	if f.isSet("sysroot") || f.isSet("path") {
		return usagef(f.cmd, "--snapshot replays a captured machine: --sysroot and --path name this one")
	}
	abs, err := filepath.Abs(d.snapshot)
	if err != nil {
		return usagef(f.cmd, "--snapshot %q: %v", d.snapshot, err)
	}
	o["snapshot"] = abs
	return nil
}
