package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func ibPort(ca, port, rate, state, layer string) map[string]string {
	dir := machine.PathInfiniBand + "/" + ca + "/ports/" + port + "/"
	m := map[string]string{dir + "state": state + "\n"}
	if rate != "" {
		m[dir+"rate"] = rate + "\n"
	}
	if layer != "" {
		m[dir+"link_layer"] = layer + "\n"
	}
	return m
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestInfiniBandBackend(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []registry.Interconnect
		codes []string
	}{
		{"no infiniband class", map[string]string{"sys/.keep": ""}, nil, nil},
		{"active NDR port", ibPort("mlx5_0", "1", "400 Gb/sec (4X NDR)", "4: ACTIVE", "InfiniBand"),
			[]registry.Interconnect{{Kind: "infiniband", Name: "mlx5_0", Devices: []string{}, BandwidthGBs: 50, State: "active", Source: "sysfs"}}, nil},
		{"RoCE port and a second port", merge(
			ibPort("mlx5_1", "1", "100 Gb/sec (4X EDR)", "4: ACTIVE", "Ethernet"),
			ibPort("mlx5_1", "2", "2.5 Gb/sec (1X SDR)", "4: ACTIVE", "InfiniBand")),
			[]registry.Interconnect{
				{Kind: "roce", Name: "mlx5_1", Devices: []string{}, BandwidthGBs: 12.5, State: "active", Source: "sysfs"},
				{Kind: "infiniband", Name: "mlx5_1:2", Devices: []string{}, BandwidthGBs: 0.3125, State: "active", Source: "sysfs"}}, nil},
		{"down and initialising ports are skipped quietly", merge(
			ibPort("mlx5_0", "1", "400 Gb/sec (4X NDR)", "1: DOWN", "InfiniBand"),
			ibPort("mlx5_1", "1", "400 Gb/sec (4X NDR)", "2: INIT", "InfiniBand")), nil, nil},
		{"garbage state", ibPort("mlx5_0", "1", "400 Gb/sec (4X NDR)", "ACTIVE", "InfiniBand"), nil, []string{"infiniband/parse_error"}},
		{"garbage rate keeps the link, omits bandwidth", ibPort("mlx5_0", "1", "fast", "4: ACTIVE", "InfiniBand"),
			[]registry.Interconnect{{Kind: "infiniband", Name: "mlx5_0", Devices: []string{}, State: "active", Source: "sysfs"}},
			[]string{"infiniband/parse_error"}},
		{"absurd rate", ibPort("mlx5_0", "1", "999999 Gb/sec (4X NDR)", "4: ACTIVE", "InfiniBand"),
			[]registry.Interconnect{{Kind: "infiniband", Name: "mlx5_0", Devices: []string{}, State: "active", Source: "sysfs"}},
			[]string{"infiniband/absurd_value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := detectInfiniBand(context.Background(), machineFS(tc.files))
			assert.Equal(t, tc.want, f.Interconnects)
			var codes []string
			for _, w := range f.Warnings {
				codes = append(codes, w.Backend+"/"+w.Code)
			}
			assert.Equal(t, tc.codes, codes)
		})
	}
}

func TestParseIBRateAndState(t *testing.T) {
	for in, want := range map[string]float64{"400 Gb/sec (4X NDR)": 400, "2.5 Gb/sec (1X SDR)": 2.5, "56 Gb/sec (4X FDR)": 56, " 200 Gb/sec (4X HDR)\n": 200} {
		got, err := parseIBRate(in)
		require.NoError(t, err, in)
		assert.InDelta(t, want, got, 1e-9, in)
	}
	for _, in := range []string{"", "400", "400 Gb/s", "-1 Gb/sec", "0 Gb/sec (4X NDR)", "NaN Gb/sec", "Inf Gb/sec"} {
		_, err := parseIBRate(in)
		assert.Error(t, err, in)
	}
	n, err := parseIBState("4: ACTIVE")
	require.NoError(t, err)
	assert.Equal(t, ibStateActive, n)
	for _, in := range []string{"ACTIVE", "4", "x: ACTIVE", "4:", "-1: X"} {
		_, err := parseIBState(in)
		assert.Error(t, err, in)
	}
}

func FuzzParseIBRate(f *testing.F) {
	f.Add("400 Gb/sec (4X NDR)")
	f.Add("2.5 Gb/sec (1X SDR)")
	f.Add("1e308 Gb/sec")
	f.Fuzz(func(t *testing.T, in string) {
		v, err := parseIBRate(in)
		if err == nil && !(v > 0 && v <= 1e9) {
			t.Fatalf("rate %v accepted", v)
		}
		parseIBState(in)
	})
}
