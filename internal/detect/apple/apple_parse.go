package apple

import (
	"errors"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// Pure parsers of the two macOS tools the apple backend runs. Sources of the
// formats:
//
//   - sysctl(8) "-n": only the values are printed, one line per name asked
//     (the "name: value" form without -n is shown in Dr-Noob/cpufetch#139 for
//     hw.perflevel0.logicalcpu and super-l/machine-code#1 for
//     "machdep.cpu.brand_string: Apple M1 Pro"). An unknown name prints
//     "sysctl: unknown oid '<name>'" on stderr and exits 1
//     (openshift/origin#10692); Intel Macs have no hw.perflevel* names
//     (x-cmd/x-cmd#484).
//   - system_profiler SPDisplaysDataType -json: an object whose
//     "SPDisplaysDataType" array holds one entry per GPU, every value a
//     string, keys sorted ("_name", "spdisplays_mtlgpufamilysupport",
//     "spdisplays_ndrvs", "spdisplays_vendor", "sppci_bus", "sppci_cores",
//     "sppci_device_type", "sppci_model"): a capture on an M3 Pro in
//     timmo001/system-bridge#3408, whose merged parser reads "_name",
//     "sppci_cores", "sppci_model" and "sppci_device_type". "_name" is not
//     always the chip: macOS 11 printed "kHW_AppleM1Item" there and
//     "spdisplays_metalfamily" instead of "spdisplays_mtlgpufamilysupport"
//     (exelban/stats#394), so the name comes from "sppci_model".

// appleSysctlNames are asked in one sysctl run. The names every Mac has come
// first: an Intel Mac lacks the hw.perflevel* names, and whether sysctl stops
// at the first unknown name or goes on, the values printed are then a prefix
// of this list, so a line's position still names its value.
var appleSysctlNames = []string{
	"hw.memsize", "machdep.cpu.brand_string", "hw.ncpu",
	"hw.perflevel0.logicalcpu", "hw.perflevel1.logicalcpu",
}

// sysctlHost is what sysctl says about a Mac. Zero is unknown.
type sysctlHost struct {
	MemoryBytes int64  // hw.memsize: physical memory in bytes
	Brand       string // machdep.cpu.brand_string: "Apple M3 Pro", "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz"
	LogicalCPUs int    // hw.ncpu
	PerfLevel0  int    // hw.perflevel0.logicalcpu: the fastest cores (Apple Silicon only)
	PerfLevel1  int    // hw.perflevel1.logicalcpu: the next core type
}

// maxMacCPUs bounds a believable hw.ncpu; the largest Mac has 32 cores.
const maxMacCPUs = 1 << 12

// parseSysctlHost reads the values of appleSysctlNames, one per line in the
// order asked; fewer lines leave the missing values unknown. Implausible
// values are issues, never figures.
func parseSysctlHost(out string) (sysctlHost, []machine.Issue) {
	var h sysctlHost
	var issues []machine.Issue
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	value := func(i int) string {
		if i < len(lines) {
			return strings.TrimSpace(lines[i])
		}
		return ""
	}
	if v := value(0); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil && !isDigits(v):
			issues = append(issues, machine.Issue{Code: registry.WarnParseError, Message: "hw.memsize " + strconv.Quote(machine.CleanText(v)) + " is not a number of bytes"})
		case err != nil || n <= 0 || n > machine.MaxHostMemory:
			issues = append(issues, machine.Issue{Code: registry.WarnAbsurdValue, Message: "hw.memsize " + machine.CleanText(v) + " is not a memory size between 1 byte and 1 PiB"})
		default:
			h.MemoryBytes = n
		}
	}
	h.Brand = machine.CleanText(value(1))
	for i, dst := range []*int{&h.LogicalCPUs, &h.PerfLevel0, &h.PerfLevel1} {
		v := value(2 + i)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > maxMacCPUs {
			issues = append(issues, machine.Issue{Code: registry.WarnParseError, Message: appleSysctlNames[2+i] + " " + strconv.Quote(machine.CleanText(v)) + " is not a CPU count"})
			continue
		}
		*dst = n
	}
	return h, issues
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// isAppleSilicon reports whether a brand string names an Apple M-series chip
// ("Apple M1" ... "Apple M4 Max"). Intel Macs print "Intel(R) ..." and get no
// Apple GPU or Neural Engine.
func isAppleSilicon(brand string) bool {
	rest, ok := strings.CutPrefix(brand, "Apple M")
	return ok && rest != "" && rest[0] >= '0' && rest[0] <= '9'
}

// macCPUVendor names the CPU vendor from the brand string.
func macCPUVendor(brand string) string {
	switch {
	case isAppleSilicon(brand):
		return "apple"
	case strings.HasPrefix(brand, "Intel"):
		return "intel"
	}
	return ""
}

// spDisplay is one entry of SPDisplaysDataType: the keys read, all strings.
type spDisplay struct {
	Name       string `json:"_name"`
	Model      string `json:"sppci_model"`
	Cores      string `json:"sppci_cores"`
	Vendor     string `json:"spdisplays_vendor"`
	Bus        string `json:"sppci_bus"`
	DeviceType string `json:"sppci_device_type"`
	Metal      string `json:"spdisplays_mtlgpufamilysupport"`
}

