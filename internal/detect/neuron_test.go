package detect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/aws"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// assertTrn1One checks what neuron-ls and the fallback must agree on for the
// trn1.2xlarge capture (testdata/machines/trn1-2xlarge): one Trainium at
// 0000:00:1e.0 with two NeuronCores and no NUMA node (neuron-ls says "-1").
func assertTrn1One(t *testing.T, devs []registry.Device) {
	t.Helper()
	require.Len(t, devs, 1)
	d := devs[0]
	assert.Equal(t, registry.DeviceID(registry.KindNeuron, 0), d.ID)
	assert.Equal(t, registry.FamilyAIASIC, d.Family)
	assert.Equal(t, "amazon", d.Vendor)
	assert.Equal(t, "AWS Trainium", d.Name)
	assert.Equal(t, "trainium", d.Architecture)
	assert.Equal(t, "0000:00:1e.0", d.PCIBusID)
	assert.Equal(t, "1d0f:7164", d.PCIID)
	assert.Equal(t, int64(34359738368), d.MemoryBytes)
	assert.Equal(t, 2, d.Cores)
	assert.InDelta(t, 880.5, d.MemoryBandwidthGBs, 0.001)
	assert.Equal(t, []string{"fp32", "bf16", "fp16", "fp8", "int8"}, d.Quantizations)
	assert.True(t, d.Available)
	assert.Nil(t, d.NUMANode, `numa_node "-1" is no node`)
}

func TestNeuronFixtureNeuronLS(t *testing.T) {
	reg := detectFixture(t, "trn1-2xlarge", nil)
	devs := devicesOfKind(reg, registry.KindNeuron)
	assertTrn1One(t, devs)
	assert.Equal(t, "neuron-ls", devs[0].Sources["memory_bytes"])
	assert.Equal(t, "neuron-ls", devs[0].Sources["cores"])
	assert.Empty(t, backendWarnings(reg, aws.BackendNeuron))
	for _, ic := range reg.SystemIO.Interconnects {
		assert.NotEqual(t, registry.LinkNeuronLink, ic.Kind, `connected_to is null: one device, no NeuronLink`)
	}
}

func TestNeuronFixtureFallbackWithoutNeuronLS(t *testing.T) {
	dir := copyFixtureMachine(t, "trn1-2xlarge")
	require.NoError(t, os.Remove(filepath.Join(dir, "bin", "neuron-ls")))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindNeuron)
	assertTrn1One(t, devs)
	assert.Equal(t, "datasheet", devs[0].Sources["memory_bytes"])
	assert.Equal(t, "sysfs", devs[0].Sources["cores"])
	assert.Equal(t, []string{registry.WarnFallback}, backendWarnings(reg, aws.BackendNeuron))
}

func TestNeuronFixtureGarbageThenFallback(t *testing.T) {
	dir := copyFixtureMachine(t, "trn1-2xlarge")
	// The shape the old crate expected: no neuron_device key at all.
	bad := `[{"model":"trn1.2xlarge","nc_count":2,"memory_per_nc_mb":16384}]`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "neuron-ls.json"), []byte(bad), 0o644))
	reg := detectDir(t, dir, nil)
	assertTrn1One(t, devicesOfKind(reg, registry.KindNeuron))
	assert.Equal(t, []string{registry.WarnParseError, registry.WarnFallback}, backendWarnings(reg, aws.BackendNeuron))
}

// Without neuron-ls and without the PCI tree only neuron_device/neuron0 and
// /dev/neuron0 are left: the device is found, with its cores, but neither its
// generation nor its memory (the capture has no DMI instance type to name it).
func TestNeuronSysfsOnlyNoPCI(t *testing.T) {
	dir := copyFixtureMachine(t, "trn1-2xlarge")
	require.NoError(t, os.Remove(filepath.Join(dir, "bin", "neuron-ls")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "root", "sys", "bus")))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindNeuron)
	require.Len(t, devs, 1)
	assert.Empty(t, devs[0].PCIBusID)
	assert.Empty(t, devs[0].Architecture)
	assert.Zero(t, devs[0].MemoryBytes)
	assert.Equal(t, 2, devs[0].Cores)
	assert.True(t, devs[0].Available, "/dev/neuron0 exists")
	assert.Equal(t, []string{registry.WarnFallback}, backendWarnings(reg, aws.BackendNeuron))
}

// A Neuron PCI function neuron-ls does not list is reported unusable. The
// second function is put at 0000:00:1f.0, where another trn1 instance had
// its device (aws-neuron/aws-neuron-sdk#1018 log: "Initialized Device: 0
// 00:1f.0").
func TestNeuronFixtureDeviceMissingFromNeuronLS(t *testing.T) {
	dir := copyFixtureMachine(t, "trn1-2xlarge")
	writePCIFunction(t, filepath.Join(dir, "root"), fakePCI{Addr: "0000:00:1f.0", Vendor: machine.VendorAmazon, Device: 0x7164, Driver: "neuron-driver", Accel: -1})
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindNeuron)
	require.Len(t, devs, 2)
	assert.True(t, devs[0].Available)
	assert.False(t, devs[1].Available)
	assert.Equal(t, "0000:00:1f.0", devs[1].PCIBusID)
	assert.Equal(t, []string{registry.WarnDeviceUnusable}, backendWarnings(reg, aws.BackendNeuron))
}

// An absurd neuron-ls memory_size is an absurd_value warning naming the
// tool; the device stays, without that figure.
func TestNeuronAbsurdMemoryIsReported(t *testing.T) {
	bin := t.TempDir()
	writeFakeTool(t, bin, "neuron-ls", toolScript(aws.NeuronLSArgs,
		`[{"instance_type": "inf2.48xlarge", "neuron_device": 0, "bdf": "0000:10:1e.0", "nc_count": 2, "memory_size": 1152921504606846976}]`))
	reg, err := Detect(context.Background(), Options{Sysroot: t.TempDir(), Path: bin, Backends: []string{aws.BackendNeuron},
		LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	devs := devicesOfKind(reg, registry.KindNeuron)
	require.Len(t, devs, 1)
	assert.Zero(t, devs[0].MemoryBytes)
	assert.Equal(t, []string{"neuron/absurd_value"}, warningCodes(reg))
	assert.Equal(t, "neuron-ls", reg.Warnings[0].Tool)
}
