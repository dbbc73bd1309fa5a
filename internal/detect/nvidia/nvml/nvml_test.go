//go:build linux && cgo

package nvml_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml/nvmltest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vendorlib/vendorlibtest"
)

var ctxFor = vendorlibtest.Context

// callDeadline bounds a test's load of, or call into, its fake library,
// which answers in milliseconds: the deadline only stops a broken test.
// It was 5 s, which a clean-clone CI run on a loaded 2-core machine
// exceeded loading one (TestReadProcesses: "context deadline exceeded",
// 2026-11-29). The tests of a hung call bound the caller's wait with
// their own, shorter deadline (AssertHungBounded).
const callDeadline = 30 * time.Second

// The fake library answers what NVML answered on the real H200 VM
// (captures/nvml.json): read through the same path as the driver's library.
func TestReadH200Capture(t *testing.T) {
	lib, err := nvml.Open(ctxFor(t, callDeadline), nvmltest.Build(t))
	require.NoError(t, err)
	assert.Equal(t, "nvmlInit_v2", lib.Symbol("init"))
	assert.Equal(t, "nvmlDeviceGetMemoryInfo_v2", lib.Symbol("memoryV2"))
	s, err := lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	assert.Equal(t, "580.159.04", s.DriverVersion)
	assert.Equal(t, "13.580.159.04", s.NVMLVersion)
	assert.Equal(t, 13000, s.CUDADriverVersion)
	require.Len(t, s.Devices, 1)
	d := s.Devices[0]
	assert.Equal(t, "NVIDIA H200", d.Name)
	assert.Equal(t, "GPU-00000000-0000-0000-0000-000000000000", d.UUID)
	assert.Equal(t, "00000000:00:06.0", d.PCI.BusID)
	assert.Equal(t, uint32(0x233510DE), d.PCI.DeviceID)
	require.NotNil(t, d.Memory)
	assert.Equal(t, nvml.Memory{Total: 150754820096, Reserved: 644939776, Free: 150109880320, Used: 0, HasReserved: true}, *d.Memory)
	assert.Equal(t, [2]int{9, 0}, [2]int{d.CCMajor, d.CCMinor})
	assert.Equal(t, &nvml.MIGMode{}, d.MIG)
	assert.Equal(t, uint32(76250), *d.PowerMilliwatts)
	assert.Equal(t, uint32(700000), *d.PowerLimitMilliwatts)
	assert.Equal(t, uint32(33), *d.TemperatureC)
	assert.Equal(t, uint32(0), *d.UtilizationPercent)
	assert.True(t, d.ProcessesKnown)
	assert.Empty(t, d.Processes)
	assert.True(t, *d.ECCEnabled)
	assert.Equal(t, uint64(0), *d.ECCUncorrectedVolatile)
	assert.Equal(t, nvml.RemappedRows{}, *d.RemappedRows)
	assert.Equal(t, uint64(1), *d.ClocksEventReasons, "GPU idle")
	assert.Equal(t, uint32(1980), d.MaxClockSMMHz)
	assert.Equal(t, uint32(3201), d.MaxClockMemoryMHz)
	assert.Equal(t, [4]uint32{5, 5, 16, 16}, [4]uint32{d.PCIeGen, d.PCIeGenMax, d.PCIeWidth, d.PCIeWidthMax})
	assert.Nil(t, d.NUMANode, "the driver said NotSupported")
	assert.Empty(t, d.NVLinks, "the driver said NotSupported")
	assert.Nil(t, s.Topology, "one GPU: no pair")
	assert.Empty(t, s.Refused, "NotSupported is not a refusal")
}

// A library with only the first entry points (an older driver branch): the
// versioned names are missing and the old ones answer; memory then has no
// reserved share and the v1 process list is read.
func TestReadOldEntryPoints(t *testing.T) {
	lib, err := nvml.Open(ctxFor(t, callDeadline), nvmltest.Build(t, "-DFAKE_OLD", "-DFAKE_PROC_PID=4242", "-DFAKE_PROC_BYTES=651165696ULL"))
	require.NoError(t, err)
	assert.Equal(t, "nvmlInit", lib.Symbol("init"))
	assert.Equal(t, "nvmlDeviceGetPciInfo_v2", lib.Symbol("pci"))
	assert.Empty(t, lib.Symbol("memoryV2"))
	s, err := lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	require.Len(t, s.Devices, 1)
	d := s.Devices[0]
	assert.Equal(t, nvml.Memory{Total: 150754820096, Free: 150109880320, Used: 644939776}, *d.Memory)
	assert.Equal(t, []nvml.Process{{PID: 4242, UsedBytes: 651165696}}, d.Processes)
	assert.Nil(t, d.ECCEnabled, "no entry point, no value")
	assert.Equal(t, 0, s.CUDADriverVersion)
}

