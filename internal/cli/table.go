package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// FreeMemory maps device id to free bytes, for the deltas of --watch. Devices
// are matched by id, never by row position, so a device that appears,
// disappears or moves does not shift the others' deltas.
type FreeMemory map[string]int64

// Snapshot records the free memory of every device that reports it.
func Snapshot(reg *registry.Registry) FreeMemory {
	out := FreeMemory{}
	for _, d := range reg.Devices {
		if d.MemoryFreeBytes != nil {
			out[d.ID] = *d.MemoryFreeBytes
		}
	}
	return out
}

// WriteTable writes the registry for a human: one row per device (ID, KIND,
// NAME, MEMORY, FREE, BW, BUS, NUMA), a total line, then the interconnects,
// NUMA nodes and warnings. prev, when not nil, adds the change of free
// memory since that snapshot to the FREE column ("70.1 GiB (-1.2)").
func WriteTable(w io.Writer, reg *registry.Registry, prev FreeMemory) error {
	return writeTable(w, reg, prev, false)
}

// writeTable is WriteTable; with live, it adds the UTIL, POWER and TEMP
// columns of --watch when some device has telemetry, and PROCS and HEALTH
// when some device has a process list or health (NVML).
func writeTable(w io.Writer, reg *registry.Registry, prev FreeMemory, live bool) error {
	state := live && hasDriverState(reg)
	live = live && hasTelemetry(reg)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "ID\tKIND\tNAME\tMEMORY\tFREE\tBW\tBUS\tNUMA"
	if live {
		header += "\tUTIL\tPOWER\tTEMP"
	}
	if state {
		header += "\tPROCS\tHEALTH"
	}
	fmt.Fprintln(tw, header)
	for _, d := range reg.Devices {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", cell(d.ID), cell(string(d.Kind)),
			nameCell(d), memoryCell(d), freeWithDelta(d, prev), GBs(d.MemoryBandwidthGBs),
			cell(d.PCIBusID), numaCell(d.NUMANode))
		if live {
			fmt.Fprintf(tw, "\t%s\t%s\t%s", utilCell(d), powerCell(d), tempCell(d))
		}
		if state {
			fmt.Fprintf(tw, "\t%s\t%s", procsCell(d), healthCell(d))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, totalLine(reg))
	writeUnavailable(w, reg.Devices)
	writeInterconnects(w, reg.SystemIO.Interconnects)
	writeNUMA(w, reg.SystemIO.NUMANodes)
	return writeWarnings(w, reg.Warnings)
}

// writeUnavailable says why each device marked "(unavailable)" cannot be
// used (unavailable_reason: a GPU split into MIG instances or compute
// partitions, a function no driver is bound to), the devices of one reason
// on one line; nothing when every device is available.
func writeUnavailable(w io.Writer, devs []registry.Device) {
	var reasons []string
	ids := map[string][]string{}
	for _, d := range devs {
		if d.Available {
			continue
		}
		why := d.UnavailableReason
		if why == "" {
			why = "no reason reported"
		}
		if _, seen := ids[why]; !seen {
			reasons = append(reasons, why)
		}
		ids[why] = append(ids[why], d.ID)
	}
	if len(reasons) == 0 {
		return
	}
	fmt.Fprintln(w, "\nUnavailable:")
	for _, why := range reasons {
		fmt.Fprintf(w, "  %s: %s\n", cell(CompactIDs(ids[why])), cell(why))
	}
}

func nameCell(d registry.Device) string {
	name := cell(d.Name)
	if !d.Available {
		name += " (unavailable)"
	}
	return name
}

// memoryCell marks memory shared with the host (integrated GPUs, unified
// memory), which is not extra memory on top of host RAM; for such a device
// it shows what the device can use of it (registry.SharedUsableMemory).
func memoryCell(d registry.Device) string {
	if usable := d.SharedUsableMemory(); usable > 0 {
		return sizeCell(usable) + " shared"
	}
	return sizeCell(d.MemoryBytes)
}

