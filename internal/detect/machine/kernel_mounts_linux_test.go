package machine

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveMachine is a Machine on this host's own root, skipped where /sys is
// not the kernel's sysfs (a sandbox without it).
func liveMachine(t *testing.T) *Machine {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs("/sys", &st); err != nil || int64(st.Type) != sysfsMagic {
		t.Skip("/sys is not a sysfs here")
	}
	m, err := New(Config{Sysroot: "/", NoExec: true})
	require.NoError(t, err)
	require.True(t, onKernelSysfs(m.src), "openat2 is usable and /sys is a sysfs")
	return m
}

// The one-open read of the kernel's sysfs and procfs gives what the
// general read gives: the same bytes, absence as absence, a directory
// refused, and a path under one of sysfs's own mount points (cgroup) read
// the general way.
func TestKernelMountsReadAsTheGeneralWay(t *testing.T) {
	m := liveMachine(t)
	general := func(name string) ([]byte, error) {
		var out []byte
		err := readFromRoot(t, "/", name, MaxFileBytes, func(b []byte) { out = append([]byte{}, b...) })
		return out, err
	}
	for _, name := range []string{"sys/devices/system/cpu/present", "proc/sys/kernel/ostype", "sys/kernel/mm/transparent_hugepage/enabled",
		"proc/1/cgroup", "proc/self/cgroup"} {
		want, werr := general(name)
		got, err := m.ReadFile(name)
		if werr != nil {
			assert.Equal(t, werr.Error(), err.Error(), name)
			continue
		}
		require.NoError(t, err, name)
		assert.Equal(t, string(want), string(got), name)
	}
	ok, err := m.src.(dirSource).kernel.readFile(m.src.(dirSource).dir, "sys/devices/system/cpu/present", MaxFileBytes, false, func([]byte) {})
	require.NoError(t, err)
	assert.True(t, ok, "read through the sysfs descriptor")

	_, err = m.ReadFile("sys/devices/no-such-attribute")
	assert.True(t, IsMissing(err), "%v", err)
	assert.Equal(t, "open sys/devices/no-such-attribute: no such file or directory", err.Error())

	_, err = m.ReadFile("sys/devices")
	assert.ErrorContains(t, err, "sys/devices: not a regular file")

	// A magic link of procfs is refused, as by the general way.
	_, err = m.ReadFile("proc/self/fd/0")
	assert.Error(t, err)

	if _, statErr := os.Stat("/sys/kernel/debug"); statErr == nil {
		ok, _ := m.src.(dirSource).kernel.readFile(m.src.(dirSource).dir, "sys/kernel/debug/x", MaxFileBytes, false, func([]byte) {})
		assert.False(t, ok, "a file below another of sysfs's mount points is read the general way")
	}
}

// isCgroupFS reports whether the host directory dir is a cgroup v1 or v2
// filesystem.
func isCgroupFS(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && (int64(st.Type) == cgroupMagic || int64(st.Type) == cgroup2Magic)
}

