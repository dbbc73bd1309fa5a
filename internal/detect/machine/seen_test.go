package machine

import (
	"io/fs"
	"slices"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingFS counts what reaches the filesystem behind a Machine: a file
// read is a Stat then an Open (2), a listing one ReadDir.
type countingFS struct {
	fstest.MapFS
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.MapFS.Open(name)
}

// Stat and ReadDir are counted too: fs.Stat and fs.ReadDir call them
// instead of Open.
func (c *countingFS) Stat(name string) (fs.FileInfo, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.MapFS.Stat(name)
}

func (c *countingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.MapFS.ReadDir(name)
}

func (c *countingFS) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens[name]
}

// One detection reads each file, listing and link once, however many
// backends ask (the environment, storage and CPU backends read the same
// cgroup and DMI files): the second answer is the first's, error included.
func TestMachineReadsEachPathOncePerDetection(t *testing.T) {
	fsys := &countingFS{MapFS: fstest.MapFS{
		PathDMI + "/sys_vendor":     {Data: []byte("QEMU\n")},
		"sys/class/drm/card0/dev":   {Data: []byte("226:0\n")},
		"sys/class/drm/renderD128":  {Mode: fs.ModeDir},
		"sys/fs/cgroup/memory.max":  {Data: []byte("max\n")},
		"sys/devices/system/node/x": {Data: []byte("1")},
	}, opens: map[string]int{}}
	m, err := New(Config{FS: fsys, NoExec: true})
	require.NoError(t, err)

	for range 3 {
		s, err := m.ReadString(PathDMI + "/sys_vendor")
		require.NoError(t, err)
		assert.Equal(t, "QEMU", s)
		_, err = m.ReadString(PathDMI + "/product_name")
		assert.True(t, IsMissing(err), "absence is remembered as absence: %v", err)
	}
	assert.Equal(t, 2, fsys.count(PathDMI+"/sys_vendor"))
	assert.Equal(t, 1, fsys.count(PathDMI+"/product_name"), "its Stat failed")

	first := m.ReadDir("sys/class/drm")
	require.Len(t, first, 2)
	first[0] = nil // a caller's changes to its list stay its own
	second := m.ReadDir("sys/class/drm")
	require.Len(t, second, 2)
	assert.Equal(t, "card0", second[0].Name())
	var yielded []string
	for e := range m.DirEntries("sys/class/drm") {
		yielded = append(yielded, e.Name())
	}
	assert.Equal(t, []string{"card0", "renderD128"}, yielded, "DirEntries yields ReadDir's listing")
	for range m.DirEntries("sys/class/drm") {
		break // a caller may stop early
	}
	assert.Empty(t, slices.Collect(m.DirEntries("sys/class/none")), "a missing directory yields nothing")
	assert.Equal(t, 1, fsys.count("sys/class/drm"))

	// A head read is not a whole read: each is made once.
	assert.Equal(t, "ma", m.ReadHead("sys/fs/cgroup/memory.max", 2))
	v, err := m.ReadString("sys/fs/cgroup/memory.max")
	require.NoError(t, err)
	assert.Equal(t, "max", v)
	assert.Equal(t, "ma", m.ReadHead("sys/fs/cgroup/memory.max", 2))
	assert.Equal(t, 4, fsys.count("sys/fs/cgroup/memory.max"))

	// A new Machine (the next detection) reads again.
	m2, err := New(Config{FS: fsys, NoExec: true})
	require.NoError(t, err)
	_, err = m2.ReadString(PathDMI + "/sys_vendor")
	require.NoError(t, err)
	assert.Equal(t, 4, fsys.count(PathDMI+"/sys_vendor"))
}

// The CPU and environment backends share one reading of cpuinfo per
// detection.
func TestMachineHostCPUOncePerDetection(t *testing.T) {
	m, err := New(Config{FS: fstest.MapFS{}, NoExec: true})
	require.NoError(t, err)
	calls := 0
	load := func() (CPUInfo, error) { calls++; return CPUInfo{Name: "x", HypervisorFlag: true}, nil }
	for range 3 {
		info, err := m.HostCPU(load)
		require.NoError(t, err)
		assert.True(t, info.HypervisorFlag)
	}
	assert.Equal(t, 1, calls)
}

func TestIsKernelConstant(t *testing.T) {
	assert.True(t, isKernelConstant(PathDMI+"/product_name"))
	assert.True(t, isKernelConstant("sys/hypervisor/type"))
	assert.False(t, isKernelConstant(PathDMI+"/power/control"), "only the identification files")
	assert.False(t, isKernelConstant(PathDMI+"/"))
	assert.False(t, isKernelConstant("sys/devices/system/cpu/online"))
}