// The processes holding memory come back with their pid and bytes (621 MiB:
// a process holding only a CUDA context on that H200, captures/cuda-context.txt).
func TestReadProcesses(t *testing.T) {
	lib, err := nvml.Open(ctxFor(t, callDeadline), nvmltest.Build(t, "-DFAKE_PROC_PID=31337", "-DFAKE_PROC_BYTES=651165696ULL"))
	require.NoError(t, err)
	s, err := lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	assert.Equal(t, []nvml.Process{{PID: 31337, UsedBytes: 621 << 20}}, s.Devices[0].Processes)
}

// nvmlInit failing (no driver loaded; driver/library version mismatch) is
// an error naming the cause, remembered for the process.
func TestInitFailures(t *testing.T) {
	for code, want := range map[string]nvml.Return{"9": nvml.ErrorDriverNotLoaded, "18": nvml.ErrorLibRMVersionMismatch} {
		path := nvmltest.Build(t, "-DFAKE_INIT_RETURN="+code)
		_, err := nvml.Open(ctxFor(t, callDeadline), path)
		var ce *nvml.CallError
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, want, ce.Code)
		assert.Equal(t, "nvmlInit_v2", ce.Call)
		_, again := nvml.Open(ctxFor(t, callDeadline), path)
		assert.Equal(t, err, again, "the failure is remembered")
	}
}

// No library at the path, and a library lacking an entry point the package
// needs (not NVML at all), are errors, not crashes.
func TestOpenMissingOrForeign(t *testing.T) {
	vendorlibtest.AssertOpenMissingOrForeign(t, func(ctx context.Context, path string) error {
		_, err := nvml.Open(ctx, path)
		return err
	}, "libnvidia-ml.so.1", nvml.ErrUnsupported)
}

// A driver that hangs in an NVML call costs the caller its deadline, not
// more, and NVML is not asked again in this process.
func TestHangingCallIsBounded(t *testing.T) {
	lib, err := nvml.Open(ctxFor(t, callDeadline), nvmltest.Build(t, "-DFAKE_HANG"))
	require.NoError(t, err)
	vendorlibtest.AssertHungBounded(t, func(ctx context.Context) error {
		_, err := lib.Read(ctx)
		return err
	}, nvml.ErrHung, 2*time.Second)
}

// nvlinkR reads the GPU 0 block of a `nvidia-smi nvlink -R` capture: each
// link's remote PCI bus id.
func nvlinkR(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var remotes []string
	for _, line := range strings.Split(string(b), "\n") {
		_, rest, ok := strings.Cut(line, "Remote Device ")
		if !ok {
			continue
		}
		bus, _, _ := strings.Cut(rest, ": Link")
		remotes = append(remotes, bus)
	}
	return remotes
}

// An H100's 18 NVLinks as `nvidia-smi nvlink -R` printed them
// (testdata/nvlink-R-h100-nccl-1182.txt): every link goes to one of four
// PCI functions at link numbers up to 47, past a GPU's 18, so NVSwitch
// ports. The fake serves them (version 6 = NVLink 4.0, the H100's
// generation) and NVML reads state, version, remote bus id and type of
// each.
func TestReadNVLinksToNVSwitches(t *testing.T) {
	remotes := nvlinkR(t, filepath.Join("testdata", "nvlink-R-h100-nccl-1182.txt"))
	require.Len(t, remotes, 18)
	m := nvmltest.H200(t)
	for _, r := range remotes {
		m.GPUs[0].Links = append(m.GPUs[0].Links, nvmltest.Link{Active: true, Version: 6, RemoteBus: r, RemoteType: 2})
	}
	lib, err := nvml.Open(ctxFor(t, callDeadline), nvmltest.BuildMachine(t, m))
	require.NoError(t, err)
	s, err := lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	links := s.Devices[0].NVLinks
	require.Len(t, links, 18)
	for i, l := range links {
		assert.Equal(t, nvml.NVLink{Link: i, Active: true, Version: nvml.NVLinkVersion4_0, RemoteBusID: remotes[i],
			RemoteType: nvml.NVLinkRemoteSwitch}, l)
	}
	assert.Equal(t, "00000000:07:00.0", links[0].RemoteBusID)
	assert.Zero(t, s.Devices[0].NVLinkSpeedMBps, "no speed field served")
	assert.Equal(t, "nvmlDeviceGetNvLinkRemotePciInfo_v2", lib.Symbol("nvlinkRemotePCI"))
}

