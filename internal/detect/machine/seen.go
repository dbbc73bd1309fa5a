package machine

import (
	"io/fs"
	"slices"
	"sync"
)

// seenReads is what one detection has read so far: every file (its bytes or
// its error), listing, link and stat, by path, each read once. Backends run
// side by side on one Machine and several read the same things (the
// environment, storage and CPU backends the cgroup and DMI files, three
// backends /dev and /sys/class/drm): the first asks the source, the others
// wait for its answer. A Machine lives for one detection, so what it holds
// is that detection's reading of the machine; the next detection reads
// afresh.
type seenReads struct {
	mu    sync.Mutex
	files map[fileKey]*seenFile
	dirs  map[string]*seenDir
	links map[string]*seenLink
	stats map[string]*seenStat
}

// fileKey tells a whole-file read from a head read or one with another cap:
// each can succeed or fail on its own.
type fileKey struct {
	name  string
	limit int
	head  bool
}

type seenFile struct {
	once sync.Once
	data []byte // the reader's own copy; nil on error
	err  error
}

type seenDir struct {
	once    sync.Once
	entries []fs.DirEntry
	err     error
}

type seenLink struct {
	once   sync.Once
	target string
	err    error
}

type seenStat struct {
	once sync.Once
	fi   fs.FileInfo
	err  error
}

// entry returns the entry of key in *m, made on first use.
func entry[K comparable, V any](mu *sync.Mutex, m *map[K]*V, key K) *V {
	mu.Lock()
	defer mu.Unlock()
	if *m == nil {
		*m = map[K]*V{}
	}
	e, ok := (*m)[key]
	if !ok {
		e = new(V)
		(*m)[key] = e
	}
	return e
}

// file returns the reading of name with this cap: read calls once per
// detection, and hands over a copy of the bytes it read.
func (s *seenReads) file(k fileKey, read func() ([]byte, error)) ([]byte, error) {
	e := entry(&s.mu, &s.files, k)
	e.once.Do(func() {
		e.data, e.err = read()
		if e.err == nil && e.data == nil {
			e.data = []byte{}
		}
	})
	return e.data, e.err
}

// dir returns a copy of the listing of name (a caller may reorder its own).
func (s *seenReads) dir(name string, read func() ([]fs.DirEntry, error)) ([]fs.DirEntry, error) {
	es, err := s.sharedDir(name, read)
	return slices.Clone(es), err
}

// sharedDir is dir without the copy: the detection's one listing of name,
// for a caller that only reads it and never changes or keeps it.
func (s *seenReads) sharedDir(name string, read func() ([]fs.DirEntry, error)) ([]fs.DirEntry, error) {
	e := entry(&s.mu, &s.dirs, name)
	e.once.Do(func() { e.entries, e.err = read() })
	return e.entries, e.err
}

func (s *seenReads) link(name string, read func() (string, error)) (string, error) {
	e := entry(&s.mu, &s.links, name)
	e.once.Do(func() { e.target, e.err = read() })
	return e.target, e.err
}

func (s *seenReads) stat(name string, read func() (fs.FileInfo, error)) (fs.FileInfo, error) {
	e := entry(&s.mu, &s.stats, name)
	e.once.Do(func() { e.fi, e.err = read() })
	return e.fi, e.err
}
