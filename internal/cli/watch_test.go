package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func f64(v float64) *float64 { return &v }

// detectFixture detects a fixture machine as `ai-hwaccel --watch` does
// (uncached, every refresh).
func detectFixture(t *testing.T, name string) func(context.Context) (*registry.Registry, error) {
	dir := detecttest.MachineDir(t, name)
	return func(ctx context.Context) (*registry.Registry, error) {
		return detect.Detect(ctx, detect.Options{Sysroot: filepath.Join(dir, "root"), Path: filepath.Join(dir, "bin"),
			Timeout: 5 * time.Second, LookupEnv: func(string) (string, bool) { return "", false }})
	}
}

func watchOnce(t *testing.T, detectFn func(context.Context) (*registry.Registry, error), count int) string {
	var b bytes.Buffer
	w := Watch{Interval: time.Second, Count: count, Detect: detectFn,
		Sleep: func(context.Context, time.Duration) error { return nil },
		Now:   func() time.Time { return time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) }}
	require.NoError(t, w.Run(context.Background(), &b))
	return b.String()
}

// On the dgx-h100 fixture --watch shows the readings of its nvidia-smi
// (the capture's -q: GPU 0 at 100.89 W of 700 W, 30 C, 0 % busy); the CPU,
// which has none, shows the unknown mark.
func TestWatchShowsTelemetryOnFixture(t *testing.T) {
	out := watchOnce(t, detectFixture(t, "dgx-h100"), 1)
	lines := strings.Split(out, "\n")
	require.Greater(t, len(lines), 4)
	assert.Regexp(t, `^ID +KIND +NAME +MEMORY +FREE +BW +BUS +NUMA +UTIL +POWER +TEMP$`, lines[2])
	assert.Regexp(t, `^cpu:0 .* — +— +—$`, lines[3])
	assert.Regexp(t, `^cuda:0 .*0000:18:00\.0 +0 +0% +101/700 W +30 °C$`, lines[4])
	assert.Regexp(t, `\ncuda:7 .*0000:db:00\.0 +1 +0% +75/700 W +29 °C\n`, out)
}

// A machine whose tools give no readings keeps the table it had: no empty
// UTIL/POWER/TEMP columns.
func TestWatchWithoutTelemetryHasNoColumns(t *testing.T) {
	out := watchOnce(t, detectFixture(t, "jetson-agx-orin"), 1)
	assert.Contains(t, out, "\nID ")
	assert.NotContains(t, out, "UTIL")
	assert.NotContains(t, out, "POWER")

	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, dgxLike(), nil))
	assert.Equal(t, dgxTable, b.String(), "--table is unchanged")
}

// Each refresh shows that refresh's readings; a reading the tool does not
// give is the unknown mark, a power limit without a draw is still shown.
func TestWatchRefreshesTelemetry(t *testing.T) {
	mk := func(util, draw, temp float64) *registry.Registry {
		reg := registry.New()
		reg.Devices = []registry.Device{
			{ID: "cuda:0", Kind: registry.KindCUDA, Available: true, MemoryBytes: 80 << 30,
				Telemetry: &registry.Telemetry{UtilizationPercent: f64(util), PowerDrawWatts: f64(draw),
					PowerLimitWatts: f64(700), TemperatureC: f64(temp)}},
			{ID: "cuda:1", Kind: registry.KindCUDA, Available: true, MemoryBytes: 80 << 30,
				Telemetry: &registry.Telemetry{PowerLimitWatts: f64(450)}},
		}
		return reg
	}
	regs := []*registry.Registry{mk(0, 69.85, 41), mk(100, 631.95, 59)}
	n := 0
	out := watchOnce(t, func(context.Context) (*registry.Registry, error) { n++; return regs[n-1], nil }, 2)
	parts := strings.Split(out, "ai-hwaccel watch: refresh ")
	require.Len(t, parts, 3)
	assert.Regexp(t, `\ncuda:0 .* 0% +70/700 W +41 °C\n`, parts[1])
	assert.Regexp(t, `\ncuda:0 .* 100% +632/700 W +59 °C\n`, parts[2])
	assert.Regexp(t, `\ncuda:1 .* — +—/450 W +—\n`, parts[2])
}

func TestTelemetryCells(t *testing.T) {
	for _, tc := range []struct {
		t                   *registry.Telemetry
		util, power, temper string
	}{
		{nil, "—", "—", "—"},
		{&registry.Telemetry{}, "—", "—", "—"},
		{&registry.Telemetry{UtilizationPercent: f64(37.4), PowerDrawWatts: f64(4), TemperatureC: f64(40)}, "37%", "4 W", "40 °C"},
		{&registry.Telemetry{PowerDrawWatts: f64(0.4), PowerLimitWatts: f64(450)}, "—", "0/450 W", "—"},
	} {
		d := registry.Device{Telemetry: tc.t}
		assert.Equal(t, tc.util, utilCell(d))
		assert.Equal(t, tc.power, powerCell(d))
		assert.Equal(t, tc.temper, tempCell(d))
	}
}

// The header says how the loop ends: with a count, which refresh of how
// many (the loop stops by itself, so "Ctrl-C stops" would be untrue); with
// none, that Ctrl-C stops it.
func TestWatchHeaderSaysHowTheLoopEnds(t *testing.T) {
	reg := func(context.Context) (*registry.Registry, error) { return &registry.Registry{}, nil }
	counted := strings.Split(watchOnce(t, reg, 2), "\n")
	assert.Equal(t, "ai-hwaccel watch: refresh 1 of 2 at 12:00:00, every 1s", counted[0])
	assert.Contains(t, counted, "ai-hwaccel watch: refresh 2 of 2 at 12:00:00, every 1s")

	var b bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	w := Watch{Interval: time.Second, Detect: reg,
		Sleep: func(context.Context, time.Duration) error { cancel(); return context.Canceled },
		Now:   func() time.Time { return time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) }}
	require.NoError(t, w.Run(ctx, &b))
	assert.True(t, strings.HasPrefix(b.String(), "ai-hwaccel watch: refresh 1 at 12:00:00, every 1s (Ctrl-C stops)\n"), b.String())
}
