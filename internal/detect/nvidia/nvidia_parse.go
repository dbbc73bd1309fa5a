package nvidia

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Pure parsers for the NVIDIA backend. Every shape comes from public captures
// (https://github.com/utkuozdemir/nvidia_gpu_exporter internal/captures) and the driver's procfs source
// (https://github.com/NVIDIA/open-gpu-kernel-modules kernel-open/nvidia/nv-procfs.c); none of them touch the machine.

// NVQueryFields are the columns of the one --query-gpu the backend runs, in
// order. compute_cap and mig.mode.current are optional: drivers that predate
// them reject the whole query, and the backend retries without them.
var NVQueryFields = append([]string{"index", "name", "uuid", "pci.bus_id", "memory.total", "memory.free",
	"driver_version", "compute_cap", "mig.mode.current"}, NVTelemetryFields...)

// NVTelemetryFields are the live readings, asked in the same query: a second
// nvidia-smi run would add a process start and an NVML initialisation to
// every detection (the tool run is most of its time, docs/performance.md).
// With nounits nvidia-smi prints them "0", "69.85", "700.00", "41", or a
// bracketed placeholder: "[N/A]" for utilization.gpu in MIG mode, every one
// on Jetson (utkuozdemir/nvidia_gpu_exporter internal/captures, testdata/machines).
var NVTelemetryFields = []string{"utilization.gpu", "power.draw", "power.limit", "temperature.gpu"}

// nvOptionalFields may be dropped when the driver rejects them.
var nvOptionalFields = map[string]bool{"compute_cap": true, "mig.mode.current": true}

// nvGPU is one row of the query. Unknown values are empty / nil.
type nvGPU struct {
	Index         int
	Name          string
	UUID          string
	BusID         string // sysfs form, "0000:18:00.0"
	MemoryMiB     *int64
	FreeMiB       *int64
	DriverVersion string
	CC            string // "9.0"
	MIGMode       string // "enabled", "disabled"
	Telemetry     nvTelemetry
}

// nvTelemetry is a row's live readings; nil where nvidia-smi gave none.
type nvTelemetry struct {
	UtilPct     *float64
	PowerW      *float64
	PowerLimitW *float64
	TempC       *float64
}

var ccPattern = regexp.MustCompile(`^[0-9]{1,2}\.[0-9]{1,2}$`)

// nvPlaceholder reports whether a CSV cell means "no value": any bracketed
// text ("[N/A]", "[Not Supported]", "[Requested functionality has been
// deprecated]") or a bare "N/A" (as in the captures of
// https://github.com/utkuozdemir/nvidia_gpu_exporter internal/captures).
func nvPlaceholder(v string) bool {
	return v == "" || v == "N/A" || strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]")
}

