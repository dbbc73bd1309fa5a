package machine

import (
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Issue is a problem found by a pure parser, turned into a warning by the
// backend that knows its name and path.
type Issue struct {
	Code    string
	Message string
}

// MaxHostMemory bounds a believable MemTotal: 1 PiB is far above any single
// Linux host sold today, so a larger figure is garbage, not a
const MaxHostMemory = int64(1) << 50

// AbsurdError is a value a parser rejected as absurd (MaxHostMemory).
type AbsurdError struct{ Msg string }

// Error returns the message.
func (e AbsurdError) Error() string { return e.Msg }

// IsAbsurd reports whether err is an AbsurdError.
func IsAbsurd(err error) bool { _, ok := err.(AbsurdError); return ok }

// NoValueText reports the "no value" texts vendor tools print.
func NoValueText(s string) bool {
	t := strings.ToLower(strings.Trim(strings.TrimSpace(s), "[]"))
	switch t {
	case "", "n/a", "na", "not supported", "unsupported", "unknown", "none":
		return true
	}
	return strings.HasPrefix(t, "not supported") || strings.HasSuffix(t, "not supported on the given system")
}

// DRMCard is one /sys/class/drm/cardN entry and the PCI function behind it.
type DRMCard struct {
	N      int
	Dir    string // "sys/class/drm/cardN/device"
	BusID  string
	Driver string
	Vendor int
	Device int
	Class  int
}

// ListDRMCards returns the primary DRM nodes (cardN, numeric N only: not
// "card0-DP-1" connectors nor renderD nodes), sorted by N numerically so
// card10 comes after card2. Cards without a PCI function are skipped.
func ListDRMCards(m *Machine) []DRMCard {
	var out []DRMCard
	for _, e := range m.ReadDir(PathDRM) {
		name := e.Name()
		if !strings.HasPrefix(name, "card") {
			continue
		}
		n, err := strconv.Atoi(name[len("card"):])
		if err != nil || n < 0 {
			continue
		}
		dir := path.Join(PathDRM, name, "device")
		bus := path.Base(m.ReadLink(dir))
		if bus == "." || bus == "/" || !strings.Contains(bus, ":") {
			continue
		}
		c := DRMCard{N: n, Dir: dir, BusID: NormalizeBusID(bus), Driver: m.LinkBase(path.Join(dir, "driver"))}
		if v, err := m.ReadInt(path.Join(dir, "vendor")); err == nil {
			c.Vendor = int(v)
		}
		if v, err := m.ReadInt(path.Join(dir, "device")); err == nil {
			c.Device = int(v)
		}
		if v, err := m.ReadInt(path.Join(dir, "class")); err == nil {
			c.Class = int(v)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out
}

// AccelNodesByBus maps PCI addresses to their DRM accel node names
// ("0000:33:00.0" -> "accel0") through /sys/class/accel/accelN/device
// (Linux drivers/accel/drm_accel.c, https://github.com/torvalds/linux).
func AccelNodesByBus(m *Machine) map[string]string {
	out := map[string]string{}
	for _, e := range m.ReadDir(PathAccel) {
		name := e.Name()
		if !IsAccelNodeName(name) {
			continue
		}
		bus := m.LinkBase(path.Join(PathAccel, name, "device"))
		if bus == "" {
			continue
		}
		out[NormalizeBusID(bus)] = name
	}
	return out
}

// IsAccelNodeName reports whether name is "accel" followed by digits.
func IsAccelNodeName(name string) bool {
	n, ok := strings.CutPrefix(name, "accel")
	if !ok || n == "" {
		return false
	}
	for _, r := range n {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// PCINPUSpec describes an NPU family found on PCI with a DRM accel node.
type PCINPUSpec struct {
	Backend     string
	Kind        registry.Kind
	Vendor      string
	PCIVendor   int
	Driver      string
	Names       map[int]string // known device ids
	NotNPU      map[int]bool   // functions of the vendor that are never NPUs
	DefaultName string
	Quant       func(deviceID int) []string
}

// isNPU reports whether the function is one of the family's NPUs: a known
// id, or bound to the family's driver, and not a function of the vendor
// that is never an NPU.
func (spec PCINPUSpec) isNPU(p PCIDevice) bool {
	_, known := spec.Names[p.Device]
	return !spec.NotNPU[p.Device] && (known || p.Driver == spec.Driver)
}

// DetectPCINPUs finds the NPUs of one family: a PCI function of the vendor
// that has a known id or is bound to the family's driver. An NPU is available
// when its driver is bound and its /dev/accel node exists; otherwise it is
// listed as unavailable with a device_unusable warning saying why, and the
// same why as its UnavailableReason.
func DetectPCINPUs(m *Machine, spec PCINPUSpec) Findings {
	var f Findings
	var accel map[string]string // read when the first NPU is found: most machines have none
	for _, p := range m.PCIDevicesWhere(spec.PCIVendor, spec.isNPU) {
		d := registry.Device{ID: p.Address, Kind: spec.Kind, Vendor: spec.Vendor, PCIBusID: p.Address,
			Name: spec.DefaultName, MemoryShared: true, Quantizations: spec.Quant(p.Device)}
		if n, ok := spec.Names[p.Device]; ok {
			d.Name = n
		}
		d.SetSource("name", "pci-id")
		if accel == nil {
			accel = AccelNodesByBus(m)
		}
		node := accel[p.Address]
		switch {
		case p.Driver != spec.Driver:
			d.UnavailableReason = "driver " + spec.Driver + " not bound"
			f.Warn(spec.Backend, registry.WarnDeviceUnusable, "%s (%s) at %s: %s", d.Name, p.PCIID(), p.Address, d.UnavailableReason)
		case node == "" || !m.Exists(path.Join("dev", "accel", node)):
			d.UnavailableReason = "no /dev/accel node"
			f.Warn(spec.Backend, registry.WarnDeviceUnusable, "%s at %s: %s", d.Name, p.Address, d.UnavailableReason)
		default:
			d.Available = true
		}
		f.Devices = append(f.Devices, d)
	}
	return f
}
