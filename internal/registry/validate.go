package registry

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// MaxDeviceMemory is the largest memory figure accepted for one device (1 PiB).
// Anything larger is a parse error or a hostile input, not hardware.
const MaxDeviceMemory int64 = 1 << 50

// MaxDevices bounds how many devices a registry given by a host may hold.
const MaxDevices = 65536

// MaxBandwidthGBs bounds a device's memory_bandwidth_gb_s (1 PB/s: the
// fastest HBM stacks of a whole board are a few TB/s); MaxNUMANode bounds
// its numa_node.
const (
	MaxBandwidthGBs = 1e6
	MaxNUMANode     = 1 << 16
)

// Validate checks a registry for values no real machine has, and fills what
// follows from other fields (family from kind, ids from kind and index).
func (r *Registry) Validate() error {
	if r.SchemaVersion > SchemaVersion {
		return errs.New(errs.InvalidArgument, "registry: schema_version %d is newer than this library's %d", r.SchemaVersion, SchemaVersion)
	}
	if r.SchemaVersion < 0 {
		return errs.New(errs.InvalidArgument, "registry: schema_version %d is negative", r.SchemaVersion)
	}
	if r.SchemaVersion == 0 {
		r.SchemaVersion = SchemaVersion
	}
	if len(r.Devices) > MaxDevices {
		return errs.New(errs.InvalidArgument, "registry: %d devices is more than the %d accepted", len(r.Devices), MaxDevices)
	}
	seen := make(map[string]bool, len(r.Devices))
	for i := range r.Devices {
		d := &r.Devices[i]
		if err := d.validate(i); err != nil {
			return err
		}
		if seen[d.ID] {
			return errs.New(errs.InvalidArgument, "registry: devices[%d]: duplicate id %q", i, d.ID)
		}
		seen[d.ID] = true
	}
	for i, ic := range r.SystemIO.Interconnects {
		if ic.BandwidthGBs < 0 {
			return errs.New(errs.InvalidArgument, "registry: interconnects[%d]: negative bandwidth", i)
		}
		for _, id := range ic.Devices {
			if !seen[id] {
				return errs.New(errs.InvalidArgument, "registry: interconnects[%d]: unknown device %q", i, id)
			}
		}
	}
	r.fillEmpty()
	return nil
}

// fillEmpty makes nil slices empty, so JSON shows [] rather than null.
func (r *Registry) fillEmpty() {
	if r.Devices == nil {
		r.Devices = []Device{}
	}
	if r.Warnings == nil {
		r.Warnings = []Warning{}
	}
	if r.SystemIO.Interconnects == nil {
		r.SystemIO.Interconnects = []Interconnect{}
	}
	if r.SystemIO.NUMANodes == nil {
		r.SystemIO.NUMANodes = []NUMANode{}
	}
}

func (d *Device) validate(i int) error {
	where := fmt.Sprintf("registry: devices[%d]", i)
	if !d.Kind.Valid() {
		return errs.New(errs.InvalidArgument, "%s: unknown kind %q", where, d.Kind)
	}
	if d.Family == "" {
		d.Family = d.Kind.Family()
	} else if d.Family != d.Kind.Family() {
		return errs.New(errs.InvalidArgument, "%s: family %q does not match kind %q (%s)", where, d.Family, d.Kind, d.Kind.Family())
	}
	if d.Index < 0 {
		return errs.New(errs.InvalidArgument, "%s: negative index %d", where, d.Index)
	}
	if d.ID == "" {
		d.ID = DeviceID(d.Kind, d.Index)
	}
	if err := checkBytes(where+".memory_bytes", d.MemoryBytes); err != nil {
		return err
	}
	if d.MemoryFreeBytes != nil {
		if err := checkBytes(where+".memory_free_bytes", *d.MemoryFreeBytes); err != nil {
			return err
		}
		if d.MemoryBytes > 0 && *d.MemoryFreeBytes > d.MemoryBytes {
			return errs.New(errs.InvalidArgument, "%s: memory_free_bytes %d exceeds memory_bytes %d", where, *d.MemoryFreeBytes, d.MemoryBytes)
		}
	}
	for field, v := range map[string]int64{".gtt_bytes": d.GTTBytes, ".memory_carveout_bytes": d.MemoryCarveoutBytes, ".memory_usable_bytes": d.MemoryUsableBytes} {
		if err := checkBytes(where+field, v); err != nil {
			return err
		}
	}
	if d.MemoryBandwidthGBs < 0 || d.MemoryBandwidthGBs > MaxBandwidthGBs {
		return errs.New(errs.InvalidArgument, "%s: memory_bandwidth_gb_s %g is out of range", where, d.MemoryBandwidthGBs)
	}
	if d.Cores < 0 || d.ChipCount < 0 {
		return errs.New(errs.InvalidArgument, "%s: negative cores or chip_count", where)
	}
	if d.NUMANode != nil && (*d.NUMANode < 0 || *d.NUMANode > MaxNUMANode) {
		return errs.New(errs.InvalidArgument, "%s: numa_node %d is out of range", where, *d.NUMANode)
	}
	d.CPUFeatures = knownCPUFeatures(d.CPUFeatures)
	return d.Telemetry.validate(where + ".telemetry")
}

// knownCPUFeatures keeps the features of a given registry that are in
// this version's vocabulary, sorted: a newer writer's extensions are
// dropped, not refused, as unknown fields are; a list left empty is nil
// (unknown).
func knownCPUFeatures(fs []CPUFeature) []CPUFeature {
	if fs == nil {
		return nil
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return CPUFeaturesOf(names)
}

// Telemetry bounds: no accelerator board draws MaxWatts (the largest
// superchip modules are a few kW), none runs below absolute zero or at
// MaxCelsius.
const (
	MaxWatts   = 100000
	MaxCelsius = 1000
)

func (t *Telemetry) validate(where string) error {
	if t == nil {
		return nil
	}
	for _, c := range []struct {
		name     string
		v        *float64
		min, max float64
	}{
		{"utilization_percent", t.UtilizationPercent, 0, 100},
		{"power_draw_watts", t.PowerDrawWatts, 0, MaxWatts},
		{"power_limit_watts", t.PowerLimitWatts, 0, MaxWatts},
		{"temperature_c", t.TemperatureC, -273.15, MaxCelsius},
	} {
		if c.v != nil && !(*c.v >= c.min && *c.v <= c.max) {
			return errs.New(errs.InvalidArgument, "%s: %s %g is out of range [%g, %g]", where, c.name, *c.v, c.min, c.max)
		}
	}
	return nil
}

func checkBytes(what string, v int64) error {
	if v < 0 {
		return errs.New(errs.InvalidArgument, "%s: negative value %d", what, v)
	}
	if v > MaxDeviceMemory {
		return errs.New(errs.InvalidArgument, "%s: %d bytes is more than 1 PiB", what, v)
	}
	return nil
}
