package nvidia

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func f64(v float64) *float64 { return &v }

// Rows of the full query as nvidia-smi prints them with nounits. The values
// are those of real captures: the H100 idle and load query-gpu sections of
// utkuozdemir/nvidia_gpu_exporter internal/captures/
// linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt (utilization.gpu
// "0 %", power.draw "69.85 W", power.limit "700.00 W", temperature.gpu
// "41"), its MIG capture linux-x86_64__nvidia-h100-mig__590.48.01.txt (a
// MIG-enabled GPU prints utilization.gpu "[N/A]"), and the Jetson AGX Orin
// table of testdata/machines/jetson-agx-orin (every reading N/A).
func TestParseNvidiaCSVTelemetry(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   nvTelemetry
		issues []string
	}{
		{name: "H100 idle",
			in:   "0, NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-000000000000, 00000000:00:09.0, 81559, 81081, 590.48.01, 9.0, Disabled, 0, 69.85, 700.00, 41\n",
			want: nvTelemetry{UtilPct: f64(0), PowerW: f64(69.85), PowerLimitW: f64(700), TempC: f64(41)}},
		{name: "H100 under load",
			in:   "0, NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-000000000000, 00000000:00:09.0, 81559, 61263, 590.48.01, 9.0, Disabled, 100, 631.95, 700.00, 59\n",
			want: nvTelemetry{UtilPct: f64(100), PowerW: f64(631.95), PowerLimitW: f64(700), TempC: f64(59)}},
		{name: "MIG mode: no utilization",
			in:   "0, NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-000000000000, 00000000:00:09.0, 81559, 81022, 590.48.01, 9.0, Enabled, [N/A], 71.15, 700.00, 42\n",
			want: nvTelemetry{PowerW: f64(71.15), PowerLimitW: f64(700), TempC: f64(42)}},
		{name: "Jetson: nothing",
			in: "0, Orin (nvgpu), [N/A], [N/A], [N/A], [N/A], 540.4.0, 8.7, [N/A], [N/A], [N/A], [N/A], [N/A]\n"},
		{name: "other placeholders",
			in: "0, A, GPU-a, 00000000:18:00.0, 1, 1, 1.0, 9.0, Disabled, [Not Supported], [Unknown Error], [N/A], [Not Supported]\n"},
		{name: "absurd and garbage readings are dropped one by one",
			in:     "0, A, GPU-a, 00000000:18:00.0, 1, 1, 1.0, 9.0, Disabled, 250, -5, 1000000.00, hot\n",
			issues: []string{"absurd_value", "absurd_value", "absurd_value", "parse_error"}},
		{name: "not a number at all",
			in:     "0, A, GPU-a, 00000000:18:00.0, 1, 1, 1.0, 9.0, Disabled, NaN, Inf, 1e3, 40\n",
			want:   nvTelemetry{TempC: f64(40)},
			issues: []string{"parse_error", "parse_error", "parse_error"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, issues, _ := ParseNvidiaCSV([]byte(tc.in), NVQueryFields)
			if assert.Len(t, got, 1) {
				assert.Equal(t, tc.want, got[0].Telemetry)
			}
			var codes []string
			for _, is := range issues {
				codes = append(codes, is.Code)
			}
			assert.Equal(t, tc.issues, codes)
		})
	}
}

// The telemetry rides on the one query the backend already runs: no second
// nvidia-smi run (docs/performance.md), and it is not optional (every driver
// with --query-gpu knows these four fields).
func TestTelemetryIsInTheOneQuery(t *testing.T) {
	assert.Subset(t, NVQueryFields, []string{"utilization.gpu", "power.draw", "power.limit", "temperature.gpu"})
	for _, f := range NVTelemetryFields {
		assert.False(t, nvOptionalFields[f], f)
	}
}
