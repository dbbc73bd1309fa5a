package machine

import (
	"strconv"
	"strings"
)

// PCIAddress is the address of one PCI function: domain (segment), bus,
// device and function. Device is 5 bits and function 3 bits of the devfn
// byte (PCI_SLOT and PCI_FUNC in include/uapi/linux/pci.h of the Linux
// kernel, https://github.com/torvalds/linux).
type PCIAddress struct {
	Domain   uint32
	Bus      uint8
	Device   uint8 // 0-31
	Function uint8 // 0-7
}

// ParsePCIAddress reads a PCI address in the forms the tools and the kernel
// print: "dddd:bb:dd.f" with a domain of 4 to 8 hex digits (sysfs writes
// "%04x", drivers/pci/probe.c pci_setup_device, so an Intel VMD domain has
// 5: "10000:e1:00.0"; nvidia-smi pads to 8: "00000000:18:00.0") or
// "bb:dd.f" with no domain (domain 0). Case and surrounding space do not
// matter. ok is false for anything else, a 1-3 digit domain included (no
// tool writes one).
func ParsePCIAddress(s string) (a PCIAddress, ok bool) {
	s = strings.TrimSpace(s)
	dom, rest := "0000", s
	if len(s) > 7 {
		var found bool
		if dom, rest, found = strings.Cut(s, ":"); !found || len(dom) < 4 || len(dom) > 8 {
			return PCIAddress{}, false
		}
	}
	if len(rest) != 7 || rest[2] != ':' || rest[5] != '.' {
		return PCIAddress{}, false
	}
	d, err1 := strconv.ParseUint(dom, 16, 32)
	bus, err2 := strconv.ParseUint(rest[0:2], 16, 8)
	dev, err3 := strconv.ParseUint(rest[3:5], 16, 8)
	fn, err4 := strconv.ParseUint(rest[6:7], 16, 8)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || dev > 31 || fn > 7 {
		return PCIAddress{}, false
	}
	return PCIAddress{Domain: uint32(d), Bus: uint8(bus), Device: uint8(dev), Function: uint8(fn)}, true
}

// String is the address as sysfs names the function: "0000:18:00.0",
// lower-case hex, the domain at least 4 digits.
func (a PCIAddress) String() string {
	var buf [16]byte
	return string(a.appendTo(buf[:0]))
}

// appendTo appends what String returns to dst, as
// fmt.Sprintf("%04x:%02x:%02x.%x") writes it, without fmt: a detection
// normalises every PCI function's address (docs/performance.md, "Eighth
// pass").
func (a PCIAddress) appendTo(dst []byte) []byte {
	dst = appendHexPadded(dst, uint64(a.Domain), 4)
	dst = append(dst, ':')
	dst = appendHexPadded(dst, uint64(a.Bus), 2)
	dst = append(dst, ':')
	dst = appendHexPadded(dst, uint64(a.Device), 2)
	dst = append(dst, '.')
	return strconv.AppendUint(dst, uint64(a.Function), 16)
}

// appendHexPadded appends v in lower-case hex, padded with zeros to width.
func appendHexPadded(dst []byte, v uint64, width int) []byte {
	for n := hexDigits(v); n < width; n++ {
		dst = append(dst, '0')
	}
	return strconv.AppendUint(dst, v, 16)
}

// hexDigits is how many hex digits v has (1 for 0).
func hexDigits(v uint64) int {
	n := 1
	for v >= 16 {
		v >>= 4
		n++
	}
	return n
}