// A file below sys/fs/cgroup/<dir>/, where <dir> is a cgroup filesystem
// (a v1 controller), is read in one open relative to it, and gives what the
// general read gives: the same bytes, absence as absence, a directory
// refused. Below a <dir> that does not exist a file is absent without
// another open. A file directly below sys/fs/cgroup, or below a directory
// that is no cgroupfs, is read the general way.
func TestCgroupFilesReadThroughTheirMount(t *testing.T) {
	m := liveMachine(t)
	ds := m.src.(dirSource)
	names := []string{
		"sys/fs/cgroup/cgroup.controllers", "sys/fs/cgroup/memory.max", "sys/fs/cgroup/cpu.max",
		"sys/fs/cgroup/memory/memory.limit_in_bytes", "sys/fs/cgroup/cpu/cpu.cfs_quota_us",
		"sys/fs/cgroup/cpu/cpu.cfs_period_us", "sys/fs/cgroup/memory/no-such-file",
		"sys/fs/cgroup/no-such-controller/memory.limit_in_bytes",
	}
	fast := 0
	for _, name := range names {
		mount := filepath.Dir("/" + name)
		_, statErr := os.Stat(mount)
		wantFast := mount != "/sys/fs/cgroup" && (isCgroupFS(mount) || os.IsNotExist(statErr))
		want, werr := func() ([]byte, error) {
			var out []byte
			err := readFromRoot(t, "/", name, MaxFileBytes, func(b []byte) { out = append([]byte{}, b...) })
			return out, err
		}()
		got, err := m.ReadFile(name)
		if werr != nil {
			require.Error(t, err, name)
			assert.Equal(t, IsMissing(werr), IsMissing(err), "%s: %v, %v", name, werr, err)
			assert.Contains(t, err.Error(), name)
		} else {
			require.NoError(t, err, name)
			assert.Equal(t, string(want), string(got), name)
		}
		ok, _ := ds.kernel.readFile(ds.dir, name, MaxFileBytes, false, func([]byte) {})
		assert.Equal(t, wantFast, ok, "%s read through %s", name, mount)
		if ok && statErr == nil {
			fast++
		}
	}
	if fast == 0 {
		t.Skip("no cgroup filesystem below /sys/fs/cgroup here")
	}
	// A directory inside a cgroup filesystem is refused, as by the general way.
	for _, mount := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu"} {
		entries, err := os.ReadDir(mount)
		if err != nil || !isCgroupFS(mount) {
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				name := mount[1:] + "/" + e.Name()
				_, err := m.ReadFile(name)
				assert.ErrorContains(t, err, "not a regular file", name)
				break
			}
		}
	}
}

// The cgroup mount of a sysroot is opened inside it: a sys/fs/cgroup/<x>
// that is a link to the host's own cgroup filesystem, absolute or climbing
// past the root, is refused (RESOLVE_BENEATH), so neither the fast read nor
// the general one reaches the host's file.
func TestCgroupMountStaysInsideSysroot(t *testing.T) {
	host := ""
	for _, dir := range []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup"} {
		if isCgroupFS(dir) {
			host = dir
			break
		}
	}
	if host == "" {
		t.Skip("no cgroup filesystem below /sys/fs/cgroup here")
	}
	m, root := treeMachine(t, map[string]string{"sys/fs/cgroup/inside/cgroup.procs": "1\n"},
		map[string]string{"sys/fs/cgroup/absolute": host})
	rel, err := filepath.Rel(filepath.Join(root, "sys/fs/cgroup"), host)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(rel, filepath.Join(root, "sys/fs/cgroup/climb")))
	ds := m.src.(dirSource)
	require.NotNil(t, ds.dir, "openat2 is usable")
	k := &kernelMounts{}
	for _, name := range []string{"sys/fs/cgroup/absolute/cgroup.procs", "sys/fs/cgroup/climb/cgroup.procs"} {
		d, _ := k.cgroupMount(ds.dir, name)
		assert.Nil(t, d.fd, "%s: the link leaves the sysroot", name)
		assert.False(t, d.missing, "%s: refused, not absent", name)
		_, err := m.ReadFile(name)
		assert.Error(t, err, name)
	}
	d, rest := k.cgroupMount(ds.dir, "sys/fs/cgroup/inside/cgroup.procs")
	assert.Nil(t, d.fd, "a directory of the tree is no cgroup filesystem")
	assert.False(t, d.missing)
	assert.Equal(t, "cgroup.procs", rest)
	d, _ = k.cgroupMount(ds.dir, "sys/fs/cgroup/absent/memory.max")
	assert.True(t, d.missing)
	got, err := m.ReadString("sys/fs/cgroup/inside/cgroup.procs")
	require.NoError(t, err)
	assert.Equal(t, "1", got)
}

