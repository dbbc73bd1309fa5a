package machine

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Paths read from the machine, named once.
const (
	PathPCIDevices = "sys/bus/pci/devices"
	PathDRM        = "sys/class/drm"
	PathAccel      = "sys/class/accel"
	PathNodes      = "sys/devices/system/node"
	PathCPUInfo    = "proc/cpuinfo"
	PathMemInfo    = "proc/meminfo"
	PathNVProc     = "proc/driver/nvidia"
	PathInfiniBand = "sys/class/infiniband"
	PathDMI        = "sys/devices/virtual/dmi/id"
	PathDev        = "dev"
)

// PCI vendor ids (PCI-SIG assignments as listed in pci.ids,
// https://pci-ids.ucw.cz/read/PC/).
const (
	VendorNVIDIA = 0x10de
	VendorAMD    = 0x1002
	VendorAMDCPU = 0x1022 // AMD's second id: XDNA NPUs
	VendorIntel  = 0x8086
	VendorHabana = 0x1da3
	VendorAmazon = 0x1d0f
	VendorGoogle = 0x1ae0
)

// PCIDevice is one function under /sys/bus/pci/devices.
type PCIDevice struct {
	Address   string // "0000:18:00.0"
	Vendor    int
	Device    int
	Class     int // 0x030200
	NUMANode  *int
	Driver    string
	SubVendor int
	SubDevice int
}

// ClassBase returns the two-digit base class (0x03 display, 0x12 accelerator).
func (p PCIDevice) ClassBase() int { return p.Class >> 16 }

// PCIID returns "vvvv:dddd".
func (p PCIDevice) PCIID() string { return Hex4(p.Vendor) + ":" + Hex4(p.Device) }

