// Package specs is the embedded table of accelerator datasheet figures
// (memory, memory bandwidth, dense tensor throughput, interconnect), generated
// from shared/calibration/devices.json, with lookup by the name a detection
// tool prints or by PCI vendor:device id.
//
// The planner uses it only to fill figures detection could not measure
// (memory bandwidth, peak FLOPS); it never replaces a detected value.
//
// Regenerate table.go after editing devices.json:
//
//	cd internal/specs && go run gen.go ../../../shared/calibration/devices.json
package specs

//go:generate go run gen.go ../../../shared/calibration/devices.json

// Spec is one datasheet record. A zero figure is unknown (the record does not
// state it), never a default.
type Spec struct {
	Name     string // the record's name, e.g. "NVIDIA H100 SXM5 80GB"
	Vendor   string
	Category string // datacenter_gpu, consumer_gpu, workstation_gpu, datacenter_asic, tpu, apple_soc_unified_memory
	// MemoryBytes is the device memory; when MemoryIsMaximum it is the largest
	// configuration sold (Apple unified memory, "up to" cards), not the part's.
	MemoryBytes     int64
	MemoryIsMaximum bool
	BandwidthGBs    float64 // memory bandwidth, GB/s (10^9 B/s)
	// MemoryUnit is the unit the record states its memory in: "GB" (read as
	// 10^9 into MemoryBytes) or "GiB" (2^30); "" when no memory is given.
	// DeviceMemoryBytes (parts.go) uses it.
	MemoryUnit string
	// Dense (no sparsity) peak tensor throughput, TFLOPS (TOPS for int8).
	BF16TFLOPS float64
	FP16TFLOPS float64
	FP8TFLOPS  float64
	INT8TOPS   float64
	// Interconnect names the device-to-device link; InterconnectGBs is the
	// datasheet figure per device, which for NVLink, Infinity Fabric and ICI
	// is the bidirectional aggregate (both directions added).
	Interconnect    string
	InterconnectGBs float64
	Source          string // where the figures come from (URL and section)
}

// PeakTFLOPS returns the dense peak for a precision name of the contract
// ("bf16", "fp16", "fp8", "int8"); 0 when the datasheet gives none. fp32 and
// int4 have no tensor figure in the table and return 0.
func (s *Spec) PeakTFLOPS(precision string) float64 {
	switch precision {
	case "bf16":
		return s.BF16TFLOPS
	case "fp16":
		return s.FP16TFLOPS
	case "fp8":
		return s.FP8TFLOPS
	case "int8":
		return s.INT8TOPS
	}
	return 0
}

// All returns a copy of every entry: the devices.json records in their
// order, then the hand-kept ones (datasheets_extra.go).
func All() []Spec {
	out := make([]Spec, len(table))
	copy(out, table)
	return out
}

// ByName returns the entry whose record name is exactly name.
func ByName(name string) (Spec, bool) {
	for _, s := range table {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}
