package machine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	return openBeneathHow(dirfd, name, flags, resolveBeneath|resolveNoMagiclinks)
}

// openBeneathHow is openBeneath with the RESOLVE_ flags given.
func openBeneathHow(dirfd int, name string, flags int, resolve uint64) (int, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return -1, syscall.EINVAL // as syscall.BytePtrFromString answers
	}
	// The NUL-terminated name is built in a pooled buffer: one allocation
	// fewer per open, 33 per detection (docs/performance.md, "Fourth pass").
	pooled := nameBufs.Get().(*[]byte)
	defer nameBufs.Put(pooled)
	b := append(append((*pooled)[:0], name...), 0)
	*pooled = b
	how := openHow{flags: uint64(flags | syscall.O_CLOEXEC), resolve: resolve}
	for {
		fd, _, e := syscall.Syscall6(sysOpenat2, uintptr(dirfd), uintptr(unsafe.Pointer(&b[0])),
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

// nameBufs holds buffers for the NUL-terminated names openat2 takes.
var nameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// openBeneathDir opens the sysroot for openBeneath; nil when openat2 is
// unusable. Like the os.Root beside it, the garbage collector closes it
// after the view's one detection, or, when the sysroot's memo holds it
// (held_linux.go), once the memo has dropped it.
func openBeneathDir(dir string) *pathFD {
	var dfd int
	var err error
	for {
		dfd, err = syscall.Open(dir, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil
	}
	if openat2Works.Load() {
		return newPathFD(dfd)
	}
	fd, err := openBeneath(dfd, ".", oPath)
	if err != nil {
		syscall.Close(dfd)
		return nil
	}
	syscall.Close(fd)
	openat2Works.Store(true)
	return newPathFD(dfd)
}

// pathFD is a directory descriptor opened O_PATH (the sysroot, its sysfs
// and procfs), closed when the view holding it is collected. An os.File
// would cost the detection three fcntl calls per descriptor (its poller
// checks, which an O_PATH descriptor refuses) for nothing
// (docs/performance.md, "Detection without tools").
type pathFD struct {
	fd      int
	cleanup runtime.Cleanup
}

func newPathFD(fd int) *pathFD {
	p := &pathFD{fd: fd}
	p.cleanup = runtime.AddCleanup(p, func(fd int) { syscall.Close(fd) }, fd)
	return p
}

// disown stops the collector from closing p's number: the host closed it,
// and the number may be one of the host's own files by then (held_linux.go:
// rootStillOurs, readHeld).
func (p *pathFD) disown() {
	p.cleanup.Stop()
	runtime.KeepAlive(p)
}

// Fd is the descriptor; the caller keeps p alive while using it
// (runtime.KeepAlive), as with os.File.Fd.
func (p *pathFD) Fd() uintptr { return uintptr(p.fd) }

// openat2Works is set once openat2 has answered in this process: the probe
// above is not made again (a filter installed later makes a call answer
// ENOSYS or EPERM, and every caller then takes the os.Root way).
var openat2Works atomic.Bool

// readFileBeneath is dirSource.readFile in a few system calls: an O_PATH
// open and fstat, so that only a regular file is ever opened for reading
// (opening a device node can have effects), then the real open with
// O_NONBLOCK and a second fstat (a FIFO swapped in between is refused too).
// ok is false when openat2 is unusable and the caller must use os.Root.
func readFileBeneath(dir *pathFD, name string, limit int, head bool, use func([]byte)) (ok bool, err error) {
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
// child of a directory already resolved inside the root. The entries are
// read with getdents64 directly (linuxDirEntry), which also keeps each
// one's inode number (Ino): the memo tells a re-created sysfs node by it.
func readDirBeneath(dir *pathFD, sysroot, name string) (ok bool, entries []fs.DirEntry, err error) {
	defer runtime.KeepAlive(dir)
	fd, err := openBeneath(int(dir.Fd()), name, syscall.O_RDONLY|syscall.O_DIRECTORY)
	if err == syscall.ENOSYS || err == syscall.EPERM {
		return false, nil, nil
	}
	if err != nil {
		return true, nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	parent := filepath.Join(sysroot, name)
	pooled := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(pooled)
	buf := *pooled
	vals := make([]linuxDirEntry, 0, 16)
	for {
		n, err := syscall.Getdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return true, sortedEntries(vals), &fs.PathError{Op: "readdir", Path: name, Err: err}
		}
		if n <= 0 {
			break
		}
		vals = appendDirents(vals, buf[:n], fd, parent)
	}
	return true, sortedEntries(vals), nil
}

// sortedEntries is the listing of vals by name, each entry a pointer into
// vals: boxing each entry on its own was one allocation per entry
// (docs/performance.md, "Eighth pass"). nil when vals is empty.
func sortedEntries(vals []linuxDirEntry) []fs.DirEntry {
	if len(vals) == 0 {
		return nil
	}
	entries := make([]fs.DirEntry, len(vals))
	for i := range vals {
		entries[i] = &vals[i]
	}
	slices.SortFunc(entries, compareEntries)
	return entries
}

// direntBufs holds getdents64 buffers: a buffer on the goroutine's stack
// would make every backend's stack grow (and be copied) on its first listing.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8192); return &b }}

func compareEntries(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }

// appendDirents appends the entries of one getdents64 buffer (struct
// linux_dirent64: d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name;
// getdents(2)), "." and ".." left out. An entry of unknown type
// (DT_UNKNOWN: some filesystems) is typed by an lstat relative to the
// directory's descriptor, as os.File.ReadDir does.
func appendDirents(entries []linuxDirEntry, buf []byte, dirfd int, parent string) []linuxDirEntry {
	names := direntNames(buf)
	for {
		rec, nameBytes, rest, ok := nextDirent(buf)
		if !ok {
			break
		}
		buf = rest
		name := names[:len(nameBytes)]
		names = names[len(nameBytes):]
		if name == "" || name == "." || name == ".." {
			continue
		}
		e := linuxDirEntry{name: name, ino: *(*uint64)(unsafe.Pointer(&rec[0])), parent: parent}
		switch rec[18] {
		case syscall.DT_DIR:
			e.typ = fs.ModeDir
		case syscall.DT_LNK:
			e.typ = fs.ModeSymlink
		case syscall.DT_REG:
			e.typ = 0
		case syscall.DT_FIFO:
			e.typ = fs.ModeNamedPipe
		case syscall.DT_CHR:
			e.typ = fs.ModeDevice | fs.ModeCharDevice
		case syscall.DT_BLK:
			e.typ = fs.ModeDevice
		case syscall.DT_SOCK:
			e.typ = fs.ModeSocket
		default:
			var st syscall.Stat_t
			if err := fstatatNoFollow(dirfd, name, &st); err != nil {
				continue // gone meanwhile, as os.File.ReadDir skips it
			}
			e.typ = statMode(&st)
		}
		entries = append(entries, e)
	}
	return entries
}

// nextDirent splits the first record off a getdents64 buffer: the record,
// its name (up to the first NUL) and the rest; ok is false at the end or at
// a malformed record.
func nextDirent(buf []byte) (rec, name, rest []byte, ok bool) {
	if len(buf) < 19 {
		return nil, nil, nil, false
	}
	reclen := int(*(*uint16)(unsafe.Pointer(&buf[16])))
	if reclen < 19 || reclen > len(buf) {
		return nil, nil, nil, false
	}
	rec = buf[:reclen]
	name = rec[19:]
	if i := slices.Index(name, 0); i >= 0 {
		name = name[:i]
	}
	return rec, name, buf[reclen:], true
}

// direntNames is the names of buf's records (nextDirent), one after
// another, in one string: appendDirents cuts each entry's name from it, one
// allocation per buffer instead of one per entry (docs/performance.md,
// "Eighth pass"). The bytes are never changed after the string is made.
func direntNames(buf []byte) string {
	total := 0
	for b := buf; ; {
		_, name, rest, ok := nextDirent(b)
		if !ok {
			break
		}
		total += len(name)
		b = rest
	}
	all := make([]byte, 0, total)
	for b := buf; ; {
		_, name, rest, ok := nextDirent(b)
		if !ok {
			break
		}
		all = append(all, name...)
		b = rest
	}
	return unsafe.String(unsafe.SliceData(all), len(all))
}

// fstatatNoFollow is lstat of the plain entry name of the directory
// dirfd: an O_PATH|O_NOFOLLOW open beneath it and fstat (package syscall
// exports fstatat on few architectures).
func fstatatNoFollow(dirfd int, name string, st *syscall.Stat_t) error {
	fd, err := openBeneath(dirfd, name, oPath|syscall.O_NOFOLLOW)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	return syscall.Fstat(fd, st)
}

// linuxDirEntry is one entry of readDirBeneath.
type linuxDirEntry struct {
	name   string
	typ    fs.FileMode
	ino    uint64
	parent string // host path of the directory listed
}

func (e linuxDirEntry) Name() string               { return e.name }
func (e linuxDirEntry) IsDir() bool                { return e.typ.IsDir() }
func (e linuxDirEntry) Type() fs.FileMode          { return e.typ }
func (e linuxDirEntry) Info() (fs.FileInfo, error) { return os.Lstat(filepath.Join(e.parent, e.name)) }
func (e linuxDirEntry) String() string             { return fs.FormatDirEntry(e) }

// Ino is the entry's inode number as the listing gave it.
func (e linuxDirEntry) Ino() uint64 { return e.ino }

// statBeneath is stat(2) of name below dir, symbolic links followed inside
// the root, in two system calls (an O_PATH open and fstat), or one for a
// name of one component that is no link (statName).
func statBeneath(dir *pathFD, name string) (ok bool, fi fs.FileInfo, err error) {
	defer runtime.KeepAlive(dir)
	if ok, fi, err := statName(int(dir.Fd()), name, name); ok {
		return true, fi, err
	}
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

// atSymlinkNoFollow is AT_SYMLINK_NOFOLLOW (include/uapi/linux/fcntl.h;
// package syscall does not export it on Linux).
const atSymlinkNoFollow = 0x100

// statName is stat(2) of name, a name of one component in the directory
// dirfd, in one system call: fstatat with AT_SYMLINK_NOFOLLOW, which cannot
// leave the directory (no "/", no "..", no link followed) and so is as
// confined as openat2(RESOLVE_BENEATH). ok is false, and the caller takes
// the O_PATH way, for a longer name, for a symbolic link (which that way
// follows inside the root, or refuses), for an error other than absence,
// and where the call is not available (haveFstatat). full is the name
// errors carry. The witnesses of remembered facts (/dev, /proc/cpuinfo)
// and the container markers are such names: 2 system calls fewer each
// (docs/performance.md, "Against the crate, measured").
func statName(dirfd int, name, full string) (ok bool, fi fs.FileInfo, err error) {
	if !haveFstatat || name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return false, nil, nil
	}
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return false, nil, nil
	}
	st := new(syscall.Stat_t)
	_, _, e := syscall.Syscall6(uintptr(sysFstatat), uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(st)), atSymlinkNoFollow, 0, 0)
	switch {
	case e == syscall.ENOENT:
		return true, nil, &fs.PathError{Op: "stat", Path: full, Err: e}
	case e != 0, st.Mode&syscall.S_IFMT == syscall.S_IFLNK:
		return false, nil, nil
	}
	return true, statInfo{name: name, st: st}, nil
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

// readLinkBeneath is readlink(2) of name below dir: the directories on the
// way resolve inside the root (openat2), the link itself is opened with
// O_NOFOLLOW and read through its descriptor (readlinkat with an empty
// path, Linux 2.6.39), three system calls where os.Root's walk takes one
// open per component.
func readLinkBeneath(dir *pathFD, name string) (ok bool, target string, err error) {
	defer runtime.KeepAlive(dir)
	fd, err := openBeneath(int(dir.Fd()), name, oPath|syscall.O_NOFOLLOW)
	if err == syscall.ENOSYS || err == syscall.EPERM {
		return false, "", nil
	}
	if err != nil {
		return true, "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	empty := [1]byte{}
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, _, e := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(size), 0, 0)
		if e != 0 {
			return true, "", &fs.PathError{Op: "readlink", Path: name, Err: e}
		}
		if int(n) < size {
			return true, string(buf[:n]), nil
		}
		if size >= 1<<16 {
			return true, "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.ENAMETOOLONG}
		}
	}
}

// Filesystem magic numbers of statfs(2) (include/uapi/linux/magic.h).
const (
	sysfsMagic = 0x62656572
	procMagic  = 0x9fa0
)

// resolveNoXdev is RESOLVE_NO_XDEV: resolution may not cross a mount point
// (openat2(2)).
const resolveNoXdev = 0x01

// kernelMounts are the sysroot's sys/ and proc/ when statfs(2) says they are
// a sysfs and a procfs, opened once per detection on first use. A file read
// below them with RESOLVE_NO_XDEV cannot be on another filesystem, and sysfs
// and procfs hold no device node and no FIFO (fs/sysfs, fs/kernfs: regular
// files, directories and links only; fs/proc likewise, its magic links
// refused by RESOLVE_NO_MAGICLINKS), so the O_PATH open and fstat that
// readFileBeneath makes before the real open, to never open a device, can be
// skipped: one open, the reads and the close (readFile). The cgroup mounts
// below sys/fs/cgroup are read the same way, each opened on first use
// (cgroupMount). Everything else (a fixture tree, another mount below sys/fs
// or sys/kernel, a link leaving the mount) takes readFileBeneath's way:
// openat2 answers EXDEV and the read is made again there.
type kernelMounts struct {
	once      sync.Once
	sys, proc *pathFD // nil when not a sysfs / procfs
	// held keeps sys and proc across detections (held_linux.go); nil when
	// the sysroot has no memo, and they are opened for this view only.
	held *heldDirs

	// cgroups are the cgroup mounts below the kernel's sys/fs/cgroup that
	// this detection looked for (cgroupMount), by sysroot path.
	cgroupsMu sync.Mutex
	cgroups   map[string]cgroupDir
	// cgroupRoot is sys/fs/cgroup as held (heldDirs.cgroupRoot), looked
	// for once per detection (cgroupRootDone).
	cgroupRoot     *pathFD
	cgroupRootDone bool
}

// cgroupDir is one directory below sys/fs/cgroup as cgroupMount found it:
// open when it is a cgroup filesystem, missing when it does not exist, and
// neither otherwise (another filesystem, a link leaving the sysroot); held
// when the sysroot's memo holds it (held_linux.go).
type cgroupDir struct {
	fd      *pathFD
	missing bool
	held    bool
}

func newKernelMounts(dir *pathFD, held *heldDirs) *kernelMounts {
	if dir == nil {
		return nil
	}
	return &kernelMounts{held: held}
}

// open opens sys/ and proc/ below dir and keeps those of the right kind,
// or takes those the sysroot's memo holds.
func (k *kernelMounts) open(dir *pathFD) {
	defer runtime.KeepAlive(dir)
	if k.held != nil {
		k.sys = k.held.mount(dir, "sys", sysfsMagic)
		k.proc = k.held.mount(dir, "proc", procMagic)
		return
	}
	k.sys = openMountOfKind(int(dir.Fd()), "sys", sysfsMagic)
	k.proc = openMountOfKind(int(dir.Fd()), "proc", procMagic)
}

// openMountOfKind opens name below dirfd (O_PATH) when statfs says it is a
// filesystem of one of the types magics; the garbage collector closes it
// with the view.
func openMountOfKind(dirfd int, name string, magics ...int64) *pathFD {
	fd, _ := openDirOfKind(dirfd, name, magics...)
	return fd
}

// openDirOfKind is openMountOfKind that also returns the open's error.
func openDirOfKind(dirfd int, name string, magics ...int64) (*pathFD, error) {
	fd, err := openBeneath(dirfd, name, oPath|syscall.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(fd, &st); err != nil || !slices.Contains(magics, int64(st.Type)) {
		syscall.Close(fd)
		return nil, nil
	}
	return newPathFD(fd), nil
}

// Filesystem magic numbers of the cgroup filesystems, v1 and v2
// (include/uapi/linux/magic.h: CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC).
const (
	cgroupMagic  = 0x27e0eb
	cgroup2Magic = 0x63677270
)

// cgroupMount returns the directory a file below sys/fs/cgroup/<dir>/ lies
// in, looked for once per detection (through the directories the sysroot's
// memo holds, where it holds them: held_linux.go, cgroupDir), and the
// file's path relative to it.
// That first directory is a cgroup v1 controller's mount, or a cgroup of v2
// (a directory of cgroupfs is cgroupfs). cgroupfs is kernfs
// (kernel/cgroup/cgroup.c creates its hierarchies with kernfs_create_root):
// directories and regular files only, no device node, FIFO or socket, so a
// file below a directory statfs says is one is opened once with
// RESOLVE_NO_XDEV, as below sysfs: 4 calls instead of 8, and one path walk
// instead of two (docs/performance.md, "Fourth pass"). A file directly
// below sys/fs/cgroup (v2's memory.max, cpu.max) is left to the general
// way: on a host's own root cgroup v2 has none, and opening the mount to
// learn that would cost more than the one failing open it takes now.
func (k *kernelMounts) cgroupMount(dir *pathFD, name string) (cgroupDir, string) {
	first, rest, nested := strings.Cut(strings.TrimPrefix(name, pathCgroup+"/"), "/")
	if !strings.HasPrefix(name, pathCgroup+"/") || !nested || first == "" || rest == "" {
		return cgroupDir{}, ""
	}
	mount := pathCgroup + "/" + first
	k.cgroupsMu.Lock()
	defer k.cgroupsMu.Unlock()
	d, seen := k.cgroups[mount]
	if !seen && k.held != nil {
		if !k.cgroupRootDone {
			k.cgroupRoot, _ = k.held.cgroupRoot(k.sys)
			k.cgroupRootDone = true
		}
		if k.cgroupRoot != nil {
			d.fd, d.missing, d.held = k.held.cgroupDir(k.cgroupRoot, first)
			seen = d.held
		}
		if seen {
			d.held = d.fd != nil
			k.keepCgroupDir(mount, d)
		}
	}
	if !seen {
		defer runtime.KeepAlive(dir)
		var err error
		d.fd, err = openDirOfKind(int(dir.Fd()), mount, cgroupMagic, cgroup2Magic)
		// Absent (a v1 controller on a v2 host): so is every file below
		// it, and the general way would only fail the same way again.
		d.missing = err == syscall.ENOENT
		k.keepCgroupDir(mount, d)
	}
	return d, rest
}

// keepCgroupDir remembers d for this detection; k.cgroupsMu is held.
func (k *kernelMounts) keepCgroupDir(mount string, d cgroupDir) {
	if k.cgroups == nil {
		k.cgroups = make(map[string]cgroupDir, 4)
	}
	k.cgroups[mount] = d
}

// readFile reads name in one open when it lies in the kernel's sysfs or
// procfs; ok is false when the caller must read it the general way.
func (k *kernelMounts) readFile(dir *pathFD, name string, limit int, head bool, use func([]byte)) (ok bool, err error) {
	var base *pathFD
	var rel string
	var heldCgroup bool // base is a cgroup directory the memo holds
	k.once.Do(func() { k.open(dir) })
	switch {
	case k.sys != nil && strings.HasPrefix(name, "sys/") && !underMountpoints(name):
		base, rel = k.sys, name[len("sys/"):]
	case k.proc != nil && strings.HasPrefix(name, "proc/"):
		base, rel = k.proc, name[len("proc/"):]
	case k.sys != nil && strings.HasPrefix(name, pathCgroup+"/"):
		var d cgroupDir
		switch d, rel = k.cgroupMount(dir, name); {
		case d.missing:
			return true, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
		case d.fd == nil:
			return false, nil
		}
		base, heldCgroup = d.fd, d.held
	default:
		return false, nil
	}
	defer runtime.KeepAlive(base)
	hold := k.held != nil && ((base == k.sys || base == k.proc) && holdable(name) || heldCgroup && holdableCgroup(rel))
	if hold {
		if f := k.held.heldFileOf(name, base); f != nil && k.held.readHeld(f, name, limit, head, use) {
			return true, nil
		}
	}
	fd, err := openBeneathHow(int(base.Fd()), rel, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY,
		resolveBeneath|resolveNoMagiclinks|resolveNoXdev)
	switch err {
	case nil:
	case syscall.EXDEV, syscall.ENOSYS, syscall.EPERM:
		return false, nil
	default:
		return true, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	kept := false
	defer func() {
		if !kept {
			syscall.Close(fd)
		}
	}()
	// No fstat: sysfs, procfs and cgroupfs hold directories, symbolic links
	// (followed within the mount, magic ones refused) and regular files
	// only, no device node, FIFO or socket, and a directory opened for
	// reading answers the read with EISDIR. The size fstat would give is no
	// help either (sysfs says 4096, procfs 0). One call fewer for every file
	// of a detection (docs/performance.md, "Detection without tools"). A
	// cgroup file is read to the empty read, as a procfs one: some list
	// many records (cgroup.procs).
	var r io.Reader = fdReader(fd)
	switch {
	case base == k.sys:
		r = sysfsReader(fd)
	case singleRecord(base == k.proc, rel):
		r = singleRecordReader(fd)
	}
	err = readLimited(r, name, 0, limit, head, use)
	if errors.Is(err, syscall.EISDIR) {
		return true, checkRegular(name, fs.ModeDir)
	}
	if err == nil && hold {
		// Kept open for the next detections (held_linux.go, holdable).
		kept = k.held.keepFile(name, fd, base)
	}
	return true, err
}

// stat is stat(2) of a file directly below the kernel's procfs
// (proc/cpuinfo) in one system call relative to it (statName); ok is false
// when the caller must stat it the general way.
func (k *kernelMounts) stat(dir *pathFD, name string) (ok bool, fi fs.FileInfo, err error) {
	rel, found := strings.CutPrefix(name, "proc/")
	if !found {
		return false, nil, nil
	}
	k.once.Do(func() { k.open(dir) })
	if k.proc == nil {
		return false, nil, nil
	}
	defer runtime.KeepAlive(k.proc)
	return statName(int(k.proc.Fd()), rel, name)
}

// sysfsReader reads a file of the kernel's sysfs, where a read that returns
// less than a page (and than the buffer) has returned the whole file: an
// attribute's show() writes less than a page and the first read returns
// all of it (kernfs opens it as a single-record seq_file: fs/kernfs/file.c
// kernfs_seq_start, "the same behavior and code as single_open()";
// fs/sysfs/file.c sysfs_kf_seq_show caps the text below PAGE_SIZE). A
// binary attribute is read a page at most at a time (fs/kernfs/file.c
// kernfs_file_read_iter) and its read() may in principle stop short before
// its end; detection reads none today, and a PCI function's config space
// (the common one) reads whole (TestSysfsBinaryAttributeReadWhole). Such a
// read comes back with
// io.EOF, so the read that would return 0 is not made: one system call
// fewer per file (docs/performance.md, "Detection without tools").
type sysfsReader int

func (r sysfsReader) Read(b []byte) (int, error) {
	n, err := fdReader(r).Read(b)
	if err == nil && n > 0 && n < pageSize && n < len(b) { // a full buffer may not be the end
		return n, io.EOF
	}
	return n, err
}

// singleRecordReader reads a procfs or cgroupfs file that the kernel
// writes as one seq_file record (singleRecord): the first read returns the
// whole record, or as much of it as the buffer holds (fs/seq_file.c
// seq_read_iter: the record is formatted into a buffer grown until it fits,
// then copied out). A read shorter than the buffer is therefore the end of
// the file, and the read that would return 0 is not made: one system call
// fewer for each of the 5 such files a detection reads (docs/performance.md,
// "Sixth pass").
type singleRecordReader int

func (r singleRecordReader) Read(b []byte) (int, error) {
	n, err := fdReader(r).Read(b)
	if err == nil && n > 0 && n < len(b) {
		return n, io.EOF
	}
	return n, err
}

// singleRecord reports whether rel, a path below the kernel's procfs
// (inProc) or below a cgroup filesystem, is a file the kernel shows as one
// seq_file record, so that singleRecordReader may read it:
//   - proc/meminfo (fs/proc/meminfo.c: proc_create_single) and a process's
//     cgroup file (fs/proc/base.c: ONE("cgroup", ...), proc_single_open),
//     both single_open(), one show() of the whole text;
//   - the cgroup limits detection reads, in any cgroup (memory.max, cpu.max,
//     memory.limit_in_bytes, cpu.cfs_quota_us, cpu.cfs_period_us): their
//     cftypes have no seq_start, so kernel/cgroup/cgroup.c
//     cgroup_init_cftypes gives them cgroup_kf_single_ops, which kernfs
//     reads as single_open() does (fs/kernfs/file.c kernfs_seq_start).
//
// Files of many records (/proc/cpuinfo, cgroup.procs) can return a short
// read before their end and are read to the empty read as before.
func singleRecord(inProc bool, rel string) bool {
	if inProc {
		if rel == "meminfo" {
			return true
		}
		pid, file, ok := strings.Cut(rel, "/")
		return ok && file == "cgroup" && (pid == "self" || isDecimal(pid))
	}
	switch path.Base(rel) {
	case "memory.max", "cpu.max", "memory.limit_in_bytes", "cpu.cfs_quota_us", "cpu.cfs_period_us":
		return true
	}
	return false
}

// isDecimal reports whether s is a non-empty run of ASCII digits.
func isDecimal(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// pageSize is the kernel's page size, the most a sysfs read returns.
var pageSize = os.Getpagesize()

// underMountpoints reports paths below sysfs's own mount points
// (/sys/fs/cgroup, /sys/fs/bpf, /sys/kernel/debug, /sys/kernel/tracing,
// ...): the fast open would only meet EXDEV there.
func underMountpoints(name string) bool {
	return strings.HasPrefix(name, "sys/fs/") || strings.HasPrefix(name, "sys/kernel/")
}

// isSysfs reports whether the sysroot's sys/ is the kernel's sysfs.
func (k *kernelMounts) isSysfs(dir *pathFD) bool {
	k.once.Do(func() { k.open(dir) })
	return k.sys != nil
}

// isSysfsAndProcfs reports whether the sysroot's sys/ and proc/ are the
// kernel's sysfs and procfs.
func (k *kernelMounts) isSysfsAndProcfs(dir *pathFD) bool {
	k.once.Do(func() { k.open(dir) })
	return k.sys != nil && k.proc != nil
}

// Filesystem magic numbers of the memory filesystems /dev lives on:
// devtmpfs reports TMPFS_MAGIC when shmem backs it, RAMFS_MAGIC otherwise
// (drivers/base/devtmpfs.c; include/uapi/linux/magic.h).
const (
	tmpfsMagic = 0x01021994
	ramfsMagic = 0x858458f6
)

// onMemoryFS reports whether the directory name below dir lies on a tmpfs
// or ramfs (statfs(2)): there, creating, removing or renaming an entry
// sets the directory's modification and change times (mm/shmem.c
// shmem_mknod, shmem_unlink; fs/ramfs/inode.c ramfs_mknod; fs/libfs.c
// simple_unlink), and tmpfs also its size, by one BOGO_DIRENT_SIZE per
// entry.
func onMemoryFS(dir *pathFD, name string) bool {
	defer runtime.KeepAlive(dir)
	fd, err := openBeneath(int(dir.Fd()), name, oPath|syscall.O_DIRECTORY)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(fd, &st); err != nil {
		return false
	}
	return isMemoryFSType(uint32(st.Type))
}

// isMemoryFSType reports whether a statfs f_type, taken to its low 32
// bits, is tmpfs's or ramfs's. Statfs_t.Type is an int32 on 32-bit Linux
// (the kernel's __fsword_t is a long), where RAMFS_MAGIC's top bit makes
// the value negative and the untyped constant does not fit, a uint32 on
// s390x and an int64 elsewhere; the magics are 32-bit on all of them.
func isMemoryFSType(fsType uint32) bool {
	return fsType == tmpfsMagic || fsType == ramfsMagic
}
