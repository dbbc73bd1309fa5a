// Package regjson is the JSON form of the device registry
// (schema/registry.schema.json): decoding a registry a host gives, with
// its checks (registry.Validate), and encoding one. internal/registry holds
// the types and their checks without the codec, so that the planner, which
// only reads registries, does not depend on a JSON package.
package regjson

import (
	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// Decode parses a registry given by a host and validates it. Unknown fields
// are ignored (a newer writer may add fields); malformed JSON, a key given
// twice in one object and data after the registry give invalid_json, wrong
// types and nonsense values (negative memory, unknown kind, duplicate ids)
// give invalid_argument.
func Decode(data []byte) (*registry.Registry, error) {
	var r registry.Registry
	if err := strictjson.DecodeIgnoringUnknown(data, &r, "registry"); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if err := availableGiven(data); err != nil {
		return nil, err
	}
	return &r, nil
}

// availableGiven refuses a device without "available". The schema requires
// it (schema/registry.schema.json, $defs.device) and, unlike id or family,
// nothing else in the device says it; the decoder would read it as false,
// and a hand-written registry that left it out was planned as having no
// usable device. The contract leaves nothing unknown to a guess
// (/work/shared/contract.md, "never guessed"), so true is not assumed
// either: the member is named instead. data is already known to decode.
func availableGiven(data []byte) error {
	var given struct {
		Devices []struct {
			Available *bool `json:"available"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(data, &given); err != nil {
		return errs.New(errs.InvalidArgument, "registry: %s", strictjson.Describe(err))
	}
	for i, d := range given.Devices {
		if d.Available == nil {
			return errs.New(errs.InvalidArgument, "registry: devices[%d].available is missing: say whether the device can be used (true or false; the registry schema requires it)", i)
		}
	}
	return nil
}

// Encode writes the registry as compact JSON.
func Encode(r *registry.Registry) ([]byte, error) {
	return json.Marshal(r)
}
