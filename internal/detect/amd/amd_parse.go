package amd

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// ROCmSMICard is one GPU as `rocm-smi ... --json` reports it. The card index
// is rocm-smi's own device index ("card3" = its device 3), which need not be
// the DRM card number: devices are matched to sysfs by PCI bus id.
type ROCmSMICard struct {
	Index     int
	Name      string
	BusID     string                // normalised sysfs form
	VRAMTotal int64                 // bytes; 0 unknown
	VRAMUsed  int64                 // bytes; -1 unknown
	Absurd    []machine.AbsurdValue // memory figures left out as absurd
	NUMANode  int                   // -1 unknown
	GFX       string                // "gfx942" when the tool prints it
}

// rocmSMILink is one pair of the topology matrices, which rocm-smi prints
// only for device i < j.
type rocmSMILink struct {
	A, B   int
	Type   string // "XGMI", "PCIE"
	Weight int    // -1 unknown
	Hops   int    // -1 unknown
}

// ROCmSMIReport is what one rocm-smi --json run says: its cards and its
// topology matrices.
type ROCmSMIReport struct {
	Cards []ROCmSMICard
	Links []rocmSMILink
	// Tool names the source of the report in the registry's sources: ""
	// for the rocm-smi run, SourceAMDSMI for an in-process AMD SMI read
	// (amd_amdsmi.go).
	Tool string
}

// tool is the source label of the report's figures.
func (r ROCmSMIReport) tool() string {
	if r.Tool == "" {
		return ToolROCmSMI
	}
	return r.Tool
}

// sortLinks orders links by their pair of device indices.
func sortLinks(links []rocmSMILink) {
	sort.Slice(links, func(i, j int) bool {
		if links[i].A != links[j].A {
			return links[i].A < links[j].A
		}
		return links[i].B < links[j].B
	})
}

// Keys written by rocm_smi.py (ROCm/rocm_smi_lib python_smi_tools/rocm_smi.py:
// showProductName "Card series" (later releases print "Card Series"), showMemInfo "%s Total Memory (B)" and
// "%s Total Used Memory (B)", showBus "PCI Bus", showNumaTopology
// "(Topology) Numa Node"; formatJson splits "key: value" and strips the
// value). Compared case-insensitively.
const (
	rsmiKeySeries   = "card series"
	rsmiKeyVRAM     = "vram total memory (b)"
	rsmiKeyVRAMUsed = "vram total used memory (b)"
	rsmiKeyBus      = "pci bus"
	rsmiKeyNUMA     = "(topology) numa node"
	rsmiKeyGFX      = "gfx version"
)

// rsmiTopoKey matches the "system" keys of formatMatrixToJSON:
// "(Topology) Weight between DRM devices 0 and 1", "... Hops ...",
// "... Link type ..." (showWeightTopology, showHopsTopology, showTypeTopology).
var rsmiTopoKey = regexp.MustCompile(`(?i)^\(Topology\) (Weight|Hops|Link type) between DRM devices (\d+) and (\d+)$`)

var rsmiCardKey = regexp.MustCompile(`^card(\d+)$`)

// maxRocmDevices bounds what a hostile or broken tool output can make us
// allocate: no node holds more than a few dozen GPUs (partitioned MI300X: 64).
const maxRocmDevices = 1024

// ParseRocmSMIJSON parses the one-line JSON of rocm-smi --json. Values are
// strings in every release seen; numbers are accepted too. Placeholders
// ("N/A", "Not supported") are no value.
func ParseRocmSMIJSON(out []byte) (ROCmSMIReport, error) {
	var rep ROCmSMIReport
	start := bytes.IndexByte(out, '{')
	end := bytes.LastIndexByte(out, '}')
	if start < 0 || end < start {
		return rep, errors.New("no JSON object in rocm-smi output")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out[start:end+1], &top); err != nil {
		return rep, fmt.Errorf("rocm-smi JSON: %s", strictjson.Describe(err))
	}
	links := map[[2]int]*rocmSMILink{}
	for key, raw := range top {
		fields, ok := rsmiFields(raw)
		if !ok {
			continue
		}
		if key == "system" {
			for k, v := range fields {
				addRocmLink(links, k, v)
			}
			continue
		}
		m := rsmiCardKey.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		idx, err := strconv.Atoi(m[1])
		if err != nil || idx >= maxRocmDevices {
			continue
		}
		rep.Cards = append(rep.Cards, rocmCardFromFields(idx, fields))
		if len(rep.Cards) >= maxRocmDevices {
			break
		}
	}
	sort.Slice(rep.Cards, func(i, j int) bool { return rep.Cards[i].Index < rep.Cards[j].Index })
	for _, l := range links {
		rep.Links = append(rep.Links, *l)
	}
	sortLinks(rep.Links)
	if len(rep.Cards) == 0 {
		return rep, errors.New("rocm-smi JSON lists no card")
	}
	return rep, nil
}

// rsmiFields decodes one object of the top level into lower-cased keys and
// string values; a value that is not a string or number is dropped.
func rsmiFields(raw json.RawMessage) (map[string]string, bool) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, false
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			continue
		}
		s = machine.CleanText(s)
		if machine.NoValueText(s) {
			continue
		}
		out[strings.ToLower(strings.TrimSpace(k))] = s
	}
	return out, true
}

