package api

import (
	"bytes"
	"context"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/catalogq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry/regjson"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// wireModelsRequest is the JSON shape of a catalog request
// (schema/models-request.schema.json).
type wireModelsRequest struct {
	Filter string `json:"filter"`
	Quant  string `json:"quant"`
}

// wireFitRequest is the JSON shape of a fit request
// (schema/fit-request.schema.json): the catalog filter, and the planning
// members every model is planned with.
type wireFitRequest struct {
	Filter        string          `json:"filter"`
	Quant         string          `json:"quant"`
	Engine        string          `json:"engine"`
	ContextLength *strictjson.Int `json:"context_length"`
	Registry      json.RawMessage `json:"registry"`
	Detect        json.RawMessage `json:"detect"`
}

// fitShape is a fit request as syntaxFirst walks it: registry and detect
// typed as fitRegistry decodes them.
type fitShape struct {
	Registry *registry.Registry `json:"registry"`
	Detect   *wireOptions       `json:"detect"`
	wireFitRequest
}

// Models answers hwaccel_models_json: the catalog, filtered. input nil,
// empty or null means the whole catalog.
func Models(_ context.Context, input []byte, _ Env) []byte {
	return answerTo(input, &wireModelsRequest{}, func() (any, error) {
		var w wireModelsRequest
		if err := decodeOptional(input, &w, "request"); err != nil {
			return nil, err
		}
		q, err := quantFilter(w.Quant)
		if err != nil {
			return nil, err
		}
		return catalogq.ModelsAnswer{Models: catalogq.Models(w.Filter, q)}, nil
	})
}

// Fit answers hwaccel_fit_json: every catalog model the filter keeps,
// planned (as hwaccel_plan_sharding plans it with "placement": "fewest":
// the table says how many devices each model needs, not how a server would
// spread it) on the request's registry or, without one, on this machine,
// detected once for all of them (through the cache, like planning). Those
// that fit come first, larger ones first.
func Fit(ctx context.Context, input []byte, getenv Env) []byte {
	return answerTo(input, &fitShape{}, func() (any, error) {
		var w wireFitRequest
		if err := decodeOptional(input, &w, "request"); err != nil {
			return nil, err
		}
		q, err := quantFilter(w.Quant)
		if err != nil {
			return nil, err
		}
		req := map[string]any{"placement": planreq.PlacementFewest}
		if q != "" {
			req["quant"] = string(q)
		}
		if w.Engine != "" {
			req["engine"] = w.Engine
		}
		asked := 0
		if c := w.ContextLength; c != nil {
			if !c.Within(1, planreq.MaxContextLength) {
				return nil, errs.New(errs.InvalidArgument, "request: context_length %s is outside [1, %d]", c.Quote(), planreq.MaxContextLength)
			}
			asked = int(c.V)
		}
		reg, err := fitRegistry(ctx, w, getenv)
		if err != nil {
			return nil, err
		}
		req["registry"] = reg
		rows := []catalogq.FitRow{}
		for _, m := range catalogq.Models(w.Filter, "") {
			req["model"] = map[string]any{"name": m.Name}
			if c := catalogq.ContextFor(m, asked); c > 0 {
				req["context_length"] = c
			}
			p, err := planOne(ctx, req, getenv)
			if err != nil {
				return nil, errs.New(errs.CodeOf(err), "planning %s: %s", m.Name, errs.MessageOf(err))
			}
			rows = append(rows, catalogq.Row(m, p))
		}
		catalogq.Sort(rows)
		return catalogq.FitAnswer{Models: rows}, nil
	})
}

// fitRegistry is the registry every model of a fit request is planned on:
// the request's, checked once, else this machine's.
func fitRegistry(ctx context.Context, w wireFitRequest, getenv Env) (json.RawMessage, error) {
	if len(w.Registry) > 0 && !bytes.Equal(bytes.TrimSpace(w.Registry), []byte("null")) {
		// As in a planning request, "detect" is read only without "registry".
		if _, err := regjson.DecodeShared(w.Registry); err != nil {
			return nil, err
		}
		return w.Registry, nil
	}
	opts, ttlGiven, err := decodeOptions(w.Detect, getenv)
	if err != nil {
		return nil, err
	}
	if !ttlGiven {
		opts.CacheTTL = planningCacheTTL
	}
	out := detectAnswer(ctx, opts)
	if bytes.HasPrefix(out, []byte(`{"error"`)) {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(out, &e) == nil {
			return nil, errs.New(e.Error.Code, "%s", e.Error.Message)
		}
	}
	return out, nil
}

// planOne plans one request as hwaccel_plan_sharding does.
func planOne(ctx context.Context, req map[string]any, getenv Env) (*plan.ShardingAnswer, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "encode request")
	}
	r, err := planRequest(ctx, body, getenv)
	if err != nil {
		return nil, err
	}
	return plan.PlanSharding(r)
}

// decodeOptional decodes an optional request object: nil, empty or null
// input leaves v as it is (every member at its default).
func decodeOptional(input []byte, v any, what string) error {
	if err := checkInput(input); err != nil {
		return err
	}
	t := bytes.TrimSpace(input)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	return strictjson.Decode(input, v, what)
}

// quantFilter parses a "quant" member: "" is none, else a level name, GGUF
// types included.
func quantFilter(s string) (quant.Level, error) {
	if s == "" {
		return "", nil
	}
	l, err := quant.Parse(s)
	if err != nil {
		return "", errs.New(errs.InvalidArgument, "request: quant: %s", errs.MessageOf(err))
	}
	return l, nil
}