// Hex4 formats v as four lower-case hex digits, as PCI ids are written.
func Hex4(v int) string {
	s := strconv.FormatInt(int64(v), 16)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

// PCIDevices lists the PCI functions of the machine, optionally only those of
// one vendor (vendor 0 = all), in address order. Unreadable entries are skipped.
// The tree is read once per Machine (scanPCI); each caller gets its own copy.
func (m *Machine) PCIDevices(vendor int) []PCIDevice {
	return m.PCIDevicesWhere(vendor, nil)
}

// PCIDevicesWhere is PCIDevices keeping only the functions keep accepts
// (nil keeps all). keep sees a function's ids, class and driver but not its
// NUMANode, which is read only for the functions kept: a server lists dozens
// of functions of the CPU's vendor (bridges, DMA engines, the chipset) that
// no backend keeps, and numa_node is read afresh every detection
// (docs/performance.md, "Fourth pass").
func (m *Machine) PCIDevicesWhere(vendor int, keep func(PCIDevice) bool) []PCIDevice {
	var out []PCIDevice
	for _, fn := range m.scanPCI().functions {
		if vendor != 0 && fn.vendor != vendor {
			continue
		}
		p, _ := fn.base(m)
		if keep != nil && !keep(p) {
			continue
		}
		if n := fn.numa(m); n != nil { // callers own what they get, pointers included
			v := *n
			p.NUMANode = &v
		}
		out = append(out, p)
	}
	return out
}

// pciScan is one reading of /sys/bus/pci/devices: the directory and every
// function's vendor, read on first use. The other attributes of a function
// are read when a caller first asks for a function of its vendor: most
// functions of a server (NICs, bridges, NVMe) are no backend's business.
type pciScan struct {
	entries   int                     // directory entries, PCI functions or not (hasPCITree)
	functions []*pciFunction          // functions with a readable vendor, in address order
	byDir     map[string]*pciFunction // by sysfs directory name
}

// pciFunction is one function of the scan; details are read once.
type pciFunction struct {
	dir        string // "sys/bus/pci/devices/0000:18:00.0"
	vendor     int
	once       sync.Once
	p          PCIDevice // NUMANode aside (numaNode)
	deviceRead bool      // its "device" file was readable

	numaOnce sync.Once
	numaNode *int

	// With a memo (memo.go): the stamp of the function's directory, taken
	// before its attributes were read, and what is remembered for it.
	stamped bool
	facts   pciFacts

	linkOnce sync.Once
	maxSpeed float64
	maxWidth int
}

// details reads the function's attributes on first use (concurrent callers
// wait for that one reading), its NUMA node included.
func (fn *pciFunction) details(m *Machine) (PCIDevice, bool) {
	p, deviceRead := fn.base(m)
	p.NUMANode = fn.numa(m)
	return p, deviceRead
}

// base reads the function's ids, class and driver on first use.
func (fn *pciFunction) base(m *Machine) (PCIDevice, bool) {
	fn.once.Do(func() {
		p := &fn.p
		if fn.facts.haveDetails {
			p.Device, fn.deviceRead, p.Class = fn.facts.device, fn.facts.deviceRead, fn.facts.class
			p.SubVendor, p.SubDevice = fn.facts.subVendor, fn.facts.subDevice
		} else {
			fn.readIDs(m)
		}
		// Mutable: a driver binds and unbinds.
		p.Driver = m.LinkBase(path.Join(fn.dir, "driver"))
	})
	return fn.p, fn.deviceRead
}

// numa reads the function's NUMA node on first use (mutable: numa_node can
// be rewritten, so it is never remembered).
func (fn *pciFunction) numa(m *Machine) *int {
	fn.numaOnce.Do(func() { fn.numaNode = m.numaNode(fn.dir) })
	return fn.numaNode
}

// readIDs reads the function's device, class and subsystem ids, and
// remembers them when every reading is one that may be (memo.go).
func (fn *pciFunction) readIDs(m *Machine) {
	p := &fn.p
	stable := true
	// An unreadable or garbled id stays 0 (unknown): ReadInt's value then
	// means nothing.
	ids := []*int{&p.Device, &p.Class, &p.SubVendor, &p.SubDevice}
	for i, name := range []string{"device", "class", "subsystem_vendor", "subsystem_device"} {
		v, err := m.ReadInt(path.Join(fn.dir, name))
		stable = stable && stableReadErr(err)
		if err == nil {
			*ids[i] = int(v)
		}
		if i == 0 {
			fn.deviceRead = err == nil
		}
	}
	if fn.stamped && stable {
		f := fn.facts
		f.haveDetails, f.device, f.deviceRead, f.class, f.subVendor, f.subDevice =
			true, p.Device, fn.deviceRead, p.Class, p.SubVendor, p.SubDevice
		m.rememberPCI(path.Base(fn.dir), f)
	}
}

// maxLink returns the function's maximum PCIe link, remembered with its
// ids when the scan stamped its directory.
func (fn *pciFunction) maxLink(m *Machine) (float64, int) {
	fn.linkOnce.Do(func() {
		if fn.facts.haveMaxLink {
			fn.maxSpeed, fn.maxWidth = fn.facts.maxSpeed, fn.facts.maxWidth
			return
		}
		var stable bool
		fn.maxSpeed, fn.maxWidth, stable = m.readLinkStable(fn.dir, "max")
		if fn.stamped && stable {
			f := fn.facts
			f.haveMaxLink, f.maxSpeed, f.maxWidth = true, fn.maxSpeed, fn.maxWidth
			m.rememberPCI(path.Base(fn.dir), f)
		}
	})
	return fn.maxSpeed, fn.maxWidth
}

// ScannedFunction returns the function whose sysfs directory is named dir, as the
// scan read it; ok is false when the scan has none (no such directory, or
// its vendor unreadable) and the caller reads sysfs itself.
func (m *Machine) ScannedFunction(dir string) (p PCIDevice, deviceRead, ok bool) {
	fn, ok := m.scanPCI().byDir[dir]
	if !ok {
		return PCIDevice{}, false, false
	}
	p, deviceRead = fn.details(m)
	return p, deviceRead, true
}

// maxLinkOf returns the maximum link of the function named addr: from the
// scan (remembered across detections) when it has the function, else read.
func (m *Machine) maxLinkOf(addr, dir string) (float64, int) {
	if fn, ok := m.scanPCI().byDir[addr]; ok {
		return fn.maxLink(m)
	}
	return m.readLink(dir, "max")
}

// scannedVendor is the vendor the scan read for the function named dir.
func (m *Machine) scannedVendor(dir string) (vendor int, ok bool) {
	fn, ok := m.scanPCI().byDir[dir]
	if !ok {
		return 0, false
	}
	return fn.vendor, true
}

// scanPCI reads the PCI tree on first use; backends run concurrently and
// share the one reading. Every detection builds a new Machine, so nothing
// read here outlives a detection.
func (m *Machine) scanPCI() *pciScan {
	m.pciScanOnce.Do(func() { m.pci = readPCITree(m) })
	return &m.pci
}

func readPCITree(m *Machine) pciScan {
	ents := m.sharedListing(PathPCIDevices) // read only
	s := pciScan{entries: len(ents), byDir: map[string]*pciFunction{}}
	for _, e := range ents {
		addr := e.Name()
		if !isSysfsPCIAddress(addr) {
			continue // the kernel names these "dddd:bb:dd.f"; anything else is not a function
		}
		dir := path.Join(PathPCIDevices, addr)
		fn := &pciFunction{dir: dir}
		fn.facts.stamp, fn.stamped = m.pciStamp(e, dir)
		if f, ok := m.pciRememberedIf(fn.stamped, addr, fn.facts.stamp); ok {
			fn.facts, fn.vendor = f, f.vendor
		} else {
			v, err := m.ReadInt(path.Join(dir, "vendor"))
			if err != nil {
				continue
			}
			fn.vendor, fn.facts.vendor = int(v), int(v)
			if fn.stamped {
				m.rememberPCI(addr, fn.facts)
			}
		}
		fn.p = PCIDevice{Address: NormalizeBusID(addr), Vendor: fn.vendor}
		s.byDir[addr] = fn
		s.functions = append(s.functions, fn)
	}
	return s
}

// isSysfsPCIAddress reports whether s is a PCI function name as the kernel
// writes it under /sys/bus/pci/devices (drivers/pci/probe.c pci_setup_device:
// "%04x:%02x:%02x.%d"; the domain may be wider than 4 hex digits, e.g. VMD
// domains such as "10000:00:00.0").
func isSysfsPCIAddress(s string) bool {
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || len(dom) < 4 || len(dom) > 8 || !isLowerHex(dom) || len(rest) != 7 {
		return false
	}
	return isLowerHex(rest[0:2]) && rest[2] == ':' && isLowerHex(rest[3:5]) && rest[5] == '.' &&
		rest[6] >= '0' && rest[6] <= '7'
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// numaNode reads a PCI function's numa_node; -1 (no NUMA) and garbage are unknown.
func (m *Machine) numaNode(dir string) *int {
	n, err := m.ReadInt(path.Join(dir, "numa_node"))
	if err != nil || n < 0 || n > 1<<16 {
		return nil
	}
	v := int(n)
	return &v
}

// readLink parses a PCIe link: speed ("32.0 GT/s PCIe", "16 GT/s") and width.
func (m *Machine) readLink(dir, which string) (float64, int) {
	speed, width, _ := m.readLinkStable(dir, which)
	return speed, width
}

// readLinkStable is readLink that also says whether both readings may be
// remembered (stableReadErr).
func (m *Machine) readLinkStable(dir, which string) (speed float64, width int, stable bool) {
	s, err1 := m.ReadString(path.Join(dir, which+"_link_speed"))
	if err1 == nil {
		speed = ParseGTs(s)
	}
	w, err2 := m.ReadInt(path.Join(dir, which+"_link_width"))
	if err2 == nil && w > 0 && w <= 32 {
		width = int(w)
	}
	return speed, width, stableReadErr(err1) && stableReadErr(err2)
}

// ParseGTs reads a PCIe link speed such as "32.0 GT/s PCIe" or "2.5 GT/s";
// "Unknown" and garbage give 0.
func ParseGTs(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v <= 0 || v > 256 {
		return 0
	}
	return v
}

// PCIeBandwidthGBs is the one-direction bandwidth of a link: GT/s × lanes ×
// encoding efficiency / 8 (8b/10b up to 5 GT/s, 128b/130b from 8 GT/s; PCIe 6
// FLIT encoding is close to 1 and counted as 242/256).
func PCIeBandwidthGBs(gts float64, width int) float64 {
	if gts <= 0 || width <= 0 {
		return 0
	}
	enc := 8.0 / 10
	switch {
	case gts >= 64:
		enc = 242.0 / 256
	case gts >= 8:
		enc = 128.0 / 130
	}
	v := gts * float64(width) * enc / 8
	return float64(int(v*100+0.5)) / 100
}

// EnrichPCI fills, for every device with a PCI bus id, what sysfs knows about
// its function: NUMA node, PCIe link (current and max) and the PCI id.
func EnrichPCI(m *Machine, reg *registry.Registry) {
	for i := range reg.Devices {
		d := &reg.Devices[i]
		if d.PCIBusID == "" {
			continue
		}
		dir := path.Join(PathPCIDevices, d.PCIBusID)
		p, deviceRead, scanned := m.ScannedFunction(d.PCIBusID)
		if !scanned && !m.Exists(dir) {
			continue
		}
		if d.NUMANode == nil {
			n := p.NUMANode
			if !scanned {
				n = m.numaNode(dir)
			} else if n != nil {
				v := *n // the device owns its node, as if read here
				n = &v
			}
			if n != nil {
				d.NUMANode = n
				d.SetSource("numa_node", "sysfs")
			}
		}
		if d.PCIe == nil {
			cs, cw := m.readLink(dir, "current")
			ms, mw := m.maxLinkOf(d.PCIBusID, dir)
			if cs > 0 || ms > 0 {
				d.PCIe = &registry.PCIe{CurrentSpeedGTs: cs, CurrentWidth: cw, MaxSpeedGTs: ms, MaxWidth: mw,
					BandwidthGBs: PCIeBandwidthGBs(ms, mw)}
				d.SetSource("pcie", "sysfs")
			}
		}
		if d.PCIID == "" && scanned {
			if deviceRead {
				d.PCIID = p.PCIID()
			}
		} else if d.PCIID == "" {
			v, err1 := m.ReadInt(path.Join(dir, "vendor"))
			dv, err2 := m.ReadInt(path.Join(dir, "device"))
			if err1 == nil && err2 == nil {
				d.PCIID = Hex4(int(v)) + ":" + Hex4(int(dv))
			}
		}
	}
}

// VendorAt returns the PCI vendor id of the function at bus as sysfs shows
// it; false when sysfs has no readable function at that address.
func (m *Machine) VendorAt(bus string) (int, bool) {
	if !isSysfsPCIAddress(bus) {
		return 0, false
	}
	if v, ok := m.scannedVendor(bus); ok {
		if v <= 0 || v > 0xffff {
			return 0, false
		}
		return v, true
	}
	v, err := m.ReadInt(path.Join(PathPCIDevices, bus, "vendor"))
	if err != nil || v <= 0 || v > 0xffff {
		return 0, false
	}
	return int(v), true
}

// hasPCITree reports whether the machine shows any PCI function at all (a
// container without /sys shows none, and then nothing can contradict a tool).
func (m *Machine) hasPCITree() bool { return m.scanPCI().entries > 0 }

// toolBusConflict checks a PCI address a vendor tool reported for a device
// of one of vendors. Tools have been seen naming other vendors' functions (a
// buggy or hostile xpu-smi listing an AMD GPU's address), and a device made
// at such an address would absorb the real device in mergeByBusID. It
// returns a conflicting_sources warning when sysfs shows another vendor's
// function there or, with strict, when the machine has a PCI tree but no
// readable function at that address; nil when the address may stand.
func (m *Machine) toolBusConflict(backend, tool, bus string, strict bool, vendors ...int) *registry.Warning {
	if bus == "" || !m.hasPCITree() {
		return nil
	}
	v, ok := m.VendorAt(bus)
	var why string
	switch {
	case ok && !slices.Contains(vendors, v):
		why = "sysfs shows a function of PCI vendor " + Hex4(v) + " there"
	case !ok && strict:
		why = "sysfs shows no readable PCI function there"
	default:
		return nil
	}
	return &registry.Warning{Backend: backend, Code: registry.WarnConflictingSources, Tool: tool,
		Message: tool + " reports a device at " + bus + " but " + why + "; the row is ignored"}
}

// RowsAtVendor keeps the tool rows whose PCI address (bus) may hold a device
// of vendors, reporting each other row (toolBusConflict): one filter for
// every backend that takes bus ids from a vendor tool.
func RowsAtVendor[T any](m *Machine, f *Findings, backend, tool string, strict bool, rows []T, bus func(T) string, vendors ...int) []T {
	out := rows[:0:0]
	for _, r := range rows {
		if w := m.toolBusConflict(backend, tool, bus(r), strict, vendors...); w != nil {
			f.AddWarning(w)
			continue
		}
		out = append(out, r)
	}
	return out
}

// PCIFunctionsIn lists the functions of vendor whose device id is a key of
// ids, in address order: a vendor id also covers functions of other kinds
// (network, storage, audio), so backends keep only the ids they know.
func PCIFunctionsIn[V any](m *Machine, vendor int, ids map[int]V) []PCIDevice {
	return m.PCIDevicesWhere(vendor, func(p PCIDevice) bool { _, ok := ids[p.Device]; return ok })
}

// NormalizeBusID returns a PCI address in sysfs form: domain of at least 4
// digits, lower case ("00000000:18:00.0" from nvidia-smi becomes
// "0000:18:00.0"), the String of ParsePCIAddress. The kernel prints the
// domain with "%04x" (drivers/pci/probe.c), so a wider domain (Intel VMD:
// "10000:e1:00.0") keeps its significant digits; only leading zeros beyond
// 4 digits go. An input that is not a PCI address is returned cleaned
// (trimmed, lower case) but otherwise unchanged.
func NormalizeBusID(s string) string {
	if a, ok := ParsePCIAddress(s); ok {
		var buf [16]byte
		if b := a.appendTo(buf[:0]); string(b) != s {
			return string(b)
		}
		return s // already in sysfs form, as every sysfs name is: no copy
	}
	return strings.ToLower(strings.TrimSpace(s))
}
