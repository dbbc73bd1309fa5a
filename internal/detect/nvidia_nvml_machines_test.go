//go:build linux && cgo

package detect

import (
	"context"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml/nvmltest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The fake NVML of a fixture machine answers what the fixture's nvidia-smi
// prints (itself from public captures, each fixture's README): the
// --query-gpu row of each GPU; with MIG on, each MIG device of `-L` with
// the memory and GPU/compute instance `-q` gives it; with several GPUs, the
// links and PCIe paths of `topo -m`. So the NVML path and the nvidia-smi
// path see the same machine, and their registries can be compared.

// smiRun runs the fixture's nvidia-smi.
func smiRun(t testing.TB, fixture string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(filepath.Join(detecttest.MachineDir(t, fixture), "bin", "nvidia-smi"), args...).Output()
	require.NoError(t, err, "nvidia-smi %v", args)
	return out
}

// smiMachine is the fake NVML machine of a fixture (see above); topo says
// what `topo -m` leaves out (TopoOptions without Buses, which come from the
// query), nil for one GPU.
func smiMachine(t testing.TB, fixture string, topo *nvmltest.TopoOptions) nvmltest.Machine {
	t.Helper()
	out := smiRun(t, fixture, "--query-gpu="+strings.Join(nvidia.NVQueryFields, ","), "--format=csv,noheader,nounits")
	var m nvmltest.Machine
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0 // "[N/A]": NVML's value is not read then (MIG mode)
		}
		return v
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		c := strings.Split(line, ", ")
		require.Len(t, c, len(nvidia.NVQueryFields), line)
		total, free := uint64(num(c[4]))<<20, uint64(num(c[5]))<<20
		cc := strings.Split(c[7], ".")
		major, _ := strconv.Atoi(cc[0])
		minor, _ := strconv.Atoi(cc[1])
		g := nvmltest.GPU{Name: c[1], UUID: c[2], Bus: c[3], BusLegacy: c[3][4:],
			MemTotal: total, MemFree: free, MemUsed: total - free, Mem2Total: total, Mem2Free: free, Mem2Used: total - free,
			CCMajor: major, CCMinor: minor, UtilGPU: int(num(c[9])),
			PowerMW: int(math.Round(num(c[10]) * 1000)), PowerLimitMW: int(math.Round(num(c[11]) * 1000)), TempC: int(num(c[12]))}
		if c[8] == "Enabled" {
			g.MIGCurrent, g.MIGPending = 1, 1
		}
		m.Driver = c[6]
		m.GPUs = append(m.GPUs, g)
	}
	m.NVML = "13." + m.Driver
	if topo != nil {
		o := *topo
		for _, g := range m.GPUs {
			o.Buses = append(o.Buses, g.Bus)
		}
		tp := nvmltest.TopoFrom(smiRun(t, fixture, "topo", "-m"), o)
		require.Len(t, tp.Links, len(m.GPUs))
		m.Ancestor = tp.Ancestor
		for i := range m.GPUs {
			m.GPUs[i].Links = tp.Links[i]
		}
	}
	addMIGDevices(t, fixture, &m)
	return m
}

// addMIGDevices gives the MIG-enabled GPUs of m (one, in the fixtures) the
// MIG devices of the fixture's `-L` and `-q`. NVML names a MIG device
// "<GPU name> MIG <profile>".
func addMIGDevices(t testing.TB, fixture string, m *nvmltest.Machine) {
	g := -1
	for i := range m.GPUs {
		if m.GPUs[i].MIGCurrent == 1 {
			g = i
		}
	}
	if g < 0 {
		return
	}
	gpu := &m.GPUs[g]
	gpu.MaxMIG = 7 // seven GPU instances at most (NVIDIA MIG User Guide)
	for _, line := range strings.Split(string(smiRun(t, fixture, "-L")), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "MIG" {
			continue
		}
		uuid := strings.TrimSuffix(f[len(f)-1], ")")
		gpu.MIGs = append(gpu.MIGs, nvmltest.MIG{Name: gpu.Name + " MIG " + f[1], UUID: uuid})
	}
	idx, inFB := -1, false
	for _, line := range strings.Split(string(smiRun(t, fixture, "-q")), "\n") {
		k, v, _ := strings.Cut(line, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		n, _ := strconv.Atoi(strings.TrimSuffix(v, " MiB"))
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case k == "MIG Device":
			idx, inFB = -2, false
		case indent <= 4:
			idx = -1
		case idx != -1 && indent == 8:
			inFB = k == "FB Memory Usage" || k == "Shared FB Memory Usage"
			switch k {
			case "Index":
				idx = n
			case "GPU Instance ID":
				gpu.MIGs[idx].GPUInstance = n
			case "Compute Instance ID":
				gpu.MIGs[idx].ComputeInstance = n
			}
		case idx >= 0 && inFB && indent == 12:
			switch k {
			case "Total":
				gpu.MIGs[idx].MemTotal = uint64(n) << 20
			case "Free":
				gpu.MIGs[idx].MemFree = uint64(n) << 20
			case "Used":
				gpu.MIGs[idx].MemUsed = uint64(n) << 20
			}
		}
	}
}

