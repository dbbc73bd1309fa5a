package plan

// Refusal is why an answer does not fit (fits false): Code is one of the
// Refusal* codes, stable for a host (or the CLI) to act on without reading
// the text; Text says it in words, as the explanation's "does not fit:" line
// does.
type Refusal struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

// Refusal codes (schema/plan.schema.json, $defs refusal).
const (
	// RefusalNoDevice: no available device with known memory was left to
	// plan on (none detected, or --devices named none with memory).
	RefusalNoDevice = "no_device"
	// RefusalUnsupported: no device, or no engine on the devices, runs the
	// precision (an unknown level, fp8 on llama.cpp, a device without it).
	RefusalUnsupported = "unsupported"
	// RefusalMemory: the devices do not hold the model (or the training
	// setup) in memory, split every way the planner tries.
	RefusalMemory = "insufficient_memory"
	// RefusalTooFewDevices: the request needs more devices than there are
	// (replicas, tensor_parallel_size, training num_devices).
	RefusalTooFewDevices = "too_few_devices"
	// RefusalTensorParallel: tensor_parallel_size cannot be used as asked
	// (the engine splits layers, or the size does not divide the heads).
	RefusalTensorParallel = "tensor_parallel"
	// RefusalTooLarge: the estimate is more than 1 EiB; no machine holds it.
	RefusalTooLarge = "too_large"
)

// RefusalCodes lists every refusal code, for the schema test and front ends.
var RefusalCodes = []string{RefusalNoDevice, RefusalUnsupported, RefusalMemory, RefusalTooFewDevices,
	RefusalTensorParallel, RefusalTooLarge}

// refusalOf is the refusal of a plan that does not fit (nil when it fits).
func refusalOf(pl *planned) *Refusal {
	if pl.Fits {
		return nil
	}
	code := pl.Code
	if code == "" {
		code = RefusalMemory
	}
	return &Refusal{Code: code, Text: pl.Reason}
}

// The explanation restates reasons in fixed forms; a front end that prints
// a reason once (the CLI's levels table) recognises the restatements by
// building the same lines, not by parsing them.

// LevelMisfitPrefix starts a level row's reason for a pool the level does
// not fit ("doesn't fit: " + the pool's reason).
const LevelMisfitPrefix = "doesn't fit: "

// NotFitLine is the explanation line of an answer's refusal text.
func NotFitLine(text string) string { return "does not fit: " + text }

// RejectedLine is the explanation line of a level row that does not fit.
func RejectedLine(quant, reason string) string { return quant + " rejected: " + reason }
