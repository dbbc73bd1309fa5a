//go:build unix

package machine

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// pathAbsences remembers, per PATH directory, the tool names that were not
// there, so that a steady-state detection does not look each of its tools up
// in each directory again: with a PATH of 12 directories and about 15 tools
// a detection made some 180 failing stat calls (docs/performance.md, "Eighth
// pass"). An absence stays true while the directory's device, inode and
// modification time are those it was seen with: adding, removing or renaming
// an entry changes a directory's modification time (POSIX, "File Times
// Update": the parent's st_mtime is marked for update by creat, link,
// rename, unlink), so a tool installed later is found by the next detection
// after its directory changed. A directory modified within the last
// racyWindow is not remembered (a second entry added within the same clock
// tick would not move the time: git's "racy clean" rule), nor is a name that
// exists as a dangling link (its target may appear without the directory
// changing): only a name lstat also finds absent.
type pathAbsences struct {
	mu   sync.Mutex
	dirs map[string]*absentIn
}

// absentIn is one directory's remembered absences and the state of the
// directory they hold for.
type absentIn struct {
	w     dirWitness
	names map[string]bool
}

// dirWitness is what a directory's absences hold for: its identity and
// modification time.
type dirWitness struct {
	dev, ino uint64
	mtime    time.Time
}

// racyWindow is how recent a directory's modification may be for its
// absences to be remembered.
const racyWindow = 2 * time.Second

// maxAbsentDirs bounds the directories remembered: PATH lists come from
// hosts (the detection option "path"), so the memory must not grow with
// every distinct one; past the bound the memory starts over.
const maxAbsentDirs = 256

var absentOnPath = &pathAbsences{dirs: map[string]*absentIn{}}

// witnessOf stats directory d once; ok is false when d is not a directory
// (no tool can be found below it).
func witnessOf(d string) (dirWitness, bool) {
	st, err := os.Stat(d)
	if err != nil || !st.IsDir() {
		return dirWitness{}, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return dirWitness{}, false
	}
	return dirWitness{dev: uint64(sys.Dev), ino: uint64(sys.Ino), mtime: st.ModTime()}, true
}

// absent reports whether tool was remembered absent from d while d was as w.
func (a *pathAbsences) absent(d string, w dirWitness, tool string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	in := a.dirs[d]
	return in != nil && in.w == w && in.names[tool]
}

// remember records tool absent from d, seen as w, when d has been still for
// racyWindow and not even a link named tool is there.
func (a *pathAbsences) remember(d string, w dirWitness, tool, p string) {
	if time.Since(w.mtime) < racyWindow {
		return
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	in := a.dirs[d]
	if in == nil || in.w != w {
		if in == nil && len(a.dirs) >= maxAbsentDirs {
			a.dirs = map[string]*absentIn{}
		}
		in = &absentIn{w: w, names: map[string]bool{}}
		a.dirs[d] = in
	}
	in.names[tool] = true
}
