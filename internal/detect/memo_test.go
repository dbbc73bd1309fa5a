//go:build linux

package detect

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/host"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// memoOptions detects root from sysfs and procfs alone.
func memoOptions(t testing.TB, root string) Options {
	return Options{Sysroot: root, Path: t.TempDir(), NoExec: true, Timeout: 5 * time.Second,
		LookupEnv: func(string) (string, bool) { return "", false }}
}

func memoDetect(t testing.TB, root string) *registry.Registry {
	t.Helper()
	reg, err := Detect(context.Background(), memoOptions(t, root))
	require.NoError(t, err)
	return reg
}

// memoMachine is the view a new detection of root starts from.
func memoMachine(t testing.TB, root string) *machine.Machine {
	t.Helper()
	m, err := NewMachine(memoOptions(t, root))
	require.NoError(t, err)
	require.True(t, m.HasMemo(), "a sysroot directory gets a memo")
	return m
}

func deviceAtBus(t testing.TB, reg *registry.Registry, bus string) registry.Device {
	t.Helper()
	for _, d := range reg.Devices {
		if d.PCIBusID == bus {
			return d
		}
	}
	require.Failf(t, "no device", "no device at %s in %v", bus, reg.Devices)
	return registry.Device{}
}

func nvidiaAddresses(m *machine.Machine) []string {
	var out []string
	for _, p := range m.PCIDevices(machine.VendorNVIDIA) {
		out = append(out, p.Address)
	}
	return out
}

func writeFile(t testing.TB, name, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
	require.NoError(t, os.WriteFile(name, []byte(content), 0o644))
}

// replaceDir swaps dir for a copy of itself changed by edit, as a hot-unplug
// and replug makes a new sysfs directory at the same path.
func replaceDir(t *testing.T, dir string, edit func(newDir string)) {
	t.Helper()
	require.NoError(t, replaceDirErr(dir, edit))
}

// replaceDirErr is replaceDir for goroutines other than the test's.
func replaceDirErr(dir string, edit func(newDir string)) error {
	fresh := dir + ".new"
	if err := os.MkdirAll(fresh, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		from, to := filepath.Join(dir, e.Name()), filepath.Join(fresh, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(from)
			if err == nil {
				err = os.Symlink(target, to)
			}
			if err != nil {
				return err
			}
			continue
		}
		b, err := os.ReadFile(from)
		if err == nil {
			err = os.WriteFile(to, b, 0o644)
		}
		if err != nil {
			return err
		}
	}
	if edit != nil {
		edit(fresh)
	}
	if err := os.RemoveAll(dir + ".old"); err != nil {
		return err
	}
	if err := os.Rename(dir, dir+".old"); err != nil { // kept, so its inode cannot be reused
		return err
	}
	return os.Rename(fresh, dir)
}

const dgxGPU = "0000:18:00.0" // an H100 of the dgx-h100 fixture, under pci0000:15

