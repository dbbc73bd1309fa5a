package host

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// NUMA nodes of the host, from /sys/devices/system/node (Linux
// drivers/base/node.c): "online" lists the node ids ("0-1"), each nodeN holds
// "cpulist" ("0-55,112-167") and "meminfo" ("Node 0 MemTotal:       <n> kB").
// A machine without the node directory (no NUMA support) reports nothing.

// BackendNUMA names the numa backend (NUMA nodes, above).
const BackendNUMA = "numa"

// maxNUMANodes bounds the node ids we accept; Linux's MAX_NUMNODES is at most
// 1024 (CONFIG_NODES_SHIFT 10), so a larger id is garbage.
const maxNUMANodes = 1024

// NUMA is this file's detection source (the orchestrator lists it).
var NUMA = machine.Backend{Name: BackendNUMA, Detect: detectNUMA}

func detectNUMA(_ context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	// A readable "online" says the node directory is there: its stat (three
	// system calls) is made only when "online" is not read
	// (docs/performance.md, "Fourth pass").
	if _, err := m.ReadString(path.Join(machine.PathNodes, "online")); err != nil && !m.Exists(machine.PathNodes) {
		return f
	}
	ids, err := nodeIDs(m)
	if err != nil {
		f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendNUMA, Code: registry.WarnParseError,
			Message: err.Error(), Path: "/" + path.Join(machine.PathNodes, "online")})
		return f
	}
	for _, id := range ids {
		dir := path.Join(machine.PathNodes, "node"+strconv.Itoa(id))
		n := registry.NUMANode{ID: id}
		if s, err := m.ReadString(path.Join(dir, "cpulist")); err == nil && s != "" {
			if _, err := ParseCPUList(s); err == nil {
				n.CPUs = s
			} else {
				f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendNUMA, Code: registry.WarnParseError,
					Message: err.Error(), Path: "/" + path.Join(dir, "cpulist")})
			}
		}
		if text, ok := readProcText(m, &f, BackendNUMA, path.Join(dir, "meminfo")); ok {
			total, ok, err := parseNodeMemTotal(text, id)
			switch {
			case machine.IsAbsurd(err):
				f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendNUMA, Code: registry.WarnAbsurdValue,
					Message: err.Error(), Path: "/" + path.Join(dir, "meminfo")})
			case err != nil:
				f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendNUMA, Code: registry.WarnParseError,
					Message: err.Error(), Path: "/" + path.Join(dir, "meminfo")})
			case ok && total > machine.MaxHostMemory:
				f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendNUMA, Code: registry.WarnAbsurdValue,
					Message: fmt.Sprintf("node %d MemTotal %d bytes is more than 1 PiB", id, total),
					Path:    "/" + path.Join(dir, "meminfo")})
			case ok:
				n.MemoryBytes = total
			}
		}
		f.NUMANodes = append(f.NUMANodes, n)
	}
	return f
}

// nodeIDs returns the online node ids: from "online" when present, else from
// the nodeN directories.
func nodeIDs(m *machine.Machine) ([]int, error) {
	if s, err := m.ReadString(path.Join(machine.PathNodes, "online")); err == nil {
		ids, err := ParseCPUList(s)
		if err != nil {
			return nil, fmt.Errorf("online: %w", err)
		}
		for _, id := range ids {
			if id >= maxNUMANodes {
				return nil, fmt.Errorf("online: node id %d out of range", id)
			}
		}
		return ids, nil
	}
	var ids []int
	for _, e := range m.ReadDir(machine.PathNodes) {
		rest, ok := strings.CutPrefix(e.Name(), "node")
		if !ok {
			continue
		}
		if id, err := strconv.Atoi(rest); err == nil && id >= 0 && id < maxNUMANodes {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// maxListed bounds the ids a list may expand to, so "0-999999999" cannot
// allocate gigabytes.
const maxListed = 1 << 16

// ParseCPUList parses the kernel's list format ("0-55,112-167", "0", "")
// (lib/bitmap-str.c bitmap_parselist) into ascending ids.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad list element %q", part)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a {
				return nil, fmt.Errorf("bad list range %q", part)
			}
		}
		if b-a >= maxListed || len(out)+(b-a+1) > maxListed {
			return nil, fmt.Errorf("list %q is too long", s)
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

// parseNodeMemTotal finds "Node <id> MemTotal: <n> kB" in a node's meminfo
// (drivers/base/node.c node_read_meminfo) and returns it in bytes; ok is
// false when the line is absent.
func parseNodeMemTotal(text string, id int) (bytes int64, ok bool, err error) {
	prefix := "Node " + strconv.Itoa(id) + " MemTotal:"
	for _, line := range strings.Split(text, "\n") {
		rest, found := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !found {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, false, fmt.Errorf("node %d MemTotal %q is not a size in kB", id, strings.TrimSpace(rest))
		}
		n, v := machine.ParseMemory(fields[0], 1024)
		switch {
		case v == machine.MemAbsurd:
			return 0, false, machine.AbsurdError{Msg: fmt.Sprintf("node %d MemTotal %q kB is negative or more than 1 PiB", id, machine.ClipMsg(fields[0], 40))}
		case v != machine.MemOK || strings.ContainsAny(fields[0], ".eE"):
			return 0, false, fmt.Errorf("node %d MemTotal %q is not a size in kB", id, fields[0])
		}
		return n, true, nil
	}
	return 0, false, nil
}
