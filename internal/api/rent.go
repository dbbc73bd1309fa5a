package api

import (
	"bytes"
	"context"
	"time"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/rent"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// Rent answers hwaccel_rent_json: a planning request (model, context_length,
// batch_size, engine, quant; no registry, cluster, detect or devices: the
// machines are the catalog's)
// with a "rent" object of filters (schema/rent-request.schema.json). It
// never detects this machine and never uses the network; the only files it
// reads are the model files a "model": {"path": ...} names, as planning does
// (wire.DecodeRequest); a price file is given inline as "rent": {"prices": {...}}.
func Rent(ctx context.Context, input []byte, getenv Env) []byte {
	return RentAt(ctx, input, time.Now())
}

// RentAt is Rent with prices aged against now: the CLI passes its own clock,
// which tests fix.
func RentAt(_ context.Context, input []byte, now time.Time) []byte {
	return answerTo(input, &rentShape{}, func() (any, error) {
		req, err := rentRequest(input)
		if err != nil {
			return nil, err
		}
		req.Now = now
		cat, err := rent.Builtin()
		if err != nil {
			return nil, err
		}
		return rent.Rank(cat, req)
	})
}

// rentShape is a rent request as syntaxFirst walks it: the planning
// request's (detect, which a rent request refuses, left untyped), with its
// rent object typed. prices stays raw: rent.ParsePrices reads it.
type rentShape struct {
	Rent *wireRent `json:"rent"`
	rentTop
	wire.RequestShape
}

// rentTop is what a rent request holds besides a planning request.
type rentTop struct {
	Rent json.RawMessage `json:"rent"`
}

// wireRent is the "rent" object of a rent request.
type wireRent struct {
	Providers        []string        `json:"providers"`
	MaxPricePerHour  *float64        `json:"max_price_per_hour"`
	TargetTokensPerS *float64        `json:"target_tokens_per_s"`
	MaxNodes         *strictjson.Int `json:"max_nodes"`
	Sort             string          `json:"sort"`
	Prices           json.RawMessage `json:"prices"`
	// ThisMachine is the caller's machine as detection names it
	// (environment cloud and instance_type).
	ThisMachine *rent.MachineRef `json:"this_machine"`
}

// rentRequest splits the "rent" object off the planning request, decodes
// both, and checks the plan part as planning would.
func rentRequest(input []byte) (*rent.Request, error) {
	if input == nil {
		return nil, errs.New(errs.InvalidArgument, "request is NULL")
	}
	if err := checkInput(input); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(input)) == 0 {
		return nil, errs.New(errs.InvalidArgument, "request is empty")
	}
	var top rentTop
	if err := strictjson.DecodeIgnoringUnknown(input, &top, "request"); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil || fields == nil {
		// What the planning entry points say (wire.DecodeRequest): the
		// decode above took every other kind of value already.
		return nil, errs.New(errs.InvalidArgument, "request: must be a JSON object, got null")
	}
	// Each names a machine or its devices; devices would also plan part of
	// every type while ranking the whole type's price.
	for _, k := range []string{"registry", "cluster", "detect", "devices"} {
		if _, ok := fields[k]; ok {
			return nil, errs.New(errs.InvalidArgument, "request: %q has no place in a rent request: the machines are the catalog's", k)
		}
	}
	delete(fields, "rent")
	planJSON, err := json.Marshal(fields)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "rent request")
	}
	pr, _, err := wire.DecodeRequest(planJSON)
	if err != nil {
		return nil, err
	}
	if err := plan.Validate(pr); err != nil {
		return nil, err
	}
	req := &rent.Request{Plan: pr}
	if len(top.Rent) == 0 || bytes.Equal(bytes.TrimSpace(top.Rent), []byte("null")) {
		return req, nil
	}
	var w wireRent
	if err := strictjson.Decode(top.Rent, &w, "rent"); err != nil {
		return nil, err
	}
	return req, fillRent(req, &w)
}

func fillRent(req *rent.Request, w *wireRent) error {
	req.Providers, req.Sort = w.Providers, w.Sort
	if h := w.ThisMachine; h != nil {
		if h.Provider == "" {
			return errs.New(errs.InvalidArgument, "rent: this_machine needs provider (the registry's environment cloud)")
		}
		req.Here = h
	}
	if v := w.MaxPricePerHour; v != nil {
		if !(*v > 0 && *v < rent.PriceCeiling) {
			return errs.New(errs.InvalidArgument, "rent: max_price_per_hour %v is outside (0, %.0f)", *v, rent.PriceCeiling)
		}
		req.MaxPricePerHour = *v
	}
	if v := w.TargetTokensPerS; v != nil {
		if !(*v > 0 && *v < rent.SpeedCeiling) {
			return errs.New(errs.InvalidArgument, "rent: target_tokens_per_s %v is outside (0, %.0f)", *v, rent.SpeedCeiling)
		}
		req.TargetTokensPerS = *v
	}
	if v := w.MaxNodes; v != nil {
		if !v.Within(1, rent.MaxNodes) {
			return errs.New(errs.InvalidArgument, "rent: max_nodes %s is outside [1, %d]", v.Quote(), rent.MaxNodes)
		}
		req.MaxNodes = int(v.V)
	}
	if len(w.Prices) > 0 && !bytes.Equal(bytes.TrimSpace(w.Prices), []byte("null")) {
		p, err := rent.ParsePrices(w.Prices)
		if err != nil {
			return err
		}
		req.Prices = p
	}
	return nil
}
