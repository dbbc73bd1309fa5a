// Package nvmltest builds the fake libnvidia-ml.so.1 of the NVML tests:
// ../testdata/fake_nvml.c compiled with cc, its values defined from a
// capture of what NVML answered on a real GPU
// (testdata/machines/h200-vm/captures/nvml.json).
package nvmltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	json "github.com/goccy/go-json"
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

// Defines are the -D flags that give the fake the capture's first device.
func Defines(t testing.TB) []string {
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
	str := func(k, v string) string { return "-D" + k + "=" + strconv.Quote(v) }
	num := func(k string, v any) string { return fmt.Sprintf("-D%s=%vULL", k, v) }
	return []string{
		str("FAKE_DRIVER", c.Calls.Driver), str("FAKE_NVML", c.Calls.NVML), fmt.Sprintf("-DFAKE_CUDA=%d", c.Calls.CUDADriver),
		str("FAKE_NAME", d.Name), str("FAKE_UUID", d.UUID),
		str("FAKE_BUS_LEGACY", d.PCI.BusIDLegacy), str("FAKE_BUS", d.PCI.BusID),
		num("FAKE_DOMAIN", d.PCI.Domain), num("FAKE_BUSNO", d.PCI.Bus), num("FAKE_DEVNO", d.PCI.Device),
		num("FAKE_PCI_DEVICE_ID", d.PCI.PCIDeviceID), num("FAKE_PCI_SUBSYSTEM_ID", d.PCI.PCISubSystemID),
		num("FAKE_MEM_TOTAL", d.Memory.Total), num("FAKE_MEM_FREE", d.Memory.Free), num("FAKE_MEM_USED", d.Memory.Used),
		num("FAKE_MEM2_TOTAL", d.MemoryV2.Total), num("FAKE_MEM2_RESERVED", d.MemoryV2.Reserved),
		num("FAKE_MEM2_FREE", d.MemoryV2.Free), num("FAKE_MEM2_USED", d.MemoryV2.Used),
		fmt.Sprintf("-DFAKE_CC_MAJOR=%d", d.CC[0]), fmt.Sprintf("-DFAKE_CC_MINOR=%d", d.CC[1]),
		num("FAKE_MIG_CURRENT", d.MIGMode[0]), num("FAKE_MIG_PENDING", d.MIGMode[1]),
		num("FAKE_UTIL_GPU", d.Util.GPU), num("FAKE_UTIL_MEM", d.Util.Memory),
		num("FAKE_POWER_MW", d.PowerMW), num("FAKE_POWER_LIMIT_MW", d.PowerLimitMW), num("FAKE_TEMP_C", d.TempC),
		num("FAKE_ECC_CURRENT", d.ECCMode[0]), num("FAKE_ECC_PENDING", d.ECCMode[1]),
		num("FAKE_ECC_UNCORRECTED_VOLATILE", d.ECCUncorrected),
		num("FAKE_REMAP_CORR", d.RemappedRows[0]), num("FAKE_REMAP_UNC", d.RemappedRows[1]),
		num("FAKE_REMAP_PENDING", d.RemappedRows[2]), num("FAKE_REMAP_FAILURE", d.RemappedRows[3]),
		num("FAKE_THROTTLE", d.ThrottleReasons),
		num("FAKE_MAX_CLOCK_SM", d.MaxClockSM), num("FAKE_MAX_CLOCK_MEM", d.MaxClockMem),
		num("FAKE_PCIE_GEN_MAX", d.PCIeGenMax), num("FAKE_PCIE_WIDTH_MAX", d.PCIeWidthMax),
		num("FAKE_PCIE_GEN", d.PCIeGen), num("FAKE_PCIE_WIDTH", d.PCIeWidth),
	}
}

// Build compiles the fake library with the capture's values and the extra
// -D flags of a variant ("-DFAKE_HANG", "-DFAKE_INIT_RETURN=18") into a
// fresh directory, as libnvidia-ml.so.1, and returns its path. The test is
// skipped when no C compiler is at hand.
func Build(t testing.TB, extra ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) to build the fake libnvidia-ml.so.1")
	}
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "fake_nvml.c")
	out := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	args := append([]string{"-shared", "-fPIC", "-O1", "-o", out}, Defines(t)...)
	args = append(append(args, extra...), src)
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("cc fake_nvml.c: %v\n%s", err, b)
	}
	return out
}
