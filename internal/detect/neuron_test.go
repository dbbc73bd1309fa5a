package detect

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"

	"context"
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

var inf2Buses = []string{"0000:10:1e.0", "0000:20:1e.0", "0000:30:1e.0", "0000:40:1e.0", "0000:50:1e.0", "0000:60:1e.0",
	"0000:90:1e.0", "0000:a0:1e.0", "0000:b0:1e.0", "0000:c0:1e.0", "0000:d0:1e.0", "0000:e0:1e.0"}

// assertInf2Twelve checks what neuron-ls and the fallback must agree on.
func assertInf2Twelve(t *testing.T, devs []registry.Device) {
	t.Helper()
	require.Len(t, devs, 12)
	for i, d := range devs {
		assert.Equal(t, registry.DeviceID(registry.KindNeuron, i), d.ID)
		assert.Equal(t, registry.FamilyAIASIC, d.Family)
		assert.Equal(t, "amazon", d.Vendor)
		assert.Equal(t, "AWS Inferentia2", d.Name)
		assert.Equal(t, "inferentia2", d.Architecture)
		assert.Equal(t, inf2Buses[i], d.PCIBusID)
		assert.Equal(t, "1d0f:7264", d.PCIID)
		assert.Equal(t, int64(34359738368), d.MemoryBytes)
		assert.Equal(t, 2, d.Cores)
		assert.InDelta(t, 880.5, d.MemoryBandwidthGBs, 0.001)
		assert.Equal(t, []string{"fp32", "bf16", "fp16", "fp8", "int8"}, d.Quantizations)
		assert.True(t, d.Available)
		require.NotNil(t, d.NUMANode)
		assert.Equal(t, i/6, *d.NUMANode, "device %d", i)
	}
}

func TestNeuronFixtureNeuronLS(t *testing.T) {
	reg := detectFixture(t, "inf2-48xlarge", nil)
	devs := devicesOfKind(reg, registry.KindNeuron)
	assertInf2Twelve(t, devs)
	for _, d := range devs {
		assert.Equal(t, "neuron-ls", d.Sources["memory_bytes"])
		assert.Equal(t, "neuron-ls", d.Sources["numa_node"])
	}
	assert.Empty(t, backendWarnings(reg, neuronBackend))

	var links []registry.Interconnect
	for _, ic := range reg.SystemIO.Interconnects {
		if ic.Kind == registry.LinkNeuronLink {
			links = append(links, ic)
		}
	}
	require.Len(t, links, 1, "one ring")
	want := make([]string, 12)
	for i := range want {
		want[i] = registry.DeviceID(registry.KindNeuron, i)
	}
	assert.Equal(t, want, links[0].Devices)
	assert.Equal(t, 12, links[0].Links)
	assert.Equal(t, "ring", links[0].State)
	assert.Zero(t, links[0].BandwidthGBs, "no per-link bandwidth is sourced")

	require.NotNil(t, reg.SystemIO.Environment)
	assert.Equal(t, "aws", reg.SystemIO.Environment.Cloud)
	assert.Equal(t, "inf2.48xlarge", reg.SystemIO.Environment.InstanceType)
}

func TestNeuronFixtureFallbackWithoutNeuronLS(t *testing.T) {
	dir := copyFixtureMachine(t, "inf2-48xlarge")
	require.NoError(t, os.Remove(filepath.Join(dir, "bin", "neuron-ls")))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindNeuron)
	assertInf2Twelve(t, devs)
	for _, d := range devs {
		assert.Equal(t, "datasheet", d.Sources["memory_bytes"])
		assert.Equal(t, "sysfs", d.Sources["cores"])
	}
	assert.Equal(t, []string{registry.WarnFallback}, backendWarnings(reg, neuronBackend))
	for _, ic := range reg.SystemIO.Interconnects {
		assert.NotEqual(t, registry.LinkNeuronLink, ic.Kind, "no NeuronLink without neuron-ls")
	}
}

func TestNeuronFixtureGarbageThenFallback(t *testing.T) {
	dir := copyFixtureMachine(t, "inf2-48xlarge")
	// The shape the old crate expected: no neuron_device key at all.
	bad := `[{"model":"inf2.48xlarge","nc_count":2,"memory_per_nc_mb":16384}]`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "neuron-ls.json"), []byte(bad), 0o644))
	reg := detectDir(t, dir, nil)
	assertInf2Twelve(t, devicesOfKind(reg, registry.KindNeuron))
	assert.Equal(t, []string{registry.WarnParseError, registry.WarnFallback}, backendWarnings(reg, neuronBackend))
}

