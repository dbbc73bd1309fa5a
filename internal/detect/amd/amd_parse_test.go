package amd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRocmParseSMIJSON(t *testing.T) {
	// Shapes from rocm_smi.py formatJson/formatMatrixToJSON: string values,
	// upper-case hex bus ids, older "Card series" spelling, placeholders.
	out := "\n" + `{"card1": {"PCI Bus": "0000:C5:00.0", "VRAM Total Memory (B)": "206141652992", ` +
		`"VRAM Total Used Memory (B)": "297242624", "Card series": "AMD Instinct MI300X OAM", ` +
		`"(Topology) Numa Node": "1"}, ` +
		`"card0": {"PCI Bus": "0000:05:00.0", "VRAM Total Memory (B)": "N/A", "Card Series": "AMD Instinct MI300X OAM", "GFX Version": "gfx942"}, ` +
		`"system": {"(Topology) Weight between DRM devices 0 and 1": "15", ` +
		`"(Topology) Hops between DRM devices 0 and 1": "1", ` +
		`"(Topology) Link type between DRM devices 0 and 1": "XGMI", ` +
		`"Driver version": "6.7.0"}}` + "\n"
	rep, err := ParseRocmSMIJSON([]byte(out))
	require.NoError(t, err)
	require.Len(t, rep.Cards, 2)
	assert.Equal(t, ROCmSMICard{Index: 0, Name: "AMD Instinct MI300X OAM", BusID: "0000:05:00.0", VRAMUsed: -1,
		NUMANode: -1, GFX: "gfx942"}, rep.Cards[0])
	assert.Equal(t, ROCmSMICard{Index: 1, Name: "AMD Instinct MI300X OAM", BusID: "0000:c5:00.0",
		VRAMTotal: 206141652992, VRAMUsed: 297242624, NUMANode: 1}, rep.Cards[1])
	assert.Equal(t, []rocmSMILink{{A: 0, B: 1, Type: "XGMI", Weight: 15, Hops: 1}}, rep.Links)
}

func TestRocmParseSMIJSONErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"NOT_SUPPORTED: Cannot print JSON/CSV output for concise output",
		"{not json}",
		`{"system": {"Driver version": "6.7.0"}}`,
		`["card0"]`,
	} {
		_, err := ParseRocmSMIJSON([]byte(in))
		assert.Error(t, err, in)
	}
}

func TestRocmParseKFDProperties(t *testing.T) {
	p := ParseKFDProperties("cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\n" +
		"location_id 1280\ndomain 0\nhive_id 17425397297519452489\nbroken\n")
	assert.Equal(t, map[string]int64{"cpu_cores_count": 0, "simd_count": 1216, "gfx_target_version": 90402,
		"location_id": 1280, "domain": 0}, p, "an out-of-range value is dropped, not wrapped")
	assert.Equal(t, "0000:05:00.0", kfdBusID(p))
	assert.Equal(t, "", kfdBusID(map[string]int64{"location_id": 0}))
}

func TestRocmGfxTarget(t *testing.T) {
	tests := map[int64]string{90402: "gfx942", 90010: "gfx90a", 110003: "gfx1103", 100300: "gfx1030",
		0: "", -1: "", 9999999: "", 91600: ""}
	for in, want := range tests {
		assert.Equal(t, want, gfxTarget(in), in)
	}
}

func FuzzRocmParseSMIJSON(f *testing.F) {
	f.Add(`{"card0": {"PCI Bus": "0000:26:00.0", "VRAM Total Memory (B)": "206141652992", "Card Series": "AMD Instinct MI300X OAM"}}`)
	f.Add(`{"card0": {"VRAM Total Memory (B)": "-5", "VRAM Total Used Memory (B)": 99e99}, "system": {"(Topology) Link type between DRM devices 0 and 0": "XGMI"}}`)
	f.Add(`{"card99999999999": {}, "system": {"(Topology) Hops between DRM devices 7 and 2": "1"}}`)
	f.Add(`garbage {"card0": {"PCI Bus": "zz"}} more`)
	f.Fuzz(func(t *testing.T, s string) {
		rep, err := ParseRocmSMIJSON([]byte(s))
		if err != nil {
			return
		}
		assert.LessOrEqual(t, len(rep.Cards), maxRocmDevices)
		for _, c := range rep.Cards {
			assert.GreaterOrEqual(t, c.VRAMTotal, int64(0))
			assert.GreaterOrEqual(t, c.VRAMUsed, int64(-1))
			// Above 1 PiB is absurd (memory.go), never kept.
			assert.LessOrEqual(t, c.VRAMTotal, int64(1)<<50)
			assert.LessOrEqual(t, c.VRAMUsed, int64(1)<<50)
			assert.GreaterOrEqual(t, c.NUMANode, -1)
			assert.GreaterOrEqual(t, c.Index, 0)
		}
		for _, l := range rep.Links {
			assert.Less(t, l.A, l.B)
		}
	})
}

func FuzzRocmParseKFDProperties(f *testing.F) {
	f.Add("cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\nlocation_id 1280\ndomain 0\n")
	f.Add("location_id 99999999\ndomain -3\ngfx_target_version 1\n")
	f.Add("a b c\n\n\t\n")
	f.Fuzz(func(t *testing.T, s string) {
		p := ParseKFDProperties(s)
		if bus := kfdBusID(p); bus != "" {
			assert.Len(t, bus, len("0000:00:00.0"))
		}
		if g := gfxTarget(p["gfx_target_version"]); g != "" {
			assert.Regexp(t, `^gfx[0-9]+[0-9a-f]{2}$`, g)
		}
	})
}

// rocm-smi's "GFX Version" is the decimal digits of major, minor and
// stepping: "gfx9010" is gfx90a (the MI250 capture of
// testdata/machines/mi250-rocm-smi-gfx9010).
func TestSMIGfxTarget(t *testing.T) {
	for in, want := range map[string]string{
		"gfx9010": "gfx90a", "gfx942": "gfx942", "gfx1100": "gfx1100", "gfx1030": "gfx1030",
		"gfx9012": "gfx90c", "gfx1151": "gfx1151", "GFX908": "gfx908", "gfx90a": "gfx90a",
	} {
		got, ok := SMIGfxTarget(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "gfx", "N/A", "gfx9", "gfx9110", "gfx9999", "gfxzz", "gfx-1"} {
		_, ok := SMIGfxTarget(bad)
		assert.False(t, ok, bad)
	}
}