func TestMemoPCIFunctionValidatedByItsDirectory(t *testing.T) {
	root := detecttest.CopyFixtureRoot(t, "dgx-h100")
	gpuDir := filepath.Join(root, "sys/devices/pci0000:15", dgxGPU)

	first := deviceAtBus(t, memoDetect(t, root), dgxGPU)
	assert.Equal(t, "10de:2330", first.PCIID)
	require.NotNil(t, first.PCIe)
	assert.Equal(t, 16, first.PCIe.MaxWidth)
	all := nvidiaAddresses(memoMachine(t, root))
	require.Contains(t, all, dgxGPU)

	// Rewriting an id in place leaves the directory as it was: the memo
	// answers (what a running kernel never does to a function's ids), which
	// shows it is used.
	writeFile(t, filepath.Join(gpuDir, "device"), "0x20b5\n")
	writeFile(t, filepath.Join(gpuDir, "max_link_width"), "8\n")
	// What can change is read again every time.
	writeFile(t, filepath.Join(gpuDir, "numa_node"), "1\n")
	writeFile(t, filepath.Join(gpuDir, "current_link_width"), "4\n")
	d := deviceAtBus(t, memoDetect(t, root), dgxGPU)
	assert.Equal(t, "10de:2330", d.PCIID, "remembered")
	assert.Equal(t, 16, d.PCIe.MaxWidth, "remembered")
	require.NotNil(t, d.NUMANode)
	assert.Equal(t, 1, *d.NUMANode, "numa_node is re-read")
	assert.Equal(t, 4, d.PCIe.CurrentWidth, "the current link is re-read")
	require.NoError(t, os.Remove(filepath.Join(gpuDir, "driver")))
	for _, p := range memoMachine(t, root).PCIDevices(machine.VendorNVIDIA) {
		if p.Address == dgxGPU {
			assert.Empty(t, p.Driver, "the driver link is re-read")
		}
	}

	// The function replaced by a new directory (new inode): read afresh.
	replaceDir(t, gpuDir, nil)
	d = deviceAtBus(t, memoDetect(t, root), dgxGPU)
	assert.Equal(t, "10de:20b5", d.PCIID)
	assert.Equal(t, 8, d.PCIe.MaxWidth)

	// Removed, then added back.
	link := filepath.Join(root, machine.PathPCIDevices, dgxGPU)
	target, err := os.Readlink(link)
	require.NoError(t, err)
	require.NoError(t, os.Remove(link))
	assert.NotContains(t, nvidiaAddresses(memoMachine(t, root)), dgxGPU)
	assert.Len(t, nvidiaAddresses(memoMachine(t, root)), len(all)-1)
	require.NoError(t, os.Symlink(target, link))
	assert.Equal(t, all, nvidiaAddresses(memoMachine(t, root)))

	// A function of another vendor put in its place is not taken for the old one.
	replaceDir(t, gpuDir, func(dir string) { writeFile(t, filepath.Join(dir, "vendor"), "0x15b3\n") })
	assert.NotContains(t, nvidiaAddresses(memoMachine(t, root)), dgxGPU)
}

// cpuTree writes a sysroot with a two-CPU cpuinfo and the hot-plug witnesses.
func cpuTree(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, machine.PathCPUInfo), cpuInfoText(2, "Real CPU"))
	writeFile(t, filepath.Join(root, machine.PathCPUOnline), "0-1\n")
	writeFile(t, filepath.Join(root, machine.PathCPUPresent), "0-3\n")
	return root
}

func cpuInfoText(n int, name string) string {
	var s string
	for i := range n {
		s += "processor\t: " + strconv.Itoa(i) + "\nvendor_id\t: GenuineIntel\nmodel name\t: " + name + "\n\n"
	}
	return s
}

func hostCPU(t *testing.T, root string) registry.Device {
	t.Helper()
	opts := memoOptions(t, root)
	opts.Backends = []string{host.BackendCPU}
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	cpus := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpus, 1)
	return cpus[0]
}

// seedCPU puts a cpuinfo in the memo as if read under the current witness,
// so a detection that uses the memo is told apart from one that reads.
func seedCPU(t *testing.T, root string) {
	t.Helper()
	m := memoMachine(t, root)
	w, st, ok := m.CPUWitness()
	require.True(t, ok)
	m.RememberCPU(w, st, machine.CPUInfo{Name: "Remembered CPU", Logical: 7})
}

