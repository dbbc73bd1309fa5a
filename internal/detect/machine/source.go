package machine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"syscall"
)

// source is what the view reads a machine's files from: a sysroot
// directory (dirSource) or, in tests, an fs.FS (fsSource). Tools run through
// the view's Runner. A recorded machine can be another source.
type source interface {
	// readFile hands use the content of the regular file name, at most
	// limit bytes (with head, the first limit bytes of a longer file; else
	// a longer file is an error). Nothing else is opened: a FIFO, a device
	// or a directory is an error, and no open blocks.
	readFile(name string, limit int, head bool, use func([]byte)) error
	readDir(name string) ([]fs.DirEntry, error)
	readLink(name string) (string, error)
	// stat follows symbolic links.
	stat(name string) (fs.FileInfo, error)
}

// dirSource reads a sysroot through os.Root: every path, symbolic links
// included, resolves inside the sysroot, and a link leading out of it (an
// absolute link, or "../" past the root) is an error instead of a host file.
// The kernel's own links in sysfs are relative and stay inside
// (sys/bus/pci/devices/X -> ../../../devices/pci0000:00/X).
type dirSource struct {
	// root is the sysroot as an os.Root, for every read openat2 cannot do;
	// nil until lazy opens it (a detection where openat2 reads everything
	// never does).
	root *os.Root
	lazy *lazyRoot
	// dir is the sysroot opened for openat2 (source_linux.go), which
	// reads a file in a few system calls; nil where openat2 is unusable.
	dir *pathFD
	// path is the sysroot's host path (the entries of a listing lstat
	// below it).
	path string
	// kernel opens the sysroot's sys/ and proc/ when they are the kernel's
	// own sysfs and procfs (source_linux.go): a file there is read with one
	// open; nil where openat2 is unusable.
	kernel *kernelMounts
}

func (s dirSource) readFile(name string, limit int, head bool, use func([]byte)) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if s.kernel != nil {
		if ok, err := s.kernel.readFile(s.dir, name, limit, head, use); ok {
			return err
		}
	}
	if s.dir != nil {
		if ok, err := readFileBeneath(s.dir, name, limit, head, use); ok {
			return err
		}
	}
	// Stat first, so a device node is never opened (opening one can have
	// effects: a watchdog starts, a tape rewinds); fstat after the open, so a
	// FIFO swapped in between is refused too. O_NONBLOCK makes that open
	// return at once instead of waiting for a writer.
	root, err := s.osRoot()
	if err != nil {
		return pathError("open", name, err)
	}
	st, err := root.Stat(name)
	if err != nil {
		return pathError("stat", name, err)
	}
	if err := checkRegular(name, st.Mode()); err != nil {
		return err
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return pathError("open", name, err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return pathError("stat", name, err)
	}
	if err := checkRegular(name, st.Mode()); err != nil {
		return err
	}
	return readLimited(f, name, st.Size(), limit, head, use)
}

func (s dirSource) readDir(name string) ([]fs.DirEntry, error) {
	if s.dir != nil && fs.ValidPath(name) {
		if ok, entries, err := readDirBeneath(s.dir, s.path, name); ok {
			return entries, err
		}
	}
	root, err := s.osRoot()
	if err != nil {
		return nil, pathError("open", name, err)
	}
	return fs.ReadDir(root.FS(), name)
}

func (s dirSource) readLink(name string) (string, error) {
	if s.dir != nil && fs.ValidPath(name) {
		if ok, target, err := readLinkBeneath(s.dir, name); ok {
			return target, err
		}
	}
	root, err := s.osRoot()
	if err != nil {
		return "", pathError("readlink", name, err)
	}
	return root.Readlink(name)
}

func (s dirSource) stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if s.kernel != nil {
		if ok, fi, err := s.kernel.stat(s.dir, name); ok {
			return fi, err
		}
	}
	if s.dir != nil {
		if ok, fi, err := statBeneath(s.dir, name); ok {
			return fi, err
		}
	}
	root, err := s.osRoot()
	if err != nil {
		return nil, pathError("stat", name, err)
	}
	return root.Stat(name)
}

// osRoot is the sysroot as an os.Root, opened on first use.
func (s dirSource) osRoot() (*os.Root, error) {
	if s.root != nil {
		return s.root, nil
	}
	return s.lazy.get()
}

// lazyRoot opens a sysroot as an os.Root once, when first needed: with
// openat2 working a detection reads everything through dirSource.dir and
// its kernel mounts, and the open (and the close the garbage collector
// makes) would be spent for nothing (docs/performance.md, "Detection
// without tools").
type lazyRoot struct {
	path string
	once sync.Once
	root *os.Root
	err  error
}

