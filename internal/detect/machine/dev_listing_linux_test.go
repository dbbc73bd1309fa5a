package machine

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A listing of the running kernel's /dev (here a directory of its tmpfs
// /dev/shm) is remembered across detections, and read again as soon as an
// entry is added or removed.
func TestDevListingRememberedWhileUnchanged(t *testing.T) {
	liveMachine(t)
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Type != tmpfsMagic {
		t.Skip("/dev/shm is not a tmpfs here")
	}
	dir, err := os.MkdirTemp("/dev/shm", "hwaccel-listing-")
	if err != nil {
		t.Skipf("/dev/shm is not writable: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rel := "dev/shm/" + filepath.Base(dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-nvswitch0"), nil, 0o600))
	// The directory changed just now: not settled, so not remembered yet.
	m := freshLiveMachine(t)
	assert.Equal(t, []string{"nvidia-nvswitch0"}, entryNames(m.ReadDir(rel)))
	stamp, ok := m.listingStamp(rel)
	require.True(t, ok, "a directory of the kernel's /dev on a tmpfs is stamped")
	_, ok = m.listingRemembered(rel, stamp)
	assert.False(t, ok, "a listing of a directory changed within listingSettle is not remembered")

	later(t, 2*listingSettle)
	m = freshLiveMachine(t)
	assert.Equal(t, []string{"nvidia-nvswitch0"}, entryNames(m.ReadDir(rel)))
	_, ok = m.listingRemembered(rel, stamp)
	require.True(t, ok, "remembered once settled")

	// The remembered listing is what the next detection gets while the
	// directory's stat is unchanged (a marker entry shows it is not read).
	marker := []fs.DirEntry{linuxDirEntry{name: "remembered"}}
	m.rememberListing(rel, stamp, marker)
	m = freshLiveMachine(t)
	assert.Equal(t, []string{"remembered"}, entryNames(m.ReadDir(rel)))

	// An entry added (a driver creating its node) changes the stat: read again.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-nvswitch1"), nil, 0o600))
	m = freshLiveMachine(t)
	assert.Equal(t, []string{"nvidia-nvswitch0", "nvidia-nvswitch1"}, entryNames(m.ReadDir(rel)))
	// And one removed.
	later(t, 4*listingSettle)
	m = freshLiveMachine(t)
	m.ReadDir(rel)
	require.NoError(t, os.Remove(filepath.Join(dir, "nvidia-nvswitch0")))
	m = freshLiveMachine(t)
	assert.Equal(t, []string{"nvidia-nvswitch1"}, entryNames(m.ReadDir(rel)))
}

// Only directories of /dev are remembered, and only on the running kernel.
func TestListingStampOnlyForKernelDev(t *testing.T) {
	m := freshLiveMachine(t)
	_, ok := m.listingStamp(PathPCIDevices)
	assert.False(t, ok, "a sysfs directory is listed every time")
	_, ok = m.listingStamp("devices")
	assert.False(t, ok, "a name that only starts like dev")

	tree := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(tree, "dev"), 0o755))
	fixture, err := New(Config{Sysroot: tree, NoExec: true})
	require.NoError(t, err)
	_, ok = fixture.listingStamp(PathDev)
	assert.False(t, ok, "a fixture tree's dev is listed every time")
}

func TestSettledStamp(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	stamp := func(mtime, ctime time.Time) fileStamp {
		return fileStamp{mtime: syscall.NsecToTimespec(mtime.UnixNano()), ctime: syscall.NsecToTimespec(ctime.UnixNano())}
	}
	old := at.Add(-listingSettle - time.Millisecond)
	assert.True(t, settledStamp(stamp(old, old), at))
	assert.False(t, settledStamp(stamp(at.Add(-time.Millisecond), old), at), "modified within listingSettle")
	assert.False(t, settledStamp(stamp(old, at), at), "changed within listingSettle")
}

// freshLiveMachine is a new view of this host (a new detection) that
// remembers across detections.
func freshLiveMachine(t *testing.T) *Machine {
	t.Helper()
	m := liveMachine(t)
	require.NotNil(t, m.memo)
	return m
}

// later moves the clock settledStamp is asked with d ahead, for the test.
func later(t *testing.T, d time.Duration) {
	t.Helper()
	saved := now
	now = func() time.Time { return time.Now().Add(d) }
	t.Cleanup(func() { now = saved })
}

func entryNames(es []fs.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// RAMFS_MAGIC has its top bit set, so on 32-bit Linux statfs answers it as
// a negative int32: the comparison must still see ramfs
// (include/uapi/linux/magic.h).
func TestMemoryFSTypeOn32BitLinux(t *testing.T) {
	var ramfsAsInt32 int32 = -0x7a7ba70a // 0x858458f6 as a 32-bit statfs f_type
	var ramfsAsInt64 int64 = 0x858458f6
	assert.True(t, isMemoryFSType(uint32(ramfsAsInt32)))
	assert.True(t, isMemoryFSType(uint32(ramfsAsInt64)))
	assert.True(t, isMemoryFSType(tmpfsMagic))
	assert.False(t, isMemoryFSType(0x62656572), "sysfs (SYSFS_MAGIC)")
}
