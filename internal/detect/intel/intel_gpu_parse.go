package intel

import (
	"encoding/csv"
	"errors"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

// XPUSMIDumpArgs is the single xpu-smi run: `discovery --dump` prints one CSV
// row per device with the chosen properties (intel/xpumanager
// cli/src/comlet_discovery.cpp: dump ids 1 Device ID, 2 Device Name, 4 UUID,
// 8 Driver Version, 11 PCI BDF Address, 16 Memory Physical Size). It is the
// only documented form that gives every device's memory in one run:
// `discovery -j` lists devices without memory, and `discovery -d N -j`
// (memory_physical_size_byte) takes one run per device.
var XPUSMIDumpArgs = []string{"discovery", "--dump", "1,2,4,8,11,16"}

// XPUDevice is one row of the dump.
type XPUDevice struct {
	ID          int // xpu-smi device id; -1 for a device in bad state
	Name        string
	UUID        string
	Driver      string
	BusID       string
	MemoryBytes int64                 // 0 unknown
	Absurd      []machine.AbsurdValue // memory figures left out as absurd
}

// Column labels of the dump header (comlet_discovery.cpp "label" fields).
const (
	xpuColID     = "Device ID"
	xpuColName   = "Device Name"
	xpuColUUID   = "UUID"
	xpuColDriver = "Driver Version"
	xpuColBDF    = "PCI BDF Address"
	xpuColMemory = "Memory Physical Size"
)

const maxXPUDevices = 256

// ParseXPUDump parses `xpu-smi discovery --dump ...`: a header line of labels
// joined by ",", then one row per device; strings are JSON-quoted, numbers
// bare, a missing value is "" (the Device ID column is empty for a device
// xpu-smi lists as "GPU in bad state"). Memory is "%.2f MiB", so bytes are
// exact to ±5 KiB. Columns are found by label, not position.
func ParseXPUDump(out string) ([]XPUDevice, error) {
	r := csv.NewReader(strings.NewReader(out))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return nil, errors.New("xpu-smi dump: no header line")
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	if _, ok := col[xpuColBDF]; !ok {
		return nil, errors.New("xpu-smi dump: no PCI BDF Address column")
	}
	get := func(rec []string, name string) string {
		i, ok := col[name]
		if !ok || i >= len(rec) {
			return ""
		}
		s := machine.CleanText(rec[i])
		if machine.NoValueText(s) {
			return ""
		}
		return s
	}
	var devs []XPUDevice
	for len(devs) < maxXPUDevices {
		rec, err := r.Read()
		if err != nil {
			break
		}
		d := XPUDevice{ID: -1}
		if v, err := strconv.Atoi(get(rec, xpuColID)); err == nil && v >= 0 {
			d.ID = v
		}
		d.Name = get(rec, xpuColName)
		d.UUID = get(rec, xpuColUUID)
		d.Driver = get(rec, xpuColDriver)
		if b := get(rec, xpuColBDF); strings.Count(b, ":") >= 1 {
			d.BusID = machine.NormalizeBusID(b)
		}
		mem := get(rec, xpuColMemory)
		var absurd bool
		if d.MemoryBytes, absurd = ParseXPUMiB(mem); absurd {
			d.Absurd = append(d.Absurd, machine.AbsurdValue{What: d.BusID + " " + xpuColMemory, Raw: mem})
		}
		if d.BusID == "" && d.ID < 0 {
			continue
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// ParseXPUMiB reads "49135.62 MiB" into bytes; anything else is 0
// (unknown), and absurd says the figure was negative or over 1 PiB.
func ParseXPUMiB(s string) (bytes int64, absurd bool) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "MiB"))
	b, v := machine.ParseMemory(s, 1<<20)
	if v != machine.MemOK {
		return 0, v == machine.MemAbsurd
	}
	return b, false
}
