package host

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/apple"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The host CPU: one device, always present. /proc/cpuinfo gives the model,
// vendor and core counts, /proc/meminfo the host memory (Linux fs/proc/meminfo.c,
// https://github.com/torvalds/linux).

// BackendCPU names the cpu backend (the host CPU, above).
const BackendCPU = "cpu"

// CPU is this file's detection source (the orchestrator lists it).
var CPU = machine.Backend{Name: BackendCPU, Detect: detectCPU}

func detectCPU(ctx context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	if !m.Exists(machine.PathCPUInfo) && !m.Exists(machine.PathMemInfo) {
		// No procfs: a Mac describes its host through sysctl (apple.go); its
		// warnings are the apple backend's to report.
		if d, ok := apple.MacHostCPU(ctx, m, precision.CPU()); ok {
			f.Devices = append(f.Devices, d)
			return f
		}
	}
	d := registry.Device{ID: "cpu", Kind: registry.KindCPU, Available: true,
		Quantizations: precision.CPU()}

	if info, ok := hostCPUInfo(m, &f); ok {
		if info.Name != "" {
			d.Name = info.Name
			d.SetSource("name", "procfs")
			if isARMCoreName(info.Name) {
				d.SetSource("name", srcARMName)
			}
		}
		if info.Vendor != "" {
			d.Vendor = info.Vendor
			d.SetSource("vendor", "procfs")
		}
		if info.Logical > 0 {
			d.Threads = info.Logical
			d.Cores = info.Logical
			if info.Physical > 0 {
				d.Cores = info.Physical
			}
			d.SetSource("cores", "procfs")
		}
		if info.Features != nil {
			d.CPUFeatures = slices.Clone(info.Features) // info is the memo's
			d.SetSource("cpu_features", "procfs")
		}
	}
	mi := make(map[string]int64, len(hostMemoryKeys)) // small: it stays on the stack
	// Parsed in the read's callback: only the values of hostMemoryKeys
	// become strings, not the whole file (some 1.5 KB a detection).
	if readProc(m, &f, BackendCPU, machine.PathMemInfo, func(b []byte) { parseMemInfoLines(mi, b, hostMemoryKeys) }) {
		total, free, issues := hostMemory(mi)
		for _, is := range issues {
			f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendCPU, Code: is.Code,
				Message: is.Message, Path: "/" + machine.PathMemInfo})
		}
		if total > 0 {
			d.MemoryBytes = total
			d.SetSource("memory_bytes", "procfs")
		}
		if free != nil {
			d.MemoryFreeBytes = free
			d.SetSource("memory_free_bytes", "procfs")
		}
	}
	applyCgroupMemoryLimit(m, &d)
	f.Devices = append(f.Devices, d)
	return f
}

// applyCgroupMemoryLimit makes a container's cgroup memory limit the CPU
// device's usable memory when it is below the host's RAM (or the RAM is
// unknown): a process that allocates past it is killed, whatever
// /proc/meminfo says. Cores and threads stay the hardware's; the CPU quota
// is reported as environment.cgroup_cpu_limit.
func applyCgroupMemoryLimit(m *machine.Machine, d *registry.Device) {
	limit, source := cgroupMemoryLimit(m)
	if limit <= 0 || d.MemoryBytes > 0 && limit >= d.MemoryBytes {
		return
	}
	d.MemoryUsableBytes = limit
	d.SetSource("memory_usable_bytes", source)
}

// readProcText reads a procfs/sysfs text file. A missing file is silent (a
// sysroot without /proc, a kernel without the feature); any other read error
// is a sysfs_read warning.
func readProcText(m *machine.Machine, f *machine.Findings, backend, name string) (string, bool) {
	// WithFile, not ReadFile: the text is a copy already, ReadFile's copy of
	// the bytes would be a second (docs/performance.md, "Eighth pass").
	var text string
	ok := readProc(m, f, backend, name, func(b []byte) { text = string(b) })
	return text, ok
}