// detectBoth detects a fixture through NVML (the fake answering m, no
// nvidia-smi on the path) and through nvidia-smi.
func detectBoth(t *testing.T, fixture string, m nvmltest.Machine) (viaNVML, viaSMI *registry.Registry) {
	t.Helper()
	opts := fixtureOptions(t, fixture, nil)
	opts.Backends = hostBackends
	opts.NVMLLibrary = nvmltest.BuildMachine(t, m)
	opts.Path = t.TempDir()
	viaNVML, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	require.NoError(t, viaNVML.Validate())
	opts = fixtureOptions(t, fixture, nil)
	opts.Backends = hostBackends
	opts.NVMLLibrary = NVMLOff
	viaSMI, err = Detect(context.Background(), opts)
	require.NoError(t, err)
	return viaNVML, viaSMI
}

// comparable drops what only one path gives or names differently: the
// sources, what only NVML reads (reserved memory, processes, health), and
// the NICs (topo -m's on the tool path, the sysfs PCIe tree's on the NVML
// path; compared separately).
func comparable(devs []registry.Device) []registry.Device {
	out := make([]registry.Device, len(devs))
	for i, d := range devs {
		d.Sources, d.MemoryReservedBytes, d.Processes, d.Health, d.NICs = nil, 0, nil, nil, nil
		out[i] = d
	}
	return out
}

// On the DGX H100 fixture (8 GPUs, each with 18 NVLinks to the four
// NVSwitches of sysfs, NVLink 4.0), NVML alone gives the devices and the
// one nvswitch domain that nvidia-smi and topo -m give, with NVML's own
// link speed left out (the fake serves none).
func TestNVMLRegistryEqualsNvidiaSMIOnDGXH100(t *testing.T) {
	m := dgxH100Machine(t)
	viaNVML, viaSMI := detectBoth(t, "dgx-h100", m)
	assert.Empty(t, viaNVML.Warnings)
	assert.Equal(t, comparable(viaSMI.Devices), comparable(viaNVML.Devices))
	nvIC, smiIC := interconnectsOfKind(viaNVML, registry.LinkNVSwitch), interconnectsOfKind(viaSMI, registry.LinkNVSwitch)
	require.Len(t, smiIC, 1)
	require.Len(t, nvIC, 1)
	assert.Equal(t, nvidia.SourceNVML, nvIC[0].Source)
	nvIC[0].Source = smiIC[0].Source
	assert.Equal(t, smiIC[0], nvIC[0])
	assert.Equal(t, 18, nvIC[0].Links)
	assert.Equal(t, 900.0, nvIC[0].BandwidthGBs)
	// The NICs come from the sysfs PCIe tree on the NVML path: the
	// fixture's tree (illustrative, its README) hangs GPUs and NICs off
	// host bridges, so sysfs says PHB where its topo -m says PIX; the
	// nearest NIC is the same.
	smiGPUs := devicesOfKind(viaSMI, registry.KindCUDA)
	for i, g := range devicesOfKind(viaNVML, registry.KindCUDA) {
		require.NotEmpty(t, g.NICs, g.ID)
		assert.Equal(t, smiGPUs[i].NICs[0].Name, g.NICs[0].Name, g.ID)
		assert.Equal(t, "sysfs (PCIe path)", g.Sources["nics"], g.ID)
		require.NotNil(t, g.Health, g.ID)
		assert.Equal(t, 18, *g.Health.NVLinksActive, g.ID)
		assert.Equal(t, nvidia.SourceNVML, g.Sources["memory_bytes"], g.ID)
	}
}

// dgxH100Machine is the fake NVML of the dgx-h100 fixture: topo -m prints
// NV18 for every pair, so each GPU has 18 NVLink 4.0 links (the H100's
// generation) to the fixture's four NVSwitches; a pair's PCIe path is NODE
// within a socket's four GPUs and SYS across (topo -m's NUMA Affinity
// column).
func dgxH100Machine(t testing.TB) nvmltest.Machine {
	switches := nvswitchBuses(t, "dgx-h100")
	require.Len(t, switches, 4)
	return smiMachine(t, "dgx-h100", &nvmltest.TopoOptions{Switches: switches, Version: int(nvml.NVLinkVersion4_0),
		NVPCIe: func(a, b int) int {
			if a/4 == b/4 {
				return int(nvml.TopologyNode)
			}
			return int(nvml.TopologySystem)
		}})
}

