package machine

import (
	"errors"
	"io/fs"
	"strings"
	"sync/atomic"
)

// Inline runs. A host calling the C ABI waits for its detection on its own
// thread, which Go locks to the calling goroutine: each time that goroutine
// blocks (on a backend's outcome, on the detection's flight) the runtime
// hands its P to another thread and back (runtime.stoplockedm,
// startlockedm), futex wake-ups that cost a third of a steady-state
// detection on a machine without tools (docs/performance.md, "Fifth
// pass"). A backend whose reads cannot block for long may therefore run on
// the caller's goroutine itself, one after another; one that is about to do
// anything that can (run a tool, load a vendor library, read a file whose
// text a device driver writes) stops there and is run again from the start
// on a worker goroutine, where Detect's deadline bounds it as before.
//
// What an inline run may do: list directories, stat paths and read links
// anywhere (kernfs and procfs answer those from their own trees, without a
// driver: fs/kernfs/dir.c, fs/proc/generic.c), and read the text of the
// files inlineReadable names, which the kernel's core writes (memory
// figures, CPU and NUMA lists, cgroup limits, the PCI core's attributes,
// the block layer's, DMI). Only when the sysroot's sys/ and proc/ are the
// running kernel's sysfs and procfs (statfs); any other sysroot reads the
// worker way.

// ErrNeedsWorker is the error an inline run's refused read returns; the
// backend's findings are then dropped and it runs again on a worker.
var ErrNeedsWorker = errors.New("not read on the caller's goroutine: the backend runs again on a worker")

// inlineState is a Machine's inline mode: on while backends run inline,
// escaped once the current one was refused something. Inline runs are one
// after another on one goroutine; the atomics keep a goroutine a backend
// started (nvidia's concurrent topo run) race-free.
type inlineState struct {
	on      atomic.Bool
	escaped atomic.Bool
}

// BeginInline switches the view to inline runs and reports whether it did:
// only over the running kernel's sysfs and procfs.
func (m *Machine) BeginInline() bool {
	if !onKernelSysfsAndProcfs(m.src) {
		return false
	}
	m.inline.on.Store(true)
	return true
}

// EndInline switches inline runs off: every read is allowed again.
func (m *Machine) EndInline() { m.inline.on.Store(false) }

// StartInlineBackend clears the escape mark before the next inline run.
func (m *Machine) StartInlineBackend() { m.inline.escaped.Store(false) }

// InlineEscaped reports whether the current inline run was refused
// something: its findings are incomplete and it must run on a worker.
func (m *Machine) InlineEscaped() bool { return m.inline.escaped.Load() }

// refuseInline reports whether an inline run must not do what it asks, and
// marks the run escaped when so.
func (m *Machine) refuseInline(allowed bool) bool {
	if allowed || !m.inline.on.Load() {
		return false
	}
	m.inline.escaped.Store(true)
	return true
}

// inlineRead is nil when an inline run may read the file name; else the
// error the read returns: name's absence, which a stat learns without
// opening it (a driver's procfs file may have an open method of its own),
// or ErrNeedsWorker, the run marked escaped.
func (m *Machine) inlineRead(name string) error {
	if inlineReadable(name) {
		return nil
	}
	if _, err := m.stat(name); err != nil && errors.Is(err, fs.ErrNotExist) {
		return err
	}
	m.refuseInline(false)
	return &fs.PathError{Op: "read", Path: name, Err: ErrNeedsWorker}
}

// inlineReadable reports whether the text of the file name (relative to
// the sysroot) may be read inline: files the kernel's core writes, never a
// driver's attribute. A name not listed is read on a worker.
func inlineReadable(name string) bool {
	switch name {
	case PathMemInfo, PathCPUInfo, "proc/1/cgroup", "proc/self/cgroup",
		// systemd's marker on its tmpfs (systemd's CONTAINER_INTERFACE).
		"run/systemd/container",
		"sys/devices/system/cpu/online", "sys/devices/system/cpu/present", "sys/devices/system/cpu/possible",
		"sys/devices/system/node/online", "sys/devices/system/node/possible",
		"sys/hypervisor/type", "sys/hypervisor/uuid":
		return true
	}
	if rest, ok := strings.CutPrefix(name, PathNodes+"/node"); ok {
		// drivers/base/node.c: a node's CPU list, memory and distances.
		_, file, _ := strings.Cut(rest, "/")
		return file == "cpulist" || file == "meminfo" || file == "distance" || file == "cpumap"
	}
	if rest, ok := strings.CutPrefix(name, pathCgroup+"/"); ok {
		// kernel/cgroup: limits and membership, no driver below.
		return rest != "" && !strings.Contains(rest, "..")
	}
	if rest, ok := strings.CutPrefix(name, PathDMI+"/"); ok {
		// drivers/firmware/dmi-id.c: strings of the firmware's table.
		return rest != "" && !strings.Contains(rest, "/")
	}
	if rest, ok := strings.CutPrefix(name, PathPCIDevices+"/"); ok {
		fn, attr, _ := strings.Cut(rest, "/")
		return fn != "" && pciCoreAttribute[attr]
	}
	if rest, ok := strings.CutPrefix(name, "sys/block/"); ok {
		dev, attr, _ := strings.Cut(rest, "/")
		return dev != "" && blockCoreAttribute[attr]
	}
	return false
}

// pciCoreAttribute are the attributes of a PCI function that the PCI core
// writes from its configuration space (drivers/pci/pci-sysfs.c), not a
// driver bound to it (amdgpu's mem_info_* live in the same directory).
var pciCoreAttribute = map[string]bool{
	"vendor": true, "device": true, "class": true, "subsystem_vendor": true, "subsystem_device": true,
	"revision": true, "numa_node": true, "local_cpulist": true,
	"max_link_speed": true, "max_link_width": true, "current_link_speed": true, "current_link_width": true,
}

// blockCoreAttribute are a block device's attributes the block layer writes
// (block/genhd.c, block/blk-sysfs.c).
var blockCoreAttribute = map[string]bool{
	"size": true, "removable": true, "ro": true, "queue/rotational": true,
}

// inlineTool reports whether an inline run may go on with a tool run: only
// when the tool does not resolve (the run would fail at once as missing).
func (m *Machine) inlineTool(tool string) bool {
	return m.noExec || !m.HasTool(tool)
}
