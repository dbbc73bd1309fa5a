package intel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

func TestGaudiParseHLSMI(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     []hlSMIRow
		wantErrs int
	}{
		{name: "two devices", in: "0, HL-225, 0000:33:00.0, 98304, 97536, 1.11.0-e6eb0fd, U0\n1, HL-225, 0000:34:00.0, 98304, 98304, 1.11.0-e6eb0fd, U1\n",
			want: []hlSMIRow{
				{Index: 0, Name: "HL-225", BusID: "0000:33:00.0", MemoryMiB: 98304, MemoryFreeMiB: 97536, DriverVersion: "1.11.0-e6eb0fd", UUID: "U0"},
				{Index: 1, Name: "HL-225", BusID: "0000:34:00.0", MemoryMiB: 98304, MemoryFreeMiB: 98304, DriverVersion: "1.11.0-e6eb0fd", UUID: "U1"}}},
		{name: "placeholders are no value", in: "0, HL-325L, 0000:19:00.0, 131072, N/A, [Not Supported], N/A",
			want: []hlSMIRow{{Index: 0, Name: "HL-325L", BusID: "0000:19:00.0", MemoryMiB: 131072, MemoryFreeMiB: -1}}},
		{name: "units left in", in: "0, HL-225, 0000:33:00.0, 98304 MiB, 97536 MiB, 1.11.0, U",
			want: []hlSMIRow{{Index: 0, Name: "HL-225", BusID: "0000:33:00.0", MemoryMiB: 98304, MemoryFreeMiB: 97536, DriverVersion: "1.11.0", UUID: "U"}}},
		{name: "wrong column count", in: "0, HL-225, 0000:33:00.0, 98304", wantErrs: 1},
		{name: "bad index", in: "x, HL-225, 0000:33:00.0, 98304, 1, d, u", wantErrs: 1},
		// An absurd figure is left out (and reported by the backend); the row stays.
		{name: "absurd memory", in: "0, HL-225, 0000:33:00.0, 99999999999999, 99999999999999999999, d, u",
			want: []hlSMIRow{{Index: 0, Name: "HL-225", BusID: "0000:33:00.0", MemoryMiB: -1, MemoryFreeMiB: -1, DriverVersion: "d", UUID: "u",
				Absurd: []machine.AbsurdValue{{What: "0000:33:00.0 memory.total", Raw: "99999999999999"}, {What: "0000:33:00.0 memory.free", Raw: "99999999999999999999"}}}}},
		{name: "negative memory", in: "0, HL-225, 0000:33:00.0, -5, 1, d, u",
			want: []hlSMIRow{{Index: 0, Name: "HL-225", BusID: "0000:33:00.0", MemoryMiB: -1, MemoryFreeMiB: 1, DriverVersion: "d", UUID: "u",
				Absurd: []machine.AbsurdValue{{What: "0000:33:00.0 memory.total", Raw: "-5"}}}}},
		{name: "not a number", in: "0, HL-225, 0000:33:00.0, lots, 1, d, u", wantErrs: 1},
		{name: "repeated index keeps the first", in: "0, A, 0000:33:00.0, 1, 1, d, u\n0, B, 0000:34:00.0, 1, 1, d, u",
			want:     []hlSMIRow{{Index: 0, Name: "A", BusID: "0000:33:00.0", MemoryMiB: 1, MemoryFreeMiB: 1, DriverVersion: "d", UUID: "u"}},
			wantErrs: 1},
		{name: "empty", in: "\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, errs := ParseHLSMI([]byte(tt.in))
			assert.Equal(t, tt.want, rows)
			assert.Len(t, errs, tt.wantErrs)
		})
	}
}

func TestGaudiGenFromName(t *testing.T) {
	for name, want := range map[string]string{
		"HL-225": "gaudi2", "HL-225B": "gaudi2", "HL-288": "gaudi2", "hl-325-gaudi3": "gaudi3",
		"HL-325L": "gaudi3", "HL-338": "gaudi3", "HL-205": "gaudi", "Gaudi2 card": "gaudi2",
	} {
		g := gaudiGenFromName(name)
		require.NotNil(t, g, name)
		assert.Equal(t, want, g.Arch, name)
	}
	assert.Nil(t, gaudiGenFromName("Goya HL-100"))
}

func FuzzGaudiParseHLSMI(f *testing.F) {
	f.Add([]byte("0, HL-225, 0000:33:00.0, 98304, 97536, 1.11.0-e6eb0fd, 01P0\n"))
	f.Add([]byte("0, HL-325L, 0000:19:00.0, 131072, N/A, [Not Supported], N/A"))
	f.Add([]byte("0, a, b, c\n,,,,,,\n1,,,,,,\n"))
	f.Add([]byte("\x00\xff, \x1b[31m, 0000:33:00.0, 1 MiB, 0, d, u"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rows, _ := ParseHLSMI(in)
		require.LessOrEqual(t, len(rows), maxHLSMIRows)
		seen := map[int]bool{}
		for _, r := range rows {
			require.False(t, seen[r.Index], "index %d twice", r.Index)
			seen[r.Index] = true
			require.GreaterOrEqual(t, r.MemoryMiB, int64(-1))
			require.LessOrEqual(t, r.MemoryMiB, int64(1<<30))
			require.GreaterOrEqual(t, r.MemoryFreeMiB, int64(-1))
			require.Equal(t, machine.CleanText(r.Name), r.Name)
		}
		devs := gaudiFromHLSMI(rows, nil)
		for _, d := range devs {
			require.GreaterOrEqual(t, d.MemoryBytes, int64(0))
			if d.MemoryFreeBytes != nil && d.MemoryBytes > 0 {
				require.LessOrEqual(t, *d.MemoryFreeBytes, d.MemoryBytes)
			}
		}
	})
}

// The Habana ids come from the part table: every id the habanalabs driver
// and hl-thunk name maps to its generation.
func TestGaudiPCIGenFromRecords(t *testing.T) {
	assert.Equal(t, map[int]*gaudiGen{
		0x1000: &gaudi1, 0x1001: &gaudi1, 0x1010: &gaudi1, 0x1011: &gaudi1,
		0x1020: &gaudi2, 0x1021: &gaudi2,
		0x1060: &gaudi3, 0x1062: &gaudi3, 0x1063: &gaudi3,
	}, gaudiPCIGen)
}