func freeWithDelta(d registry.Device, prev FreeMemory) string {
	s := freeCell(d.MemoryFreeBytes)
	if prev == nil || d.MemoryFreeBytes == nil {
		return s
	}
	before, ok := prev[d.ID]
	if !ok {
		return s
	}
	if delta := deltaGiB(*d.MemoryFreeBytes - before); delta != "" {
		s += " (" + delta + ")"
	}
	return s
}

func hasTelemetry(reg *registry.Registry) bool {
	for _, d := range reg.Devices {
		if d.Telemetry != nil {
			return true
		}
	}
	return false
}

// utilCell is the busy share in whole percent ("37%").
func utilCell(d registry.Device) string {
	if d.Telemetry == nil || d.Telemetry.UtilizationPercent == nil {
		return Unknown
	}
	return fmt.Sprintf("%.0f%%", *d.Telemetry.UtilizationPercent)
}

// powerCell is the draw against the limit in whole watts ("101/700 W"),
// either side the unknown mark when only the other is known.
func powerCell(d registry.Device) string {
	t := d.Telemetry
	if t == nil || t.PowerDrawWatts == nil && t.PowerLimitWatts == nil {
		return Unknown
	}
	watts := func(v *float64) string {
		if v == nil {
			return Unknown
		}
		return fmt.Sprintf("%.0f", *v)
	}
	if t.PowerLimitWatts == nil {
		return watts(t.PowerDrawWatts) + " W"
	}
	return watts(t.PowerDrawWatts) + "/" + watts(t.PowerLimitWatts) + " W"
}

// tempCell is the die temperature in whole degrees Celsius ("30 °C").
func tempCell(d registry.Device) string {
	if d.Telemetry == nil || d.Telemetry.TemperatureC == nil {
		return Unknown
	}
	return fmt.Sprintf("%.0f °C", *d.Telemetry.TemperatureC)
}

func numaCell(n *int) string {
	if n == nil {
		return Unknown
	}
	return strconv.Itoa(*n)
}

// totalLine counts devices and sums accelerator memory as Summarize does:
// dedicated memory, plus the host memory accelerators can use once, said
// to be shared.
func totalLine(reg *registry.Registry) string {
	s := Summarize(reg)
	line := fmt.Sprintf("Total: %s, %s", plural(s.DeviceCount, "device"), plural(s.AcceleratorCount, "accelerator"))
	if s.AcceleratorMemoryBytes != nil {
		line += ", " + GiB(*s.AcceleratorMemoryBytes) + " accelerator memory"
		if s.AcceleratorSharedMemoryBytes > 0 {
			line += " (" + GiB(s.AcceleratorSharedMemoryBytes) + " of it shared with the host)"
		}
		if s.AcceleratorsMemoryUnknown > 0 {
			line += fmt.Sprintf(" (+%d with unknown memory)", s.AcceleratorsMemoryUnknown)
		}
	} else if s.AcceleratorCount > 0 {
		line += ", accelerator memory unknown"
	}
	if s.HostMemoryBytes > 0 {
		line += ", " + GiB(s.HostMemoryBytes) + " host memory"
	}
	return line
}

func writeInterconnects(w io.Writer, ics []registry.Interconnect) {
	fmt.Fprintln(w)
	if len(ics) == 0 {
		fmt.Fprintln(w, "Interconnects: none")
		return
	}
	fmt.Fprintln(w, "Interconnects:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  KIND\tNAME\tBW\tLINKS\tSTATE\tDEVICES")
	for _, ic := range ics {
		links := Unknown
		if ic.Links > 0 {
			links = strconv.Itoa(ic.Links)
		}
		devs := CompactIDs(ic.Devices)
		if devs == "" {
			devs = Unknown
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", cell(ic.Kind), cell(ic.Name), GBs(ic.BandwidthGBs),
			links, cell(ic.State), cell(devs))
	}
	tw.Flush()
}

