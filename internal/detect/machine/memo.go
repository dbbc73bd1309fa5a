package machine

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The memo remembers, per sysroot, facts that cannot change while the
// machine runs, so a steady-state detection re-reads only what can:
//
//   - a PCI function's vendor, device, class and subsystem ids and its
//     maximum link speed and width (drivers/pci/pci-sysfs.c: read-only
//     attributes from the configuration header and the Link Capabilities
//     register), keyed by the function's directory name and valid only while
//     its stamp is the same (pciStamp: on the kernel's own sysfs the inode
//     number its listing gives, elsewhere one stat of that directory showing
//     the same device, inode and change time): a function removed and added
//     again (hot-plug, a rescan, an SR-IOV VF re-created) gets a new sysfs
//     node, hence a new inode;
//   - the parsed /proc/cpuinfo (model name, vendor, logical and physical
//     core counts, the CPU features, the hypervisor flag), valid only while
//     sys/devices/system/cpu/online and .../present read the same (CPU
//     hot-plug rewrites them) and one stat of /proc/cpuinfo shows the same
//     file;
//   - the DMI identification files and /sys/hypervisor read from the
//     running kernel's own sysfs (kernelConstantDirs), or their absence;
//   - the listing of the running kernel's /dev (or a directory below it)
//     on a tmpfs or ramfs, valid only while one stat of the directory
//     shows the same device, inode, size and times (listingStamp).
//
// Everything else is read by every detection: the PCI directory listing, a
// function's driver link, numa_node and current link, memory figures, and
// every tool's output. Nothing is remembered for an injected fs.FS (tests),
// for a tree whose stat gives no inode, or for a cpuinfo without both
// witness files. Only successful readings are remembered: a read that failed
// for any reason but absence is tried again next time.

// MaxMemoSysroots bounds the memo: a host process detects "/" and perhaps a
// few test trees; the least recently used sysroot is dropped beyond that.
const MaxMemoSysroots = 16

// Paths of the CPU hot-plug witnesses (Documentation/ABI/testing/
// sysfs-devices-system-cpu: cpu lists such as "0-223").
const (
	PathCPUOnline  = "sys/devices/system/cpu/online"
	PathCPUPresent = "sys/devices/system/cpu/present"
)

// fileStamp identifies one instance of a file or directory: a different
// file at the same path, or the same one changed, stamps differently.
type fileStamp struct {
	// listed: ino is the inode number of a kernel sysfs entry as its
	// directory listing gave it (pciStamp), nothing else is set.
	listed   bool
	dev, ino uint64
	size     int64
	mtime    syscall.Timespec
	ctime    syscall.Timespec
}

func stampOf(st *syscall.Stat_t) fileStamp {
	mtime, ctime := statTimes(st)
	return fileStamp{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: mtime, ctime: ctime}
}

// sysrootMemo is what is remembered about one sysroot.
type sysrootMemo struct {
	mu   sync.Mutex
	root fileStamp // the sysroot directory: a tree re-created at the same path starts afresh
	used uint64    // last use, for dropping the least recently used sysroot
	pci  map[string]pciFacts
	cpu  *cpuFacts
	// constants are files of the kernel's sysfs set once at boot
	// (isKernelConstant), by path and cap: their bytes, or their absence.
	constants map[fileKey]constantFile
	// listings are directories of /dev by path (listingStamp).
	listings map[string]listingFacts
	// held are the sysroot's directory descriptors its detections share
	// (held_linux.go).
	held heldDirs
}

// listingFacts is a directory listing and the stamp of the directory
// taken before it was read.
type listingFacts struct {
	stamp   fileStamp
	entries []fs.DirEntry
}

// pciFacts are the unchangeable attributes of one PCI function directory.
type pciFacts struct {
	stamp  fileStamp
	vendor int

	haveDetails bool // device, class and subsystem ids below were read
	device      int
	deviceRead  bool
	class       int
	subVendor   int
	subDevice   int

	haveMaxLink bool // max_link_speed and max_link_width were read
	maxSpeed    float64
	maxWidth    int
}