// readProc hands the bytes of a procfs or sysfs file to use, which must not
// keep them, and reports whether it could; a read error other than absence
// is a sysfs_read warning of backend.
func readProc(m *machine.Machine, f *machine.Findings, backend, name string, use func([]byte)) bool {
	err := m.WithFile(name, machine.MaxFileBytes, use)
	if err != nil {
		if !machine.IsMissing(err) {
			f.Warnings = append(f.Warnings, registry.Warning{Backend: backend, Code: registry.WarnSysfsRead,
				Message: err.Error(), Path: "/" + name})
		}
		return false
	}
	return true
}

// hostCPUInfo is the parsed /proc/cpuinfo, read once per detection for the
// CPU and environment backends (Machine.HostCPU): remembered from an earlier
// detection while no CPU was hot-plugged (memo.go), else read and parsed.
// A read error other than absence is a sysfs_read warning of the CPU
// backend when f is given.
func hostCPUInfo(m *machine.Machine, f *machine.Findings) (machine.CPUInfo, bool) {
	info, err := m.HostCPU(func() (machine.CPUInfo, error) { return loadCPUInfo(m) })
	if err != nil {
		if f != nil && !machine.IsMissing(err) {
			f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendCPU, Code: registry.WarnSysfsRead,
				Message: err.Error(), Path: "/" + machine.PathCPUInfo})
		}
		return machine.CPUInfo{}, false
	}
	return info, true
}

// loadCPUInfo is hostCPUInfo's reading. The witness is taken before the
// reading, so a CPU plugged in meanwhile makes the next detection read again.
func loadCPUInfo(m *machine.Machine) (machine.CPUInfo, error) {
	witness, stamp, memo := m.CPUWitness()
	if memo {
		if info, ok := m.CPURemembered(witness, stamp); ok {
			return info, nil
		}
	}
	text, err := readCPUInfo(m)
	if err != nil {
		return machine.CPUInfo{}, err
	}
	info := ParseCPUInfo(text)
	// The environment backend looked for the flag in the first 16 KiB (a
	// head read of its own) before both shared one reading.
	info.HypervisorFlag = cpuinfoHasHypervisorFlag(text[:min(len(text), hypervisorFlagScan)])
	if memo {
		m.RememberCPU(witness, stamp, info)
	}
	return info, nil
}

// hypervisorFlagScan is how much of /proc/cpuinfo is searched for the
// hypervisor flag: every CPU has the same flags, and the first CPU's block
// is well within it.
const hypervisorFlagScan = 16 << 10

// maxCPUInfoBytes caps /proc/cpuinfo, which outgrows MaxFileBytes: about
// 1.5 KiB per logical CPU on x86 (the flags line), so 300 KiB on a
// 224-thread server; 16 MiB covers several thousand CPUs.
const maxCPUInfoBytes = 16 << 20

// readCPUInfo reads /proc/cpuinfo with its own, larger cap.
func readCPUInfo(m *machine.Machine) (string, error) {
	var text string
	err := m.WithFile(machine.PathCPUInfo, maxCPUInfoBytes, func(b []byte) { text = string(b) })
	return text, err
}

