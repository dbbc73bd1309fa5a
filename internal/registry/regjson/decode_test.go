package regjson

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func i64(v int64) *int64 { return &v }
func intp(v int) *int    { return &v }

func TestEncodeOmitsUnknownAndKeepsZeroWhereMeaningful(t *testing.T) {
	r := registry.New()
	r.Devices = append(r.Devices, registry.Device{Kind: registry.KindCUDA, Name: "GPU", Available: true,
		MemoryBytes: 85520809984, MemoryFreeBytes: i64(0), NUMANode: intp(0)})
	r.Normalize()
	b, err := Encode(r)
	require.NoError(t, err)
	s := string(b)
	assert.Contains(t, s, `"schema_version":1`)
	assert.Contains(t, s, `"id":"cuda:0"`)
	assert.Contains(t, s, `"family":"gpu"`)
	assert.Contains(t, s, `"memory_free_bytes":0`, "zero free memory is a fact, not unknown")
	assert.Contains(t, s, `"numa_node":0`, "NUMA node 0 is a fact, not unknown")
	assert.NotContains(t, s, "memory_bandwidth_gb_s", "unknown bandwidth is omitted")
	assert.NotContains(t, s, "compute_capability")
	assert.Contains(t, s, `"warnings":[]`)
	assert.Contains(t, s, `"interconnects":[]`)
}

func TestDecodeRoundTrip(t *testing.T) {
	r := registry.New()
	r.Devices = []registry.Device{
		{Kind: registry.KindCPU, Name: "Xeon", Available: true, MemoryBytes: 1 << 40, Cores: 112},
		{Kind: registry.KindCUDA, Name: "H100", Available: true, MemoryBytes: 80 << 30, MemoryFreeBytes: i64(79 << 30),
			MemoryBandwidthGBs: 3350, PCIBusID: "0000:18:00.0", NUMANode: intp(1), Quantizations: []string{"bf16", "fp8"}},
		{Kind: registry.KindCUDA, Name: "H100", Available: true, MemoryBytes: 80 << 30, PCIBusID: "0000:2a:00.0"},
	}
	r.SystemIO.Interconnects = []registry.Interconnect{{Kind: registry.LinkNVSwitch, Devices: []string{"cuda:0", "cuda:1"}, BandwidthGBs: 900}}
	r.Normalize()
	b, err := Encode(r)
	require.NoError(t, err)
	got, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, r.Devices, got.Devices)
	assert.Equal(t, r.SystemIO.Interconnects, got.SystemIO.Interconnects)
}

