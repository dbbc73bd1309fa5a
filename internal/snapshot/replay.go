package snapshot

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"time"
)

// Snapshot is a read archive: the machine tree as an fs.FS (with ReadFile,
// ReadDir, Stat, ReadLink and Lstat; links resolved inside the archive only),
// the tool runs and the environment of the capture. Safe for concurrent use
// (it is never modified after Read).
type Snapshot struct {
	manifest Manifest
	nodes    map[string]*node
	children map[string][]string
	tools    map[string]ToolResult
	env      map[string]EnvEntry
	errors   map[string]string
	found    map[string]bool
}

func newSnapshot() *Snapshot {
	return &Snapshot{nodes: map[string]*node{}, children: map[string][]string{}, tools: map[string]ToolResult{},
		env: map[string]EnvEntry{}, errors: map[string]string{}, found: map[string]bool{}}
}

var (
	_ fs.ReadFileFS = (*Snapshot)(nil)
	_ fs.ReadDirFS  = (*Snapshot)(nil)
	_ fs.StatFS     = (*Snapshot)(nil)
	_ fs.ReadLinkFS = (*Snapshot)(nil)
)

// ErrNotRecorded is the error of a read the capture did not make: the entry
// is known (its type was recorded) but not its content or listing. It
// matches fs.ErrNotExist, so a caller treats it as absence.
var ErrNotRecorded error = notRecorded{}

type notRecorded struct{}

func (notRecorded) Error() string        { return "not recorded in the snapshot" }
func (notRecorded) Is(target error) bool { return target == fs.ErrNotExist }

var errNotRegular = errors.New("not a regular file")

// Manifest returns the archive's manifest.
func (s *Snapshot) Manifest() Manifest { return s.manifest }

// Tool returns the recorded run of argv; false when the archive holds none
// (the caller treats the tool as absent).
func (s *Snapshot) Tool(argv ...string) (ToolResult, bool) {
	r, ok := s.tools[ToolKey(argv)]
	if !ok {
		return ToolResult{}, false
	}
	r.Stdout, r.Stderr = bytes.Clone(r.Stdout), bytes.Clone(r.Stderr)
	if r.Stdout == nil {
		r.Stdout = []byte{}
	}
	return r, true
}

// HasTool reports whether the capture found tool on PATH: it looked it up
// and found it, or ran it.
func (s *Snapshot) HasTool(tool string) bool { return s.found[tool] }

// LookupEnv returns a variable as the capture saw it. A variable the capture
// did not consult reads as unset.
func (s *Snapshot) LookupEnv(name string) (string, bool) {
	e, ok := s.env[name]
	return e.Value, ok && e.Set
}

// find resolves name (following the last link when follow) and returns the
// node there; a read error recorded at capture is returned as that error.
func (s *Snapshot) find(op, name string, follow bool) (string, *node, error) {
	p, err := resolve(name, follow, s.linkOf)
	if err != nil {
		return "", nil, &fs.PathError{Op: op, Path: name, Err: unwrapPathErr(err)}
	}
	if k, ok := s.errors[p]; ok {
		e := fs.ErrPermission
		if k != ErrorPermission {
			e = errors.New("read failed at capture")
		}
		return "", nil, &fs.PathError{Op: op, Path: name, Err: e}
	}
	if p == "." {
		return p, &node{mode: fs.ModeDir, full: true}, nil
	}
	n, ok := s.nodes[p]
	if !ok {
		return "", nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return p, n, nil
}

func (s *Snapshot) linkOf(p string) (string, bool, error) {
	n, ok := s.nodes[p]
	if !ok || n.mode&fs.ModeSymlink == 0 {
		return "", false, nil
	}
	return n.target, true, nil
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadFile returns the content of the regular file name leads to.
func (s *Snapshot) ReadFile(name string) ([]byte, error) {
	_, n, err := s.find("read", name, true)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errNotRegular}
	}
	if !n.full {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRecorded}
	}
	return bytes.Clone(n.data), nil
}

// ReadDir lists the directory name leads to, sorted by name.
func (s *Snapshot) ReadDir(name string) ([]fs.DirEntry, error) {
	p, n, err := s.find("readdir", name, true)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	if !n.full {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: ErrNotRecorded}
	}
	names := s.children[p]
	out := make([]fs.DirEntry, 0, len(names))
	for _, c := range names {
		out = append(out, fs.FileInfoToDirEntry(s.info(c, s.nodes[path.Join(p, c)])))
	}
	return out, nil
}

// ReadLink returns the target of the link name, as recorded (relative).
func (s *Snapshot) ReadLink(name string) (string, error) {
	_, n, err := s.find("readlink", name, false)
	if err != nil {
		return "", err
	}
	if n.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return n.target, nil
}

// Stat describes what name leads to.
func (s *Snapshot) Stat(name string) (fs.FileInfo, error) {
	_, n, err := s.find("stat", name, true)
	if err != nil {
		return nil, err
	}
	return s.info(path.Base(name), n), nil
}

// Lstat describes name itself (a link as a link).
func (s *Snapshot) Lstat(name string) (fs.FileInfo, error) {
	_, n, err := s.find("lstat", name, false)
	if err != nil {
		return nil, err
	}
	return s.info(path.Base(name), n), nil
}

// Open opens name for fs.FS users (fs.WalkDir, fs.ReadFile).
func (s *Snapshot) Open(name string) (fs.File, error) {
	p, n, err := s.find("open", name, true)
	if err != nil {
		return nil, err
	}
	info := s.info(path.Base(name), n)
	switch {
	case n.mode.IsDir():
		es, err := s.ReadDir(p)
		if err != nil {
			return nil, err
		}
		return &openDir{info: info, entries: es}, nil
	case n.mode.IsRegular() && n.full:
		return &openFile{info: info, r: bytes.NewReader(n.data)}, nil
	case n.mode.IsRegular():
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRecorded}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
}

// info is the fs.FileInfo of a node: its type, fixed permissions, the size
// of the recorded content; times are not recorded.
func (s *Snapshot) info(name string, n *node) fs.FileInfo {
	perm := fs.FileMode(0o444)
	switch {
	case n.mode.IsDir():
		perm = 0o555
	case n.mode&fs.ModeSymlink != 0:
		perm = 0o777
	}
	return fileInfo{name: name, size: int64(len(n.data)), mode: n.mode | perm}
}

type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (f fileInfo) Name() string       { return f.name }
func (f fileInfo) Size() int64        { return f.size }
func (f fileInfo) Mode() fs.FileMode  { return f.mode }
func (f fileInfo) ModTime() time.Time { return epoch }
func (f fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fileInfo) Sys() any           { return nil }

type openFile struct {
	info fs.FileInfo
	r    *bytes.Reader
}

func (f *openFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *openFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *openFile) Close() error               { return nil }

type openDir struct {
	info    fs.FileInfo
	entries []fs.DirEntry
}

func (d *openDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *openDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: errors.New("is a directory")}
}
func (d *openDir) Close() error { return nil }

// ReadDir returns the next n entries (all when n <= 0), as fs.ReadDirFile.
func (d *openDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		es := d.entries
		d.entries = nil
		return es, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	es := d.entries[:n]
	d.entries = d.entries[n:]
	return es, nil
}
