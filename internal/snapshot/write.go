package snapshot

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	json "github.com/goccy/go-json"
)

// epoch is the modification time of every archive member: the archive is a
// function of what was recorded, not of when.
var epoch = time.Unix(0, 0).UTC()

// WriteTo writes the archive of everything recorded so far, scrubbed (see
// scrub.go). Members are sorted and carry fixed times and owners, so the same
// recording gives the same bytes. An archive that Read would refuse under
// DefaultLimits is not written.
func (r *Recorder) WriteTo(w io.Writer) (int64, error) {
	a, err := r.build()
	if err != nil {
		return 0, err
	}
	cw := &countingWriter{w: w}
	err = a.write(cw)
	return cw.n, err
}

// WriteFile writes the archive to the file name (created with mode 0600: a
// snapshot describes one user's machine).
//
// Only a regular file is written, as Read only reads one: the file is
// opened without blocking and without truncating, checked with fstat, and
// only then truncated. A blocking open of a FIFO waits for a reader, so a
// FIFO named here held the caller's thread for good, past any timeout; a
// device would take the archive's bytes.
func (r *Recorder) WriteFile(name string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ENXIO) {
		// A FIFO without a reader (open(2): ENXIO with O_NONBLOCK).
		if st, serr := os.Stat(name); serr == nil && !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", name)
		}
	}
	if err != nil {
		return err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return err
		}
		return fmt.Errorf("%s is not a regular file", name)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return err
	}
	bw := bufio.NewWriter(f)
	if _, err := r.WriteTo(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// archive is a scrubbed, sorted recording ready to be written.
type archive struct {
	manifest Manifest
	paths    []string
	nodes    map[string]*node
	outputs  map[string]ToolResult // by key
}

// build copies the recording under the lock, scrubs it and sorts it.
func (r *Recorder) build() (*archive, error) {
	r.mu.Lock()
	nodes := make(map[string]*node, len(r.nodes))
	for p, n := range r.nodes {
		c := *n
		nodes[p] = &c
	}
	runs := make([]toolRun, 0, len(r.tools))
	for _, t := range r.tools {
		runs = append(runs, toolRun{argv: slices.Clone(t.argv), res: t.res})
	}
	env := make([]EnvEntry, 0, len(r.env))
	for _, e := range r.env {
		env = append(env, e)
	}
	errs := make([]ReadError, 0, len(r.errors))
	for p, k := range r.errors {
		errs = append(errs, ReadError{Path: p, Kind: k})
	}
	found := make([]string, 0, len(r.found))
	for t := range r.found {
		found = append(found, t)
	}
	withheld := r.withheld
	r.mu.Unlock()
	slices.Sort(found)

	opts, err := r.opts.detectOptionsJSON()
	if err != nil {
		return nil, fmt.Errorf("snapshot: encoding the detection options: %w", err)
	}
	a := &archive{nodes: nodes, outputs: map[string]ToolResult{}, manifest: Manifest{
		Format: FormatVersion, LibraryVersion: r.opts.LibraryVersion, Created: r.opts.Created.UTC(),
		Options: opts, KeptIDs: r.opts.KeepIDs, ToolsFound: found, Errors: errs, Withheld: withheld,
	}}
	a.scrub(newScrubber(r.opts.KeepIDs), runs, env)
	for p, n := range nodes {
		a.paths = append(a.paths, p)
		if !n.full {
			a.manifest.Stubs = append(a.manifest.Stubs, p)
		}
	}
	slices.Sort(a.paths)
	slices.Sort(a.manifest.Stubs)
	slices.SortFunc(a.manifest.Errors, func(x, y ReadError) int { return strings.Compare(x.Path, y.Path) })
	return a, a.checkLimits(DefaultLimits)
}

// scrub runs the scrubber's two passes over every recorded text and fills
// the manifest's tools and environment with the results.
func (a *archive) scrub(sc *scrubber, runs []toolRun, env []EnvEntry) {
	pass := func() {
		for p, n := range a.nodes {
			if n.mode.IsRegular() && n.full {
				n.data = sc.file(p, n.data)
			}
		}
		for i := range runs {
			for j := range runs[i].argv {
				runs[i].argv[j] = string(sc.text([]byte(runs[i].argv[j])))
			}
			runs[i].res.Stdout = sc.text(runs[i].res.Stdout)
			runs[i].res.Stderr = sc.text(runs[i].res.Stderr)
			runs[i].res.Error = string(sc.text([]byte(runs[i].res.Error)))
		}
		for i := range env {
			env[i].Value = string(sc.text([]byte(env[i].Value)))
		}
	}
	pass() // collect
	sc.seal()
	pass() // replace
	a.manifest.Tools = make([]ToolEntry, 0, len(runs))
	for _, t := range runs {
		key := ToolKey(t.argv)
		if _, dup := a.outputs[key]; dup {
			continue
		}
		a.outputs[key] = t.res
		a.manifest.Tools = append(a.manifest.Tools, ToolEntry{Argv: t.argv, Key: key,
			ExitStatus: t.res.ExitStatus, TimedOut: t.res.TimedOut, Error: t.res.Error})
	}
	slices.SortFunc(a.manifest.Tools, func(x, y ToolEntry) int { return strings.Compare(x.Key, y.Key) })
	slices.SortFunc(env, func(x, y EnvEntry) int { return strings.Compare(x.Name, y.Name) })
	a.manifest.Env = env
}

// checkLimits refuses an archive the reader would refuse.
func (a *archive) checkLimits(lim Limits) error {
	members := 1 + len(a.paths) + 2*len(a.outputs)
	if members > lim.MaxMembers {
		return fmt.Errorf("snapshot: %d members, more than the %d a reader accepts", members, lim.MaxMembers)
	}
	var total int64
	for _, n := range a.nodes {
		if int64(len(n.data)) > lim.MaxMemberBytes {
			return fmt.Errorf("snapshot: a file of %d bytes, more than the %d a reader accepts", len(n.data), lim.MaxMemberBytes)
		}
		total += int64(len(n.data)) + 2*tarBlock // header, with room for a long name
	}
	for _, o := range a.outputs {
		for _, b := range [][]byte{o.Stdout, o.Stderr} {
			if int64(len(b)) > lim.MaxMemberBytes {
				return fmt.Errorf("snapshot: tool output of %d bytes, more than the %d a reader accepts", len(b), lim.MaxMemberBytes)
			}
			total += int64(len(b)) + 2*tarBlock
		}
	}
	if total > lim.MaxTotalBytes/2 {
		return fmt.Errorf("snapshot: about %d bytes, more than half the %d a reader accepts", total, lim.MaxTotalBytes)
	}
	return nil
}

const tarBlock = 512

// write writes the gzip-compressed tar: manifest, tree, tool outputs.
func (a *archive) write(w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	man, err := json.MarshalIndent(a.manifest, "", " ")
	if err != nil {
		return err
	}
	if err := writeRegular(tw, manifestName, man); err != nil {
		return err
	}
	for _, p := range a.paths {
		if err := writeNode(tw, p, a.nodes[p]); err != nil {
			return err
		}
	}
	for _, t := range a.manifest.Tools {
		o := a.outputs[t.Key]
		if err := writeRegular(tw, toolMember(t.Key, stdoutName), o.Stdout); err != nil {
			return err
		}
		if err := writeRegular(tw, toolMember(t.Key, stderrName), o.Stderr); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeNode writes one tree entry under root/. Whether the entry is whole
// or kept as existing only is said by the manifest (Manifest.Stubs), not by
// the header, so that standard tar lists the archive without warnings.
func writeNode(tw *tar.Writer, p string, n *node) error {
	name := rootPrefix + p
	switch t := n.mode.Type(); {
	case t.IsRegular():
		return writeRegular(tw, name, n.data)
	case t&fs.ModeDir != 0:
		return tw.WriteHeader(header(tar.TypeDir, name+"/", 0o755))
	case t&fs.ModeSymlink != 0:
		h := header(tar.TypeSymlink, name, 0o777)
		h.Linkname = n.target
		return tw.WriteHeader(h)
	case t&fs.ModeCharDevice != 0:
		return tw.WriteHeader(header(tar.TypeChar, name, 0o644))
	case t&fs.ModeDevice != 0:
		return tw.WriteHeader(header(tar.TypeBlock, name, 0o644))
	case t&fs.ModeNamedPipe != 0:
		return tw.WriteHeader(header(tar.TypeFifo, name, 0o644))
	}
	return nil // sockets and irregular files have no tar type: left out
}

func writeRegular(tw *tar.Writer, name string, data []byte) error {
	h := header(tar.TypeReg, name, 0o644)
	h.Size = int64(len(data))
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func header(typ byte, name string, mode int64) *tar.Header {
	return &tar.Header{Typeflag: typ, Name: name, Mode: mode, ModTime: epoch, Format: tar.FormatPAX}
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