// nvswitchBuses lists the NVSwitch PCI functions (class 0x0680) of a
// fixture's sysfs, by bus id as NVML prints it ("00000000:05:00.0").
func nvswitchBuses(t testing.TB, fixture string) []string {
	dir := filepath.Join(detecttest.MachineDir(t, fixture), "root", "sys", "bus", "pci", "devices")
	out, err := exec.Command("sh", "-c", "cd "+dir+" && grep -l '^0x0680' */class | cut -d/ -f1").Output()
	require.NoError(t, err)
	var buses []string
	for _, b := range strings.Fields(string(out)) {
		buses = append(buses, "0000"+strings.ToUpper(b))
	}
	return buses
}

func interconnectsOfKind(reg *registry.Registry, kind string) []registry.Interconnect {
	var out []registry.Interconnect
	for _, ic := range reg.SystemIO.Interconnects {
		if ic.Kind == kind {
			out = append(out, ic)
		}
	}
	return out
}

// MIG through NVML: the MIG devices of the two MIG fixtures (an H100 split
// into 3g.40gb + 2g.20gb + 2x 1g.10gb; an H200 whose 3g.71gb GPU instance is
// split into two compute instances) come out as nvidia-smi -L and -q give
// them, with the shared GPU instance's memory counted once.
func TestNVMLMIGEqualsNvidiaSMI(t *testing.T) {
	for _, fixture := range []string{"nvidia-mig", "h200-mig-shared-gi"} {
		t.Run(fixture, func(t *testing.T) {
			m := smiMachine(t, fixture, nil)
			require.NotEmpty(t, m.GPUs[0].MIGs)
			viaNVML, viaSMI := detectBoth(t, fixture, m)
			assert.Equal(t, comparable(viaSMI.Devices), comparable(viaNVML.Devices))
			gpus := devicesOfKind(viaNVML, registry.KindCUDA)
			require.Len(t, gpus, 1+len(m.GPUs[0].MIGs))
			for _, s := range gpus[1:] {
				assert.Equal(t, nvidia.SourceNVML, s.Sources["memory_bytes"], s.ID)
				assert.Equal(t, nvidia.SourceNVML, s.Sources["uuid"], s.ID)
			}
		})
	}
}

// An NVML without the NVLink entry points (FAKE_OLD) on the DGX: the
// devices still come from NVML, and the NVSwitch domain from sysfs, as
// when no tool answers.
func TestNVMLWithoutNVLinkFallsBackToSysfsNVSwitch(t *testing.T) {
	opts := fixtureOptions(t, "dgx-h100", nil)
	opts.Backends = hostBackends
	opts.NVMLLibrary = nvmltest.BuildMachine(t, dgxH100Machine(t), "-DFAKE_OLD")
	opts.Path = t.TempDir()
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, nvidia.SourceNVML, devicesOfKind(reg, registry.KindCUDA)[0].Sources["memory_bytes"])
	ics := interconnectsOfKind(reg, registry.LinkNVSwitch)
	require.Len(t, ics, 1)
	assert.Equal(t, "sysfs (NVSwitch PCI functions)", ics[0].Source)
	assert.Len(t, ics[0].Devices, 8)
}

// A GPU in MIG mode whose MIG devices NVML cannot list (a library without
// the MIG device entry points): the instances come from nvidia-smi -L and
// -q, the GPU itself from NVML.
func TestNVMLWithoutMIGDevicesAsksNvidiaSMI(t *testing.T) {
	m := smiMachine(t, "nvidia-mig", nil)
	opts := fixtureOptions(t, "nvidia-mig", nil)
	opts.Backends = hostBackends
	opts.NVMLLibrary = nvmltest.BuildMachine(t, m, "-DFAKE_NO_MIG_DEVICES")
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1+len(m.GPUs[0].MIGs))
	assert.Equal(t, nvidia.SourceNVML, gpus[0].Sources["memory_bytes"])
	for _, s := range gpus[1:] {
		assert.Equal(t, "nvidia-smi -L", s.Sources["uuid"], s.ID)
		assert.Equal(t, nvidia.SourceMIGQuery, s.Sources["memory_bytes"], s.ID)
	}
}

// A driver that does not say what is at a link's end
// (nvmlDeviceGetNvLinkRemoteDeviceType answering an unknown type): links
// to no GPU of ours on a machine whose sysfs shows NVSwitches are switch
// links, and the DGX's nvswitch domain is the same.
func TestNVMLUnknownRemoteTypeWithNVSwitches(t *testing.T) {
	m := dgxH100Machine(t)
	for i := range m.GPUs {
		for j := range m.GPUs[i].Links {
			m.GPUs[i].Links[j].RemoteType = int(nvml.NVLinkRemoteUnknown)
		}
	}
	viaNVML, viaSMI := detectBoth(t, "dgx-h100", m)
	nvIC, smiIC := interconnectsOfKind(viaNVML, registry.LinkNVSwitch), interconnectsOfKind(viaSMI, registry.LinkNVSwitch)
	require.Len(t, nvIC, 1)
	nvIC[0].Source = smiIC[0].Source
	assert.Equal(t, smiIC[0], nvIC[0])
}