// ParseNvidiaCSV parses `--query-gpu=<fields> --format=csv,noheader,nounits`
// output: one line per GPU, values joined by ", ". A line with the wrong
// number of fields or without a usable index is dropped with a parse_error;
// a bad value drops only that field.
//
// Issues are kept up to the per-backend warning cap; dropped counts the rest
// (4 MB of malformed lines must not become two million messages, issue 14
// item 4).
func ParseNvidiaCSV(out []byte, fields []string) (gpus []nvGPU, issues []machine.Issue, dropped int) {
	bad := func(code, format string, args ...any) {
		if len(issues) >= machine.MaxWarningsPerBackend {
			dropped++
			return
		}
		issues = append(issues, machine.Issue{Code: code, Message: fmt.Sprintf(format, args...)})
	}

	seen := map[int]bool{}
	for n, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" {
			continue
		}
		cells := strings.Split(line, ",")
		if len(cells) != len(fields) {
			bad(registry.WarnParseError, "line %d: %d fields, want %d: %q", n+1, len(cells), len(fields), clip(line))
			continue
		}
		var g nvGPU
		ok := true
		for i, f := range fields {
			v := machine.CleanText(cells[i])
			if nvPlaceholder(v) {
				if f == "index" {
					bad(registry.WarnParseError, "line %d: no index", n+1)
					ok = false
				}
				continue
			}
			if err := g.set(f, v); err != nil {
				code := registry.WarnParseError
				if machine.IsAbsurd(err) {
					code = registry.WarnAbsurdValue
				}
				bad(code, "line %d: %v", n+1, err)
				if f == "index" {
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		if seen[g.Index] {
			bad(registry.WarnParseError, "line %d: index %d listed twice", n+1, g.Index)
			continue
		}
		seen[g.Index] = true
		if g.MemoryMiB != nil && g.FreeMiB != nil && *g.FreeMiB > *g.MemoryMiB {
			bad(registry.WarnAbsurdValue, "line %d: memory.free %d MiB is more than memory.total %d MiB", n+1, *g.FreeMiB, *g.MemoryMiB)
			g.FreeMiB = nil
		}
		gpus = append(gpus, g)
	}
	return gpus, issues, dropped
}

// set stores one cell of a row.
func (g *nvGPU) set(field, v string) error {
	switch field {
	case "index":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1<<16 {
			return fmt.Errorf("index %q is not a GPU index", v)
		}
		g.Index = n
	case "name":
		g.Name = v
	case "uuid":
		g.UUID = v
	case "pci.bus_id":
		if !busIDPattern.MatchString(strings.ToLower(v)) {
			return fmt.Errorf("pci.bus_id %q is not a PCI address", v)
		}
		g.BusID = machine.NormalizeBusID(v)
	case "memory.total", "memory.free":
		if _, verdict := machine.ParseMemory(v, 1<<20); verdict == machine.MemAbsurd {
			return machine.AbsurdError{Msg: fmt.Sprintf("%s %q MiB is negative or more than 1 PiB", field, clip(v))}
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s %q is not a number of MiB", field, v)
		}
		if field == "memory.total" {
			g.MemoryMiB = &n
		} else {
			g.FreeMiB = &n
		}
	case "driver_version":
		g.DriverVersion = v
	case "compute_cap":
		if !ccPattern.MatchString(v) {
			return fmt.Errorf("compute_cap %q is not <major>.<minor>", v)
		}
		g.CC = v
	case "mig.mode.current":
		switch strings.ToLower(v) {
		case "enabled", "disabled":
			g.MIGMode = strings.ToLower(v)
		default:
			return fmt.Errorf("mig.mode.current %q is neither Enabled nor Disabled", v)
		}
	case "utilization.gpu":
		return setReading(&g.Telemetry.UtilPct, field, v, 0, 100)
	case "power.draw", "power.limit":
		dst := &g.Telemetry.PowerW
		if field == "power.limit" {
			dst = &g.Telemetry.PowerLimitW
		}
		return setReading(dst, field, v, 0, registry.MaxWatts)
	case "temperature.gpu":
		return setReading(&g.Telemetry.TempC, field, v, -273.15, registry.MaxCelsius)
	}
	return nil
}

// readingPattern is a plain decimal as nvidia-smi prints readings with
// nounits; "NaN", "Inf", exponents and units are not readings.
var readingPattern = regexp.MustCompile(`^-?[0-9]{1,12}(\.[0-9]{1,6})?$`)

// setReading stores a decimal reading within [lo, hi]; outside it the value
// is absurd (a wrapped counter, a sensor error code) and left out.
func setReading(dst **float64, field, v string, lo, hi float64) error {
	if !readingPattern.MatchString(v) {
		return fmt.Errorf("%s %q is not a number", field, clip(v))
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return fmt.Errorf("%s %q is not a number", field, clip(v))
	}
	if n < lo || n > hi {
		return machine.AbsurdError{Msg: fmt.Sprintf("%s %s is outside [%g, %g]", field, clip(v), lo, hi)}
	}
	*dst = &n
	return nil
}

// busIDPattern accepts nvidia-smi's "00000000:18:00.0" and sysfs's
// "0000:18:00.0".
var busIDPattern = regexp.MustCompile(`^([0-9a-f]{4,8}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

// nvRejectedField returns the field named by nvidia-smi's
// `Field "x" is not a valid field to query.` (the text nvidia-smi prints, exit status 2, as public bug reports quote
// it).
func nvRejectedField(out []byte) string {
	const tail = `" is not a valid field to query`
	s := string(out)
	i := strings.Index(s, tail)
	if i < 0 {
		return ""
	}
	j := strings.LastIndex(s[:i], `Field "`)
	if j < 0 {
		return ""
	}
	return s[j+len(`Field "`) : i]
}

// nvTopo is the GPU part of `nvidia-smi topo -m`.
type nvTopo struct {
	GPUs  []int             // GPU indices, in header order
	Cells map[[2]int]string // connection between two GPUs ("NV18", "PHB", "SYS")
	NICs  map[string]string // "NIC0" -> "mlx5_0", from the NIC Legend
	// NICPaths holds each GPU's row cells in the NIC columns, in column
	// order: GPU index -> [{"NIC0", "PIX"}, ...].
	NICPaths map[int][][2]string
}

// Link returns the cell between GPUs a and b, in either order.
func (t nvTopo) Link(a, b int) string {
	if c, ok := t.Cells[[2]int{a, b}]; ok {
		return c
	}
	return t.Cells[[2]int{b, a}]
}

// nvLinks returns the number of bonded NVLinks of a cell ("NV18" -> 18), or 0.
func nvLinks(cell string) int {
	rest, ok := strings.CutPrefix(cell, "NV")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 || n > 1024 {
		return 0
	}
	return n
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// ParseNvidiaTopo parses `nvidia-smi topo -m`: a header line that starts with
// a tab and is wrapped in ESC[4m ... ESC[0m, tab-separated rows "GPU0\t X
// \tNV18 ..." (cells X, NV#, PIX, PXB, PHB, NODE, SYS), optional NIC rows and
// columns, then a "Legend:" block and, with NICs, a "NIC Legend:" block of
// "  NIC0: mlx5_0" lines (nvidia-smi `topo -m` in https://github.com/utkuozdemir/nvidia_gpu_exporter internal/captures). Columns after
// the GPU and NIC ones (CPU Affinity, NUMA Affinity, GPU NUMA ID) are ignored.
func ParseNvidiaTopo(out []byte) (nvTopo, error) {
	t := nvTopo{Cells: map[[2]int]string{}, NICs: map[string]string{}, NICPaths: map[int][][2]string{}}
	lines := strings.Split(ansiEscape.ReplaceAllString(string(out), ""), "\n")
	header := -1
	var cols []string
	for i, line := range lines {
		c := splitTopoLine(line)
		if len(c) > 1 && c[0] == "" && strings.HasPrefix(c[1], "GPU") {
			header, cols = i, c[1:]
			break
		}
	}
	if header < 0 {
		return t, fmt.Errorf("topo -m: no header line with GPU columns")
	}
	colGPU := make([]int, len(cols))
	for j, c := range cols {
		colGPU[j] = topoGPUIndex(c)
		if colGPU[j] >= 0 {
			t.GPUs = append(t.GPUs, colGPU[j])
		}
	}
	if len(t.GPUs) == 0 {
		return t, fmt.Errorf("topo -m: header has no GPU column")
	}
	inNICLegend := false
	for _, line := range lines[header+1:] {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "NIC Legend:":
			inNICLegend = true
			continue
		case trimmed == "Legend:":
			inNICLegend = false
			continue
		}
		if inNICLegend {
			if k, v, ok := strings.Cut(trimmed, ":"); ok && strings.HasPrefix(k, "NIC") {
				t.NICs[k] = strings.TrimSpace(v)
			}
			continue
		}
		cells := splitTopoLine(line)
		row := topoGPUIndex(cells[0])
		if row < 0 {
			continue
		}
		for j, cell := range cells[1:] {
			if j < len(cols) && strings.HasPrefix(cols[j], "NIC") && cell != "" {
				t.NICPaths[row] = append(t.NICPaths[row], [2]string{cols[j], cell})
			}
			if j >= len(colGPU) || colGPU[j] < 0 || colGPU[j] == row || cell == "" {
				continue
			}
			t.Cells[[2]int{row, colGPU[j]}] = cell
		}
	}
	return t, nil
}

// splitTopoLine splits a matrix line on tabs and trims each cell; a line
// without tabs (some consoles expand them) is split on runs of spaces.
func splitTopoLine(line string) []string {
	line = strings.TrimRight(line, "\r")
	var cells []string
	if strings.Contains(line, "\t") {
		cells = strings.Split(line, "\t")
	} else {
		cells = strings.Fields(line)
		if strings.HasPrefix(line, " ") {
			// An indented line is the header: keep its empty corner cell.
			cells = append([]string{""}, cells...)
		}
	}
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	if len(cells) == 0 {
		return []string{""}
	}
	return cells
}

// topoGPUIndex returns n for a "GPUn" label, else -1.
func topoGPUIndex(label string) int {
	rest, ok := strings.CutPrefix(label, "GPU")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n > 1<<16 {
		return -1
	}
	return n
}

// nvProcInfo is /proc/driver/nvidia/gpus/<bdf>/information.
type nvProcInfo struct {
	Model string
	UUID  string
	BusID string
}

// parseNvidiaProcInfo reads the "Key: \t value" lines of the driver's per-GPU
// information file (open-gpu-kernel-modules kernel-open/nvidia/nv-procfs.c,
// nv_procfs_read_gpu_info): "Model", "GPU UUID", "Bus Location".
func parseNvidiaProcInfo(text string) nvProcInfo {
	var p nvProcInfo
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = machine.CleanText(v)
		switch strings.TrimSpace(k) {
		case "Model":
			p.Model = v
		case "GPU UUID":
			if !nvPlaceholder(v) {
				p.UUID = v
			}
		case "Bus Location":
			if busIDPattern.MatchString(strings.ToLower(v)) {
				p.BusID = machine.NormalizeBusID(v)
			}
		}
	}
	return p
}

var driverVersionPattern = regexp.MustCompile(`^[0-9]{2,4}\.[0-9]{1,3}(\.[0-9]{1,3})?$`)

// ParseNvidiaProcVersion returns the driver version from
// /proc/driver/nvidia/version: the first token that looks like NNN.NN[.NN]
// ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  <date>").
func ParseNvidiaProcVersion(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "NVRM version:")
	if !ok {
		return ""
	}
	for _, tok := range strings.Fields(rest) {
		if driverVersionPattern.MatchString(tok) {
			return tok
		}
	}
	return ""
}

// clip shortens a line quoted in a warning.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
