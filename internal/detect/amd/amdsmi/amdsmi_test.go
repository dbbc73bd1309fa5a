//go:build linux && cgo

package amdsmi_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd/amdsmi"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd/amdsmi/amdsmitest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vendorlib/vendorlibtest"
)

var ctxFor = vendorlibtest.Context

// callDeadline bounds a test's load of, or call into, its fake library,
// which answers in milliseconds: the deadline only stops a broken test.
// It was 5 s, which a clean-clone CI run on a loaded 2-core machine
// exceeded loading one (TestReadProcesses: "context deadline exceeded",
// 2026-11-29). The tests of a hung call bound the caller's wait with
// their own, shorter deadline (AssertHungBounded).
const callDeadline = 30 * time.Second

// mi300x8 is the fake machine of the mi300x-8 fixture's rocm-smi output.
func mi300x8(t *testing.T) amdsmitest.Machine {
	out, err := exec.Command(filepath.Join(detecttest.MachineDir(t, "mi300x-8"), "bin", "rocm-smi"), amd.ROCmSMIArgs...).Output()
	require.NoError(t, err)
	return amdsmitest.FromRocmSMI(t, out)
}

// The fake library answers the mi300x-8 fixture's rocm-smi figures, read
// back through the same path as ROCm's library: eight processors in socket
// order, their bus, name, VRAM and NUMA node, and every pair XGMI at one hop
// and weight 15. A 25.x library (ROCm 6.4: the 256-byte vendor_name and
// asic_serial that move device_id and target_graphics_version, 24.x's
// version struct and link types), whether or not it writes the year, and a
// 26.x library (ROCm 7: also a version without year and amdsmi_link_type_t
// link types) are read with their own layouts and give the same figures.
func TestReadMI300X8(t *testing.T) {
	for _, c := range []struct {
		flags   []string
		version amdsmi.Version
		text    string
	}{
		{nil, amdsmi.Version{Year: 24, Major: 7}, "24.7.0.0"},
		{[]string{amdsmitest.V25}, amdsmi.Version{Major: 25, Minor: 3}, "25.3.0"},
		{[]string{amdsmitest.V25, "-DFAKE_V25_NO_YEAR", "-DFAKE_V25_MINOR=5", "-DFAKE_V25_RELEASE=1"},
			amdsmi.Version{Major: 25, Minor: 5, Release: 1}, "25.5.1"},
		{[]string{amdsmitest.V26}, amdsmi.Version{Major: 26, Minor: 5}, "26.5.0"},
	} {
		lib, err := amdsmi.Open(ctxFor(t, callDeadline), amdsmitest.Build(t, mi300x8(t), c.flags...))
		require.NoError(t, err, c.text)
		assert.Equal(t, c.version, lib.Version())
		assert.Equal(t, c.text, lib.Version().String())
		s, err := lib.Read(ctxFor(t, callDeadline))
		require.NoError(t, err, c.text)
		require.Len(t, s.Processors, 8, c.text)
		p := s.Processors[5]
		assert.Equal(t, 5, p.Index, c.text)
		assert.Equal(t, "0000:a5:00.0", p.BusID, c.text)
		assert.Equal(t, "AMD Instinct MI300X OAM", p.MarketName, c.text)
		assert.Equal(t, uint32(0x1002), p.VendorID, c.text)
		require.NotNil(t, p.VRAMTotal, c.text)
		assert.Equal(t, uint64(206141652992), *p.VRAMTotal, c.text)
		require.NotNil(t, p.VRAMUsed, c.text)
		assert.Equal(t, uint64(297242624), *p.VRAMUsed, c.text)
		require.NotNil(t, p.NUMANode, c.text)
		assert.Equal(t, 1, *p.NUMANode, c.text)
		assert.Zero(t, p.TargetGfxVersion, "%s: not in the capture: not supported", c.text)
		assert.Empty(t, p.ComputePartition, c.text)
		require.Len(t, s.Links, 28, c.text)
		assert.Equal(t, amdsmi.Link{Type: amdsmi.IOLinkXGMI, Hops: 1, Weight: 15}, s.Links[[2]int{2, 7}], c.text)
		assert.Empty(t, s.Refused, "%s: not supported is not a refusal", c.text)
	}
}

// A GPU in CPX mode is one handle per compute partition, at the GPU's bus
// with the partition number as function (mi300x-8-cpx: 63 KFD partition
// nodes), each with the GPU's partition modes and gfx target. A 25.x
// library, of each 25 minor read, and a 26.x library, of any minor, give
// the same at the offsets of their amdsmi_asic_info_t (the 24.x offsets
// would read them inside vendor_name: zero).
func TestReadPartitions(t *testing.T) {
	m := amdsmitest.FromSysfs(t, filepath.Join(detecttest.MachineDir(t, "mi300x-8-cpx"), "root"))
	for version, flags := range map[string][]string{
		"24.7.0.0": nil,
		"25.3.0":   {amdsmitest.V25},
		"25.4.2":   {amdsmitest.V25, "-DFAKE_V25_MINOR=4", "-DFAKE_V25_RELEASE=2"},
		"25.5.1":   {amdsmitest.V25, "-DFAKE_V25_MINOR=5", "-DFAKE_V25_RELEASE=1", "-DFAKE_V25_NO_YEAR"},
		"26.0.0":   {amdsmitest.V26, "-DFAKE_V26_MINOR=0"},
		"26.2.0":   {amdsmitest.V26, "-DFAKE_V26_MINOR=2"},
		"26.5.0":   {amdsmitest.V26, "-DFAKE_V26_MINOR=5"},
	} {
		lib, err := amdsmi.Open(ctxFor(t, callDeadline), amdsmitest.Build(t, m, flags...))
		require.NoError(t, err, version)
		assert.Equal(t, version, lib.Version().String())
		s, err := lib.Read(ctxFor(t, callDeadline))
		require.NoError(t, err, version)
		require.Len(t, s.Processors, 63, version)
		p := s.Processors[3]
		assert.Equal(t, "0000:05:00.3", p.BusID, version)
		assert.Equal(t, "CPX", p.ComputePartition, version)
		assert.Equal(t, "NPS1", p.MemoryPartition, version)
		assert.Equal(t, uint64(942), p.TargetGfxVersion, version)
		assert.Equal(t, uint32(0x74a1), p.DeviceID, version)
		assert.NotEmpty(t, p.MarketName, version)
		assert.Empty(t, s.Links, version)
	}
}

