//go:build linux

package machine

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// treeMachine builds a Machine over a temporary sysroot; files maps a path to
// its content, links a path to a symlink target.
func treeMachine(t *testing.T, files map[string]string, links map[string]string) (*Machine, string) {
	t.Helper()
	root := detecttest.WriteTree(t, files, links)
	m, err := New(Config{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	return m, root
}

func TestMachineReadFileCaps(t *testing.T) {
	m, _ := treeMachine(t, map[string]string{
		"exact":   strings.Repeat("a", MaxFileBytes),
		"over":    strings.Repeat("a", MaxFileBytes+1),
		"huge":    strings.Repeat("\xff", 1<<20),
		"empty":   "",
		"dir/x":   "1",
		"regular": "0x10de\n",
	}, map[string]string{
		"loop":     "loop",
		"loop2":    "loop3",
		"loop3":    "loop2",
		"dangling": "missing/file",
		"zero":     "/dev/zero",
		"tty":      "/dev/null",
	})
	b, err := m.ReadFile("exact")
	require.NoError(t, err)
	assert.Len(t, b, MaxFileBytes)
	for _, name := range []string{"over", "huge", "dir", "loop", "loop2", "dangling", "zero", "tty", "missing",
		"../etc/passwd", "/etc/passwd", "regular/.."} {
		_, err := m.ReadFile(name)
		assert.Error(t, err, name)
	}
	b, err = m.ReadFile("empty")
	require.NoError(t, err)
	assert.Empty(t, b)
}

func TestMachineReadFileDoesNotBlockOnFIFO(t *testing.T) {
	m, root := treeMachine(t, nil, nil)
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	done := make(chan error, 1)
	go func() {
		_, err := m.ReadFile("fifo")
		done <- err
	}()
	select {
	case err := <-done:
		assert.Error(t, err)
	case <-time.After(2 * time.Second):
		// Unblock the reader so the test binary can exit, then fail.
		if f, err := os.OpenFile(filepath.Join(root, "fifo"), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("ReadFile blocked on a FIFO with no writer")
	}
}

func TestMachineReadInt(t *testing.T) {
	cases := []struct {
		content string
		want    int64
		ok      bool
	}{
		{"0x10de\n", 0x10de, true},
		{"0X10DE", 0x10de, true},
		{"  42 \n", 42, true},
		{"-1\n", -1, true},
		{"0", 0, true},
		{"99999999999999999999", 0, false},
		{"-99999999999999999999", 0, false},
		{"0xffffffffffffffffff", 0, false},
		{"0x", 0, false},
		{"", 0, false},
		{"\n", 0, false},
		{"abc", 0, false},
		{"12abc", 0, false},
		{"1e9", 0, false},
		{"1.5", 0, false},
		{"\xff\xfe\x00\x01", 0, false},
		{"4\n2\n", 0, false},
		{"-0x5", 0, false},
	}
	for _, tc := range cases {
		m, _ := treeMachine(t, map[string]string{"v": tc.content}, nil)
		got, err := m.ReadInt("v")
		if tc.ok {
			require.NoError(t, err, "%q", tc.content)
			assert.Equal(t, tc.want, got, "%q", tc.content)
		} else {
			assert.Error(t, err, "%q gave %d", tc.content, got)
		}
	}
}

func TestMachineReadStringCleansText(t *testing.T) {
	m, _ := treeMachine(t, map[string]string{
		"name": "\x1b[31mNVIDIA\xff\xfe H100\x00\x07\r\n",
		"ok":   "  NVIDIA H100 80GB HBM3\n",
		"tab":  "a\tb",
	}, nil)
	s, err := m.ReadString("name")
	require.NoError(t, err)
	assert.True(t, utf8.ValidString(s))
	assert.False(t, strings.ContainsFunc(s, IsControl), "%q", s)
	assert.Contains(t, s, "NVIDIA")
	assert.Contains(t, s, "H100")
	s, err = m.ReadString("ok")
	require.NoError(t, err)
	assert.Equal(t, "NVIDIA H100 80GB HBM3", s)
	s, _ = m.ReadString("tab")
	assert.Equal(t, "a\tb", s)
}

func TestMachineLinksAndDirs(t *testing.T) {
	m, _ := treeMachine(t, map[string]string{
		"sys/bus/pci/drivers/nvidia/bind":            "",
		"sys/devices/pci0000:00/0000:18:00.0/vendor": "0x10de\n",
	}, map[string]string{
		"sys/bus/pci/devices/0000:18:00.0":             "../../../devices/pci0000:00/0000:18:00.0",
		"sys/devices/pci0000:00/0000:18:00.0/driver":   "../../../bus/pci/drivers/nvidia",
		"sys/devices/pci0000:00/0000:18:00.0/dangling": "../../../bus/pci/drivers/gone",
		"sys/bus/pci/devices/0000:19:00.0":             "0000:19:00.0",
		"sys/class/drm/loopdir":                        "../drm/loopdir",
	})
	assert.True(t, m.Exists("sys/bus/pci/devices/0000:18:00.0/vendor"))
	assert.Equal(t, "nvidia", m.LinkBase("sys/bus/pci/devices/0000:18:00.0/driver"))
	assert.False(t, m.Exists("sys/bus/pci/devices/0000:18:00.0/dangling"), "a dangling link does not exist")
	assert.Equal(t, "gone", m.LinkBase("sys/bus/pci/devices/0000:18:00.0/dangling"), "but its target is still readable")
	assert.Empty(t, m.ReadLink("sys/bus/pci/devices/0000:18:00.0/vendor"), "not a link")
	assert.Empty(t, m.LinkBase("sys/missing"))

	assert.False(t, m.Exists("sys/bus/pci/devices/0000:19:00.0"))
	assert.Empty(t, m.ReadDir("sys/bus/pci/devices/0000:19:00.0"), "a symlink loop lists as empty")
	assert.Empty(t, m.ReadDir("sys/class/drm/loopdir/x"))
	assert.Empty(t, m.ReadDir("sys/missing"))
	assert.Len(t, m.ReadDir("sys/bus/pci/devices"), 2, "the loop itself is listed; reading through it fails")
}

func TestMachinePCIDevicesSurviveHostileTree(t *testing.T) {
	dev := "sys/devices/pci0000:00/"
	files := map[string]string{
		// A sane NVIDIA function with an absurd NUMA node.
		dev + "0000:18:00.0/vendor":    "0x10de\n",
		dev + "0000:18:00.0/device":    "0x2330\n",
		dev + "0000:18:00.0/class":     "0x030200\n",
		dev + "0000:18:00.0/numa_node": "99999999999999999999\n",
		// A function with a negative NUMA node and a garbage device id.
		dev + "0000:19:00.0/vendor":    "0x1002\n",
		dev + "0000:19:00.0/device":    "\xff\xfe garbage",
		dev + "0000:19:00.0/numa_node": "-1\n",
		// Binary garbage and a 1 MiB vendor file: skipped.
		dev + "0000:1a:00.0/vendor": "\x00\x01\x02\xff\xfe",
		dev + "0000:1b:00.0/vendor": strings.Repeat("0", 1<<20),
		// A directory whose name is not a PCI address (invalid UTF-8, ANSI).
		dev + "0000:\xff\x1b[31m:00.0/vendor": "0x10de\n",
		dev + "0000:\x1b[31m:00.0/vendor":     "0x10de\n",
	}
	links := map[string]string{
		"sys/bus/pci/devices/0000:18:00.0":           "../../../devices/pci0000:00/0000:18:00.0",
		"sys/bus/pci/devices/0000:19:00.0":           "../../../devices/pci0000:00/0000:19:00.0",
		"sys/bus/pci/devices/0000:1a:00.0":           "../../../devices/pci0000:00/0000:1a:00.0",
		"sys/bus/pci/devices/0000:1b:00.0":           "../../../devices/pci0000:00/0000:1b:00.0",
		"sys/bus/pci/devices/0000:1c:00.0":           "0000:1c:00.0",
		"sys/bus/pci/devices/0000:1d:00.0":           "../../../devices/pci0000:00/missing",
		"sys/bus/pci/devices/0000:\xff\x1b[31m:00.0": "../../../devices/pci0000:00/0000:\xff\x1b[31m:00.0",
		"sys/bus/pci/devices/0000:\x1b[31m:00.0":     "../../../devices/pci0000:00/0000:\x1b[31m:00.0",
		dev + "0000:19:00.0/driver":                  "../../../bus/pci/drivers/amdgpu",
	}
	m, _ := treeMachine(t, files, links)
	devs := m.PCIDevices(0)
	var addrs []string
	for _, d := range devs {
		addrs = append(addrs, d.Address)
		assert.True(t, utf8.ValidString(d.Address) && !strings.ContainsFunc(d.Address, IsControl), "%q", d.Address)
		assert.Nil(t, d.NUMANode, "absurd and negative NUMA nodes are unknown")
	}
	assert.Equal(t, []string{"0000:18:00.0", "0000:19:00.0"}, addrs)
	require.Len(t, devs, 2)
	assert.Equal(t, 0x2330, devs[0].Device)
	assert.Equal(t, 0, devs[1].Device, "garbage device id is left unknown")
	assert.Equal(t, "amdgpu", devs[1].Driver, "a dangling driver link still names the driver")
	assert.Len(t, m.PCIDevices(VendorNVIDIA), 1)
}

func TestMachineSysfsPCIAddress(t *testing.T) {
	for s, want := range map[string]bool{
		"0000:18:00.0": true, "0000:c1:1f.7": true, "10000:00:00.0": true,
		"0000:18:00.8": false, "0000:18:00": false, "18:00.0": false, "0000:18:00.0 ": false,
		"0000:1G:00.0": false, "0000:18:00.0/..": false, "": false, "0000:\x1b[31m:00.0": false,
		"000:18:00.0": false, "123456789:18:00.0": false,
	} {
		assert.Equal(t, want, isSysfsPCIAddress(s), "%q", s)
	}
}

func TestMachineCleanText(t *testing.T) {
	cases := map[string]string{
		"  NVIDIA H100 80GB HBM3\n":                "NVIDIA H100 80GB HBM3",
		"\x1b[31mIntel(R) Xeon(R)\x1b[0m":          "Intel(R) Xeon(R)",
		"\x1b[2J\x1b]0;pwned\x07NVIDIA\xff H100":   "NVIDIA H100",
		"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\": "link",
		"a\x1b[1;38;5;196mb":                       "ab",
		"a\x1bcb":                                  "ab", // ESC c: reset, a two-byte escape
		"a\u009b31mb":                              "ab", // C1 CSI
		"a\u0085b\u009fc":                          "abc",
		"tab\tkept":                                "tab\tkept",
		"unterminated \x1b[31":                     "unterminated",
		"unterminated osc \x1b]0;title":            "unterminated osc",
		"trailing ESC\x1b":                         "trailing ESC",
		"Ünïcödé ✓":                                "Ünïcödé ✓",
		"\x00\x01nul\x7f":                          "nul",
		"":                                         "",
	}
	for in, want := range cases {
		got := CleanText(in)
		assert.Equal(t, want, got, "%q", in)
		assert.True(t, utf8.ValidString(got) && !strings.ContainsFunc(got, IsControl), "%q", got)
	}
}

func TestMachinePCITreeReadOncePerMachine(t *testing.T) {
	dev := "sys/devices/pci0000:00/"
	files := map[string]string{
		dev + "0000:18:00.0/vendor": "0x10de\n", dev + "0000:18:00.0/device": "0x2330\n",
		dev + "0000:18:00.0/class": "0x030200\n", dev + "0000:18:00.0/numa_node": "1\n",
		dev + "0000:19:00.0/vendor": "0x1002\n", dev + "0000:19:00.0/device": "0x74a1\n",
		dev + "0000:19:00.0/class": "0x038000\n",
	}
	links := map[string]string{
		"sys/bus/pci/devices/0000:18:00.0": "../../../devices/pci0000:00/0000:18:00.0",
		"sys/bus/pci/devices/0000:19:00.0": "../../../devices/pci0000:00/0000:19:00.0",
	}
	m, root := treeMachine(t, files, links)
	all := m.PCIDevices(0)
	require.Len(t, all, 2)

	// The tree changes after the first reading: this Machine (one detection)
	// keeps answering from that reading, a new Machine sees the change.
	require.NoError(t, os.Remove(filepath.Join(root, "sys/bus/pci/devices/0000:19:00.0")))
	assert.Equal(t, all, m.PCIDevices(0))
	amd := m.PCIDevices(VendorAMD)
	require.Len(t, amd, 1)
	assert.Equal(t, "0000:19:00.0", amd[0].Address)
	v, ok := m.VendorAt("0000:19:00.0")
	assert.True(t, ok)
	assert.Equal(t, VendorAMD, v)
	fresh, err := New(Config{Sysroot: m.root, NoExec: true})
	require.NoError(t, err)
	assert.Len(t, fresh.PCIDevices(0), 1)
	_, ok = fresh.VendorAt("0000:19:00.0")
	assert.False(t, ok)

	// Every caller owns its copy, the NUMA node pointer included.
	nv := m.PCIDevices(VendorNVIDIA)
	require.Len(t, nv, 1)
	require.NotNil(t, nv[0].NUMANode)
	*nv[0].NUMANode = 7
	again := m.PCIDevices(VendorNVIDIA)
	require.NotNil(t, again[0].NUMANode)
	assert.Equal(t, 1, *again[0].NUMANode)
}

func TestMachinePCITreeConcurrentReaders(t *testing.T) {
	m, _ := treeMachine(t, map[string]string{"sys/devices/pci0000:00/0000:18:00.0/vendor": "0x10de\n"},
		map[string]string{"sys/bus/pci/devices/0000:18:00.0": "../../../devices/pci0000:00/0000:18:00.0"})
	got := make(chan int, 8)
	for range 8 {
		go func() { got <- len(m.PCIDevices(VendorNVIDIA)) }()
	}
	for range 8 {
		assert.Equal(t, 1, <-got)
	}
}

// TestMachineReadsLargeFileOfUnknownSize reads a procfs file that says its
// size is 0 and is longer than the read buffer (/proc/kallsyms, several MB):
// the buffer grows until end of file, and the cap still holds.
func TestMachineReadsLargeFileOfUnknownSize(t *testing.T) {
	want, err := os.ReadFile("/proc/kallsyms")
	if err != nil || len(want) <= 2*MaxFileBytes {
		t.Skip("no /proc/kallsyms longer than 128 KiB here")
	}
	var got int
	require.NoError(t, readFromRoot(t, "/", "proc/kallsyms", 64<<20, func(b []byte) { got = len(b) }))
	assert.InDelta(t, len(want), got, float64(len(want))/10, "kallsyms changes only with modules loaded")
	assert.ErrorContains(t, readFromRoot(t, "/", "proc/kallsyms", 3*MaxFileBytes, func([]byte) {}), "longer than")
}

func TestMemoNotUsedForInjectedFS(t *testing.T) {
	m, err := New(Config{FS: fstest.MapFS{
		PathCPUInfo:    {Data: []byte("processor\t: 0\nmodel name\t: Real CPU\n")},
		PathCPUOnline:  {Data: []byte("0-1\n")},
		PathCPUPresent: {Data: []byte("0-1\n")},
	}, NoExec: true})
	require.NoError(t, err)
	_, _, ok := m.CPUWitness()
	assert.False(t, ok)
	_, ok = m.statStamp(PathCPUInfo, 0)
	assert.False(t, ok)
}

// readFromRoot reads name under the directory root as a Machine does.
func readFromRoot(t *testing.T, root, name string, limit int, use func([]byte)) error {
	t.Helper()
	r, err := os.OpenRoot(root)
	require.NoError(t, err)
	defer r.Close()
	return dirSource{root: r}.readFile(name, limit, false, use)
}

// Links inside a sysroot resolve inside it (issue 14 item 13): an absolute
// link, or a relative one climbing past the root, must not reach the host's
// files; the kernel's relative links within the tree keep working.
func TestMachineLinksStayInsideSysroot(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("0x10de\n"), 0o644))
	m, root := treeMachine(t, map[string]string{"sys/devices/pci0000:00/0000:18:00.0/vendor": "0x1002\n"},
		map[string]string{
			"sys/bus/pci/devices/0000:18:00.0": "../../../devices/pci0000:00/0000:18:00.0",
			"sys/class/absolute/vendor":        outside,
		})
	rel, err := filepath.Rel(filepath.Join(root, "sys/class/climb"), outside)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/class/climb"), 0o755))
	require.NoError(t, os.Symlink(rel, filepath.Join(root, "sys/class/climb/vendor")))

	v, err := m.ReadInt("sys/bus/pci/devices/0000:18:00.0/vendor")
	require.NoError(t, err, "a relative link inside the tree")
	assert.Equal(t, int64(0x1002), v)
	for _, name := range []string{"sys/class/absolute/vendor", "sys/class/climb/vendor"} {
		_, err := m.ReadFile(name)
		assert.Error(t, err, name)
		assert.False(t, m.Exists(name), name)
	}
}

// denyFS answers permission denied for every path under one of its
// prefixes, as the kernel does for a directory of mode 000 to anyone but
// root (root ignores mode bits, so tests inject the error through Config.FS).
type denyFS struct {
	fs.FS
	prefixes []string
}

func (d denyFS) Open(name string) (fs.File, error) {
	for _, p := range d.prefixes {
		if name == p || strings.HasPrefix(name, p+"/") {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
		}
	}
	return d.FS.Open(name)
}

// TestMachineReportsPermissionDenied: a read the machine refuses is
// reported once per path, with the path, as sysfs_read from the view; a
// missing file is not (issue 14 item 14: unreadable sysfs gave "0
// accelerators, no warnings").
func TestMachineReportsPermissionDenied(t *testing.T) {
	mapfs := fstest.MapFS{
		"sys/class/drm/card0/device/vendor":             {Data: []byte("0x1002\n")},
		"sys/class/kfd/kfd/topology/nodes/0/properties": {Data: []byte("cpu_cores_count 8\n")},
	}
	m, err := New(Config{FS: denyFS{mapfs, []string{"sys/class/drm", "sys/class/kfd/kfd/topology/nodes/0/properties"}}})
	require.NoError(t, err)
	assert.Nil(t, m.ReadDir("sys/class/drm"))
	assert.Nil(t, m.ReadDir("sys/class/drm"), "asked twice, reported once")
	_, err = m.ReadFile("sys/class/kfd/kfd/topology/nodes/0/properties")
	require.ErrorIs(t, err, fs.ErrPermission)
	_, err = m.ReadFile("sys/class/absent")
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.False(t, m.Exists("sys/class/drm/card0"))

	var got []string
	for _, w := range m.Notes() {
		assert.Equal(t, BackendView, w.Backend)
		assert.Equal(t, registry.WarnSysfsRead, w.Code)
		assert.Contains(t, w.Message, "permission denied")
		got = append(got, w.Path)
	}
	assert.Equal(t, []string{"/sys/class/drm", "/sys/class/kfd/kfd/topology/nodes/0/properties", "/sys/class/drm/card0"}, got)
}

// A PCI function that no caller keeps (a host bridge of the CPU's vendor,
// asked for its unbound display functions) has its numa_node left unread;
// the functions kept get theirs, and a caller asking for every function
// reads the others then.
func TestPCINUMANodeReadOnlyForFunctionsKept(t *testing.T) {
	const bridge, gpu = "sys/bus/pci/devices/0000:00:00.0", "sys/bus/pci/devices/0000:00:02.0"
	fsys := &countingFS{MapFS: fstest.MapFS{
		bridge + "/vendor": {Data: []byte("0x8086\n")}, bridge + "/device": {Data: []byte("0x0d57\n")},
		bridge + "/class": {Data: []byte("0x060000\n")}, bridge + "/numa_node": {Data: []byte("0\n")},
		gpu + "/vendor": {Data: []byte("0x8086\n")}, gpu + "/device": {Data: []byte("0x56a0\n")},
		gpu + "/class": {Data: []byte("0x030000\n")}, gpu + "/numa_node": {Data: []byte("1\n")},
	}, opens: map[string]int{}}
	m, err := New(Config{FS: fsys})
	require.NoError(t, err)

	got := UnboundFunctions(m, VendorIntel, ClassDisplay)
	require.Len(t, got, 1)
	assert.Equal(t, "0000:00:02.0", got[0].Address)
	require.NotNil(t, got[0].NUMANode)
	assert.Equal(t, 1, *got[0].NUMANode)
	assert.Zero(t, fsys.count(bridge+"/numa_node"), "the bridge is no caller's: its numa_node is not read")
	assert.NotZero(t, fsys.count(bridge+"/class"), "its class was read to decide")

	all := m.PCIDevices(VendorIntel)
	require.Len(t, all, 2)
	require.NotNil(t, all[0].NUMANode)
	assert.Equal(t, 0, *all[0].NUMANode, "read when a caller keeps it")
	*all[1].NUMANode = 7 // callers own their copies
	assert.Equal(t, 1, *m.PCIDevices(VendorIntel)[1].NUMANode)
}