// An inactive link has a state and version but no remote end; an older
// library without the NVLink detail entry points gives no NVLink at all
// (FAKE_OLD lacks nvmlDeviceGetNvLinkState too).
func TestReadInactiveNVLinkAndOldLibrary(t *testing.T) {
	m := nvmltest.H200(t)
	m.GPUs[0].Links = []nvmltest.Link{{Active: true, Version: 6, RemoteBus: "00000000:05:00.0", RemoteType: 2}, {Version: 6}}
	lib, err := nvml.Open(ctxFor(t, callDeadline), nvmltest.BuildMachine(t, m))
	require.NoError(t, err)
	s, err := lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	assert.Equal(t, nvml.NVLink{Link: 1, Version: nvml.NVLinkVersion4_0, RemoteType: nvml.NVLinkRemoteUnknown}, s.Devices[0].NVLinks[1])
	assert.Zero(t, s.Devices[0].NVLinkSpeedMBps, "the fake gives no speed field here")

	old, err := nvml.Open(ctxFor(t, callDeadline), nvmltest.BuildMachine(t, m, "-DFAKE_OLD"))
	require.NoError(t, err)
	s, err = old.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	assert.Empty(t, s.Devices[0].NVLinks)
	assert.Nil(t, s.Topology)
}

// The speed of the active links (NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON)
// comes back in MB/s: an A100 whose 12 links `nvidia-smi nvlink -s` prints
// as "25 GB/s" each (../testdata/nvlink-s-a100-nccl-tests-228.txt; GB/s
// there is MB/s / 1000) is served 25000.
func TestReadNVLinkSpeed(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "nvlink-s-a100-nccl-tests-228.txt"))
	require.NoError(t, err)
	gpu0, _, _ := strings.Cut(string(b), "GPU 1:")
	m := nvmltest.H200(t)
	for _, line := range strings.Split(gpu0, "\n") {
		if strings.HasSuffix(line, ": 25 GB/s") {
			// The capture does not say where links go (the issue is about an
			// NVSwitch system): a placeholder switch bus id.
			m.GPUs[0].Links = append(m.GPUs[0].Links, nvmltest.Link{Active: true, Version: 4, RemoteBus: "00000000:c4:00.0", RemoteType: 2})
		}
	}
	require.Len(t, m.GPUs[0].Links, 12)
	m.GPUs[0].LinkSpeedMBps = 25000
	lib, err := nvml.Open(ctxFor(t, callDeadline), nvmltest.BuildMachine(t, m))
	require.NoError(t, err)
	s, err := lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	assert.Len(t, s.Devices[0].NVLinks, 12)
	assert.Equal(t, uint32(25000), s.Devices[0].NVLinkSpeedMBps)
}

// readTwice opens the fake library at path and reads it twice, returning
// both snapshots.
func readTwice(t *testing.T, path string) (first, second *nvml.Snapshot) {
	t.Helper()
	lib, err := nvml.Open(ctxFor(t, callDeadline), path)
	require.NoError(t, err)
	first, err = lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	second, err = lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	return first, second
}