func rocmCardFromFields(idx int, f map[string]string) ROCmSMICard {
	c := ROCmSMICard{Index: idx, VRAMUsed: -1, NUMANode: -1}
	c.Name = f[rsmiKeySeries]
	if c.Name == "" {
		c.Name = f["device name"]
	}
	if b := f[rsmiKeyBus]; b != "" {
		c.BusID = machine.NormalizeBusID(b)
	}
	memory := func(key string) (int64, bool) {
		b, v := machine.ParseMemory(f[key], 1)
		if v == machine.MemAbsurd {
			c.Absurd = append(c.Absurd, machine.AbsurdValue{What: "card " + strconv.Itoa(idx) + " " + key, Raw: f[key]})
		}
		return b, v == machine.MemOK
	}
	if v, ok := memory(rsmiKeyVRAM); ok && v > 0 {
		c.VRAMTotal = v
	}
	if v, ok := memory(rsmiKeyVRAMUsed); ok {
		c.VRAMUsed = v
	}
	if v, err := strconv.Atoi(f[rsmiKeyNUMA]); err == nil && v >= 0 && v < 1<<16 {
		c.NUMANode = v
	}
	if g, ok := SMIGfxTarget(f[rsmiKeyGFX]); ok {
		c.GFX = g
	}
	return c
}

func addRocmLink(links map[[2]int]*rocmSMILink, key, val string) {
	m := rsmiTopoKey.FindStringSubmatch(key)
	if m == nil {
		return
	}
	a, err1 := strconv.Atoi(m[2])
	b, err2 := strconv.Atoi(m[3])
	if err1 != nil || err2 != nil || a == b || a >= maxRocmDevices || b >= maxRocmDevices {
		return
	}
	if a > b {
		a, b = b, a
	}
	k := [2]int{a, b}
	l := links[k]
	if l == nil {
		if len(links) >= maxRocmDevices*4 {
			return
		}
		l = &rocmSMILink{A: a, B: b, Weight: -1, Hops: -1}
		links[k] = l
	}
	switch strings.ToLower(m[1]) {
	case "weight":
		if v, err := strconv.Atoi(val); err == nil && v >= 0 {
			l.Weight = v
		}
	case "hops":
		if v, err := strconv.Atoi(val); err == nil && v >= 0 {
			l.Hops = v
		}
	case "link type":
		l.Type = strings.ToUpper(val)
	}
}

// ParseKFDProperties reads a KFD topology node's properties file: one
// "name value" pair per line (Linux drivers/gpu/drm/amd/amdkfd/kfd_topology.c,
// node_show). Lines that do not parse are skipped.
func ParseKFDProperties(text string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		out[f[0]] = v
	}
	return out
}

// kfdIDs reads the 64-bit unsigned ids of a KFD node's properties
// (unique_id, hive_id: 11803749423592941193 in the k8s-device-plugin MI308X
// capture), which ParseKFDProperties drops as out of range.
func kfdIDs(text string) map[string]uint64 {
	out := map[string]uint64{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || (f[0] != "unique_id" && f[0] != "hive_id") {
			continue
		}
		if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// gfxTarget turns KFD's gfx_target_version (major*10000 + minor*100 +
// stepping, e.g. 90402) into the LLVM target name ("gfx942"); minor and
// stepping are written in hex as LLVM does (90010 = gfx90a). 0 and
// out-of-range values give "".
func gfxTarget(v int64) string {
	if v <= 0 || v > 999999 {
		return ""
	}
	major, minor, step := v/10000, (v/100)%100, v%100
	if major == 0 || minor > 15 || step > 15 {
		return ""
	}
	return fmt.Sprintf("gfx%d%x%x", major, minor, step)
}

// kfdBusID builds the PCI address of a KFD GPU node from its "domain" and
// "location_id" (bus<<8 | device<<3 | function, kfd_topology.c).
func kfdBusID(props map[string]int64) string {
	loc, ok := props["location_id"]
	if !ok || loc <= 0 || loc > 0xffff {
		return ""
	}
	dom := props["domain"]
	if dom < 0 || dom > 0xffff {
		return ""
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", dom, loc>>8, (loc>>3)&0x1f, loc&7)
}

// SMIGfxTarget turns rocm-smi's "GFX Version" into the LLVM target name.
// rocm_smi.py prints 'gfx' + str(value) of rsmi_dev_target_graphics_version_get
// (getTargetGfxVersion, https://github.com/ROCm/rocm_smi_lib/blob/rocm-6.2.4/python_smi_tools/rocm_smi.py),
// a number made of the decimal digits of KFD's major, minor and stepping:
// gfx90a (9, 0, 10) comes out "gfx9010" (testdata/machines/mi250-rocm-smi-gfx9010,
// an MI250 GCD), gfx942 "gfx942", gfx1100 "gfx1100". A minor or stepping of 10
// to 15 is written back in hex as LLVM names it; a number whose split is
// ambiguous or impossible is not a target (false).
func SMIGfxTarget(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	digits, ok := strings.CutPrefix(s, "gfx")
	if !ok || digits == "" {
		return "", false
	}
	if _, err := strconv.ParseUint(digits, 10, 32); err != nil {
		// Already the LLVM name ("gfx90a") or not a number at all.
		if _, err := strconv.ParseUint(digits, 16, 32); err == nil {
			return s, true
		}
		return "", false
	}
	var found string
	for _, major := range []string{"9", "10", "11", "12"} {
		rest, ok := strings.CutPrefix(digits, major)
		if !ok {
			continue
		}
		for cut := 1; cut < len(rest); cut++ {
			minor, okMinor := gfxField(rest[:cut])
			step, okStep := gfxField(rest[cut:])
			if !okMinor || !okStep {
				continue
			}
			name := fmt.Sprintf("gfx%s%x%x", major, minor, step)
			if found != "" && found != name {
				return "", false
			}
			found = name
		}
	}
	return found, found != ""
}

// gfxField reads one decimal field of a gfx version: 0..15, no leading zero.
func gfxField(s string) (int, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	return v, err == nil && v >= 0 && v <= 15
}
