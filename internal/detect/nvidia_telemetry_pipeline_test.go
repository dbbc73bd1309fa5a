package detect

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func f64(v float64) *float64 { return &v }

// Utilisation, power and temperature come from the one --query-gpu, with
// the values of each fixture's captures (see their READMEs); readings the
// tool prints as [N/A] are absent, and a GPU with none has no telemetry.
func TestFixtureNVIDIATelemetry(t *testing.T) {
	tel := func(u, p, l, c *float64) *registry.Telemetry {
		return &registry.Telemetry{UtilizationPercent: u, PowerDrawWatts: p, PowerLimitWatts: l, TemperatureC: c}
	}
	// dgx-h100: the `nvidia-smi -q` of the 8x H100 SXM capture
	// (thamada/nvidia-smi gls/H100SXMx8_smi.py), GPU by GPU.
	reg := detectHost(t, "dgx-h100", nil)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 8)
	draw := []float64{100.89, 82.81, 85.98, 85.48, 84.94, 85.27, 86.05, 75.09}
	temp := []float64{30, 30, 31, 29, 28, 30, 29, 29}
	for i, g := range gpus {
		assert.Equal(t, tel(f64(0), f64(draw[i]), f64(700), f64(temp[i])), g.Telemetry, g.ID)
		assert.Equal(t, "nvidia-smi", g.Sources["telemetry"], g.ID)
	}

	for _, tc := range []struct {
		host string
		want *registry.Telemetry
	}{
		// MIG mode: nvidia-smi has no whole-GPU utilization ([N/A]).
		{"nvidia-mig", tel(nil, f64(71.15), f64(700), f64(42))},
		{"gh200-480gb", tel(f64(0), f64(86), f64(700), f64(33))},
		// GB10: the table's power cap is N/A.
		{"dgx-spark-gb10", tel(f64(0), f64(4), nil, f64(40))},
		// Jetson: every reading N/A, so no telemetry at all.
		{"jetson-agx-orin", nil},
	} {
		reg := detectHost(t, tc.host, nil)
		gpus := devicesOfKind(reg, registry.KindCUDA)
		require.NotEmpty(t, gpus, tc.host)
		assert.Equal(t, tc.want, gpus[0].Telemetry, tc.host)
		if tc.want == nil {
			assert.NotContains(t, gpus[0].Sources, "telemetry", tc.host)
		}
	}

	// MIG instances are slices of the board: the board's readings stay on
	// the parent.
	reg = detectHost(t, "nvidia-mig", nil)
	for _, g := range devicesOfKind(reg, registry.KindCUDA)[1:] {
		assert.Nil(t, g.Telemetry, g.ID)
	}
}

// A snapshot recorded before the telemetry columns holds the query without
// them: replaying it asks again without them (the replay runner answers an
// unrecorded command line as a missing tool) rather than dropping to sysfs.
func TestNVIDIAQueryWithoutTelemetryFromOlderSnapshot(t *testing.T) {
	identity := nvidia.NVQueryFields[:len(nvidia.NVQueryFields)-len(nvidia.NVTelemetryFields)]
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{
		queryArgv(nvidia.NVQueryFields): {Err: fmt.Errorf("nvidia-smi: not in the snapshot: %w", machine.ErrToolMissing)},
		queryArgv(identity):             ok("0, NVIDIA A40, GPU-0f1e2d3c, 00000000:4F:00.0, 46068, 45403, 550.127.05, 8.6, Disabled\n"),
	}}
	reg := detectNVWith(t, "nvidia-tool-fails", fake, nil)
	assert.Empty(t, warningCodes(reg))
	assert.Equal(t, []string{queryArgv(nvidia.NVQueryFields), queryArgv(identity)}, fake.calls)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	assert.Equal(t, int64(46068)<<20, gpus[0].MemoryBytes)
	assert.Equal(t, "nvidia-smi", gpus[0].Sources["memory_bytes"])
	assert.Nil(t, gpus[0].Telemetry)

	// A tool that is missing for every command line is asked twice at most.
	fake = &fakeNvidiaSMI{answers: map[string]machine.Result{
		queryArgv(nvidia.NVQueryFields): {Err: machine.ErrToolMissing},
		queryArgv(identity):             {Err: machine.ErrToolMissing},
	}}
	detectNVWith(t, "nvidia-tool-fails", fake, nil)
	assert.Len(t, fake.calls, 2)
}