func TestNeuronSysfsOnlyNoPCI(t *testing.T) {
	dir := copyFixtureMachine(t, "inf2-48xlarge")
	require.NoError(t, os.Remove(filepath.Join(dir, "bin", "neuron-ls")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "root", "sys", "bus")))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindNeuron)
	require.Len(t, devs, 12)
	for _, d := range devs {
		assert.Empty(t, d.PCIBusID)
		assert.Equal(t, "inferentia2", d.Architecture, "from the DMI instance type")
		assert.Equal(t, int64(32)<<30, d.MemoryBytes)
		assert.True(t, d.Available, "/dev/neuronN exists")
	}
	assert.Equal(t, []string{registry.WarnFallback}, backendWarnings(reg, neuronBackend))
}

// The real trn1.2xlarge capture of formats.md, verbatim shape.
const trn1Capture = `[
    {
        "neuron_device": 0,
        "bdf": "0000:00:1e.0",
        "cpu_affinity": "0-7",
        "numa_node": "-1",
        "connected_to": null,
        "nc_count": 2,
        "memory_size": 34359738368,
        "neuroncore_ids": [
            0,
            1
        ],
        "neuron_processes": []
    }
]`

func TestNeuronParseNeuronLS(t *testing.T) {
	devs, errs, err := parseNeuronLS([]byte(trn1Capture))
	require.NoError(t, err)
	assert.Empty(t, errs)
	assert.Equal(t, []neuronDevice{{Index: 0, BusID: "0000:00:1e.0", NUMANode: -1, Cores: 2, MemoryBytes: 34359738368}}, devs)

	tests := []struct {
		name     string
		in       string
		want     []neuronDevice
		wantErrs int
		wantErr  bool
	}{
		{name: "numbers where strings were", in: `[{"neuron_device":"3","numa_node":1,"nc_count":"8","memory_size":"103079215104","connected_to":[2,4,3]}]`,
			want: []neuronDevice{{Index: 3, NUMANode: 1, Cores: 8, MemoryBytes: 103079215104, ConnectedTo: []int{2, 4}}}},
		{name: "instance type kept", in: `[{"instance_type":"trn2.48xlarge","neuron_device":0}]`,
			want: []neuronDevice{{Index: 0, NUMANode: -1, Cores: -1, MemoryBytes: -1, InstanceType: "trn2.48xlarge"}}},
		{name: "absurd values are unknown", in: `[{"neuron_device":0,"nc_count":-2,"memory_size":99999999999999999,"numa_node":"x"}]`,
			want: []neuronDevice{{Index: 0, NUMANode: -1, Cores: -1, MemoryBytes: -1,
				Absurd: []machine.AbsurdValue{{What: "neuron_device 0 memory_size", Raw: "99999999999999999"}}}}},
		{name: "memory beyond int64 or negative is absurd", in: `[{"neuron_device":0,"memory_size":"18446744073709551615"},{"neuron_device":1,"memory_size":-1}]`,
			want: []neuronDevice{
				{Index: 0, NUMANode: -1, Cores: -1, MemoryBytes: -1, Absurd: []machine.AbsurdValue{{What: "neuron_device 0 memory_size", Raw: "18446744073709551615"}}},
				{Index: 1, NUMANode: -1, Cores: -1, MemoryBytes: -1, Absurd: []machine.AbsurdValue{{What: "neuron_device 1 memory_size", Raw: "-1"}}}}},
		{name: "missing index", in: `[{"nc_count":2}]`, wantErrs: 1},
		{name: "connected_to not an array", in: `[{"neuron_device":0,"connected_to":"1, 2"}]`, wantErrs: 1},
		{name: "repeated index", in: `[{"neuron_device":0},{"neuron_device":0}]`,
			want: []neuronDevice{{Index: 0, NUMANode: -1, Cores: -1, MemoryBytes: -1}}, wantErrs: 1},
		{name: "object not array", in: `{"neuron_device":0}`, wantErr: true},
		{name: "table output", in: "instance-type: inf2.48xlarge\n+--------+", wantErr: true},
		{name: "empty", in: "  ", wantErr: true},
		{name: "empty array", in: "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			devs, errs, err := parseNeuronLS([]byte(tt.in))
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, devs)
			assert.Len(t, errs, tt.wantErrs)
		})
	}
}