// ParseCPUInfo reads /proc/cpuinfo. x86 prints "key\t: value" lines per
// logical CPU (arch/x86/kernel/cpu/proc.c: "processor", "vendor_id",
// "model name", "physical id", "cpu cores", "flags"); arm64 prints
// "Features", "CPU implementer" and "CPU part" and no model name
// (arch/arm64/kernel/cpuinfo.c): its name is the core's, from those ids
// (armcores.go). Of the flags, those in registry.CPUFeature's vocabulary
// are kept.
func ParseCPUInfo(text string) machine.CPUInfo {
	var info machine.CPUInfo
	var implementer, part string // arm64 ids of the first CPU
	coresPerPackage := map[string]int{}
	pkg := "" // physical id of the current processor block
	cores := 0
	flagsRead := false
	flush := func() {
		if cores > 0 {
			coresPerPackage[pkg] = cores
		}
		pkg, cores = "", 0
	}
	// Line by line without splitting the text, and only the values of the
	// keys used are cleaned: the 1 KiB "flags" line is split for the first
	// CPU only.
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if !mayBeCPUInfoKey(line) {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "processor":
			flush()
			info.Logical++
		case "model name":
			if info.Name == "" {
				// Runs of spaces inside the CPUID brand string (an old
				// Xeon's "CPU           L5640  @ 2.27GHz"; the kernel
				// trims only its ends) collapse to one, as VyOS's
				// vyos/vyos-1x src/op_mode/cpu_summary.py does.
				info.Name = strings.Join(strings.Fields(machine.CleanText(val)), " ")
			}
		case "vendor_id":
			if info.Vendor == "" {
				info.Vendor = x86Vendor(machine.CleanText(val))
			}
		case "CPU implementer":
			if info.Vendor == "" {
				info.Vendor = armVendor(machine.CleanText(val))
			}
			if implementer == "" {
				implementer = machine.CleanText(val)
			}
		case "CPU part":
			if part == "" {
				part = machine.CleanText(val)
			}
		case "physical id":
			pkg = machine.CleanText(val)
		case "cpu cores":
			if n, err := strconv.Atoi(machine.CleanText(val)); err == nil && n > 0 && n <= 1<<16 {
				cores = n
			}
		case "flags", "Features":
			// Every CPU's line is the same (x86 prints each CPU's
			// capabilities, arm64 the system-wide hwcaps): the first is read.
			if !flagsRead {
				info.Features = registry.CPUFeaturesOf(strings.Fields(val))
				flagsRead = true
			}
		}
	}
	flush()
	for _, n := range coresPerPackage {
		info.Physical += n
	}
	if info.Name == "" {
		info.Name = armCPUName(implementer, part)
	}
	return info
}

// mayBeCPUInfoKey is a quick test on the first byte of a line that skips
// most lines without splitting them: after ASCII space, the keys
// parseCPUInfo reads start with p, m, v, C, c, f or F. A line starting with a
// non-ASCII byte goes the slow way (strings.TrimSpace also trims Unicode
// spaces).
func mayBeCPUInfoKey(line string) bool {
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			continue
		case 'p', 'm', 'v', 'C', 'c', 'f', 'F':
			return true
		default:
			return c >= 0x80
		}
	}
	return false
}

// x86Vendor maps the CPUID vendor string to a vendor name.
func x86Vendor(id string) string {
	switch id {
	case "GenuineIntel":
		return "intel"
	case "AuthenticAMD":
		return "amd"
	case "HygonGenuine":
		return "hygon"
	}
	return strings.ToLower(id)
}

// armVendor maps the arm64 "CPU implementer" code. Codes from Linux
// arch/arm64/include/asm/cputype.h (ARM_CPU_IMP_*); an unknown implementer is
// reported as "arm", the architecture's licensor.
func armVendor(code string) string {
	n, err := machine.ParseInt(code)
	if err != nil {
		return ""
	}
	switch n {
	case 0x4e:
		return "nvidia"
	case 0x61:
		return "apple"
	case 0xc0:
		return "ampere"
	case 0x51:
		return "qualcomm"
	case 0x48:
		return "hisilicon"
	case 0x46:
		return "fujitsu"
	}
	return "arm"
}

// ParseMemInfo reads /proc/meminfo ("MemTotal:       32614532 kB") into
// bytes per key; lines without the kB unit (HugePages_Total) and garbage lines
// are left out, a value that does not parse is kept as -1 so the caller can
// tell "garbage" from "absent", and an absurd one (negative, over 1 PiB,
// beyond int64) as memInfoAbsurd.
func ParseMemInfo(text string) map[string]int64 {
	out := make(map[string]int64, 64)
	parseMemInfoInto(out, text, nil)
	return out
}

// hostMemoryKeys are the /proc/meminfo keys hostMemory reads. The whole
// file's map is some 3 KB of heap per detection; these two fit on the stack.
var hostMemoryKeys = []string{"MemTotal", "MemAvailable"}