// DMI identification files and their absence are remembered across
// detections of the kernel's own sysfs.
func TestKernelConstantsRemembered(t *testing.T) {
	m := liveMachine(t)
	require.NotNil(t, m.memo)
	name := PathDMI + "/sys_vendor"
	first, err1 := m.ReadFile(name)
	_, _, ok := m.constantRemembered(name, MaxFileBytes, false)
	if err1 != nil && !IsMissing(err1) {
		assert.False(t, ok, "a failed read is not remembered: %v", err1)
		return
	}
	assert.True(t, ok)
	m2, err := New(Config{Sysroot: "/", NoExec: true})
	require.NoError(t, err)
	second, err2 := m2.ReadFile(name)
	assert.Equal(t, string(first), string(second))
	assert.Equal(t, err1 == nil, err2 == nil)
}

// readlink below the sysroot through openat2 gives the link's text.
func TestReadLinkBeneath(t *testing.T) {
	m, root := treeMachine(t, map[string]string{"sys/bus/pci/drivers/nvidia/bind": ""},
		map[string]string{"sys/devices/pci0000:00/0000:18:00.0/driver": "../../../bus/pci/drivers/nvidia"})
	assert.Equal(t, "../../../bus/pci/drivers/nvidia", m.ReadLink("sys/devices/pci0000:00/0000:18:00.0/driver"))
	assert.Equal(t, "nvidia", m.LinkBase("sys/devices/pci0000:00/0000:18:00.0/driver"))
	assert.Equal(t, "", m.ReadLink("sys/bus/pci/drivers/nvidia/bind"), "not a link")
	assert.Equal(t, "", m.ReadLink("sys/missing"))
	r, err := os.OpenRoot(root)
	require.NoError(t, err)
	defer r.Close()
	want, err := r.Readlink("sys/devices/pci0000:00/0000:18:00.0/driver")
	require.NoError(t, err)
	ok, got, err := readLinkBeneath(m.src.(dirSource).dir, "sys/devices/pci0000:00/0000:18:00.0/driver")
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// On the kernel's sysfs a PCI function is stamped by its listing's inode
// number (no stat), and the facts remembered under it are used by the next
// detection.
func TestPCIStampFromListingOnKernelSysfs(t *testing.T) {
	m := liveMachine(t)
	require.NotNil(t, m.memo)
	devs := m.PCIDevices(0)
	if len(devs) == 0 {
		t.Skip("no PCI function here")
	}
	entries := m.ReadDir(PathPCIDevices)
	var addr string
	var ino uint64
	for _, e := range entries {
		if le, ok := e.(interface{ Ino() uint64 }); ok && isSysfsPCIAddress(e.Name()) {
			addr, ino = e.Name(), le.Ino()
			break
		}
	}
	require.NotEmpty(t, addr)
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat("/sys/bus/pci/devices/"+addr, &st))
	assert.Equal(t, st.Ino, ino, "the listing's number is the link's inode")
	f, ok := m.pciRemembered(addr, fileStamp{listed: true, ino: ino})
	require.True(t, ok, "remembered under the listing's number")
	vendor, err := m.ReadInt(PathPCIDevices + "/" + addr + "/vendor")
	require.NoError(t, err)
	assert.Equal(t, int(vendor), f.vendor)

	m2, err := New(Config{Sysroot: "/", NoExec: true})
	require.NoError(t, err)
	assert.Equal(t, devs, m2.PCIDevices(0))
}

// A sysfs read shorter than a page and than the buffer is the whole file:
// the reader answers end of file with it, so no other read is made (here a
// pipe, whose next read would block), and reads on after a full buffer or a
// whole page.
func TestSysfsReaderStopsAfterAShortRead(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	r := sysfsReader(pr.Fd())
	require.NoError(t, syscall.SetNonblock(int(r), true)) // a read too many fails (EAGAIN) instead of blocking
	_, err = pw.Write([]byte("0-3\n"))
	require.NoError(t, err)
	var got []byte
	require.NoError(t, readLimited(r, "online", 0, MaxFileBytes, false, func(b []byte) { got = append(got, b...) }))
	assert.Equal(t, "0-3\n", string(got), "read whole, and no read after it (it would fail with EAGAIN)")

	// A buffer filled to its end, or a whole page, may not be the end.
	_, err = pw.Write([]byte("abcdef"))
	require.NoError(t, err)
	b := make([]byte, 100)
	n, err := r.Read(b[:3])
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b[:n]))
	n, err = r.Read(b)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, "def", string(b[:n]))

	_, err = pw.Write(make([]byte, pageSize))
	require.NoError(t, err)
	n, err = r.Read(make([]byte, 2*pageSize))
	assert.NoError(t, err, "a whole page is read on")
	assert.Equal(t, pageSize, n)
}

