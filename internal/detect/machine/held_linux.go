package machine

import (
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// heldDirs are the O_PATH descriptors of one sysroot that its detections
// share: the sysroot itself and its sys/ and proc/ when they are the
// kernel's sysfs and procfs. Opening them anew for every detection cost 8
// system calls (an openat of the sysroot, an openat2 and an fstatfs for each
// of sys/ and proc/, and the three closes the garbage collector made later);
// holding them costs one fstatat of each mount per detection, the witness
// that the name still leads to the directory held (docs/performance.md,
// "Sixth pass"). The memo keeps them (sysrootMemo.held), so they live as
// long as the sysroot's memo.
//
// Confinement is unchanged: each descriptor was opened inside the sysroot
// (openat2 RESOLVE_BENEATH for sys/ and proc/), and is used again only
// while the sysroot's own stat (taken by every detection, statSysroot)
// shows the device and inode the held root was opened on, and while sys
// and proc, names of one component looked up in the held root without
// following a link (fstatat AT_SYMLINK_NOFOLLOW, as statName), show the
// device and inode of the mounts held. Anything else (a sysroot re-created
// at its path, a sys/ unmounted and another mounted there, a link put in
// its place) opens afresh, as a detection did before.
//
// Release: a descriptor is a pathFD, closed by the garbage collector once
// neither the memo nor a detection in flight refers to it: when the witness
// replaces it, when the memo drops the sysroot (the least recently used
// beyond MaxMemoSysroots, a sysroot re-created, ForgetAllMemos), so at most
// 3 + maxHeldSubs directories and maxHeldFiles files per remembered sysroot
// stay open between calls. All are
// opened O_CLOEXEC: a tool the library starts, or a host's exec, does not
// inherit them. A child forked without exec inherits them with every other
// descriptor of the runtime, and cannot use them: there every call answers
// "forked_child" (include/ai_hwaccel.h, fork()).
type heldDirs struct {
	mu              sync.Mutex
	root, sys, proc heldDir
	// files are open files below the held sys and proc, and below the held
	// cgroup directories, by sysroot path (heldFile).
	files map[string]heldFile
	// subs are directories below the held sys (sys/fs, sys/fs/cgroup and
	// the cgroup directories below it), by sysroot path (cgroupDir).
	subs map[string]heldSub
}

// heldSub is a directory held below another held directory, parent, in
// which its name is one component.
type heldSub struct {
	heldDir
	parent *pathFD
	cgroup bool // a cgroup filesystem's directory: its limit files may be held
}

// heldFile is a file of the kernel's sysfs or procfs kept open across
// detections and read again with one pread at offset 0 (readHeld), instead
// of an openat2, a read and a close each time: 2 system calls fewer per file,
// and no path walk (docs/performance.md, "Sixth pass"). Only the files
// holdable names are kept, below the held mount they were opened in
// (under); they go when that mount is replaced, and when a read fails.
type heldFile struct {
	fd    *pathFD // an O_RDONLY descriptor; pathFD for its close by the collector
	under *pathFD
}

// maxHeldSubs bounds the directories held below sys per sysroot: sys/fs,
// sys/fs/cgroup and the cgroup directories a detection reads (2 on a cgroup
// v1 host: memory and cpu).
const maxHeldSubs = 8

// maxHeldFiles bounds the open files kept per sysroot: the 7 a detection of
// a one-node machine reads, and two per further NUMA node.
const maxHeldFiles = 32

// holdable reports whether name, a path of the sysroot, is a file that may
// be kept open and re-read: a one-record seq_file (a read at offset 0 shows
// it afresh: fs/seq_file.c seq_read_iter resets the iterator for a read from
// offset 0) of a kernel object that is never renamed or moved, only removed,
// so that an open file of it reads what its path names now, or fails:
//   - sys/devices/system/cpu/online and present, sys/devices/system/node/online
//     (drivers/base/cpu.c, drivers/base/node.c: attributes of the subsystems'
//     roots, there while the kernel runs);
//   - sys/devices/system/node/node<N>/cpulist and meminfo (drivers/base/node.c:
//     a node's device is registered when the node comes online and
//     unregistered when it goes, never renamed); a read of the open file of a
//     removed kernfs node fails with ENODEV (fs/kernfs/file.c
//     kernfs_seq_start: kernfs_get_active), and a node registered again is
//     a new kernfs node, so the old file fails and the path is opened afresh;
//   - proc/meminfo (fs/proc/meminfo.c), and proc/<pid>/cgroup (fs/proc/base.c
//     proc_single_show: ESRCH once the process is gone, so a pid used again
//     is opened afresh).
//
// Not kept: files of devices that can be renamed or moved (a PCI function,
// a block device, a network device), cgroup files (a v1 cgroup can be
// renamed), /proc/cpuinfo (many records; the memo keeps its parsed facts).
func holdable(name string) bool {
	switch name {
	case PathCPUOnline, PathCPUPresent, pathNodeOnline, PathMemInfo:
		return true
	}
	if rest, ok := strings.CutPrefix(name, PathNodes+"/node"); ok {
		n, file, ok := strings.Cut(rest, "/")
		return ok && isDecimal(n) && (file == "cpulist" || file == "meminfo")
	}
	if rest, ok := strings.CutPrefix(name, "proc/"); ok {
		pid, file, ok := strings.Cut(rest, "/")
		return ok && isDecimal(pid) && file == "cgroup"
	}
	return false
}

// pathNodeOnline lists the online NUMA nodes
// (Documentation/ABI/stable/sysfs-devices-node).
const pathNodeOnline = PathNodes + "/online"

// heldFileOf returns the held open file name when it was opened below
// under, the mount this view reads name below; nil otherwise.
func (h *heldDirs) heldFileOf(name string, under *pathFD) *pathFD {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f, ok := h.files[name]; ok && f.under == under {
		return f.fd
	}
	return nil
}

// dropFile forgets the held file name when it is fd (a read of it failed);
// the collector closes it once no view uses it.
func (h *heldDirs) dropFile(name string, fd *pathFD) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f, ok := h.files[name]; ok && f.fd == fd {
		delete(h.files, name)
	}
}

