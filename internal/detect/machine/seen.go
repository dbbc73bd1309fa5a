package machine

import (
	"io/fs"
	"slices"
	"sync"
)

// seenReads is what one detection has read so far: every file (its bytes or
// its error), listing, link and stat, by path. Backends run side by side on
// one Machine and several read the same things (the environment, storage
// and NUMA backends the cgroup and DMI files, three backends /dev and
// /sys/class/drm), so the second asks nobody but this map. A Machine lives
// for one detection, so what it holds is that detection's reading of the
// machine; the next detection reads afresh. Concurrent first reads of one
// path may both reach the source; both give the same answer.
type seenReads struct {
	mu    sync.Mutex
	files map[fileKey]seenFile
	dirs  map[string][]fs.DirEntry
	links map[string]string
	stats map[string]seenStat
}

// fileKey tells a whole-file read from a head read or one with another cap:
// each can succeed or fail on its own.
type fileKey struct {
	name  string
	limit int
	head  bool
}

type seenFile struct {
	data []byte
	err  error
}

type seenStat struct {
	fi  fs.FileInfo
	err error
}

// file returns what an earlier read of name with the same cap gave.
func (s *seenReads) file(name string, limit int, head bool) ([]byte, error, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[fileKey{name, limit, head}]
	return f.data, f.err, ok
}

// keepFile records a read (data is the caller's own copy; nil on error).
func (s *seenReads) keepFile(name string, limit int, head bool, data []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[fileKey]seenFile{}
	}
	if err == nil && data == nil {
		data = []byte{}
	}
	s.files[fileKey{name, limit, head}] = seenFile{data, err}
}

// dir returns a copy of an earlier listing of name (nil: absent or
// unreadable, as ReadDir says).
func (s *seenReads) dir(name string) ([]fs.DirEntry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	es, ok := s.dirs[name]
	return slices.Clone(es), ok
}

func (s *seenReads) keepDir(name string, es []fs.DirEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dirs == nil {
		s.dirs = map[string][]fs.DirEntry{}
	}
	s.dirs[name] = es
}

func (s *seenReads) link(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.links[name]
	return t, ok
}

func (s *seenReads) keepLink(name, target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.links == nil {
		s.links = map[string]string{}
	}
	s.links[name] = target
}

func (s *seenReads) stat(name string) (fs.FileInfo, error, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.stats[name]
	return st.fi, st.err, ok
}

func (s *seenReads) keepStat(name string, fi fs.FileInfo, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats == nil {
		s.stats = map[string]seenStat{}
	}
	s.stats[name] = seenStat{fi, err}
}
