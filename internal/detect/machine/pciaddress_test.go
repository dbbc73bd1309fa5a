package machine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestParsePCIAddress covers the forms the tools print (sysfs, nvidia-smi's
// 8-digit domain, lspci without a domain, a VMD domain) and what is not an
// address.
func TestParsePCIAddress(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want PCIAddress
	}{
		{"0000:18:00.0", PCIAddress{Bus: 0x18}},
		{"00000000:18:00.0", PCIAddress{Bus: 0x18}},
		{"18:00.0", PCIAddress{Bus: 0x18}},
		{" 0000:1C:1f.7\n", PCIAddress{Bus: 0x1c, Device: 0x1f, Function: 7}},
		{"10000:e1:00.0", PCIAddress{Domain: 0x10000, Bus: 0xe1}},
		{"abcdef01:00:02.1", PCIAddress{Domain: 0xabcdef01, Device: 2, Function: 1}},
	} {
		got, ok := ParsePCIAddress(tc.in)
		assert.True(t, ok, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, in := range []string{
		"", "not-a-bus-id", "N/A",
		"0:18:00.0",          // a 1-3 digit domain is no tool's form
		"000000000:18:00.0",  // 9-digit domain: wider than 32 bits
		"0000:18:20.0",       // device 32: 5 bits
		"0000:18:00.8",       // function 8: 3 bits
		"0000:18:00",         // no function
		"0000:18:0.0",        // one-digit device
		"0000:g8:00.0",       // not hex
		"0000:18:00.0:extra", // trailing text
	} {
		_, ok := ParsePCIAddress(in)
		assert.False(t, ok, in)
	}
}

// TestPCIAddressString: String writes the sysfs name, which parses back to
// the same address.
func TestPCIAddressString(t *testing.T) {
	for _, a := range []PCIAddress{
		{},
		{Bus: 0x18},
		{Domain: 0x10000, Bus: 0xe1, Device: 31, Function: 7},
		{Domain: 0xffffffff, Bus: 0xff},
	} {
		s := a.String()
		assert.True(t, isSysfsPCIAddress(s), s)
		back, ok := ParsePCIAddress(s)
		assert.True(t, ok, s)
		assert.Equal(t, a, back, s)
	}
	assert.Equal(t, "0000:18:00.0", PCIAddress{Bus: 0x18}.String())
	assert.Equal(t, "10000:e1:1f.7", PCIAddress{Domain: 0x10000, Bus: 0xe1, Device: 31, Function: 7}.String())
}

// String writes what fmt's "%04x:%02x:%02x.%x" writes (its format before
// the eighth pass of docs/performance.md), for every bus, device and
// function and domains of 1 to 8 digits; NormalizeBusID of either form of
// an address is that string.
func TestPCIAddressStringIsTheSysfsFormat(t *testing.T) {
	for _, dom := range []uint32{0, 1, 0xf, 0x10, 0xfff, 0x1000, 0xffff, 0x10000, 0xabcde, 0xffffffff} {
		for bus := range 256 {
			for dev := range 32 {
				for fn := range 8 {
					a := PCIAddress{Domain: dom, Bus: uint8(bus), Device: uint8(dev), Function: uint8(fn)}
					want := fmt.Sprintf("%04x:%02x:%02x.%x", a.Domain, a.Bus, a.Device, a.Function)
					if got := a.String(); got != want {
						t.Fatalf("%+v: String %q, want %q", a, got, want)
					}
					if got := NormalizeBusID(want); got != want {
						t.Fatalf("NormalizeBusID(%q) = %q", want, got)
					}
					if got := NormalizeBusID(fmt.Sprintf("%08X:%02X:%02X.%x", a.Domain, a.Bus, a.Device, a.Function)); got != want {
						t.Fatalf("NormalizeBusID of nvidia-smi's form = %q, want %q", got, want)
					}
				}
			}
		}
	}
}
