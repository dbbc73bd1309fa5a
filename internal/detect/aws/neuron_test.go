package aws

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The real trn1.2xlarge capture (testdata/machines/trn1-2xlarge), verbatim shape.
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
	devs, errs, err := ParseNeuronLS([]byte(trn1Capture))
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
			devs, errs, err := ParseNeuronLS([]byte(tt.in))
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
		devs, _, err := ParseNeuronLS(in)
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

// The Amazon ids come from the part table (aws-neuron-driver neuron_pci.c).
func TestNeuronPCIGenFromRecords(t *testing.T) {
	assert.Equal(t, map[int]*neuronGen{
		0x7064: &neuronInf1, 0x7065: &neuronInf1, 0x7066: &neuronInf1, 0x7067: &neuronInf1,
		0x7164: &neuronTrn1, 0x7264: &neuronInf2, 0x7364: &neuronTrn2,
	}, neuronPCIGen)
}