func TestMemoCPUInfoValidatedByHotplugFiles(t *testing.T) {
	root := cpuTree(t)
	assert.Equal(t, "Real CPU", hostCPU(t, root).Name)

	seedCPU(t, root)
	d := hostCPU(t, root)
	assert.Equal(t, "Remembered CPU", d.Name, "the memo answers while nothing changed")
	assert.Equal(t, 7, d.Threads)

	for _, tc := range []struct {
		name   string
		change func()
	}{
		{"a CPU goes online", func() { writeFile(t, filepath.Join(root, machine.PathCPUOnline), "0-2\n") }},
		{"a CPU is added", func() { writeFile(t, filepath.Join(root, machine.PathCPUPresent), "0-7\n") }},
		{"cpuinfo is another file", func() {
			writeFile(t, filepath.Join(root, "proc/cpuinfo.new"), cpuInfoText(2, "Real CPU"))
			require.NoError(t, os.Rename(filepath.Join(root, "proc/cpuinfo.new"), filepath.Join(root, machine.PathCPUInfo)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seedCPU(t, root)
			tc.change()
			d := hostCPU(t, root)
			assert.Equal(t, "Real CPU", d.Name)
			assert.Equal(t, 2, d.Threads)
		})
	}

	// Without a witness nothing is remembered: every detection reads.
	require.NoError(t, os.Remove(filepath.Join(root, machine.PathCPUOnline)))
	_, _, ok := memoMachine(t, root).CPUWitness()
	assert.False(t, ok)
	writeFile(t, filepath.Join(root, machine.PathCPUInfo), cpuInfoText(3, "Real CPU"))
	assert.Equal(t, 3, hostCPU(t, root).Threads)
}

// TestMemoConcurrentDetections is for -race: detections of the same and of
// more sysroots than the memo holds, while one tree's PCI functions are
// replaced and its CPUs hot-plugged.
func TestMemoConcurrentDetections(t *testing.T) {
	fixture := filepath.Join(detecttest.MachineDir(t, "dgx-h100"), "root")
	moving := detecttest.CopyFixtureRoot(t, "dgx-h100")
	want := withoutTiming(memoDetect(t, fixture))
	small := make([]string, machine.MaxMemoSysroots+2)
	for i := range small {
		small[i] = cpuTree(t)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		gpuDir := filepath.Join(moving, "sys/devices/pci0000:15", dgxGPU)
		online := filepath.Join(moving, machine.PathCPUOnline)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			assert.NoError(t, replaceDirErr(gpuDir, nil))
			assert.NoError(t, os.WriteFile(online, []byte("0-"+strconv.Itoa(100+i%100)+"\n"), 0o644))
		}
	})
	var got sync.Map
	var readers sync.WaitGroup
	for g := range 6 {
		readers.Go(func() {
			for i := range 6 {
				reg := memoDetect(t, fixture)
				got.Store(g*100+i, withoutTiming(reg))
				_ = memoDetect(t, moving)
				hostCPU(t, small[(g*6+i)%len(small)])
			}
		})
	}
	readers.Wait()
	close(stop)
	wg.Wait()
	got.Range(func(_, v any) bool {
		assert.Equal(t, want, v)
		return true
	})
}

func withoutTiming(reg *registry.Registry) *registry.Registry {
	reg.Timing = nil
	return reg
}

// TestMemoSameAnswersOnEveryFixture: every fixture machine answers the same
// without the memo, on the detection that fills it and on the one that
// uses it.
func TestMemoSameAnswersOnEveryFixture(t *testing.T) {
	ents, err := os.ReadDir(filepath.Dir(detecttest.MachineDir(t, "dgx-h100")))
	require.NoError(t, err)
	t.Cleanup(func() { machine.SetMemoEnabled(true) })
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			opts := fixtureOptions(t, e.Name(), nil)
			// hostile's tools hang until the deadline; the memo is about
			// its sysfs and procfs, which no_exec still reads.
			opts.NoExec = e.Name() == "hostile"
			detectOnce := func() *registry.Registry {
				reg, err := Detect(context.Background(), opts)
				require.NoError(t, err)
				return withoutTiming(reg)
			}
			machine.SetMemoEnabled(false)
			without := detectOnce()
			machine.SetMemoEnabled(true)
			machine.ForgetAllMemos()
			filling := detectOnce()
			using := detectOnce()
			assert.Equal(t, without, filling)
			assert.Equal(t, without, using)
		})
	}
}
