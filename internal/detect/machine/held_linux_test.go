package machine

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// identityOfFD is the device and inode of the descriptor p.
func identityOfFD(t *testing.T, p *pathFD) (dev, ino uint64) {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Fstat(p.fd, &st))
	return identityOf(&st)
}

// identityOfPath is the device and inode of the host path name (links
// not followed).
func identityOfPath(t *testing.T, name string) (dev, ino uint64) {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(name, &st))
	return identityOf(&st)
}

// kernelOf is the view's kernel mounts, opened.
func kernelOf(t *testing.T, m *Machine) *kernelMounts {
	t.Helper()
	ds := m.src.(dirSource)
	require.NotNil(t, ds.kernel)
	require.True(t, ds.kernel.isSysfsAndProcfs(ds.dir), "/sys and /proc are the kernel's")
	return ds.kernel
}

// Detections of one sysroot share its descriptors: the second view of "/"
// reads through the sysroot, sysfs and procfs descriptors the first opened,
// and the memo holds them.
func TestHeldDirsSharedByDetections(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	first := liveMachine(t)
	require.NotNil(t, first.memo, "the live root has a memo")
	k1 := kernelOf(t, first)
	second := liveMachine(t)
	k2 := kernelOf(t, second)
	assert.Same(t, first.src.(dirSource).dir, second.src.(dirSource).dir, "the sysroot's descriptor")
	assert.Same(t, k1.sys, k2.sys, "the sysfs descriptor")
	assert.Same(t, k1.proc, k2.proc, "the procfs descriptor")
	assert.Same(t, first.memo.held.sys.fd, k2.sys)

	want, err := os.ReadFile("/sys/devices/system/cpu/present")
	require.NoError(t, err)
	got, err := second.ReadFile("sys/devices/system/cpu/present")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// A held descriptor is used only while its witness holds. Here the memo
// holds, as sysroot, sys and proc, descriptors of a directory that is not
// what the names lead to now (as after a sysroot re-created at its path, or
// a mount replaced): the next view opens "/", /sys and /proc afresh and
// reads the kernel's files, never the stale directory's.
func TestHeldDirsReopenedWhenTheWitnessFails(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	m := liveMachine(t)
	kernelOf(t, m)
	stale := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "devices/system/cpu"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "devices/system/cpu/present"), []byte("stale\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "meminfo"), []byte("stale\n"), 0o644))
	staleDir := openBeneathDir(stale)
	require.NotNil(t, staleDir)
	dev, ino := identityOfFD(t, staleDir)
	held := &m.memo.held
	held.mu.Lock()
	held.root = heldDir{fd: staleDir, dev: dev, ino: ino}
	held.mu.Unlock()

	next := liveMachine(t)
	dir := next.src.(dirSource).dir
	assert.NotSame(t, staleDir, dir, "the sysroot's stat does not show the held directory")
	rd, ri := identityOfFD(t, dir)
	wd, wi := identityOfPath(t, "/")
	assert.Equal(t, [2]uint64{wd, wi}, [2]uint64{rd, ri}, "the view reads below /")
	assert.Same(t, dir, held.root.fd, "and the memo holds the new descriptor")

	// Now sys and proc: the held root is right, the mounts held are not.
	held.mu.Lock()
	held.sys = heldDir{fd: staleDir, dev: dev, ino: ino}
	held.proc = heldDir{fd: staleDir, dev: dev, ino: ino}
	held.mu.Unlock()
	next = liveMachine(t)
	k := kernelOf(t, next)
	assert.NotSame(t, staleDir, k.sys)
	assert.NotSame(t, staleDir, k.proc)
	got, err := next.ReadString("sys/devices/system/cpu/present")
	require.NoError(t, err)
	assert.NotEqual(t, "stale", got)
	got, err = next.ReadString(PathMemInfo)
	require.NoError(t, err)
	assert.Contains(t, got, "MemTotal:")
	sd, si := identityOfFD(t, k.sys)
	wd, wi = identityOfPath(t, "/sys")
	assert.Equal(t, [2]uint64{wd, wi}, [2]uint64{sd, si})
	assert.Same(t, k.sys, held.sys.fd, "the memo holds the new sysfs descriptor")
}

// A sysroot re-created at the same path is read afresh: the view of the new
// directory never reads through the descriptor of the old one, which is no
// longer below that path.
func TestHeldRootOfARecreatedSysroot(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sys/x"), []byte("old\n"), 0o644))
	m, err := New(Config{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	require.NotNil(t, m.memo)
	old := m.src.(dirSource).dir
	require.NotNil(t, old, "openat2 is usable")
	got, err := m.ReadString("sys/x")
	require.NoError(t, err)
	assert.Equal(t, "old", got)
	again, err := New(Config{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	assert.Same(t, old, again.src.(dirSource).dir, "the same directory: the held descriptor")

	require.NoError(t, os.Rename(root, filepath.Join(parent, "moved")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sys/x"), []byte("new\n"), 0o644))
	fresh, err := New(Config{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	assert.NotSame(t, old, fresh.src.(dirSource).dir)
	got, err = fresh.ReadString("sys/x")
	require.NoError(t, err)
	assert.Equal(t, "new", got, "read below the directory now at the path")

	// The held struct on its own, with a stat of the new directory and the
	// old descriptor held: it opens the path afresh.
	var h heldDirs
	st, err := os.Stat(filepath.Join(parent, "moved"))
	require.NoError(t, err)
	movedDir := h.rootFor(filepath.Join(parent, "moved"), st)
	require.NotNil(t, movedDir)
	st, err = os.Stat(root)
	require.NoError(t, err)
	assert.NotSame(t, movedDir, h.rootFor(root, st))
}

// Where sys or proc of a sysroot is a link to the host's own (absolute or
// climbing out), the held way refuses it as the per-view way does: no
// descriptor is held and no file of the host is read, detection after
// detection.
func TestHeldMountsStayInsideSysroot(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.Symlink("/sys", filepath.Join(root, "sys")))
	rel, err := filepath.Rel(root, "/proc")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(rel, filepath.Join(root, "proc")))
	for range 2 {
		m, err := New(Config{Sysroot: root, NoExec: true})
		require.NoError(t, err)
		require.NotNil(t, m.memo)
		ds := m.src.(dirSource)
		require.NotNil(t, ds.kernel)
		assert.False(t, ds.kernel.isSysfs(ds.dir), "the link to /sys is refused")
		assert.Nil(t, ds.kernel.proc, "the link to /proc is refused")
		assert.Nil(t, m.memo.held.sys.fd)
		assert.Nil(t, m.memo.held.proc.fd)
		_, err = m.ReadFile("sys/devices/system/cpu/present")
		assert.Error(t, err)
		_, err = m.ReadFile(PathMemInfo)
		assert.Error(t, err)
	}
}

// The files a detection reads every time, below the kernel's sysfs and
// procfs, stay open and are read again with one pread: the second view
// reads the same open file (the held entry is not replaced), and what it
// reads is the file as it is now.
func TestHeldFilesReadAgain(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	first := liveMachine(t)
	names := []string{PathCPUPresent, PathCPUOnline, PathMemInfo, "proc/1/cgroup"}
	for _, name := range names {
		_, err := first.ReadFile(name)
		require.NoError(t, err, name)
	}
	held := &first.memo.held
	kept := map[string]*pathFD{}
	held.mu.Lock()
	for _, name := range names {
		f, ok := held.files[name]
		require.True(t, ok, "%s is held", name)
		kept[name] = f.fd
	}
	held.mu.Unlock()

	second := liveMachine(t)
	for _, name := range []string{PathCPUPresent, "proc/1/cgroup"} {
		want, err := os.ReadFile("/" + name)
		require.NoError(t, err)
		got, err := second.ReadFile(name)
		require.NoError(t, err, name)
		assert.Equal(t, string(want), string(got), name)
	}
	got, err := second.ReadString(PathMemInfo)
	require.NoError(t, err)
	assert.Contains(t, got, "MemTotal:")
	held.mu.Lock()
	for _, name := range names {
		assert.Same(t, kept[name], held.files[name].fd, "%s read through the same open file", name)
	}
	held.mu.Unlock()

	// Files of objects that can be renamed or moved, and files of many
	// records, are opened and closed each time.
	for _, name := range []string{"sys/devices/system/cpu/possible", "proc/cpuinfo", "proc/sys/kernel/ostype"} {
		_, err := second.ReadFile(name)
		require.NoError(t, err, name)
		held.mu.Lock()
		_, ok := held.files[name]
		held.mu.Unlock()
		assert.False(t, ok, "%s is not held", name)
	}
}

// A held file whose read fails (as the open file of a removed sysfs node
// fails with ENODEV) is dropped and its path opened afresh; here the held
// descriptor is an O_PATH one, which pread refuses.
func TestHeldFileThatFailsIsOpenedAfresh(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	held := heldAfterOneDetection(t)
	fd, err := openBeneath(held.sys.fd.fd, "devices/system/cpu/present", oPath)
	require.NoError(t, err)
	broken := newPathFD(fd)
	held.mu.Lock()
	held.files[PathCPUPresent] = heldFile{fd: broken, under: held.sys.fd}
	held.mu.Unlock()

	want, err := os.ReadFile("/" + PathCPUPresent)
	require.NoError(t, err)
	got, err := liveMachine(t).ReadFile(PathCPUPresent)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	held.mu.Lock()
	defer held.mu.Unlock()
	require.Contains(t, held.files, PathCPUPresent, "held again")
	assert.NotSame(t, broken, held.files[PathCPUPresent].fd, "a new open file")
}

// The files held below a mount go with it: once the witness replaces the
// held sysfs descriptor, no file opened below the old one is read, and none
// stays held.
func TestHeldFilesGoWithTheirMount(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	held := heldAfterOneDetection(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "present"), []byte("stale\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "online"), []byte("stale\n"), 0o644))
	stale := openBeneathDir(dir)
	require.NotNil(t, stale)
	dev, ino := identityOfFD(t, stale)
	held.mu.Lock()
	for _, name := range []string{PathCPUPresent, PathCPUOnline} {
		fd, err := openBeneath(stale.fd, filepath.Base(name), syscall.O_RDONLY)
		require.NoError(t, err)
		held.files[name] = heldFile{fd: newPathFD(fd), under: stale}
	}
	held.sys = heldDir{fd: stale, dev: dev, ino: ino}
	held.mu.Unlock()

	next := liveMachine(t)
	got, err := next.ReadString(PathCPUPresent)
	require.NoError(t, err)
	assert.NotEqual(t, "stale", got, "not read below the replaced mount")
	held.mu.Lock()
	defer held.mu.Unlock()
	for name, f := range held.files {
		assert.NotSame(t, stale, f.under, "%s is held below the replaced mount", name)
	}
}

// Only files of kernel objects that are never renamed or moved, shown as
// one record, are held.
func TestHoldable(t *testing.T) {
	for name, want := range map[string]bool{
		PathCPUOnline: true, PathCPUPresent: true, "sys/devices/system/node/online": true, PathMemInfo: true,
		"sys/devices/system/node/node0/cpulist": true, "sys/devices/system/node/node12/meminfo": true,
		"proc/1/cgroup": true, "proc/4242/cgroup": true,
		"sys/devices/system/node/node0/distance": false, "sys/devices/system/node/nodeX/meminfo": false,
		"sys/devices/system/node/node0/cpulist/x": false, "proc/self/cgroup": false, "proc/cpuinfo": false,
		"proc/1/mountinfo": false, "sys/block/vda/size": false, "sys/bus/pci/devices/0000:00:02.0/numa_node": false,
		"sys/fs/cgroup/memory/memory.limit_in_bytes": false, "sys/devices/system/cpu/possible": false,
	} {
		assert.Equal(t, want, holdable(name), name)
	}
}

// hostCgroupLimit is a cgroup limit file of this host below a cgroup
// filesystem mounted at /sys/fs/cgroup/<dir> (cgroup v1), skipped where
// there is none.
func hostCgroupLimit(t *testing.T) (name, mount string) {
	t.Helper()
	for _, c := range []struct{ dir, file string }{{"memory", "memory.limit_in_bytes"}, {"cpu", "cpu.cfs_period_us"}} {
		dir := "/sys/fs/cgroup/" + c.dir
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || !isCgroupFS(dir) {
			continue
		}
		if _, err := os.Stat(dir + "/" + c.file); err == nil {
			return dir[1:] + "/" + c.file, dir[1:]
		}
	}
	t.Skip("no cgroup v1 controller directory below /sys/fs/cgroup here")
	return "", ""
}

// A cgroup limit file below a cgroup directory of the kernel's sysfs is
// kept open with its directory, which every detection witnesses by name
// (sys/fs, sys/fs/cgroup and the controller's directory, one component
// each): the second view reads the same open file, and gets the file's text.
func TestHeldCgroupLimitFiles(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	name, mount := hostCgroupLimit(t)
	first := liveMachine(t)
	_, err := first.ReadFile(name)
	require.NoError(t, err)
	held := &first.memo.held
	held.mu.Lock()
	sub, ok := held.subs[mount]
	f, fok := held.files[name]
	held.mu.Unlock()
	require.True(t, ok, "%s is held", mount)
	assert.True(t, sub.cgroup)
	require.True(t, fok, "%s is held", name)
	assert.Same(t, sub.fd, f.under)

	want, err := os.ReadFile("/" + name)
	require.NoError(t, err)
	got, err := liveMachine(t).ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	held.mu.Lock()
	defer held.mu.Unlock()
	assert.Same(t, f.fd, held.files[name].fd, "read through the same open file")
}

// A held cgroup directory whose witness fails (the name no longer leads to
// it: a cgroup renamed, a controller mounted elsewhere) is dropped with the
// files held below it, and the path is opened afresh: the file read is the
// one the name leads to now.
func TestHeldCgroupDirReplacedWhenTheWitnessFails(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	name, mount := hostCgroupLimit(t)
	m := liveMachine(t)
	_, err := m.ReadFile(name)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(name)), []byte("stale\n"), 0o644))
	stale := openBeneathDir(dir)
	require.NotNil(t, stale)
	dev, ino := identityOfFD(t, stale)
	fd, err := openBeneath(stale.fd, filepath.Base(name), syscall.O_RDONLY)
	require.NoError(t, err)
	held := &m.memo.held
	held.mu.Lock()
	sub := held.subs[mount]
	sub.heldDir = heldDir{fd: stale, dev: dev, ino: ino}
	held.subs[mount] = sub
	held.files[name] = heldFile{fd: newPathFD(fd), under: stale}
	held.mu.Unlock()

	got, err := liveMachine(t).ReadString(name)
	require.NoError(t, err)
	assert.NotEqual(t, "stale", got)
	held.mu.Lock()
	defer held.mu.Unlock()
	assert.NotSame(t, stale, held.subs[mount].fd, "opened afresh")
	for n, f := range held.files {
		assert.NotSame(t, stale, f.under, "%s still held below the replaced directory", n)
	}
}

// A held directory below another is one component opened beneath it
// without following a link: a link (leading out or not) and ".." are
// refused, a plain directory is held and found again by its witness.
func TestHeldSubStaysBelowItsParent(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "parent/plain"), 0o755))
	require.NoError(t, os.Symlink("/", filepath.Join(root, "parent/out")))
	require.NoError(t, os.Symlink("plain", filepath.Join(root, "parent/in")))
	parent := openBeneathDir(filepath.Join(root, "parent"))
	require.NotNil(t, parent)
	var h heldDirs
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, name := range []string{"out", "in", ".."} {
		dir, err := h.sub(parent, "k/"+name, name)
		assert.Error(t, err, name)
		assert.Nil(t, dir, name)
	}
	assert.Empty(t, h.subs)
	dir, err := h.sub(parent, "k/plain", "plain")
	require.NoError(t, err)
	require.NotNil(t, dir)
	again, err := h.sub(parent, "k/plain", "plain")
	require.NoError(t, err)
	assert.Same(t, dir, again, "the witness holds")
	require.NoError(t, os.Rename(filepath.Join(root, "parent/plain"), filepath.Join(root, "parent/moved")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "parent/plain"), 0o755))
	fresh, err := h.sub(parent, "k/plain", "plain")
	require.NoError(t, err)
	assert.NotSame(t, dir, fresh, "another directory at the name")
	// With a filesystem kind, a directory of another kind is not held.
	none, err := h.sub(parent, "k/moved", "moved", cgroupMagic, cgroup2Magic)
	assert.NoError(t, err)
	assert.Nil(t, none)
}

// stillOpen reports whether the descriptor number fd is open, after the
// collector has had its chances to run cleanups.
func stillOpen(fd int) bool {
	for range 5 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil
}

// A host that closes the library's descriptors (which the header says it
// must not), closefrom(3) style, and opens files of its own on the numbers:
// the next detection sees the held root's number no longer names the
// sysroot (one fstat), reads the kernel's files afresh, never the host's,
// and never closes the numbers it held, which are the host's now.
func TestHeldRootClosedByTheHost(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	held := heldAfterOneDetection(t)
	held.mu.Lock()
	nums := []int{held.root.fd.fd, held.sys.fd.fd, held.proc.fd.fd, held.files[PathCPUPresent].fd.fd}
	held.mu.Unlock()
	stale := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "sys/devices/system/cpu"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "sys/devices/system/cpu/present"), []byte("stale\n"), 0o644))
	hostDir, err := syscall.Open(stale, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer syscall.Close(hostDir)
	for _, n := range nums {
		require.NoError(t, syscall.Close(n))
		require.NoError(t, syscall.Dup3(hostDir, n, syscall.O_CLOEXEC), "the host's file on number %d", n)
	}
	defer func() {
		for _, n := range nums {
			syscall.Close(n)
		}
	}()

	want, err := os.ReadFile("/" + PathCPUPresent)
	require.NoError(t, err)
	got, err := liveMachine(t).ReadFile(PathCPUPresent)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "the kernel's file, not the host's")
	held.mu.Lock()
	assert.NotContains(t, nums, held.root.fd.fd, "a new root descriptor is held")
	held.mu.Unlock()
	for _, n := range nums {
		assert.True(t, stillOpen(n), "the host's descriptor %d stays open", n)
	}
}