// A second read in the same process does not ask again what the GPU cannot
// change (maximum clocks, maximum PCIe link), and still asks everything
// that can (memory, processes, MIG and ECC mode, power limit, current
// link): the fake counts each call. The two reads answer the same.
func TestFixedFactsReadOncePerGPU(t *testing.T) {
	path := nvmltest.Build(t)
	first, second := readTwice(t, path)
	assert.Equal(t, first, second, "the cached facts are the ones read")
	assert.Equal(t, uint32(1980), second.Devices[0].MaxClockSMMHz)
	assert.Equal(t, uint32(3201), second.Devices[0].MaxClockMemoryMHz)
	for call, want := range map[string]uint64{
		"MaxClockInfo": 2, "MaxPcieLinkGeneration": 1, "MaxPcieLinkWidth": 1, // once: SM and memory clocks
		"MemoryInfo_v2": 2, "ComputeRunningProcesses": 2, "MigMode": 2, "EccMode": 2, "TotalEccErrors": 2,
		"EnforcedPowerLimit": 2, "ClocksEventReasons": 2, "CurrPcieLinkGeneration": 2, "CurrPcieLinkWidth": 2,
		"Temperature": 2, "UUID": 2, "PciInfo": 2,
	} {
		assert.Equal(t, want, nvmltest.Calls(t, path, call), call)
	}
}

// Another GPU in the same PCI slot (a new UUID) has its fixed facts read
// again; so does the first GPU when it comes back, since the cache keeps
// only the GPUs the last read saw.
func TestSwappedGPUReadsItsFixedFactsAgain(t *testing.T) {
	path := nvmltest.Build(t)
	lib, err := nvml.Open(ctxFor(t, callDeadline), path)
	require.NoError(t, err)
	read := func() nvml.Device {
		s, err := lib.Read(ctxFor(t, callDeadline))
		require.NoError(t, err)
		require.Len(t, s.Devices, 1)
		return s.Devices[0]
	}
	own := read()
	assert.Equal(t, uint64(2), nvmltest.Calls(t, path, "MaxClockInfo"))

	nvmltest.SwapUUID(t, path, "GPU-11111111-1111-1111-1111-111111111111")
	t.Cleanup(func() { nvmltest.SwapUUID(t, path, "") })
	swapped := read()
	assert.Equal(t, "GPU-11111111-1111-1111-1111-111111111111", swapped.UUID)
	assert.Equal(t, uint64(4), nvmltest.Calls(t, path, "MaxClockInfo"), "a new UUID: read again")
	assert.Equal(t, uint64(2), nvmltest.Calls(t, path, "MaxPcieLinkGeneration"))
	read()
	assert.Equal(t, uint64(4), nvmltest.Calls(t, path, "MaxClockInfo"), "then cached")

	nvmltest.SwapUUID(t, path, "")
	back := read()
	assert.Equal(t, own, back)
	assert.Equal(t, uint64(6), nvmltest.Calls(t, path, "MaxClockInfo"), "the first GPU back: read again")
}

// The cache belongs to one loaded library: another library serving the
// same GPU (same UUID and bus id) is asked itself.
func TestFixedFactsCachedPerLibrary(t *testing.T) {
	a, b := nvmltest.Build(t), nvmltest.Build(t)
	readTwice(t, a)
	assert.Equal(t, uint64(0), nvmltest.Calls(t, b, "MaxClockInfo"))
	first, _ := readTwice(t, b)
	assert.Equal(t, uint64(2), nvmltest.Calls(t, b, "MaxClockInfo"))
	assert.Equal(t, uint32(1980), first.Devices[0].MaxClockSMMHz)
}

// A fixed fact the driver refuses (no permission) is not cached: every read
// asks again and reports the refusal, and has no value.
func TestRefusedFixedFactIsAskedAgain(t *testing.T) {
	path := nvmltest.Build(t, "-DFAKE_MAX_CLOCK_RETURN=4") // NVML_ERROR_NO_PERMISSION
	first, second := readTwice(t, path)
	assert.Equal(t, uint64(4), nvmltest.Calls(t, path, "MaxClockInfo"))
	assert.Equal(t, uint64(2), nvmltest.Calls(t, path, "MaxPcieLinkGeneration"), "read with the clocks until all are settled")
	for _, s := range []*nvml.Snapshot{first, second} {
		assert.Zero(t, s.Devices[0].MaxClockSMMHz)
		assert.Equal(t, []string{"device 0: nvmlDeviceGetMaxClockInfo: Insufficient Permissions",
			"device 0: nvmlDeviceGetMaxClockInfo: Insufficient Permissions"}, s.Refused)
	}
}

