// Package nvmltest builds the fake libnvidia-ml.so.1 of the NVML tests:
// ../testdata/fake_nvml.c compiled with cc and a generated fake_data.h that
// holds a Machine's values: what NVML answered on a real GPU
// (testdata/machines/h200-vm/captures/nvml.json, H200), or a multi-GPU
// machine the tests build from public nvidia-smi captures.
package nvmltest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vendorlib/vendorlibtest"
)

// capture is the part of nvml.json the fake answers with.
type capture struct {
	Calls struct {
		Driver     string `json:"driver"`
		NVML       string `json:"nvml"`
		CUDADriver int    `json:"cuda_driver"`
		Devices    []struct {
			Name   string `json:"name"`
			UUID   string `json:"uuid"`
			Memory struct {
				Total, Free, Used uint64
			} `json:"memory"`
			MemoryV2 struct {
				Total, Reserved, Free, Used uint64
			} `json:"memory_v2"`
			PCI struct {
				BusIDLegacy    string `json:"busIdLegacy"`
				Domain         uint32 `json:"domain"`
				Bus            uint32 `json:"bus"`
				Device         uint32 `json:"device"`
				PCIDeviceID    uint32 `json:"pciDeviceId"`
				PCISubSystemID uint32 `json:"pciSubSystemId"`
				BusID          string `json:"busId"`
			} `json:"pci"`
			CC      [2]int `json:"cc"`
			MIGMode [2]int `json:"mig_mode"`
			Util    struct {
				GPU    int `json:"gpu"`
				Memory int `json:"memory"`
			} `json:"util"`
			PowerMW         int    `json:"power_mw"`
			PowerLimitMW    int    `json:"power_limit_mw"`
			TempC           int    `json:"temp_c"`
			ECCMode         [2]int `json:"ecc_mode"`
			ECCUncorrected  int    `json:"ecc_uncorrected_volatile"`
			RemappedRows    [4]int `json:"remapped_rows"`
			ThrottleReasons uint64 `json:"throttle_reasons"`
			MaxClockSM      int    `json:"max_clock_sm"`
			MaxClockMem     int    `json:"max_clock_mem"`
			PCIeGenMax      int    `json:"pcie_gen_max"`
			PCIeWidthMax    int    `json:"pcie_width_max"`
			PCIeGen         int    `json:"pcie_gen"`
			PCIeWidth       int    `json:"pcie_width"`
		} `json:"devices"`
	} `json:"calls"`
}

// CapturePath is the NVML capture of the H200 VM fixture.
func CapturePath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "..", "testdata", "machines", "h200-vm", "captures", "nvml.json")
}

// Machine is what the fake library answers: the system's versions, its
// GPUs in NVML index order, and the common PCIe ancestor of each pair
// (Ancestor[a][b], an nvmlGpuTopologyLevel_t; nil for none). Latency is
// what each call costs before it answers, by the call's name in the fake
// (fake_nvml.c, FAKE_CALLS); none when nil (see H200Latency).
type Machine struct {
	Driver, NVML string
	CUDA         int
	GPUs         []GPU
	Ancestor     [][]int
	Latency      map[string]time.Duration
}

// GPU is one GPU of a fake Machine. Links nil means the driver answers
// NotSupported for NVLink (a GPU without one).
type GPU struct {
	Name, UUID, BusLegacy, Bus              string
	Domain, BusNo, DevNo                    uint32
	PCIDeviceID, PCISubsystemID             uint32
	MemTotal, MemFree, MemUsed              uint64
	Mem2Total, Mem2Reserved, Mem2Free       uint64
	Mem2Used                                uint64
	CCMajor, CCMinor                        int
	MIGCurrent, MIGPending                  int
	UtilGPU, UtilMem, PowerMW, PowerLimitMW int
	TempC, ECCCurrent, ECCPending           int
	ECCUncorrected                          uint64
	RemappedRows                            [4]int
	Throttle                                uint64
	MaxClockSM, MaxClockMem                 int
	PCIeGenMax, PCIeWidthMax                int
	PCIeGen, PCIeWidth                      int
	Links                                   []Link
	LinkSpeedMBps                           int
	MaxMIG                                  int
	MIGs                                    []MIG
}