// A held file whose number the host closed (the root left alone), and on
// which the host opened an O_PATH file of its own, fails its pread with
// EBADF: it is opened afresh, and the collector never closes the number,
// which is one of the host's files. The host's file holds the number
// through the detection: with the number free, the file opened afresh could
// take it, and the host's dup3 below would then close the library's own
// descriptor (which the collector closes later, a second time: the double
// close a clean-clone CI run showed as an EBADF in a later test's TempDir
// cleanup, traced with strace -k to two pathFD cleanups of one number).
func TestHeldFileClosedByTheHost(t *testing.T) {
	ForgetAllMemos()
	defer ForgetAllMemos()
	held := heldAfterOneDetection(t)
	held.mu.Lock()
	old := held.files[PathCPUPresent].fd
	n := old.fd
	held.mu.Unlock()
	require.NoError(t, syscall.Close(n))
	hostPath, err := syscall.Open("/", oPath|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	if hostPath != n {
		require.NoError(t, syscall.Dup3(hostPath, n, syscall.O_CLOEXEC), "the host's O_PATH file on number %d", n)
		require.NoError(t, syscall.Close(hostPath))
	}

	want, err := os.ReadFile("/" + PathCPUPresent)
	require.NoError(t, err)
	got, err := liveMachine(t).ReadFile(PathCPUPresent)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	held.mu.Lock()
	require.Contains(t, held.files, PathCPUPresent, "held again")
	assert.NotSame(t, old, held.files[PathCPUPresent].fd)
	require.NotEqual(t, n, held.files[PathCPUPresent].fd.fd, "the host's file holds number %d", n)
	held.mu.Unlock()
	old = nil
	hostFile, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer syscall.Close(hostFile)
	require.NoError(t, syscall.Dup3(hostFile, n, syscall.O_CLOEXEC))
	defer syscall.Close(n)
	assert.True(t, stillOpen(n), "the host's descriptor %d stays open", n)
}

// heldAfterOneDetection is the memo of "/" after a detection that read and
// held sys/devices/system/cpu/present; the views are gone.
func heldAfterOneDetection(t *testing.T) *heldDirs {
	t.Helper()
	m := liveMachine(t)
	_, err := m.ReadFile(PathCPUPresent)
	require.NoError(t, err)
	held := &m.memo.held
	held.mu.Lock()
	defer held.mu.Unlock()
	require.NotNil(t, held.root.fd)
	require.NotNil(t, held.sys.fd)
	require.NotNil(t, held.proc.fd)
	require.Contains(t, held.files, PathCPUPresent)
	return held
}