// ParseSPDisplays decodes system_profiler SPDisplaysDataType -json.
func ParseSPDisplays(b []byte) ([]spDisplay, error) {
	var doc struct {
		Displays []spDisplay `json:"SPDisplaysDataType"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, errors.New(strictjson.Describe(err))
	}
	return doc.Displays, nil
}

// AppleGPUEntry picks the built-in Apple GPU: vendor "sppci_vendor_Apple", or
// a model naming an Apple M chip when the vendor key is absent.
func AppleGPUEntry(ds []spDisplay) (spDisplay, bool) {
	for _, d := range ds {
		if d.DeviceType != "" && d.DeviceType != "spdisplays_gpu" {
			continue
		}
		if d.Vendor == "sppci_vendor_Apple" || isAppleSilicon(machine.CleanText(d.Model)) {
			return d, true
		}
	}
	return spDisplay{}, false
}

// gpuCores parses "sppci_cores" ("19"); 0 when absent or not a count.
func (d spDisplay) GPUCores() (int, bool) {
	v := strings.TrimSpace(d.Cores)
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > 1024 {
		return 0, false
	}
	return n, true
}

// metalSupport turns "spdisplays_metal3" into "Metal 3"; "" for anything else.
func metalSupport(v string) string {
	n, ok := strings.CutPrefix(v, "spdisplays_metal")
	if !ok || !isDigits(n) {
		return ""
	}
	return "Metal " + n
}

// appleBinRecords resolves the chips whose bins differ in memory bandwidth
// (specs leaves them out of name matching) by GPU core count. The counts are
// those the record names state (internal/specs/records_apple.go); a count no record names (the
// 32-core M4 Max) stays unresolved and its bandwidth unknown.
var appleBinRecords = map[string]map[int]string{
	"Apple M3 Max": {30: "Apple M3 Max (14-core CPU / 30-core GPU)", 40: "Apple M3 Max (16-core CPU / 40-core GPU)"},
	"Apple M4 Max": {40: "Apple M4 Max (top bin, up to 40-core GPU)"},
}

// appleBandwidth returns the unified memory bandwidth of a chip from the
// datasheet table: by name when the name is one record, by the GPU core
// count for the binned chips; 0 when unknown.
func appleBandwidth(chip string, gpuCores int) float64 {
	if bins, ok := appleBinRecords[chip]; ok {
		if s, ok := specs.ByName(bins[gpuCores]); ok {
			return s.BandwidthGBs
		}
		return 0
	}
	if s, ok := specs.Lookup(chip); ok && s.Category == specs.AppleSoC {
		return s.BandwidthGBs
	}
	return 0
}

// neuralEngineCores lists the Neural Engine core count per chip where a
// source states it: the M3 family table of AnandTech's M3 launch article
// ("Neural Engine: 16-Core, 18 TOPS" for M3, M3 Pro and M3 Max; copy at
// https://akex.ca/tech/apple-announces-m3-soc-family-m3-m3-pro-and-m3-max-make-their-marks).
// Chips not listed get no apple_npu device rather than a guessed one.
var neuralEngineCores = map[string]int{
	"Apple M3": 16, "Apple M3 Pro": 16, "Apple M3 Max": 16,
}

// SourceWorkingSet names where a Metal GPU's memory_usable_bytes comes from:
// the working-set rule below applied to hw.memsize.
const SourceWorkingSet = "sysctl hw.memsize (Metal working-set rule)"

// metalWorkingSet is the memory Metal lets one process keep on the GPU of a
// Mac with ramBytes of unified memory: MTLDevice.recommendedMaxWorkingSetSize
// (https://developer.apple.com/documentation/metal/mtldevice/recommendedmaxworkingsetsize),
// which llama.cpp logs at start-up and ollama plans with. macOS does not
// expose it outside Metal, so it is derived from the RAM by the rule these
// public llama.cpp logs show ("MB" there is MiB):
//
//   - 16 GiB: 10922.67 MB, https://github.com/abetlen/llama-cpp-python/issues/687
//   - 32 GiB: 21845.34 MB, https://github.com/ollama/ollama/issues/434 (M2 Max)
//     and https://github.com/ggml-org/llama.cpp/pull/2011 (M1 Max)
//   - 64 GiB: 49152.00 MiB, https://github.com/ggml-org/llama.cpp/issues/1870 (M1 Max)
//   - 96 GiB: 73728.00 MB, https://github.com/ggml-org/llama.cpp/issues/3213 (M2 Max)
//
// that is two thirds of RAM up to 32 GiB and three quarters from 64 GiB. No
// capture was found for 36 or 48 GiB: they get the lower fraction, which
// never promises more than Metal allows. Later macOS releases raise the cap
// (107.52 GiB on a 128 GiB Mac on macOS 26, https://github.com/antirez/ds4/pull/893)
// and `iogpu.wired_limit_mb` overrides it; the rule is the lower bound.
func metalWorkingSet(ramBytes int64) int64 {
	if ramBytes <= 0 {
		return 0
	}
	if ramBytes >= 64<<30 {
		return ramBytes * 3 / 4
	}
	return ramBytes * 2 / 3
}
