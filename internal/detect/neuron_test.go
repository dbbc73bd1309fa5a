package detect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/aws"
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
	assert.Empty(t, backendWarnings(reg, aws.NeuronBackend))

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
	assert.Equal(t, []string{registry.WarnFallback}, backendWarnings(reg, aws.NeuronBackend))
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
	assert.Equal(t, []string{registry.WarnParseError, registry.WarnFallback}, backendWarnings(reg, aws.NeuronBackend))
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
	assert.Equal(t, []string{registry.WarnFallback}, backendWarnings(reg, aws.NeuronBackend))
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
	assert.Equal(t, []string{registry.WarnDeviceUnusable}, backendWarnings(reg, aws.NeuronBackend))
}

// An absurd neuron-ls memory_size is an absurd_value warning naming the
// tool; the device stays, without that figure.
func TestNeuronAbsurdMemoryIsReported(t *testing.T) {
	bin := t.TempDir()
	writeFakeTool(t, bin, "neuron-ls", toolScript(aws.NeuronLSArgs,
		`[{"instance_type": "inf2.48xlarge", "neuron_device": 0, "bdf": "0000:10:1e.0", "nc_count": 2, "memory_size": 1152921504606846976}]`))
	reg, err := Detect(context.Background(), Options{Sysroot: t.TempDir(), Path: bin, Backends: []string{aws.NeuronBackend},
		LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	devs := devicesOfKind(reg, registry.KindNeuron)
	require.Len(t, devs, 1)
	assert.Zero(t, devs[0].MemoryBytes)
	assert.Equal(t, []string{"neuron/absurd_value"}, warningCodes(reg))
	assert.Equal(t, "neuron-ls", reg.Warnings[0].Tool)
}
