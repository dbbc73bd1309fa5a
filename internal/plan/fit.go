package plan

import (
	"bytes"
	"fmt"
)

// Fit is whether a plan, or a level row of one, fits the devices: yes, no,
// or unknown. Unknown is not no: where no available device's memory is
// known (refusal no_device) nothing can be said either way, and the answers
// say fits null (schema/plan.schema.json, fits); so too where the devices of
// known memory do not hold it and devices of unknown memory were left out
// (choice.fit). The zero value is FitNo,
// as a bool's is false: a row is a misfit until a plan for it fits.
type Fit int8

// The three answers to "does it fit?".
const (
	FitNo      Fit = iota // the devices do not hold it
	FitYes                // a plan fits
	FitUnknown            // it cannot be told: devices' memory unknown
)

// fitOf is the Fit of a planned outcome: FitYes when it fits, FitUnknown
// when it was refused for no device with known memory, FitNo otherwise.
func fitOf(fits bool, refusalCode string) Fit {
	switch {
	case fits:
		return FitYes
	case refusalCode == RefusalNoDevice:
		return FitUnknown
	}
	return FitNo
}

// Yes reports whether it fits; false for no and for unknown.
func (f Fit) Yes() bool { return f == FitYes }

// Unknown reports whether it cannot be told whether it fits.
func (f Fit) Unknown() bool { return f == FitUnknown }

// String is the word for f: yes, no or unknown.
func (f Fit) String() string {
	switch f {
	case FitNo:
		return "no"
	case FitYes:
		return "yes"
	case FitUnknown:
		return "unknown"
	}
	return fmt.Sprintf("Fit(%d)", int8(f))
}

// The JSON of each Fit: fits is a boolean, null when unknown.
var (
	jsonTrue  = []byte("true")
	jsonFalse = []byte("false")
	jsonNull  = []byte("null")
)

// MarshalJSON writes true, false, or null for unknown.
func (f Fit) MarshalJSON() ([]byte, error) {
	switch f {
	case FitNo:
		return jsonFalse, nil
	case FitYes:
		return jsonTrue, nil
	case FitUnknown:
		return jsonNull, nil
	}
	return nil, fmt.Errorf("plan: %s is not a fit", f)
}

// UnmarshalJSON reads true, false, or null (unknown): what MarshalJSON
// writes, so a front end that decodes an answer (the CLI) keeps unknown.
func (f *Fit) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "false":
		*f = FitNo
	case "true":
		*f = FitYes
	case "null":
		*f = FitUnknown
	default:
		return fmt.Errorf("plan: fits is true, false or null, not %.40s", b)
	}
	return nil
}