// keepFile holds fd, a file of name just opened and read below under, when
// under is a held mount and there is room; it reports whether it did (the
// caller closes fd otherwise).
func (h *heldDirs) keepFile(name string, fd int, under *pathFD) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if under == nil || (under != h.sys.fd && under != h.proc.fd && !h.isCgroupSub(under)) {
		return false
	}
	if _, ok := h.files[name]; !ok && len(h.files) >= maxHeldFiles {
		return false
	}
	if h.files == nil {
		h.files = make(map[string]heldFile, 8)
	}
	h.files[name] = heldFile{fd: newPathFD(fd), under: under}
	return true
}

// dropFilesUnder forgets the files held below the mount under; h.mu is held.
func (h *heldDirs) dropFilesUnder(under *pathFD) {
	for name, f := range h.files {
		if f.under == under {
			delete(h.files, name)
		}
	}
}

// readHeld reads the held file fd with one pread at offset 0 and hands its
// content to use; ok is false when the caller must open name afresh: the
// read failed (a removed node: the file is dropped), or the file is longer
// than limit (read the general way, which answers as for any file).
func (h *heldDirs) readHeld(fd *pathFD, name string, limit int, head bool, use func([]byte)) (ok bool) {
	defer runtime.KeepAlive(fd)
	pooled := readBufs.Get().(*[]byte)
	defer readBufs.Put(pooled)
	b := (*pooled)[:min(cap(*pooled), limit+1)]
	var n int
	var err error
	for {
		n, err = syscall.Pread(fd.fd, b, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if notOurs(err) {
			// The host closed this number: never close it (it may be
			// one of the host's files by then); the rest is ours still.
			fd.disown()
		}
		h.dropFile(name, fd)
		return false
	}
	if n > limit || n == len(b) {
		return false
	}
	use(b[:n])
	return true
}

// rootStillOurs reports whether the held root's number still names the
// directory it was opened on (one fstat per detection): a host that closed
// descriptors it did not open (include/ai_hwaccel.h, "Host process state"),
// closefrom(3) or a loop over /proc/self/fd, closed the held root with the
// rest, and may have opened a file of its own on the number since. h.mu is
// held.
func (h *heldDirs) rootStillOurs() bool {
	var st syscall.Stat_t
	if fstatRetry(h.root.fd.fd, &st) != nil {
		return false
	}
	dev, ino := identityOf(&st)
	return dev == h.root.dev && ino == h.root.ino
}

// notOurs reports whether err, from a read of a held file, says that the
// number no longer names the file opened (closed: EBADF; reused by a pipe,
// socket or directory: ESPIPE, EISDIR; by an O_PATH or write-only
// descriptor: EBADF; by an object unsuitable for reading: EINVAL, read(2))
// rather than that its kernel object is gone (ENODEV, ESRCH: dropFile).
// Disowning a number that was still ours costs one descriptor left open.
func notOurs(err error) bool {
	switch err {
	case syscall.EBADF, syscall.ESPIPE, syscall.EISDIR, syscall.EINVAL:
		return true
	}
	return false
}

// disownAllLocked forgets every held descriptor without ever closing its
// number: the host closed the held root, most likely with the others
// (closefrom), and a number the host closed may be one of its own files by
// the time the collector would close ours. Everything is opened afresh;
// those the host did not close stay open (at most 11 directories and 32
// files, once per sysroot each time a host does this). h.mu is held.
func (h *heldDirs) disownAllLocked() {
	for _, d := range []*pathFD{h.root.fd, h.sys.fd, h.proc.fd} {
		if d != nil {
			d.disown()
		}
	}
	for _, sub := range h.subs {
		sub.fd.disown()
	}
	for _, f := range h.files {
		f.fd.disown()
	}
	h.root, h.sys, h.proc, h.files, h.subs = heldDir{}, heldDir{}, heldDir{}, nil, nil
}

// heldDir is one held descriptor and the identity (st_dev, st_ino) it had
// when opened; fd is nil when none is held.
type heldDir struct {
	fd       *pathFD
	dev, ino uint64
}

// identityOf is the device and inode of st.
func identityOf(st *syscall.Stat_t) (dev, ino uint64) { return uint64(st.Dev), uint64(st.Ino) }

// rootFor returns the held descriptor of the sysroot at path when st, the
// stat of path this detection took, shows the directory it was opened on;
// otherwise it opens path (openBeneathDir) and holds the new descriptor
// when its fstat agrees with st (a directory swapped in between is used for
// this detection only). nil where openat2 is unusable.
func (h *heldDirs) rootFor(path string, st fs.FileInfo) *pathFD {
	sys, _ := st.Sys().(*syscall.Stat_t)
	if sys == nil {
		return openBeneathDir(path)
	}
	dev, ino := identityOf(sys)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.root.fd != nil && h.root.dev == dev && h.root.ino == ino {
		if h.rootStillOurs() {
			return h.root.fd
		}
		h.disownAllLocked()
	}
	dir := openBeneathDir(path)
	if dir == nil {
		return nil
	}
	var got syscall.Stat_t
	if err := fstatRetry(dir.fd, &got); err != nil {
		return dir
	}
	if d, i := identityOf(&got); d == dev && i == ino {
		// The mounts held were looked up in the root replaced: they must
		// be found again below the new one.
		h.root, h.sys, h.proc, h.files, h.subs = heldDir{fd: dir, dev: dev, ino: ino}, heldDir{}, heldDir{}, nil, nil
	}
	return dir
}

// mount returns the descriptor of name ("sys" or "proc") below root when it
// is a filesystem of kind magic: the held one while the witness holds (root
// is the held root, and name, looked up in it without following a link,
// shows the held device and inode), else one opened afresh as
// openMountOfKind does, held when root is the held root.
func (h *heldDirs) mount(root *pathFD, name string, magic int64) *pathFD {
	defer runtime.KeepAlive(root)
	h.mu.Lock()
	defer h.mu.Unlock()
	slot := &h.sys
	if name == "proc" {
		slot = &h.proc
	}
	isHeldRoot := root != nil && root == h.root.fd
	if isHeldRoot && slot.fd != nil {
		var st syscall.Stat_t
		if fstatatNoFollowOne(root.fd, name, &st) == nil {
			if dev, ino := identityOf(&st); dev == slot.dev && ino == slot.ino {
				return slot.fd
			}
		}
		h.dropFilesUnder(slot.fd)
		if name == "sys" {
			h.dropSubs("")
		}
		*slot = heldDir{} // replaced or gone: the collector closes it once unused
	}
	dir := openMountOfKind(root.fd, name, magic)
	if dir == nil || !isHeldRoot {
		return dir
	}
	var st syscall.Stat_t
	if fstatRetry(dir.fd, &st) == nil {
		dev, ino := identityOf(&st)
		*slot = heldDir{fd: dir, dev: dev, ino: ino}
	}
	return dir
}

// fstatRetry is fstat(2), retried on EINTR.
func fstatRetry(fd int, st *syscall.Stat_t) error {
	for {
		err := syscall.Fstat(fd, st)
		if err != syscall.EINTR {
			return err
		}
	}
}

// fstatatNoFollowOne is fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW) of a name
// of one component: it cannot leave the directory (no "/", no "..", no link
// followed). Where the architecture's fstatat is not package syscall's
// Stat_t (haveFstatat false), it is the O_PATH open beneath dirfd and fstat
// (fstatatNoFollow).
func fstatatNoFollowOne(dirfd int, name string, st *syscall.Stat_t) error {
	if !haveFstatat {
		return fstatatNoFollow(dirfd, name, st)
	}
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	for {
		_, _, e := syscall.Syscall6(uintptr(sysFstatat), uintptr(dirfd), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(st)), atSymlinkNoFollow, 0, 0)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return e
	}
}

