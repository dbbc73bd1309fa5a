package host

import (
	"context"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Block devices of the machine with a class and a size. No bandwidth is
// given: a per-class constant (the old crate's NVMe 3.5 / SSD 0.55 / HDD
// 0.15 GB/s) is wrong by several times for most real disks (a PCIe 4 NVMe
// drive reads ~7 GB/s, a PCIe 3 one ~3.5), and the contract omits what is
// not known. Class and size are what sysfs states.

// BackendStorage names the storage backend (block devices, above).
const BackendStorage = "storage"

// PathBlock lists the block devices (Linux block/genhd.c).
const PathBlock = "sys/block"

// Storage classes.
const (
	StorageNVMe    = "nvme"
	StorageSSD     = "ssd"
	StorageHDD     = "hdd"
	StorageVirtual = "virtual"
	StorageUnknown = "unknown"
)

// storageSkipPrefixes are block devices that are not disks: loop devices,
// RAM disks, compressed swap, device-mapper and software-RAID volumes (built
// on disks already listed), optical and floppy drives.
var storageSkipPrefixes = []string{"loop", "ram", "zram", "dm-", "md", "sr", "fd"}

// nvmePathDevice matches the per-controller path devices of NVMe multipath
// ("nvme0c1n1"), which duplicate the namespace device.
var nvmePathDevice = regexp.MustCompile(`^nvme\d+c\d+n\d+$`)

// maxStorageDevices bounds the listing (a JBOD may hold hundreds).
const maxStorageDevices = 4096

// Storage is this file's detection source (the orchestrator lists it).
var Storage = machine.Backend{Name: BackendStorage, Detect: DetectStorage}

// DetectStorage lists the machine's block devices (PathBlock) with class and
// size.
func DetectStorage(_ context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	var names []string
	for e := range m.DirEntries(PathBlock) {
		if n := e.Name(); storageIsDisk(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) > maxStorageDevices {
		f.Warn(BackendStorage, registry.WarnAbsurdValue, "%d block devices; only the first %d are listed", len(names), maxStorageDevices)
		names = names[:maxStorageDevices]
	}
	for _, n := range names {
		f.Storage = append(f.Storage, storageDevice(m, n))
	}
	return f
}

// storageIsDisk reports whether a /sys/block entry is a disk worth listing.
func storageIsDisk(name string) bool {
	for _, p := range storageSkipPrefixes {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return name != "" && !nvmePathDevice.MatchString(name)
}

// storageDevice reads one disk: its class and its size (the `size`
// attribute counts 512-byte sectors whatever the logical block size).
func storageDevice(m *machine.Machine, name string) registry.Storage {
	dir := path.Join(PathBlock, name)
	s := registry.Storage{Name: machine.CleanText(name), Class: storageClass(m, name)}
	if sectors, err := m.ReadInt(path.Join(dir, "size")); err == nil && sectors > 0 && sectors < 1<<53 {
		s.SizeBytes = sectors * 512
	}
	return s
}

// storageClass: NVMe by name; virtio-blk (vd*) and Xen (xvd*) disks are
// "virtual" whatever they claim to be (a virtio disk reports rotational 0
// but may sit on anything); otherwise queue/rotational.
func storageClass(m *machine.Machine, name string) string {
	switch {
	case strings.HasPrefix(name, "nvme"):
		return StorageNVMe
	case strings.HasPrefix(name, "vd"), strings.HasPrefix(name, "xvd"):
		return StorageVirtual
	}
	r, err := m.ReadString(path.Join(PathBlock, name, "queue", "rotational"))
	switch {
	case err != nil:
		return StorageUnknown
	case r == "0":
		return StorageSSD
	case r == "1":
		return StorageHDD
	}
	return StorageUnknown
}
