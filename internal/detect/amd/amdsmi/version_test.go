package amdsmi

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// What amdsmi_get_lib_version writes is told apart by its first word: a
// year (23 to 25) starts the 24.x struct, a major of 26 or more the 26.x
// struct, whose release is then the 24.x struct's minor and whose padding
// (the 24.x release) is not read. A 25.x library (ROCm 6.4) writes the 24.x
// struct with major 25 and year 25, or leaves the year as the caller zeroed
// it; its version is numbered without the year (25.3.0), as amd-smi prints
// it since ROCm 6.4. A year of 25 with another major is no header's.
func TestDecodeVersion(t *testing.T) {
	for _, c := range []struct {
		word [4]uint32
		want Version
	}{
		{[4]uint32{24, 7, 0, 0}, Version{Year: 24, Major: 7}},
		{[4]uint32{24, 6, 1, 2}, Version{Year: 24, Major: 6, Minor: 1, Release: 2}},
		{[4]uint32{25, 25, 3, 0}, Version{Major: 25, Minor: 3}},
		{[4]uint32{25, 25, 4, 2}, Version{Major: 25, Minor: 4, Release: 2}},
		{[4]uint32{0, 25, 5, 1}, Version{Major: 25, Minor: 5, Release: 1}},
		{[4]uint32{25, 3, 0, 0}, Version{Year: 25, Major: 3}},
		{[4]uint32{0, 24, 7, 0}, Version{Major: 24, Minor: 7}},
		{[4]uint32{26, 5, 0, 0xdeadbeef}, Version{Major: 26, Minor: 5}},
		{[4]uint32{26, 2, 1, 7}, Version{Major: 26, Minor: 2, Release: 1}},
		{[4]uint32{27, 0, 0, 0}, Version{Major: 27}},
	} {
		assert.Equal(t, c.want, decodeVersion(c.word), "%v", c.word)
	}
}

// 24.6, 24.7, the 25 minors whose header was read (25.3, 25.4, 25.5: ROCm
// 6.4.0 to 6.4.4) and every 26 minor are read; 23.x, 24.5, the other 25
// minors and 27 are not.
func TestSupportedVersions(t *testing.T) {
	for v, want := range map[Version]bool{
		{Year: 24, Major: 6}: true, {Year: 24, Major: 7, Minor: 1}: true,
		{Major: 25, Minor: 3}: true, {Major: 25, Minor: 4, Release: 2}: true, {Major: 25, Minor: 5, Release: 1}: true,
		{Major: 26}: true, {Major: 26, Minor: 2, Release: 1}: true, {Major: 26, Minor: 5}: true,
		{Year: 24, Major: 5}: false, {Year: 23, Major: 4}: false, {Year: 25, Major: 3}: false,
		{Major: 25}: false, {Major: 25, Minor: 2}: false, {Major: 25, Minor: 6}: false,
		{Major: 27}: false, {Major: 24, Minor: 7}: false,
	} {
		assert.Equal(t, want, v.supported(), "%s", v)
	}
	assert.Equal(t, "24.6, 24.7, 25.3, 25.4, 25.5, 26.x", supportedList())
	assert.Equal(t, "24.7.0.0", Version{Year: 24, Major: 7}.String())
	assert.Equal(t, "25.4.2", Version{Major: 25, Minor: 4, Release: 2}.String())
	assert.Equal(t, "26.2.1", Version{Major: 26, Minor: 2, Release: 1}.String())
	assert.True(t, Version{Major: 26}.hasTargetGfx())
	assert.True(t, Version{Major: 25, Minor: 3}.hasTargetGfx())
	assert.False(t, Version{Year: 24, Major: 6}.hasTargetGfx())
}

// Which amdsmi_asic_info_t and which link-type enum each family reads:
// 25.x has 26.x's 256-byte strings (ROCm 6.4 widened vendor_name and
// asic_serial) but still 24.x's amdsmi_io_link_type_t, which 26.0.0
// replaced by amdsmi_link_type_t.
func TestLayoutsByVersion(t *testing.T) {
	for _, c := range []struct {
		v                    Version
		wideAsic, linkType26 bool
	}{
		{Version{Year: 24, Major: 6}, false, false},
		{Version{Year: 24, Major: 7}, false, false},
		{Version{Major: 25, Minor: 3}, true, false},
		{Version{Major: 25, Minor: 5, Release: 1}, true, false},
		{Version{Major: 26, Minor: 5}, true, true},
	} {
		assert.Equal(t, c.wideAsic, c.v.wideAsicInfo(), "%s", c.v)
		assert.Equal(t, c.linkType26, c.v.answersLinkType26(), "%s", c.v)
	}
}

// A 26.x library answers amdsmi_link_type_t (INTERNAL 0, PCIE 1, XGMI 2,
// NOT_APPLICABLE 3, UNKNOWN 4, NUMA 5, XNUMA 6); only PCIe and XGMI are
// link types of a GPU pair. A 24.x or 25.x answer is amdsmi_io_link_type_t
// and is kept as it is.
func TestLinkTypeByVersion(t *testing.T) {
	v26, v24, v25 := Version{Major: 26, Minor: 5}, Version{Year: 24, Major: 7}, Version{Major: 25, Minor: 3}
	for raw, want := range map[int]IOLinkType{0: IOLinkUndefined, 1: IOLinkPCIe, 2: IOLinkXGMI,
		3: IOLinkUndefined, 4: IOLinkUndefined, 5: IOLinkUndefined, 6: IOLinkUndefined} {
		assert.Equal(t, want, v26.linkType(raw), "26.x amdsmi_link_type_t %d", raw)
	}
	for raw, want := range map[int]IOLinkType{0: IOLinkUndefined, 1: IOLinkPCIe, 2: IOLinkXGMI} {
		assert.Equal(t, want, v24.linkType(raw), "amdsmi_io_link_type_t %d", raw)
		assert.Equal(t, want, v25.linkType(raw), "25.x amdsmi_io_link_type_t %d", raw)
	}
}