// isCgroupSub reports whether fd is a held cgroup directory; h.mu is held.
func (h *heldDirs) isCgroupSub(fd *pathFD) bool {
	for _, sub := range h.subs {
		if sub.fd == fd {
			return sub.cgroup
		}
	}
	return false
}

// dropSubs forgets the held directory key and everything held below it
// ("" for all of them), files included; h.mu is held.
func (h *heldDirs) dropSubs(key string) {
	for k, sub := range h.subs {
		if key == "" || k == key || strings.HasPrefix(k, key+"/") {
			h.dropFilesUnder(sub.fd)
			delete(h.subs, k)
		}
	}
}

// sub returns the directory name, one component below the held directory
// parent, held as key: the held one while its witness holds (name, looked
// up in parent without following a link, shows the held device and inode),
// else opened afresh (openat2 RESOLVE_BENEATH, O_NOFOLLOW: a link is not
// held, and the caller takes the general way) and held. With magics, only a
// directory on one of those filesystems is held (fstatfs); nil, nil
// otherwise. h.mu is held.
func (h *heldDirs) sub(parent *pathFD, key, name string, magics ...int64) (*pathFD, error) {
	defer runtime.KeepAlive(parent)
	if s, ok := h.subs[key]; ok {
		var st syscall.Stat_t
		if s.parent == parent && fstatatNoFollowOne(parent.fd, name, &st) == nil {
			if dev, ino := identityOf(&st); dev == s.dev && ino == s.ino {
				return s.fd, nil
			}
		}
		h.dropSubs(key)
	}
	fd, err := openBeneath(parent.fd, name, oPath|syscall.O_DIRECTORY|syscall.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	if len(magics) > 0 {
		var fst syscall.Statfs_t
		if err := syscall.Fstatfs(fd, &fst); err != nil || !slices.Contains(magics, int64(fst.Type)) {
			syscall.Close(fd)
			return nil, nil
		}
	}
	var st syscall.Stat_t
	if err := fstatRetry(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	dir := newPathFD(fd)
	dev, ino := identityOf(&st)
	if len(h.subs) >= maxHeldSubs {
		return dir, nil // used by this view only
	}
	if h.subs == nil {
		h.subs = make(map[string]heldSub, 4)
	}
	h.subs[key] = heldSub{heldDir: heldDir{fd: dir, dev: dev, ino: ino}, parent: parent, cgroup: len(magics) > 0}
	return dir, nil
}

// cgroupRoot returns sys/fs/cgroup below sys, the held sysfs, through
// held directories each witnessed in its parent (sub): 2 fstatat calls per
// detection. ok is false when sys is not the held sysfs or either is not a
// plain directory, and the caller takes the general way.
func (h *heldDirs) cgroupRoot(sys *pathFD) (dir *pathFD, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sys == nil || sys != h.sys.fd {
		return nil, false
	}
	fsDir, err := h.sub(sys, "sys/fs", "fs")
	if err != nil || fsDir == nil {
		return nil, false
	}
	dir, err = h.sub(fsDir, pathCgroup, "cgroup")
	return dir, err == nil && dir != nil
}

// cgroupDir returns the directory sys/fs/cgroup/<first> below the held
// cgroupRoot root when it is a cgroup filesystem's (one fstatat per
// detection), with missing when it does not exist; ok is false when the
// caller must take the general way (a link, another filesystem).
func (h *heldDirs) cgroupDir(root *pathFD, first string) (dir *pathFD, missing, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	dir, err := h.sub(root, pathCgroup+"/"+first, first, cgroupMagic, cgroup2Magic)
	switch {
	case err == syscall.ENOENT:
		return nil, true, true
	case err != nil || dir == nil:
		return nil, false, false
	}
	return dir, false, true
}

// holdableCgroup reports whether rest, a path below a held cgroup
// directory, is one of the limit files a detection reads every time: one
// record each (singleRecord), files of a cgroup that are never renamed, and
// removed only with their cgroup or controller (their open file then fails
// with ENODEV, fs/kernfs/file.c kernfs_seq_start); the cgroup itself is
// witnessed by name every detection (cgroupDir).
func holdableCgroup(rest string) bool {
	return !strings.Contains(rest, "/") && singleRecord(false, rest)
}
