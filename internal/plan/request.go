// Package plan answers the planning questions: which precision fits, how to
// spread a model over devices, and how much memory training needs.
package plan

import (
	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Request is a planning request of the wire contract.
// PLACEHOLDER (being replaced by the planning work): only the fields the api
// layer relies on are fixed: Registry and Detect.
type Request struct {
	Registry *registry.Registry `json:"registry"`
	// Detect holds detection options used when Registry is absent.
	Detect json.RawMessage `json:"detect"`
}

// DecodeRequest parses and validates a planning request.
func DecodeRequest(data []byte) (*Request, error) {
	var r Request
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, errs.Wrap(errs.InvalidJSON, err, "request")
	}
	return &r, nil
}

// SuggestQuant answers hwaccel_suggest_quant.
func SuggestQuant(req *Request) (any, error) {
	return nil, errs.New(errs.Internal, "not implemented yet")
}

// PlanSharding answers hwaccel_plan_sharding.
func PlanSharding(req *Request) (any, error) {
	return nil, errs.New(errs.Internal, "not implemented yet")
}

// EstimateTraining answers hwaccel_estimate_training.
func EstimateTraining(req *Request) (any, error) {
	return nil, errs.New(errs.Internal, "not implemented yet")
}