// Link is one NVLink: its state, nvmlNvlinkVersion_t, the PCI bus id at its
// other end and nvmlIntNvLinkDeviceType_t (0 GPU, 2 switch).
type Link struct {
	Active     bool
	Version    int
	RemoteBus  string
	RemoteType int
}

// MIG is one MIG device.
type MIG struct {
	Name, UUID                 string
	MemTotal, MemFree, MemUsed uint64
	GPUInstance                int
	ComputeInstance            int
}

// H200 is the fake machine of the H200 VM's nvml.json: one GPU, its
// driver's answers (NVLink and NUMA node NotSupported).
func H200(t testing.TB) Machine {
	t.Helper()
	b, err := os.ReadFile(CapturePath())
	if err != nil {
		t.Fatalf("nvml capture: %v", err)
	}
	var c capture
	if err := json.Unmarshal(b, &c); err != nil || len(c.Calls.Devices) == 0 {
		t.Fatalf("nvml capture: %v (%d devices)", err, len(c.Calls.Devices))
	}
	d := c.Calls.Devices[0]
	g := GPU{Name: d.Name, UUID: d.UUID, BusLegacy: d.PCI.BusIDLegacy, Bus: d.PCI.BusID,
		Domain: d.PCI.Domain, BusNo: d.PCI.Bus, DevNo: d.PCI.Device,
		PCIDeviceID: d.PCI.PCIDeviceID, PCISubsystemID: d.PCI.PCISubSystemID,
		MemTotal: d.Memory.Total, MemFree: d.Memory.Free, MemUsed: d.Memory.Used,
		Mem2Total: d.MemoryV2.Total, Mem2Reserved: d.MemoryV2.Reserved, Mem2Free: d.MemoryV2.Free, Mem2Used: d.MemoryV2.Used,
		CCMajor: d.CC[0], CCMinor: d.CC[1], MIGCurrent: d.MIGMode[0], MIGPending: d.MIGMode[1],
		UtilGPU: d.Util.GPU, UtilMem: d.Util.Memory, PowerMW: d.PowerMW, PowerLimitMW: d.PowerLimitMW, TempC: d.TempC,
		ECCCurrent: d.ECCMode[0], ECCPending: d.ECCMode[1], ECCUncorrected: uint64(d.ECCUncorrected),
		RemappedRows: d.RemappedRows, Throttle: d.ThrottleReasons,
		MaxClockSM: d.MaxClockSM, MaxClockMem: d.MaxClockMem,
		PCIeGenMax: d.PCIeGenMax, PCIeWidthMax: d.PCIeWidthMax, PCIeGen: d.PCIeGen, PCIeWidth: d.PCIeWidth}
	return Machine{Driver: c.Calls.Driver, NVML: c.Calls.NVML, CUDA: c.Calls.CUDADriver, GPUs: []GPU{g}}
}

