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

// RDMA ports out of the machine, from /sys/class/infiniband/<ca>/ports/<n>
// (Linux drivers/infiniband/core/sysfs.c,
// https://github.com/torvalds/linux): rate "400 Gb/sec (4X NDR)", state "4: ACTIVE", link_layer
// "InfiniBand" or "Ethernet" (RoCE). Only ACTIVE ports become interconnects.

// BackendIB names the infiniband backend (RDMA ports, above).
const BackendIB = "infiniband"

// maxIBRateGbs bounds a believable port rate: the fastest InfiniBand ports
// in use run at 800 Gb/s (XDR); ten times that is garbage.
const maxIBRateGbs = 8000

// ibStateActive is IB_PORT_ACTIVE (include/rdma/ib_verbs.h), printed by
// state_show as "4: ACTIVE".
const ibStateActive = 4

// InfiniBand is this file's detection source (the orchestrator lists it).
var InfiniBand = machine.Backend{Name: BackendIB, Detect: detectInfiniBand}

func detectInfiniBand(_ context.Context, m *machine.Machine) machine.Findings {
	var f machine.Findings
	for _, ca := range m.ReadDir(machine.PathInfiniBand) {
		name := machine.CleanText(ca.Name())
		portsDir := path.Join(machine.PathInfiniBand, ca.Name(), "ports")
		for _, p := range m.ReadDir(portsDir) {
			port, err := strconv.Atoi(p.Name())
			if err != nil || port < 1 {
				continue
			}
			if ic, ok := readIBPort(m, &f, name, path.Join(portsDir, p.Name()), port); ok {
				f.Interconnects = append(f.Interconnects, ic)
			}
		}
	}
	return f
}

// readIBPort turns one active port into an interconnect; a port that is not
// active (down, initialising) is skipped without a warning.
func readIBPort(m *machine.Machine, f *machine.Findings, ca, dir string, port int) (registry.Interconnect, bool) {
	warn := func(code, file, format string, args ...any) {
		f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendIB, Code: code,
			Message: fmt.Sprintf(format, args...), Path: "/" + path.Join(dir, file)})
	}
	stateText, err := m.ReadString(path.Join(dir, "state"))
	if err != nil {
		warn(registry.WarnSysfsRead, "state", "%s port %d: %v", ca, port, err)
		return registry.Interconnect{}, false
	}
	state, err := parseIBState(stateText)
	if err != nil {
		warn(registry.WarnParseError, "state", "%s port %d: %v", ca, port, err)
		return registry.Interconnect{}, false
	}
	if state != ibStateActive {
		return registry.Interconnect{}, false
	}
	name := ca
	if port > 1 {
		name = ca + ":" + strconv.Itoa(port)
	}
	ic := registry.Interconnect{Kind: registry.LinkInfiniBand, Name: name, Devices: []string{},
		State: "active", Source: "sysfs"}
	if ll, err := m.ReadString(path.Join(dir, "link_layer")); err == nil && strings.EqualFold(ll, "Ethernet") {
		ic.Kind = registry.LinkRoCE
	}
	if rateText, err := m.ReadString(path.Join(dir, "rate")); err == nil {
		gbs, err := parseIBRate(rateText)
		switch {
		case err != nil:
			warn(registry.WarnParseError, "rate", "%s port %d: %v", ca, port, err)
		case gbs > maxIBRateGbs:
			warn(registry.WarnAbsurdValue, "rate", "%s port %d: rate %g Gb/s is implausible", ca, port, gbs)
		default:
			// Gb/s to GB/s (10^9 bytes/s), one direction, as the contract's units.
			ic.BandwidthGBs = gbs / 8
		}
	}
	return ic, true
}

// parseIBState reads "4: ACTIVE" and returns the numeric state.
func parseIBState(s string) (int, error) {
	num, label, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if !ok || err != nil || n < 0 || n > 255 || strings.TrimSpace(label) == "" {
		return 0, fmt.Errorf("state %q is not \"<n>: <NAME>\"", s)
	}
	return n, nil
}

// parseIBRate reads "400 Gb/sec (4X NDR)" or "2.5 Gb/sec (1X SDR)" and
// returns Gb/s. Anything else, including a zero or negative rate, is an error.
func parseIBRate(s string) (float64, error) {
	fields := strings.Fields(s)
	if len(fields) < 2 || fields[1] != "Gb/sec" {
		return 0, fmt.Errorf("rate %q is not \"<n> Gb/sec (...)\"", s)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil || !(v > 0) || v > 1e9 {
		return 0, fmt.Errorf("rate %q is not a positive number of Gb/sec", s)
	}
	return v, nil
}
