package machine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// openat2(2) (Linux 5.6) resolves a whole path inside a directory in one
// system call; os.Root walks it one component at a time (two walks per read:
// a stat, then an open), which made a detection several times slower. With
// RESOLVE_BENEATH the kernel refuses what os.Root refuses: an absolute path
// or symbolic link, or ".." past the directory (EXDEV); RESOLVE_NO_MAGICLINKS
// refuses /proc magic links. https://man7.org/linux/man-pages/man2/openat2.2.html
const (
	sysOpenat2          = 437 // the same number on every architecture (include/uapi/asm-generic/unistd.h)
	resolveNoMagiclinks = 0x02
	resolveBeneath      = 0x08
	// oPath is O_PATH (include/uapi/asm-generic/fcntl.h; package syscall
	// does not define it): a descriptor that names a file without opening it.
	oPath = 0x200000
)

type openHow struct{ flags, mode, resolve uint64 }

// openBeneath opens name below the directory dirfd. ENOSYS (an older
// kernel) or EPERM (a seccomp filter that does not know openat2) mean the
// caller must take the os.Root path.
func openBeneath(dirfd int, name string, flags int) (int, error) {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	how := openHow{flags: uint64(flags | syscall.O_CLOEXEC), resolve: resolveBeneath | resolveNoMagiclinks}
	for {
		fd, _, e := syscall.Syscall6(sysOpenat2, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		switch e {
		case 0:
			return int(fd), nil
		case syscall.EINTR, syscall.EAGAIN: // EAGAIN: a rename raced the lookup
			continue
		}
		return -1, e
	}
}

// openBeneathDir opens the sysroot for openBeneath; nil when openat2 is
// unusable. Like the os.Root beside it, the garbage collector closes it
// after the view's one detection.
func openBeneathDir(dir string) *os.File {
	f, err := os.OpenFile(dir, oPath|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil
	}
	fd, err := openBeneath(int(f.Fd()), ".", oPath)
	if err != nil {
		f.Close()
		return nil
	}
	syscall.Close(fd)
	return f
}

// readFileBeneath is dirSource.readFile in a few system calls: an O_PATH
// open and fstat, so that only a regular file is ever opened for reading
// (opening a device node can have effects), then the real open with
// O_NONBLOCK and a second fstat (a FIFO swapped in between is refused too).
// ok is false when openat2 is unusable and the caller must use os.Root.
func readFileBeneath(dir *os.File, name string, limit int, head bool, use func([]byte)) (ok bool, err error) {
	defer runtime.KeepAlive(dir)
	dirfd := int(dir.Fd())
	pfd, err := openBeneath(dirfd, name, oPath)
	if err == syscall.ENOSYS || err == syscall.EPERM {
		return false, nil
	}
	if err != nil {
		return true, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var st syscall.Stat_t
	err = syscall.Fstat(pfd, &st)
	syscall.Close(pfd)
	if err != nil {
		return true, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if err := checkRegular(name, statMode(&st)); err != nil {
		return true, err
	}
	fd, err := openBeneath(dirfd, name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY)
	if err != nil {
		return true, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	if err := syscall.Fstat(fd, &st); err != nil {
		return true, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if err := checkRegular(name, statMode(&st)); err != nil {
		return true, err
	}
	return true, readLimited(fdReader(fd), name, st.Size, limit, head, use)
}

// statMode is the type bits of st as an fs.FileMode (permissions aside).
func statMode(st *syscall.Stat_t) fs.FileMode {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// fdReader reads a descriptor directly (no os.File: it would try to
// register a non-blocking descriptor with the poller).
type fdReader int

func (r fdReader) Read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(int(r), b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(b) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// readDirBeneath lists the directory name below dir (resolved like
// readFileBeneath) in the order fs.ReadDir gives. sysroot is the host path
// of dir: a listing's entries Info() lstat sysroot/name/entry, a direct
// child of a directory already resolved inside the root.
func readDirBeneath(dir *os.File, sysroot, name string) (ok bool, entries []fs.DirEntry, err error) {
	defer runtime.KeepAlive(dir)
	fd, err := openBeneath(int(dir.Fd()), name, syscall.O_RDONLY|syscall.O_DIRECTORY)
	if err == syscall.ENOSYS || err == syscall.EPERM {
		return false, nil, nil
	}
	if err != nil {
		return true, nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(sysroot, name))
	defer f.Close()
	entries, err = f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if err != nil {
		return true, entries, &fs.PathError{Op: "readdir", Path: name, Err: errors.Unwrap(err)}
	}
	return true, entries, nil
}

// statBeneath is stat(2) of name below dir, symbolic links followed inside
// the root, in two system calls (an O_PATH open and fstat).
func statBeneath(dir *os.File, name string) (ok bool, fi fs.FileInfo, err error) {
	defer runtime.KeepAlive(dir)
	fd, err := openBeneath(int(dir.Fd()), name, oPath)
	if err == syscall.ENOSYS || err == syscall.EPERM {
		return false, nil, nil
	}
	if err != nil {
		return true, nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	st := new(syscall.Stat_t)
	if err := syscall.Fstat(fd, st); err != nil {
		return true, nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return true, statInfo{name: filepath.Base(name), st: st}, nil
}

// statInfo is an fs.FileInfo of a Stat_t, with Sys() the *syscall.Stat_t as
// os.Stat gives it (the memo reads device, inode and times from it).
type statInfo struct {
	name string
	st   *syscall.Stat_t
}

func (i statInfo) Name() string       { return i.name }
func (i statInfo) Size() int64        { return i.st.Size }
func (i statInfo) Mode() fs.FileMode  { return statMode(i.st) | fs.FileMode(i.st.Mode&0o777) }
func (i statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i statInfo) Sys() any           { return i.st }
