package intel

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

// hlSMIQueryFields are the hl-smi query fields, in the order the CSV columns
// come back (`-Q/--query-aip <fields> -f/--format csv,noheader,nounits`; field names
// from docs.habana.ai "System Management Interface Tool (hl-smi)",
// https://docs.habana.ai/en/latest/Management_and_Monitoring/Embedded_System_Tools_Guide/System_Management_Interface_Tool.html).
var hlSMIQueryFields = []string{"index", "name", "bus_id", "memory.total", "memory.free", "driver_version", "uuid"}

// HLSMIArgs is the one hl-smi command line the gaudi backend runs.
func HLSMIArgs() []string {
	return []string{"-Q", strings.Join(hlSMIQueryFields, ","), "-f", "csv,noheader,nounits"}
}

// maxHLSMIRows bounds how many devices one hl-smi answer may describe; an
// HLS-Gaudi2 server holds 8, and a garbage answer must not make thousands.
const maxHLSMIRows = 1024

// hlSMIRow is one device as hl-smi reports it. Memory is in MiB (the CSV
// header says `memory.total [MiB]`); a negative value means "not reported".
type hlSMIRow struct {
	Index         int
	Name          string
	BusID         string
	MemoryMiB     int64
	MemoryFreeMiB int64
	DriverVersion string
	UUID          string
	Absurd        []machine.AbsurdValue // memory figures left out as absurd
}

// ParseHLSMI parses the CSV of hlSMIArgs. Lines that cannot be read become
// errors (one per line) and are skipped; the others are kept. Placeholders
// such as "N/A" or "[Not Supported]" give "no value".
func ParseHLSMI(out []byte) ([]hlSMIRow, []error) {
	var rows []hlSMIRow
	var errs []error
	seen := map[int]bool{}
	for n, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(rows) >= maxHLSMIRows {
			errs = append(errs, fmt.Errorf("more than %d devices; the rest is ignored", maxHLSMIRows))
			break
		}
		row, err := parseHLSMILine(line)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", n+1, err))
			continue
		}
		if seen[row.Index] {
			errs = append(errs, fmt.Errorf("line %d: index %d repeated", n+1, row.Index))
			continue
		}
		seen[row.Index] = true
		rows = append(rows, row)
	}
	return rows, errs
}

func parseHLSMILine(line string) (hlSMIRow, error) {
	cols := strings.Split(line, ",")
	if len(cols) != len(hlSMIQueryFields) {
		return hlSMIRow{}, fmt.Errorf("%d columns, want %d: %q", len(cols), len(hlSMIQueryFields), machine.ClipMsg(line, 120))
	}
	for i := range cols {
		cols[i] = hlSMIValue(cols[i])
	}
	idx, err := strconv.Atoi(cols[0])
	if err != nil || idx < 0 || idx >= maxHLSMIRows {
		return hlSMIRow{}, fmt.Errorf("bad index %q", machine.ClipMsg(cols[0], 40))
	}
	row := hlSMIRow{Index: idx, Name: cols[1], DriverVersion: cols[5], UUID: cols[6], MemoryMiB: -1, MemoryFreeMiB: -1}
	if cols[2] != "" {
		row.BusID = machine.NormalizeBusID(cols[2])
	}
	for _, c := range []struct {
		field string
		raw   string
		dst   *int64
	}{{"memory.total", cols[3], &row.MemoryMiB}, {"memory.free", cols[4], &row.MemoryFreeMiB}} {
		mib, absurd, err := hlSMIMiB(c.raw)
		if err != nil {
			return hlSMIRow{}, fmt.Errorf("%s: %w", c.field, err)
		}
		if absurd {
			row.Absurd = append(row.Absurd, machine.AbsurdValue{What: row.BusID + " " + c.field, Raw: c.raw})
		}
		*c.dst = mib
	}
	return row, nil
}

// hlSMIValue trims a CSV cell and maps placeholders to "".
func hlSMIValue(s string) string {
	s = machine.CleanText(s)
	switch strings.ToLower(strings.Trim(s, "[]")) {
	case "n/a", "na", "not supported", "unknown", "":
		return ""
	}
	return s
}

// hlSMIMiB reads a whole MiB figure ("98304", or "98304 MiB" if nounits
// was ignored). "" is "not reported" (-1); a negative figure or one over
// 1 PiB (parseMemory) is absurd and also -1; anything else is an error.
func hlSMIMiB(s string) (mib int64, absurd bool, err error) {
	if s == "" {
		return -1, false, nil
	}
	s = strings.TrimSpace(strings.TrimSuffix(s, "MiB"))
	if _, v := machine.ParseMemory(s, 1<<20); v == machine.MemAbsurd {
		return -1, true, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("not a number: %q", machine.ClipMsg(s, 40))
	}
	return n, false, nil
}
