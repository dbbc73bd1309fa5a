package snapshot

import (
	"fmt"
	"io"
	"io/fs"
)

// maxDirSourceRead caps one ReadFile of a DirSource: the 8 MiB a snapshot
// member may hold.
const maxDirSourceRead = 8 << 20

// DirSource adapts a directory tree to Source: fsys must implement
// fs.ReadLinkFS, as os.DirFS does (Go 1.25). Meant for trees one controls
// (the fixture machines of testdata/machines); it checks that a file is
// regular before opening it but, unlike the live machine view of
// internal/detect, does not guard against a FIFO swapped in between.
func DirSource(fsys fs.FS) (Source, error) {
	if _, ok := fsys.(fs.ReadLinkFS); !ok {
		return nil, fmt.Errorf("snapshot: %T cannot read links", fsys)
	}
	return dirSource{fsys}, nil
}

type dirSource struct{ fsys fs.FS }

func (d dirSource) ReadFile(name string) ([]byte, error) {
	st, err := fs.Stat(d.fsys, name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errNotRegular}
	}
	f, err := d.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDirSourceRead+1))
	if err == nil && len(b) > maxDirSourceRead {
		err = &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("longer than %d bytes", maxDirSourceRead)}
	}
	return b, err
}

func (d dirSource) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.fsys, name) }
func (d dirSource) ReadLink(name string) (string, error)       { return fs.ReadLink(d.fsys, name) }
func (d dirSource) Lstat(name string) (fs.FileInfo, error)     { return fs.Lstat(d.fsys, name) }
func (d dirSource) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(d.fsys, name) }