// A read of a one-record procfs or cgroup file shorter than the buffer is
// the whole file: the reader answers end of file with it, so no other read
// is made (here a pipe, whose next read would block); a full buffer reads
// on. Only the files the kernel shows as one record are read so.
func TestSingleRecordReaderStopsAfterAShortRead(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	r := singleRecordReader(pr.Fd())
	require.NoError(t, syscall.SetNonblock(int(r), true)) // a read too many fails (EAGAIN) instead of blocking
	text := strings.Repeat("x", 2*pageSize) + "\n"        // longer than a page: not sysfsReader's bound
	_, err = pw.Write([]byte(text))
	require.NoError(t, err)
	var got []byte
	require.NoError(t, readLimited(r, "meminfo", 0, MaxFileBytes, false, func(b []byte) { got = append(got, b...) }))
	assert.Equal(t, text, string(got), "read whole, and no read after it (it would fail with EAGAIN)")

	_, err = pw.Write([]byte("abcdef"))
	require.NoError(t, err)
	b := make([]byte, 100)
	n, err := r.Read(b[:3])
	require.NoError(t, err, "a full buffer may not be the end")
	assert.Equal(t, "abc", string(b[:n]))

	for rel, want := range map[string]bool{
		"meminfo": true, "1/cgroup": true, "self/cgroup": true, "cpuinfo": false, "1/mountinfo": false,
		"x1/cgroup": false, "/cgroup": false, "1/cgroup/x": false,
	} {
		assert.Equal(t, want, singleRecord(true, rel), "proc/%s", rel)
	}
	for rel, want := range map[string]bool{
		"memory.limit_in_bytes": true, "cpu.cfs_quota_us": true, "cpu.cfs_period_us": true, "memory.max": true,
		"user.slice/cpu.max": true, "cgroup.procs": false, "tasks": false, "meminfo": false,
	} {
		assert.Equal(t, want, singleRecord(false, rel), "cgroup %s", rel)
	}
}

// Binary sysfs attributes (a PCI function's configuration space: 256 bytes,
// or a whole page for PCI Express as root) read whole through sysfsReader.
func TestSysfsBinaryAttributeReadWhole(t *testing.T) {
	m := liveMachine(t)
	configs, _ := filepath.Glob("/sys/bus/pci/devices/*/config")
	if len(configs) == 0 {
		t.Skip("no PCI function here")
	}
	for _, host := range configs {
		want, err := os.ReadFile(host)
		require.NoError(t, err)
		got, err := m.ReadFile(host[1:])
		require.NoError(t, err, host)
		assert.Equal(t, want, got, host)
	}
}

// A name with a NUL byte is refused before openat2 sees it (the kernel would
// read the name only up to the NUL), as syscall.BytePtrFromString refuses it.
func TestOpenBeneathRefusesNUL(t *testing.T) {
	m, _ := treeMachine(t, map[string]string{"a": "1"}, nil)
	dir := m.src.(dirSource).dir
	require.NotNil(t, dir, "openat2 is usable")
	_, err := openBeneath(int(dir.Fd()), "a\x00b", syscall.O_RDONLY)
	assert.Equal(t, syscall.EINVAL, err)
	fd, err := openBeneath(int(dir.Fd()), "a", syscall.O_RDONLY)
	require.NoError(t, err)
	syscall.Close(fd)
}

