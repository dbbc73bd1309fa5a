//go:build linux && cgo

package amdsmi

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The structs declared in amdsmi_cgo.go hold each member read where the
// declarations of every version read put it, and hand the library at least
// as many bytes as it writes. The figures were worked out from these
// sources (offsets by ctypes from the padded declarations, or bindgen's
// layout checks):
//
//   - 24.7: include/amd_smi/amdsmi.h of https://github.com/ROCm/amdsmi at
//     0ceca28f4139dced5e9b5739a3f393780d7add48, and ROCm 6.3.3's (24.7.1)
//     py-interface/amdsmi/amdsmi_wrapper.py of
//     https://github.com/ml-energy/amdsmi at
//     5aa2a4834a7fb59b4ac3bdec9853ebbed70aa2d6;
//   - 25.3.0 (ROCm 6.4.0): that file at
//     c3c378e7f6d694a3bd3c5e928bc69d709f89697f, and
//     amd-smi-wrapper-sys/src/versions/v6_4_0.rs of
//     https://github.com/alumet-dev/amd-smi-wrapper at
//     6dad086064c325aa2f17b1a83588fb333f1a7cb1;
//   - 25.4.2 (ROCm 6.4.1): that file at
//     a645e6f4c9fcb856a939626e1a865eebc1605fc7;
//   - 25.5.1 (ROCm 6.4.2): that file at
//     e4a639aaa84519ff0dabd01f1878061ee1205a87 (6.4.3 and 6.4.4 the same),
//     and v6_4_2.rs of alumet-dev/amd-smi-wrapper at
//     a9cb32a6c0254431ffd4dab75385e1626f059201;
//   - 26.2.1: projects/amdsmi/include/amd_smi/amdsmi.h of
//     https://github.com/ROCm/rocm-systems at
//     a881068735de99de46183f9a0a37ef0ba5f89de6 (sizeof 904, the largest 26.x).
func TestAsicInfoLayoutMatchesHeaders(t *testing.T) {
	for _, c := range []struct {
		name                           string
		v                              Version
		marketName, vendorID, deviceID uintptr
		gfx, headerSize                uintptr
	}{
		{"24.7", Version{Year: 24, Major: 7}, 0, 256, 328, 384, 456},
		{"25.3.0", Version{Major: 25, Minor: 3}, 0, 256, 520, 800, 896},
		{"25.4.2", Version{Major: 25, Minor: 4, Release: 2}, 0, 256, 520, 800, 896},
		{"25.5.1", Version{Major: 25, Minor: 5, Release: 1}, 0, 256, 520, 800, 896},
		{"26.2.1", Version{Major: 26, Minor: 2, Release: 1}, 0, 256, 520, 800, 904},
	} {
		l := asicLayout(c.v)
		assert.Equal(t, c.marketName, l.offsets["market_name"], c.name)
		assert.Equal(t, c.vendorID, l.offsets["vendor_id"], c.name)
		assert.Equal(t, c.deviceID, l.offsets["device_id"], c.name)
		assert.Equal(t, c.gfx, l.offsets["target_graphics_version"], c.name)
		assert.GreaterOrEqual(t, l.size, c.headerSize, "%s: the buffer holds all the library writes", c.name)
	}
}

// amdsmi_version_t of 24.x and 25.x is {year, major, minor, release,
// build}: 24 bytes, the build pointer at 16 (bindgen's checks in v6_3_0.rs
// and v6_4_0.rs, at a9cb32a6c0254431ffd4dab75385e1626f059201 and
// 6dad086064c325aa2f17b1a83588fb333f1a7cb1, above); 26.x's {major, minor,
// release, build} has its pointer at 16 too, which decodeVersion relies on.
func TestVersionLayoutMatchesHeaders(t *testing.T) {
	l := versionLayout()
	assert.Equal(t, map[string]uintptr{"year": 0, "major": 4, "minor": 8, "release": 12, "build": 16}, l.offsets)
	assert.Equal(t, uintptr(24), l.size)
}