// Reads from many goroutines at once (the C ABI is called from any thread)
// all answer the same, and the fixed facts are read once (run with -race).
func TestConcurrentReadsShareTheCache(t *testing.T) {
	path := nvmltest.Build(t)
	lib, err := nvml.Open(ctxFor(t, callDeadline), path)
	require.NoError(t, err)
	want, err := lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	const readers = 8
	got := make([]*nvml.Snapshot, readers)
	errs := make([]error, readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() { got[i], errs[i] = lib.Read(ctxFor(t, callDeadline)) })
	}
	wg.Wait()
	for i := range readers {
		require.NoError(t, errs[i])
		assert.Equal(t, want, got[i])
	}
	assert.Equal(t, uint64(2), nvmltest.Calls(t, path, "MaxClockInfo"))
	assert.Equal(t, uint64(1+readers), nvmltest.Calls(t, path, "MemoryInfo_v2"))
}

// h200s is a machine of n GPUs, each answering what the H200 of the capture
// answered, under its own UUID and PCI bus id (for the tests of reads of
// many GPUs; the values of one GPU are the capture's).
func h200s(t *testing.T, n int) nvmltest.Machine {
	m := nvmltest.H200(t)
	gpu := m.GPUs[0]
	m.GPUs = nil
	for i := range n {
		g := gpu
		g.UUID = fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", i)
		g.Bus = fmt.Sprintf("00000000:%02X:00.0", 0x10+i)
		g.BusLegacy = g.Bus[4:]
		g.BusNo = uint32(0x10 + i)
		m.GPUs = append(m.GPUs, g)
	}
	return m
}

// The GPUs are read in parallel, at most eight at once: twelve GPUs whose
// memory call waits until eight are in flight (FAKE_BARRIER) all pass
// (read one after another, each would wait its second and the most in
// flight would be 1), and never more than eight are. The devices still
// come back in NVML's index order, each with its own values.
func TestReadsGPUsInParallelBounded(t *testing.T) {
	m := h200s(t, 12)
	path := nvmltest.BuildMachine(t, m, "-DFAKE_BARRIER=8")
	lib, err := nvml.Open(ctxFor(t, callDeadline), path)
	require.NoError(t, err)
	s, err := lib.Read(ctxFor(t, 30*time.Second))
	require.NoError(t, err)
	assert.Equal(t, uint64(8), nvmltest.MaxInFlight(t, path))
	require.Len(t, s.Devices, 12)
	for i, d := range s.Devices {
		assert.Equal(t, i, d.Index)
		assert.Equal(t, m.GPUs[i].UUID, d.UUID)
		assert.Equal(t, m.GPUs[i].Bus, d.PCI.BusID)
		assert.Equal(t, uint32(1980), d.MaxClockSMMHz)
		require.NotNil(t, d.Memory)
		assert.Equal(t, uint64(150754820096), d.Memory.Total)
	}
	assert.Empty(t, s.Refused)
	assert.Equal(t, uint64(24), nvmltest.Calls(t, path, "MaxClockInfo"), "SM and memory clock of each GPU, once")
}

// Refusals come back in device order, as one read after another gave them,
// whichever GPU's read ended first.
func TestParallelRefusalsInDeviceOrder(t *testing.T) {
	path := nvmltest.BuildMachine(t, h200s(t, 8), "-DFAKE_MAX_CLOCK_RETURN=4") // NVML_ERROR_NO_PERMISSION
	lib, err := nvml.Open(ctxFor(t, callDeadline), path)
	require.NoError(t, err)
	s, err := lib.Read(ctxFor(t, callDeadline))
	require.NoError(t, err)
	var want []string
	for i := range 8 {
		for range 2 {
			want = append(want, fmt.Sprintf("device %d: nvmlDeviceGetMaxClockInfo: Insufficient Permissions", i))
		}
	}
	assert.Equal(t, want, s.Refused)
}

// A driver that hangs while several GPUs are read at once still costs the
// caller its deadline only, and NVML is not asked again.
func TestHangingCallIsBoundedWithManyGPUs(t *testing.T) {
	lib, err := nvml.Open(ctxFor(t, callDeadline), nvmltest.BuildMachine(t, h200s(t, 8), "-DFAKE_HANG"))
	require.NoError(t, err)
	vendorlibtest.AssertHungBounded(t, func(ctx context.Context) error {
		_, err := lib.Read(ctx)
		return err
	}, nvml.ErrHung, 2*time.Second)
}