// A 24.6 library (ROCm 6.2) is read, without target_graphics_version, which
// its amdsmi_asic_info_t does not have.
func TestRead24Dot6(t *testing.T) {
	m := amdsmitest.FromSysfs(t, filepath.Join(detecttest.MachineDir(t, "mi300x-8-cpx"), "root"))
	lib, err := amdsmi.Open(ctxFor(t, callDeadline), amdsmitest.Build(t, m, "-DFAKE_MAJOR=6"))
	require.NoError(t, err)
	s, err := lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	assert.Zero(t, s.Processors[0].TargetGfxVersion)
}

// A library of an unknown year or major is refused (after amdsmi_init,
// before any struct is read), and so is one of 24.5 (ROCm 6.1), whose
// market_name is 64 bytes, not 256, one of a 25 minor whose declarations
// were not at hand (25.0 to 25.2, 25.6), one of year 25 with another major
// (no header's), and a 27.x library, whose struct has no year either; the
// error names the version and what is read.
func TestUnknownVersionRefused(t *testing.T) {
	for _, v := range []struct{ flags, version string }{
		{amdsmitest.V25 + " -DFAKE_V25_MINOR=0", "25.0.0"}, {amdsmitest.V25 + " -DFAKE_V25_MINOR=2", "25.2.0"},
		{amdsmitest.V25 + " -DFAKE_V25_MINOR=6 -DFAKE_V25_NO_YEAR", "25.6.0"},
		{"-DFAKE_YEAR=25 -DFAKE_MAJOR=0", "25.0.0.0"}, {"-DFAKE_YEAR=25 -DFAKE_MAJOR=3", "25.3.0.0"},
		{"-DFAKE_YEAR=24 -DFAKE_MAJOR=5", "24.5.0.0"}, {"-DFAKE_YEAR=23 -DFAKE_MAJOR=4", "23.4.0.0"},
		{amdsmitest.V26 + " -DFAKE_V26_MAJOR=27", "27.5.0"},
	} {
		mark := filepath.Join(t.TempDir(), "shut-down")
		flags := append(strings.Fields(v.flags), `-DFAKE_SHUTDOWN_MARK="`+mark+`"`)
		_, err := amdsmi.Open(ctxFor(t, callDeadline), amdsmitest.Build(t, mi300x8(t), flags...))
		require.ErrorIs(t, err, amdsmi.ErrUnsupported, v.flags)
		assert.Contains(t, err.Error(), "is version "+v.version+"; this build reads 24.6, 24.7, 25.3, 25.4, 25.5, 26.x")
		assert.FileExists(t, mark, "the refused library was shut down again")
	}
	// A supported one stays initialised.
	mark := filepath.Join(t.TempDir(), "shut-down")
	_, err := amdsmi.Open(ctxFor(t, callDeadline), amdsmitest.Build(t, mi300x8(t), `-DFAKE_SHUTDOWN_MARK="`+mark+`"`))
	require.NoError(t, err)
	assert.NoFileExists(t, mark)
}

// amdsmi_init failing is an error naming the status, remembered for the
// process.
func TestInitFailure(t *testing.T) {
	path := amdsmitest.Build(t, mi300x8(t), "-DFAKE_INIT_RETURN=34")
	_, err := amdsmi.Open(ctxFor(t, callDeadline), path)
	var ce *amdsmi.CallError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, amdsmi.StatusDriverNotLoaded, ce.Code)
	assert.Equal(t, "amdsmi_init", ce.Call)
	_, again := amdsmi.Open(ctxFor(t, callDeadline), path)
	assert.Equal(t, err, again, "the failure is remembered")
}

// No library at the path, and a library lacking the entry points (not AMD
// SMI at all), are errors, not crashes.
func TestOpenMissingOrForeign(t *testing.T) {
	vendorlibtest.AssertOpenMissingOrForeign(t, open, "libamd_smi.so", amdsmi.ErrUnsupported)
}

// open is amdsmi.Open's error.
func open(ctx context.Context, path string) error {
	_, err := amdsmi.Open(ctx, path)
	return err
}

// An amdsmi_init that never returns costs Open its deadline; the library is
// then hung for the process and later Opens fail at once.
func TestInitHangBounded(t *testing.T) {
	path := amdsmitest.Build(t, mi300x8(t), "-DFAKE_HANG_INIT")
	vendorlibtest.AssertHungBounded(t, func(ctx context.Context) error { return open(ctx, path) }, amdsmi.ErrHung, time.Second)
}

// A read that never returns (a call hung in the driver) costs Read its
// deadline; every later Read fails at once.
func TestReadHangBounded(t *testing.T) {
	lib, err := amdsmi.Open(ctxFor(t, callDeadline), amdsmitest.Build(t, mi300x8(t), "-DFAKE_HANG"))
	require.NoError(t, err)
	vendorlibtest.AssertHungBounded(t, func(ctx context.Context) error {
		_, err := lib.Read(ctx)
		return err
	}, amdsmi.ErrHung, time.Second)
}