func (l *lazyRoot) get() (*os.Root, error) {
	l.once.Do(func() { l.root, l.err = os.OpenRoot(l.path) })
	return l.root, l.err
}

// pathError names the failed step and the path as the machine's readers
// always have ("open sys/...: permission denied"), whatever os.Root calls
// its steps.
func pathError(op, name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// readBufs holds read buffers of MaxFileBytes+1: a detection reads hundreds
// of small sysfs files and each needs one only while it is read.
var readBufs = sync.Pool{New: func() any { b := make([]byte, MaxFileBytes+1); return &b }}

// pathCgroup is where the cgroup filesystems are mounted below sysfs
// (Documentation/admin-guide/cgroup-v2.rst; v1 mounts one per controller
// below it, Documentation/admin-guide/cgroup-v1/cgroups.rst). Named here,
// not in source_linux.go, since inline.go builds on every GOOS.
const pathCgroup = "sys/fs/cgroup"

// maxPooledRead bounds the read buffers kept for reuse: /proc/cpuinfo of a
// few hundred CPUs fits; a larger buffer is left to the garbage collector.
const maxPooledRead = 1 << 20

// readLimited reads r (a file of the stated size; procfs says 0) until end
// of file or past limit, into a pooled buffer handed to use.
func readLimited(r io.Reader, name string, size int64, limit int, head bool, use func([]byte)) error {
	pooled := readBufs.Get().(*[]byte)
	defer readBufs.Put(pooled)
	b := (*pooled)[:0]
	if need := int(min(size, int64(limit))) + 1; need > cap(b) {
		b = make([]byte, 0, need) // a large file that says its size
	}
	for len(b) <= limit {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(cap(b), limit+1-len(b)))
		}
		n, err := r.Read(b[len(b):min(cap(b), limit+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return pathError("read", name, err)
		}
		if n == 0 {
			break
		}
	}
	if cap(b) > cap(*pooled) && cap(b) <= maxPooledRead {
		*pooled = b[:cap(b)] // keep the larger buffer for the next large file (cpuinfo)
	}
	if head && len(b) > limit {
		b = b[:limit]
	}
	if len(b) > limit {
		return fmt.Errorf("%s: longer than %d bytes", name, limit)
	}
	use(b)
	return nil
}

// checkRegular refuses anything but a regular file, naming its type as
// fs.FileMode does ("p---------" for a FIFO).
func checkRegular(name string, mode fs.FileMode) error {
	if mode.IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: not a regular file (%v)", name, mode.Type())
}

// fsSource reads an fs.FS (tests): the same checks, through fs.Stat and Open.
type fsSource struct{ fsys fs.FS }

func (s fsSource) readFile(name string, limit int, head bool, use func([]byte)) error {
	st, err := fs.Stat(s.fsys, name)
	if err != nil {
		return err
	}
	if err := checkRegular(name, st.Mode()); err != nil {
		return err
	}
	f, err := s.fsys.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return readLimited(f, name, st.Size(), limit, head, use)
}

func (s fsSource) readDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(s.fsys, name) }

func (s fsSource) readLink(name string) (string, error) {
	if rl, ok := s.fsys.(fs.ReadLinkFS); ok {
		return rl.ReadLink(name)
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: errors.ErrUnsupported}
}

func (s fsSource) stat(name string) (fs.FileInfo, error) { return fs.Stat(s.fsys, name) }

// onKernelSysfs reports whether sys/ of this source is the running kernel's
// sysfs (not a fixture tree, a snapshot or an injected FS).
func onKernelSysfs(src source) bool {
	ds, ok := src.(dirSource)
	return ok && ds.kernel != nil && ds.kernel.isSysfs(ds.dir)
}

// onKernelSysfsAndProcfs reports whether sys/ and proc/ of this source are
// the running kernel's sysfs and procfs.
func onKernelSysfsAndProcfs(src source) bool {
	ds, ok := src.(dirSource)
	return ok && ds.kernel != nil && ds.kernel.isSysfsAndProcfs(ds.dir)
}

// listingOnMemoryFS reports whether the directory name of this source is
// one of the running kernel's tmpfs or ramfs directories (memo.go,
// rememberListing).
func listingOnMemoryFS(src source, name string) bool {
	ds, ok := src.(dirSource)
	return ok && ds.dir != nil && onKernelSysfs(src) && onMemoryFS(ds.dir, name)
}