func TestNeuronLinkGroups(t *testing.T) {
	// Two separate pairs and one loner: two groups, neither a ring.
	devs := []neuronDevice{{Index: 0, ConnectedTo: []int{1}}, {Index: 1, ConnectedTo: []int{0}},
		{Index: 2, ConnectedTo: []int{3, 9}}, {Index: 3}, {Index: 4}}
	groups := neuronLinkGroups(devs)
	require.Len(t, groups, 2)
	assert.Equal(t, []string{"nd0", "nd1"}, groups[0].Devices)
	assert.Equal(t, []string{"nd2", "nd3"}, groups[1].Devices, "a link named by one side only counts; unknown 9 is dropped")
	for _, g := range groups {
		assert.Equal(t, 1, g.Links)
		assert.Empty(t, g.State)
	}
	assert.Empty(t, neuronLinkGroups([]neuronDevice{{Index: 0}}))
}

func TestNeuronGenFromInstanceType(t *testing.T) {
	for it, want := range map[string]string{"inf1.xlarge": "inferentia", "inf2.48xlarge": "inferentia2",
		"trn1.32xlarge": "trainium", "trn1n.32xlarge": "trainium", "trn2.48xlarge": "trainium2"} {
		g := neuronGenFromInstanceType(it)
		require.NotNil(t, g, it)
		assert.Equal(t, want, g.Arch, it)
	}
	assert.Nil(t, neuronGenFromInstanceType("p5.48xlarge"))
	assert.Nil(t, neuronGenFromInstanceType("trn1"))
}

func FuzzNeuronParseNeuronLS(f *testing.F) {
	f.Add([]byte(trn1Capture))
	f.Add([]byte(`[{"instance_type":"inf2.48xlarge","neuron_device":0,"bdf":"0000:10:1e.0","numa_node":"0","connected_to":[11,1],"nc_count":2,"memory_size":34359738368}]`))
	f.Add([]byte(`[{"neuron_device":"7","connected_to":[7,7,-1,"x"]},null,1]`))
	f.Add([]byte(`{"model":"trn1.32xlarge"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		devs, _, err := parseNeuronLS(in)
		if err != nil {
			require.Empty(t, devs)
			return
		}
		require.LessOrEqual(t, len(devs), maxNeuronDevices)
		seen := map[int]bool{}
		for _, d := range devs {
			require.False(t, seen[d.Index])
			seen[d.Index] = true
			require.True(t, d.MemoryBytes == -1 || d.MemoryBytes > 0)
			require.LessOrEqual(t, d.MemoryBytes, registry.MaxDeviceMemory)
			require.True(t, d.Cores == -1 || d.Cores > 0)
			require.GreaterOrEqual(t, d.NUMANode, -1)
			for _, p := range d.ConnectedTo {
				require.NotEqual(t, d.Index, p)
			}
		}
		for _, g := range neuronLinkGroups(devs) {
			require.GreaterOrEqual(t, len(g.Devices), 2)
			require.GreaterOrEqual(t, g.Links, len(g.Devices)-1)
		}
	})
}

func TestNeuronFixtureDeviceMissingFromNeuronLS(t *testing.T) {
	dir := copyFixtureMachine(t, "inf2-48xlarge")
	js := filepath.Join(dir, "neuron-ls.json")
	b, err := os.ReadFile(js)
	require.NoError(t, err)
	var all []map[string]any
	require.NoError(t, json.Unmarshal(b, &all))
	out, err := json.MarshalIndent(all[:11], "", "    ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(js, out, 0o644))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindNeuron)
	require.Len(t, devs, 12)
	assert.False(t, devs[11].Available)
	assert.Equal(t, "0000:e0:1e.0", devs[11].PCIBusID)
	assert.Equal(t, []string{registry.WarnDeviceUnusable}, backendWarnings(reg, neuronBackend))
}

// An absurd neuron-ls memory_size is an absurd_value warning naming the
// tool; the device stays, without that figure.
func TestNeuronAbsurdMemoryIsReported(t *testing.T) {
	bin := t.TempDir()
	writeFakeTool(t, bin, "neuron-ls", toolScript(neuronLSArgs,
		`[{"instance_type": "inf2.48xlarge", "neuron_device": 0, "bdf": "0000:10:1e.0", "nc_count": 2, "memory_size": 1152921504606846976}]`))
	reg, err := Detect(context.Background(), Options{Sysroot: t.TempDir(), Path: bin, Backends: []string{neuronBackend},
		Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	devs := devicesOfKind(reg, registry.KindNeuron)
	require.Len(t, devs, 1)
	assert.Zero(t, devs[0].MemoryBytes)
	assert.Equal(t, []string{"neuron/absurd_value"}, warningCodes(reg))
	assert.Equal(t, "neuron-ls", reg.Warnings[0].Tool)
}