func writeNUMA(w io.Writer, nodes []registry.NUMANode) {
	fmt.Fprintln(w)
	if len(nodes) == 0 {
		fmt.Fprintln(w, "NUMA nodes: none reported")
		return
	}
	fmt.Fprintln(w, "NUMA nodes:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODE\tMEMORY\tCPUS")
	for _, n := range nodes {
		fmt.Fprintf(tw, "  %d\t%s\t%s\n", n.ID, sizeCell(n.MemoryBytes), cell(n.CPUs))
	}
	tw.Flush()
}

func writeWarnings(w io.Writer, ws []registry.Warning) error {
	fmt.Fprintln(w)
	if len(ws) == 0 {
		_, err := fmt.Fprintln(w, "Warnings: none")
		return err
	}
	fmt.Fprintf(w, "Warnings (%d):\n", len(ws))
	for _, x := range ws {
		if _, err := fmt.Fprintf(w, "  [%s] %s: %s\n", cell(x.Backend), cell(x.Code), cell(Plurals(x.Message))); err != nil {
			return err
		}
	}
	return nil
}

// CompactIDs joins device ids, folding runs of consecutive indices of one
// prefix: ["cuda:0","cuda:1","cuda:2","cuda:5"] -> "cuda:0-2,cuda:5".
func CompactIDs(ids []string) string {
	var parts []string
	for i := 0; i < len(ids); {
		prefix, start, ok := splitID(ids[i])
		j := i + 1
		if ok {
			for j < len(ids) {
				p, n, ok := splitID(ids[j])
				if !ok || p != prefix || n != start+(j-i) {
					break
				}
				j++
			}
		}
		if j-i > 1 {
			parts = append(parts, fmt.Sprintf("%s:%d-%d", prefix, start, start+(j-i)-1))
		} else {
			parts = append(parts, ids[i])
		}
		i = j
	}
	return strings.Join(parts, ",")
}

func splitID(id string) (string, int, bool) {
	k := strings.LastIndexByte(id, ':')
	if k < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[k+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:k], n, true
}

// hasDriverState reports whether some device lists its processes or health.
func hasDriverState(reg *registry.Registry) bool {
	for _, d := range reg.Devices {
		if d.Processes != nil || d.Health != nil {
			return true
		}
	}
	return false
}

// procsCell is the number of processes holding memory and what they hold.
func procsCell(d registry.Device) string {
	if d.Processes == nil {
		return Unknown
	}
	var held int64
	for _, p := range d.Processes {
		held += p.MemoryBytes
	}
	if held == 0 {
		return strconv.Itoa(len(d.Processes))
	}
	return strconv.Itoa(len(d.Processes)) + " (" + GiB(held) + ")"
}

// slowdowns are the clocks event reasons that mean trouble rather than an
// idle GPU or a setting.
var slowdowns = map[string]bool{"sw_power_cap": true, "hw_slowdown": true, "sw_thermal_slowdown": true,
	"hw_thermal_slowdown": true, "hw_power_brake_slowdown": true}

// healthCell is "ok", or what is wrong: uncorrected ECC errors, a row remap
// pending or failed, clock slowdowns, inactive NVLinks.
func healthCell(d registry.Device) string {
	h := d.Health
	if h == nil {
		return Unknown
	}
	var bad []string
	if h.ECCUncorrectedVolatile != nil && *h.ECCUncorrectedVolatile > 0 {
		bad = append(bad, "ecc:"+strconv.FormatInt(*h.ECCUncorrectedVolatile, 10))
	}
	if r := h.RemappedRows; r != nil && r.Failure {
		bad = append(bad, "remap-failed")
	} else if r != nil && r.Pending {
		bad = append(bad, "remap-pending")
	}
	for _, c := range h.ClocksEventReasons {
		if slowdowns[c] {
			bad = append(bad, c)
		}
	}
	if h.NVLinksActive != nil && *h.NVLinksActive < h.NVLinks {
		bad = append(bad, fmt.Sprintf("nvlink:%d/%d", *h.NVLinksActive, h.NVLinks))
	}
	if len(bad) == 0 {
		return "ok"
	}
	return strings.Join(bad, ",")
}
