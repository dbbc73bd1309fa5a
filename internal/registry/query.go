package registry

import "slices"

// Find returns the device with the given id, or nil.
func (r *Registry) Find(id string) *Device {
	for i := range r.Devices {
		if r.Devices[i].ID == id {
			return &r.Devices[i]
		}
	}
	return nil
}

// Available returns the available devices, in registry order.
func (r *Registry) Available() []Device {
	out := make([]Device, 0, len(r.Devices))
	for _, d := range r.Devices {
		if d.Available {
			out = append(out, d)
		}
	}
	return out
}

// ByFamily returns the available devices of one family.
func (r *Registry) ByFamily(f Family) []Device {
	var out []Device
	for _, d := range r.Devices {
		if d.Available && d.Family == f {
			out = append(out, d)
		}
	}
	return out
}

// Accelerators returns the available devices that are not the CPU.
func (r *Registry) Accelerators() []Device {
	var out []Device
	for _, d := range r.Devices {
		if d.Available && d.Kind != KindCPU {
			out = append(out, d)
		}
	}
	return out
}

// UsableMemory is the memory a planner may place on d: free memory when
// known, else what the runtime can allocate (MemoryUsableBytes), else total;
// free memory never counts above the usable figure. Zero means unknown.
func (d *Device) UsableMemory() int64 {
	b, _ := d.UsableMemoryOf()
	return b
}

// UsableMemoryOf is UsableMemory and the figure it read, in a word a
// sentence can use: "free" (the detected free memory), "usable" (the
// runtime's limit, MemoryUsableBytes) or "total".
func (d *Device) UsableMemoryOf() (int64, string) {
	limit, word := d.MemoryBytes, "total"
	if d.MemoryUsableBytes > 0 {
		limit, word = d.MemoryUsableBytes, "usable"
	}
	if d.MemoryFreeBytes != nil && (limit == 0 || *d.MemoryFreeBytes <= limit) {
		return *d.MemoryFreeBytes, "free"
	}
	return limit, word
}

// SharedUsableMemory is, for a device whose memory is host RAM
// (MemoryShared), what it can use of it: MemoryUsableBytes when known, else
// MemoryBytes. Zero for a device with dedicated memory or none known.
func (d *Device) SharedUsableMemory() int64 {
	if !d.MemoryShared {
		return 0
	}
	if d.MemoryUsableBytes > 0 {
		return d.MemoryUsableBytes
	}
	return d.MemoryBytes
}

// HasQuant reports whether d lists q among its native precisions. A device
// without a list supports nothing known.
func (d *Device) HasQuant(q string) bool {
	for _, x := range d.Quantizations {
		if x == q {
			return true
		}
	}
	return false
}

// SetSource records which source gave a field ("" sources are ignored).
func (d *Device) SetSource(field, source string) {
	if source == "" {
		return
	}
	if d.Sources == nil {
		d.Sources = map[string]string{}
	}
	d.Sources[field] = source
}

// MemoryCountedBefore reports whether the memory of devs[i] is one an
// earlier available device of devs already states: a MIG compute instance
// whose GPU instance's memory an earlier sibling (MIG.SharesMemoryWith)
// holds. A total over devices skips such a device's MemoryBytes.
func MemoryCountedBefore(devs []Device, i int) bool {
	m := devs[i].MIG
	if m == nil || len(m.SharesMemoryWith) == 0 {
		return false
	}
	for j := 0; j < i; j++ {
		if o := devs[j].MIG; o != nil && devs[j].Available && o.Instance != "" && slices.Contains(m.SharesMemoryWith, o.Instance) {
			return true
		}
	}
	return false
}