// CPUInfo is what /proc/cpuinfo says about the host (parsed by the CPU
// backend; the memo keeps it across detections).
type CPUInfo struct {
	Name     string
	Vendor   string
	Logical  int // "processor" entries
	Physical int // sum of "cpu cores" over distinct "physical id"s; 0 when not reported
	// HypervisorFlag: a "flags" line lists "hypervisor" (x86 CPUID leaf 1
	// ECX bit 31), for the environment backend.
	HypervisorFlag bool
	// Features are the first CPU's "flags" (x86) or "Features" (arm64)
	// that are in registry.CPUFeature's vocabulary, sorted; nil when
	// neither line is present. Shared with the memo: not to be modified.
	Features []registry.CPUFeature
}

// cpuFacts is a parsed /proc/cpuinfo and what it was valid for.
type cpuFacts struct {
	witness string // contents of cpu/online and cpu/present
	stamp   fileStamp
	info    CPUInfo
}

var memos = struct {
	sync.Mutex
	bySysroot map[string]*sysrootMemo
	clock     uint64
}{bySysroot: map[string]*sysrootMemo{}}

// memoEnabled turns the memo off for tests that compare answers without it.
var memoEnabled atomic.Bool

func init() { memoEnabled.Store(true) }

// memoFor returns the memo of the sysroot whose directory stat is st, or nil
// when there can be none (memo off, no inode, unresolvable path).
func memoFor(sysroot string, st fs.FileInfo) *sysrootMemo {
	if !memoSupported || !memoEnabled.Load() {
		return nil
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || sys.Ino == 0 {
		return nil
	}
	key, err := filepath.Abs(sysroot)
	if err != nil {
		return nil
	}
	stamp := stampOf(sys)
	stamp.mtime, stamp.ctime, stamp.size = syscall.Timespec{}, syscall.Timespec{}, 0 // entries come and go in a live root
	memos.Lock()
	defer memos.Unlock()
	memos.clock++
	if sm, ok := memos.bySysroot[key]; ok && sm.root == stamp {
		sm.used = memos.clock
		return sm
	}
	if _, ok := memos.bySysroot[key]; !ok && len(memos.bySysroot) >= MaxMemoSysroots {
		dropLeastRecentlyUsed()
	}
	sm := &sysrootMemo{root: stamp, used: memos.clock, pci: map[string]pciFacts{}}
	memos.bySysroot[key] = sm
	return sm
}

// dropLeastRecentlyUsed forgets one sysroot; memos is locked.
func dropLeastRecentlyUsed() {
	var oldest string
	var at uint64
	for k, sm := range memos.bySysroot {
		if oldest == "" || sm.used < at {
			oldest, at = k, sm.used
		}
	}
	delete(memos.bySysroot, oldest)
}

// ForgetAllMemos empties the memo (tests).
func ForgetAllMemos() {
	memos.Lock()
	defer memos.Unlock()
	memos.bySysroot = map[string]*sysrootMemo{}
}

// HasMemo reports whether the view remembers across detections (tests).
func (m *Machine) HasMemo() bool { return m.memo != nil }

// SetMemoEnabled turns the memo on or off (tests that compare answers
// without it).
func SetMemoEnabled(on bool) { memoEnabled.Store(on) }

// statStamp stats name under the machine's sysroot (links followed) and
// stamps it; ok is false without a memo, on any error, or for a file of
// another type than want (syscall.S_IFDIR, syscall.S_IFREG).
func (m *Machine) statStamp(name string, want uint32) (fileStamp, bool) {
	if m.memo == nil || m.root == "" {
		return fileStamp{}, false
	}
	fi, err := m.stat(name)
	if err != nil {
		return fileStamp{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	if uint32(st.Mode)&syscall.S_IFMT != want || st.Ino == 0 {
		return fileStamp{}, false
	}
	return stampOf(st), true
}

// pciStamp stamps the PCI function whose entry in the listing of
// sys/bus/pci/devices is e. On the running kernel's own sysfs the entry's
// inode number is enough, and costs no system call: kernfs numbers its
// nodes from a cyclic allocator, with a generation in the upper 32 bits
// where ino_t is 64-bit (fs/kernfs/dir.c kernfs_new_node, idr_alloc_cyclic;
// include/linux/kernfs.h kernfs_ino), so a function removed and added again
// (its link re-created) lists under another number until reboot. Elsewhere
// (a fixture tree, where a filesystem may reuse a freed inode at once) the
// directory's stat is the stamp, as before.
func (m *Machine) pciStamp(e fs.DirEntry, dir string) (fileStamp, bool) {
	if m.memo == nil {
		return fileStamp{}, false
	}
	if le, ok := e.(interface{ Ino() uint64 }); ok && le.Ino() != 0 && onKernelSysfs(m.src) {
		return fileStamp{listed: true, ino: le.Ino()}, true
	}
	return m.statStamp(dir, syscall.S_IFDIR)
}

// pciRemembered returns the facts remembered for the function directory
// addr when they were taken from the directory stamped now.
func (m *Machine) pciRemembered(addr string, now fileStamp) (pciFacts, bool) {
	sm := m.memo
	sm.mu.Lock()
	defer sm.mu.Unlock()
	f, ok := sm.pci[addr]
	if !ok || f.stamp != now {
		return pciFacts{}, false
	}
	return f, true
}

// pciRememberedIf is pciRemembered when the directory was stamped.
func (m *Machine) pciRememberedIf(stamped bool, addr string, now fileStamp) (pciFacts, bool) {
	if !stamped {
		return pciFacts{}, false
	}
	return m.pciRemembered(addr, now)
}

// rememberPCI stores what a detection read of the function directory addr,
// stamped before the reading. A concurrent detection may have stored an
// entry for the same stamp: what either read is merged; an entry of another
// stamp is replaced (the next detection's stat decides which is current).
func (m *Machine) rememberPCI(addr string, f pciFacts) {
	sm := m.memo
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if old, ok := sm.pci[addr]; ok && old.stamp == f.stamp && old.vendor == f.vendor {
		if !f.haveDetails && old.haveDetails {
			f.haveDetails, f.device, f.deviceRead, f.class, f.subVendor, f.subDevice =
				true, old.device, old.deviceRead, old.class, old.subVendor, old.subDevice
		}
		if !f.haveMaxLink && old.haveMaxLink {
			f.haveMaxLink, f.maxSpeed, f.maxWidth = true, old.maxSpeed, old.maxWidth
		}
	}
	sm.pci[addr] = f
}

// stableReadErr reports whether a read that ended with err may be
// remembered: it succeeded, or the file is absent (a function directory
// does not grow attributes while it exists). Any other failure (EIO, a
// signal, memory) may be transient and is not remembered.
func stableReadErr(err error) bool {
	return err == nil || errors.Is(err, fs.ErrNotExist)
}

// CPUWitness reads what must stay the same for a remembered cpuinfo to
// hold: both CPU hot-plug lists and a stat of /proc/cpuinfo (a regular
// file: a FIFO there is never remembered, and reading it reports why).
func (m *Machine) CPUWitness() (witness string, stamp fileStamp, ok bool) {
	if m.memo == nil {
		return "", fileStamp{}, false
	}
	online, err1 := m.ReadFile(PathCPUOnline)
	present, err2 := m.ReadFile(PathCPUPresent)
	if err1 != nil || err2 != nil || len(online) == 0 || len(present) == 0 {
		return "", fileStamp{}, false
	}
	stamp, ok = m.statStamp(PathCPUInfo, syscall.S_IFREG)
	if !ok {
		return "", fileStamp{}, false
	}
	return string(online) + "\x00" + string(present), stamp, true
}

// CPURemembered returns the cpuinfo parsed under the same witness.
func (m *Machine) CPURemembered(witness string, stamp fileStamp) (CPUInfo, bool) {
	sm := m.memo
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if sm.cpu == nil || sm.cpu.witness != witness || sm.cpu.stamp != stamp {
		return CPUInfo{}, false
	}
	return sm.cpu.info, true
}

// RememberCPU keeps info as the cpuinfo parsed under witness and stamp
// (CPURemembered returns it).
func (m *Machine) RememberCPU(witness string, stamp fileStamp, info CPUInfo) {
	sm := m.memo
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.cpu = &cpuFacts{witness: witness, stamp: stamp, info: info}
}

// kernelConstantDirs hold attributes the kernel sets once at boot and never
// changes: the DMI identification strings (drivers/firmware/dmi-id.c, built
// in: CONFIG_DMIID is a bool) and Xen's /sys/hypervisor (type and uuid,
// drivers/xen/sys-hypervisor.c, built in as well). Read from the running
// kernel's own sysfs (a fixture tree or snapshot never), a value or an
// absence holds for the life of the process; a process does not outlive
// its kernel.
var kernelConstantDirs = []string{PathDMI + "/", "sys/hypervisor/"}

// isKernelConstant reports whether name is a file of kernelConstantDirs
// (directly in it: no subdirectory, such as dmi/id/power/).
func isKernelConstant(name string) bool {
	for _, dir := range kernelConstantDirs {
		if rest, ok := strings.CutPrefix(name, dir); ok && rest != "" && !strings.Contains(rest, "/") {
			return true
		}
	}
	return false
}

// constantRemembered returns what an earlier detection read of the kernel
// constant name.
func (m *Machine) constantRemembered(name string, limit int, head bool) ([]byte, error, bool) {
	sm := m.memo
	sm.mu.Lock()
	defer sm.mu.Unlock()
	f, ok := sm.constants[fileKey{name, limit, head}]
	return f.data, f.err, ok
}

// constantFile is a kernel constant's bytes, or the error (absence) reading
// it gave.
type constantFile struct {
	data []byte
	err  error
}

// rememberConstant keeps a kernel constant's reading (data is the caller's
// own copy) or its absence.
func (m *Machine) rememberConstant(name string, limit int, head bool, data []byte, err error) {
	sm := m.memo
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if sm.constants == nil {
		sm.constants = map[fileKey]constantFile{}
	}
	if err == nil && data == nil {
		data = []byte{}
	}
	sm.constants[fileKey{name, limit, head}] = constantFile{data, err}
}

// listingSettle is how long before a listing its directory must have last
// changed for the listing to be remembered. The kernel stamps a change
// with its coarse clock (current_time: one tick, 1-10 ms): a change made
// in the same tick as the one the stat saw, after the listing was read,
// would leave the times as they were. A directory that changed a second
// or more before the listing gets a later time from any change after it
// (git's "racy clean" rule, Documentation/technical/racy-git.adoc,
// https://github.com/git/git).
const listingSettle = time.Second

// listingStamp stamps the directory name before it is listed, when its
// listing may be remembered: a directory of the running kernel's /dev
// (listed by the NVIDIA and Neuron backends for their device nodes: a
// hundred entries or more, the costliest listing of a detection without
// tools). Its entries change only when the directory's stat does: on a
// tmpfs or ramfs (listingOnMemoryFS; devtmpfs is one of them) every entry
// created, removed or renamed sets its modification and change times, and
// on tmpfs its size. Elsewhere, and for every other directory, ok is false.
func (m *Machine) listingStamp(name string) (fileStamp, bool) {
	if m.memo == nil || (name != PathDev && !strings.HasPrefix(name, PathDev+"/")) || !onKernelSysfs(m.src) {
		return fileStamp{}, false
	}
	return m.statStamp(name, syscall.S_IFDIR)
}

// now is the clock settledStamp is asked with (tests move it on).
var now = time.Now

// settledStamp reports whether the directory stamped last changed at least
// listingSettle before now.
func settledStamp(stamp fileStamp, now time.Time) bool {
	limit := now.Add(-listingSettle)
	return time.Unix(stamp.mtime.Unix()).Before(limit) && time.Unix(stamp.ctime.Unix()).Before(limit)
}

// listingRemembered returns the listing of name read under the stamp now.
func (m *Machine) listingRemembered(name string, now fileStamp) ([]fs.DirEntry, bool) {
	sm := m.memo
	sm.mu.Lock()
	defer sm.mu.Unlock()
	l, ok := sm.listings[name]
	if !ok || l.stamp != now {
		return nil, false
	}
	return l.entries, true
}

// rememberListing keeps the listing of name read after the directory was
// stamped (the entries are never changed: readers get copies).
func (m *Machine) rememberListing(name string, stamp fileStamp, entries []fs.DirEntry) {
	sm := m.memo
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if sm.listings == nil {
		sm.listings = map[string]listingFacts{}
	}
	sm.listings[name] = listingFacts{stamp: stamp, entries: entries}
}