// TestTelemetryZeroIsAFact: 0 % busy is a reading, not "unknown"; a device
// with no reading has no telemetry object at all.
func TestTelemetryZeroIsAFact(t *testing.T) {
	zero, draw := 0.0, 100.89
	r := registry.New()
	r.Devices = []registry.Device{
		{Kind: registry.KindCUDA, Available: true, Telemetry: &registry.Telemetry{UtilizationPercent: &zero, PowerDrawWatts: &draw}},
		{Kind: registry.KindCUDA, Available: true},
	}
	r.Normalize()
	b, err := Encode(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"telemetry":{"utilization_percent":0,"power_draw_watts":100.89}`)
	assert.Equal(t, 1, strings.Count(string(b), `"telemetry"`))
	got, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, r.Devices, got.Devices)
}

func TestDecodeAcceptsUnknownFieldsAndFillsIDs(t *testing.T) {
	got, err := Decode([]byte(`{"schema_version":1,"future_field":{"x":1},
		"devices":[{"kind":"cuda_gpu","index":2,"available":true,"memory_bytes":1000,"new_field":"ignored"}]}`))
	require.NoError(t, err)
	require.Len(t, got.Devices, 1)
	assert.Equal(t, "cuda:2", got.Devices[0].ID)
	assert.Equal(t, registry.FamilyGPU, got.Devices[0].Family)
	assert.NotNil(t, got.Warnings)
}

func TestDecodeRejectsNonsense(t *testing.T) {
	cases := []struct {
		name, json, code, msg string
	}{
		{"negative memory", `{"devices":[{"kind":"cuda_gpu","memory_bytes":-1}]}`, errs.InvalidArgument, "negative"},
		{"negative free", `{"devices":[{"kind":"cuda_gpu","memory_bytes":10,"memory_free_bytes":-5}]}`, errs.InvalidArgument, "negative"},
		{"free above total", `{"devices":[{"kind":"cuda_gpu","memory_bytes":10,"memory_free_bytes":11}]}`, errs.InvalidArgument, "exceeds"},
		{"absurd memory", `{"devices":[{"kind":"cuda_gpu","memory_bytes":2251799813685249}]}`, errs.InvalidArgument, "1 PiB"},
		{"unknown kind", `{"devices":[{"kind":"warp_drive"}]}`, errs.InvalidArgument, "unknown kind"},
		{"missing kind", `{"devices":[{"id":"x"}]}`, errs.InvalidArgument, "unknown kind"},
		{"family mismatch", `{"devices":[{"kind":"cuda_gpu","family":"tpu"}]}`, errs.InvalidArgument, "does not match"},
		{"duplicate id", `{"devices":[{"kind":"cuda_gpu","id":"a"},{"kind":"cuda_gpu","id":"a"}]}`, errs.InvalidArgument, "duplicate"},
		{"newer schema", `{"schema_version":99,"devices":[]}`, errs.InvalidArgument, "newer"},
		{"negative index", `{"devices":[{"kind":"cpu","index":-1}]}`, errs.InvalidArgument, "negative index"},
		{"bad numa", `{"devices":[{"kind":"cpu","numa_node":-3}]}`, errs.InvalidArgument, "numa_node"},
		{"bandwidth", `{"devices":[{"kind":"cpu","memory_bandwidth_gb_s":-1}]}`, errs.InvalidArgument, "bandwidth"},
		{"utilization over 100", `{"devices":[{"kind":"cuda_gpu","telemetry":{"utilization_percent":101}}]}`, errs.InvalidArgument, "utilization_percent"},
		{"negative power", `{"devices":[{"kind":"cuda_gpu","telemetry":{"power_draw_watts":-1}}]}`, errs.InvalidArgument, "power_draw_watts"},
		{"absurd power limit", `{"devices":[{"kind":"cuda_gpu","telemetry":{"power_limit_watts":1e9}}]}`, errs.InvalidArgument, "power_limit_watts"},
		{"absurd temperature", `{"devices":[{"kind":"cuda_gpu","telemetry":{"temperature_c":-300}}]}`, errs.InvalidArgument, "temperature_c"},
		{"link to nowhere", `{"devices":[{"kind":"cpu"}],"system_io":{"interconnects":[{"kind":"nvlink","devices":["cuda:9"]}]}}`, errs.InvalidArgument, "unknown device"},
		{"wrong type", `{"devices":{"kind":"cpu"}}`, errs.InvalidArgument, "registry"},
		{"memory as string", `{"devices":[{"kind":"cpu","memory_bytes":"lots"}]}`, errs.InvalidArgument, "registry"},
		{"array for object", `[]`, errs.InvalidArgument, "registry"},
		{"empty", ``, errs.InvalidJSON, "registry"},
		{"syntax", `{"devices":[`, errs.InvalidJSON, "registry"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.json))
			require.Error(t, err)
			assert.Equal(t, c.code, errs.CodeOf(err), err.Error())
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// A given registry keeps the CPU features of this version's vocabulary,
// sorted once each; a newer writer's extensions are dropped, not refused,
// and a list with none of ours is unknown (nil), as an absent one is.
func TestDecodeKeepsKnownCPUFeatures(t *testing.T) {
	dev := func(features string) string {
		return `{"schema_version":1,"devices":[{"kind":"cpu","index":0,"available":true` + features + `}]}`
	}
	r, err := Decode([]byte(dev(`,"cpu_features":["avx2","amx_future","sse2","avx2"]`)))
	require.NoError(t, err)
	assert.Equal(t, []registry.CPUFeature{registry.CPUFeatureAVX2, registry.CPUFeatureSSE2}, r.Devices[0].CPUFeatures)
	r, err = Decode([]byte(dev(`,"cpu_features":["amx_future"]`)))
	require.NoError(t, err)
	assert.Nil(t, r.Devices[0].CPUFeatures)
	r, err = Decode([]byte(dev(``)))
	require.NoError(t, err)
	assert.Nil(t, r.Devices[0].CPUFeatures)
}

// TestDecodeRefusesADeviceWithoutAvailable: "available" is required by
// schema/registry.schema.json and nothing else in a device says it, so a
// hand-written registry that leaves it out is refused with the member
// named, not read as unavailable (which answered "no available device").
// Members that follow from others (id from kind and index, family from
// kind) are still filled in.
func TestDecodeRefusesADeviceWithoutAvailable(t *testing.T) {
	_, err := Decode([]byte(`{"devices":[{"id":"cpu:0","kind":"cpu","available":true},{"id":"cuda:0","kind":"cuda_gpu","memory_bytes":85520809984}]}`))
	require.Error(t, err)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	assert.Equal(t, `registry: devices[1].available is missing: say whether the device can be used (true or false; the registry schema requires it)`, errs.MessageOf(err))

	r, err := Decode([]byte(`{"devices":[{"kind":"cuda_gpu","available":false,"memory_bytes":85520809984}]}`))
	require.NoError(t, err)
	assert.Equal(t, "cuda:0", r.Devices[0].ID)
	assert.False(t, r.Devices[0].Available)
}