// header is m as fake_data.h.
func (m Machine) header() string {
	var b strings.Builder
	q := strconv.Quote
	fmt.Fprintf(&b, "#define FAKE_DRIVER %s\n#define FAKE_NVML %s\n#define FAKE_CUDA %d\n#define FAKE_NGPUS %d\n",
		q(m.Driver), q(m.NVML), m.CUDA, len(m.GPUs))
	for i, g := range m.GPUs {
		if len(g.Links) > 0 {
			fmt.Fprintf(&b, "static struct fake_link links%d[] = {\n", i)
			for _, l := range g.Links {
				active := 0
				if l.Active {
					active = 1
				}
				fmt.Fprintf(&b, "\t{%d, %d, %d, %s},\n", active, l.Version, l.RemoteType, q(l.RemoteBus))
			}
			b.WriteString("};\n")
		}
		if len(g.MIGs) > 0 {
			fmt.Fprintf(&b, "static struct fake_mig migs%d[] = {\n", i)
			for _, mg := range g.MIGs {
				fmt.Fprintf(&b, "\t{KIND_MIG, %s, %s, %dULL, %dULL, %dULL, %d, %d},\n", q(mg.Name), q(mg.UUID),
					mg.MemTotal, mg.MemFree, mg.MemUsed, mg.GPUInstance, mg.ComputeInstance)
			}
			b.WriteString("};\n")
		}
	}
	b.WriteString("static struct fake_gpu fake_gpus[] = {\n")
	for i, g := range m.GPUs {
		links, nlinks := "0", -1
		if g.Links != nil {
			nlinks = len(g.Links)
			if nlinks > 0 {
				links = fmt.Sprintf("links%d", i)
			}
		}
		migs := "0"
		if len(g.MIGs) > 0 {
			migs = fmt.Sprintf("migs%d", i)
		}
		fmt.Fprintf(&b, "\t{KIND_GPU, %s, %s, %s, %s, %d, %d, %d, %d, %d,\n", q(g.Name), q(g.UUID), q(g.BusLegacy), q(g.Bus),
			g.Domain, g.BusNo, g.DevNo, g.PCIDeviceID, g.PCISubsystemID)
		fmt.Fprintf(&b, "\t %dULL, %dULL, %dULL, %dULL, %dULL, %dULL, %dULL,\n", g.MemTotal, g.MemFree, g.MemUsed,
			g.Mem2Total, g.Mem2Reserved, g.Mem2Free, g.Mem2Used)
		fmt.Fprintf(&b, "\t %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %dULL, %d, %d, %d, %d, %dULL,\n",
			g.CCMajor, g.CCMinor, g.MIGCurrent, g.MIGPending, g.UtilGPU, g.UtilMem, g.PowerMW, g.PowerLimitMW, g.TempC,
			g.ECCCurrent, g.ECCPending, g.ECCUncorrected, g.RemappedRows[0], g.RemappedRows[1], g.RemappedRows[2], g.RemappedRows[3],
			g.Throttle)
		fmt.Fprintf(&b, "\t %d, %d, %d, %d, %d, %d, %d, %s, %d, %d, %s, %d},\n", g.MaxClockSM, g.MaxClockMem,
			g.PCIeGenMax, g.PCIeWidthMax, g.PCIeGen, g.PCIeWidth, nlinks, links, g.MaxMIG, len(g.MIGs), migs, g.LinkSpeedMBps)
	}
	b.WriteString("};\n")
	n := max(len(m.GPUs), 1)
	fmt.Fprintf(&b, "static const int fake_ancestor[%d][%d] = {\n", n, n)
	for a := 0; a < n; a++ {
		b.WriteString("\t{")
		for c := 0; c < n; c++ {
			v := -1
			if a < len(m.Ancestor) && c < len(m.Ancestor[a]) {
				v = m.Ancestor[a][c]
			}
			fmt.Fprintf(&b, "%d, ", v)
		}
		b.WriteString("},\n")
	}
	b.WriteString("};\n")
	b.WriteString(m.latencyTable())
	return b.String()
}

// latencyTable is m.Latency as fake_data.h's fake_latency, in name order
// (ending with an empty entry, so that the array is never empty).
func (m Machine) latencyTable() string {
	var b strings.Builder
	b.WriteString("static const struct fake_latency fake_latency[] = {\n")
	for _, call := range slices.Sorted(maps.Keys(m.Latency)) {
		fmt.Fprintf(&b, "\t{%s, %dLL},\n", strconv.Quote(call), m.Latency[call].Nanoseconds())
	}
	b.WriteString("\t{0, 0},\n};\n")
	return b.String()
}

// Build compiles the fake library answering the H200 capture's values,
// with the extra -D flags of a variant ("-DFAKE_HANG",
// "-DFAKE_INIT_RETURN=18"); see BuildMachine.
func Build(t testing.TB, extra ...string) string {
	t.Helper()
	return BuildMachine(t, H200(t), extra...)
}

// BuildMachine compiles the fake library answering m's values, with the
// extra -D flags of a variant, into a fresh directory, as
// libnvidia-ml.so.1, and returns its path. The test is skipped when no C
// compiler is at hand.
func BuildMachine(t testing.TB, m Machine, extra ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "fake_nvml.c")
	return vendorlibtest.BuildFake(t, src, m.header(), "libnvidia-ml.so.1", extra...)
}