// A stat of a one-component name below the sysroot (".dockerenv", "dev")
// is one fstatat that does not follow a link, and answers what os.Root's
// Stat answers: a file, a directory, absence; a link (inside the root, or
// leaving it) is not answered that way but the confined way, which follows
// the one and refuses the other.
func TestStatOfOneNameAsTheGeneralWay(t *testing.T) {
	m, root := treeMachine(t, map[string]string{"f": "12345", "d/x": "1"},
		map[string]string{"in": "f", "out": "/etc/passwd", "up": "../x"})
	dir := m.src.(dirSource).dir
	require.NotNil(t, dir, "openat2 is usable")
	r, err := os.OpenRoot(root)
	require.NoError(t, err)
	defer r.Close()
	for _, name := range []string{"f", "d", "in", "out", "up", "missing", "d/x"} {
		want, werr := r.Stat(name)
		got, err := m.src.stat(name)
		if werr != nil {
			assert.Error(t, err, name)
			continue
		}
		require.NoError(t, err, name)
		assert.Equal(t, want.Mode(), got.Mode(), name)
		assert.Equal(t, want.Size(), got.Size(), name)
		assert.Equal(t, want.Sys().(*syscall.Stat_t).Ino, got.Sys().(*syscall.Stat_t).Ino, name)
	}
	_, err = m.src.stat("missing")
	assert.Equal(t, "stat missing: no such file or directory", err.Error())

	if !haveFstatat {
		t.Skip("no fstatat fast path on " + runtime.GOARCH)
	}
	for name, fast := range map[string]bool{"f": true, "d": true, "missing": true, "in": false, "out": false, "d/x": false, "..": false, ".": false} {
		ok, _, _ := statName(int(dir.Fd()), name, name)
		assert.Equal(t, fast, ok, name)
	}
}

// proc/cpuinfo (the remembered cpuinfo's witness) is stat'ed in one call
// relative to the kernel's procfs, and answers what stat(2) answers.
func TestStatBelowKernelProcfs(t *testing.T) {
	m := liveMachine(t)
	if !haveFstatat {
		t.Skip("no fstatat fast path on " + runtime.GOARCH)
	}
	ds := m.src.(dirSource)
	ok, fi, err := ds.kernel.stat(ds.dir, "proc/cpuinfo")
	require.True(t, ok, "answered through the procfs descriptor")
	require.NoError(t, err)
	var want syscall.Stat_t
	require.NoError(t, syscall.Stat("/proc/cpuinfo", &want))
	got := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, want.Dev, got.Dev)
	assert.Equal(t, want.Ino, got.Ino)
	assert.Equal(t, want.Mode, got.Mode)

	ok, _, _ = ds.kernel.stat(ds.dir, "proc/self")
	assert.False(t, ok, "a link is followed the general way")
	fi, err = m.src.stat("proc/self")
	require.NoError(t, err)
	assert.True(t, fi.IsDir(), "proc/self followed to this process's directory")
	ok, _, _ = ds.kernel.stat(ds.dir, "proc/sys/kernel/ostype")
	assert.False(t, ok, "more than one name below proc/: the general way")
	ok, _, err = ds.kernel.stat(ds.dir, "proc/no-such-file")
	assert.True(t, ok)
	assert.True(t, IsMissing(err), "%v", err)
}

// The getdents64 listing (readDirBeneath: entries pointing into one slice,
// names cut from one string per buffer) names and types the entries of a
// directory as os.ReadDir does, in the same order, for directories of a
// few entries and of more than one getdents buffer.
func TestListingBeneathIsOsReadDirs(t *testing.T) {
	m := liveMachine(t)
	dirs := []string{"dev", "sys/bus/pci/devices", "sys/class", "proc/self", "usr/bin", "usr/lib"}
	for _, dir := range dirs {
		want, err := os.ReadDir("/" + dir)
		if err != nil {
			continue
		}
		ok, got, err := readDirBeneath(m.src.(dirSource).dir, "/", dir)
		require.True(t, ok, dir)
		require.NoError(t, err, dir)
		require.Len(t, got, len(want), dir)
		for i := range want {
			assert.Equal(t, want[i].Name(), got[i].Name(), dir)
			assert.Equal(t, want[i].Type(), got[i].Type(), "%s/%s", dir, want[i].Name())
		}
	}
}
