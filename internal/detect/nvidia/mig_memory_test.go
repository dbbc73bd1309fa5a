package nvidia

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The verbatim `nvidia-smi -q` of an H100 80GB split 3g.40gb + 2g.20gb +
// 2x 1g.10gb (utkuozdemir/nvidia_gpu_exporter capture, see the file's
// header): the slices have 40448, 20096, 9984 and 9984 MiB, not 40, 20, 10
// and 10 GB.
func TestParseNvidiaQueryMIGCapture(t *testing.T) {
	b, err := os.ReadFile("../../../testdata/machines/nvidia-mig/captures/linux-x86_64__nvidia-h100-mig__590.48.01.txt")
	require.NoError(t, err)
	query := captureSection(t, b, "# idle :: query (-q)")
	gpus := parseNvidiaQueryMIG(query)
	require.Len(t, gpus, 1)
	assert.Equal(t, "00000000:00:09.0", gpus[0].BusID)
	assert.Equal(t, map[int]qMIGMemory{
		0: {Total: 40448 << 20, Free: 40423 << 20, GI: 2, CI: 0},
		1: {Total: 20096 << 20, Free: 20080 << 20, GI: 3, CI: 0},
		2: {Total: 9984 << 20, Free: 9976 << 20, GI: 9, CI: 0},
		3: {Total: 9984 << 20, Free: 9976 << 20, GI: 10, CI: 0},
	}, gpus[0].MIG)

	// The same capture's -L lines give the device numbers that -q's Index
	// answers.
	list := ParseNvidiaList(captureSection(t, b, "# capabilities :: list (-L)"))
	require.Len(t, list, 1)
	var devs []int
	for _, m := range list[0].MIG {
		devs = append(devs, m.Device)
	}
	assert.Equal(t, []int{0, 1, 2, 3}, devs)
}

// captureSection is the output of one command in an nvidia_gpu_exporter
// capture: the lines after the section's "# <state> :: <name>" and "# $
// <command>" header lines, up to the next "# ... :: ..." header.
func captureSection(t *testing.T, capture []byte, header string) []byte {
	t.Helper()
	lines := bytes.SplitAfter(capture, []byte("\n"))
	for i, l := range lines {
		if string(bytes.TrimSpace(l)) != header {
			continue
		}
		var out []byte
		for _, l := range lines[min(i+2, len(lines)):] {
			if bytes.HasPrefix(l, []byte("# ")) && bytes.Contains(l, []byte(" :: ")) {
				break
			}
			out = append(out, l...)
		}
		return out
	}
	t.Fatalf("capture has no section %q", header)
	return nil
}

func TestMIGMemoryOf(t *testing.T) {
	gpus := []qGPU{{BusID: "00000000:00:09.0", MIG: map[int]qMIGMemory{2: {Total: 9984 << 20}}}}
	m, ok := migMemoryOf(gpus, 0, "0000:00:09.0", 2)
	assert.True(t, ok)
	assert.Equal(t, int64(9984)<<20, m.Total)
	_, ok = migMemoryOf(gpus, 0, "", 2)
	assert.True(t, ok, "by position when the bus id is unknown")
	_, ok = migMemoryOf(gpus, 0, "0000:00:0a.0", 2)
	assert.False(t, ok, "another GPU's bus id is not matched by position")
	_, ok = migMemoryOf(gpus, 0, "", 5)
	assert.False(t, ok)
	_, ok = migMemoryOf(nil, 0, "", 0)
	assert.False(t, ok)
}

func TestQMiB(t *testing.T) {
	assert.Equal(t, int64(9984)<<20, qMiB("9984 MiB"))
	for _, v := range []string{"N/A", "", "-5 MiB", "99999999999 MiB", "12 GiB"} {
		assert.Zero(t, qMiB(v), v)
	}
}

func FuzzParseNvidiaQueryMIG(f *testing.F) {
	f.Add([]byte("GPU 00000000:00:09.0\n    MIG Device\n        Index : 0\n        Shared FB Memory Usage\n            Total : 9984 MiB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, g := range parseNvidiaQueryMIG(b) {
			for n, m := range g.MIG {
				if n < 0 || m.Total < 0 || m.Total > maxMIGMiB<<20 || m.Free < 0 || m.Free > maxMIGMiB<<20 {
					t.Fatalf("out of range: %d %+v", n, m)
				}
			}
		}
	})
}