// parseMemInfoInto is ParseMemInfo writing into out, and only the keys in
// only when only is not nil.
func parseMemInfoInto(out map[string]int64, text string, only []string) {
	// Line by line and field by field without splitting the text: a
	// detection parses /proc/meminfo (about 55 lines) every time.
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		if only != nil && !slices.Contains(only, key) {
			continue
		}
		if n, ok := memInfoValue(key, val); ok {
			out[key] = n
		}
	}
}

// memInfoValue is the value of one meminfo line in bytes, -1 when it does
// not parse (kept only for the Mem keys), memInfoAbsurd when it is absurd;
// ok is false for a line to leave out.
func memInfoValue(key, val string) (n int64, ok bool) {
	number, unit, count := firstTwoFields(val)
	if count != 2 || unit != "kB" {
		return -1, count > 0 && strings.HasPrefix(key, "Mem")
	}
	n, v := machine.ParseMemory(number, 1024)
	switch {
	case v == machine.MemAbsurd:
		n = memInfoAbsurd
	case v != machine.MemOK || strings.ContainsAny(number, ".eE"):
		n = -1 // kB are whole numbers
	}
	return n, true
}

// parseMemInfoLines is parseMemInfoInto over the bytes of /proc/meminfo,
// only for the keys in only: a value is made a string only when its key is
// one of them, and out keeps only's strings, none of b's bytes.
func parseMemInfoLines(out map[string]int64, b []byte, only []string) {
	for rest := b; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		key = bytes.TrimSpace(key)
		for _, k := range only {
			if string(key) == k {
				// only's string is the map's key; the value's string
				// does not outlive the call.
				if n, ok := memInfoValue(k, string(val)); ok {
					out[k] = n
				}
				break
			}
		}
	}
}

// firstTwoFields returns the first two space-separated fields of s (as
// strings.Fields splits it) and how many fields s has, counting at most 3.
func firstTwoFields(s string) (first, second string, count int) {
	for count < 3 {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			break
		}
		end := strings.IndexFunc(s, unicode.IsSpace)
		if end < 0 {
			end = len(s)
		}
		switch count {
		case 0:
			first = s[:end]
		case 1:
			second = s[:end]
		}
		count++
		s = s[end:]
	}
	return first, second, count
}

// memInfoAbsurd marks a meminfo value that is negative or more than 1 PiB.
const memInfoAbsurd = -2

// hostMemory picks MemTotal and MemAvailable from parsed meminfo; unknown
// values are 0 / nil and every implausible one is an issue.
func hostMemory(mi map[string]int64) (total int64, free *int64, issues []machine.Issue) {
	t, ok := mi["MemTotal"]
	switch {
	case !ok:
	case t == memInfoAbsurd:
		issues = append(issues, machine.Issue{Code: registry.WarnAbsurdValue, Message: "MemTotal is negative or more than 1 PiB"})
	case t <= 0:
		issues = append(issues, machine.Issue{Code: registry.WarnParseError, Message: "MemTotal is not a size in kB"})
	case t > machine.MaxHostMemory:
		issues = append(issues, machine.Issue{Code: registry.WarnAbsurdValue, Message: "MemTotal " + strconv.FormatInt(t, 10) + " bytes is more than 1 PiB"})
	default:
		total = t
	}
	a, ok := mi["MemAvailable"]
	switch {
	case !ok:
	case a == memInfoAbsurd:
		issues = append(issues, machine.Issue{Code: registry.WarnAbsurdValue, Message: "MemAvailable is negative or more than 1 PiB"})
	case a < 0:
		issues = append(issues, machine.Issue{Code: registry.WarnParseError, Message: "MemAvailable is not a size in kB"})
	case total > 0 && a > total:
		issues = append(issues, machine.Issue{Code: registry.WarnAbsurdValue, Message: "MemAvailable " + strconv.FormatInt(a, 10) +
			" bytes is more than MemTotal " + strconv.FormatInt(total, 10)})
	default:
		free = &a
	}
	return total, free, issues
}
