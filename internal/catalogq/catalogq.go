// Package catalogq answers the two questions about the model catalog
// (internal/model/catalog.json) that every host may ask, the C ABI's
// hwaccel_models_json and hwaccel_fit_json as much as the CLI's models and
// fit: which models the engine knows (Models), and which of them run on a
// machine, at what precision, context and speed (Fit). It holds the rules
// (filtering, the context cap, the sort); internal/api decodes the requests
// and runs the plans.
package catalogq

import (
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// Model is one catalog entry with the figures the engine computes from its
// config (schema/models.schema.json).
type Model struct {
	Name         string   `json:"name"`
	HFID         string   `json:"hf_id,omitempty"`
	Aliases      []string `json:"aliases,omitempty"`
	Params       int64    `json:"params"`
	ActiveParams int64    `json:"active_params,omitempty"`
	Layers       int      `json:"layers,omitempty"`
	MaxContext   int      `json:"max_context,omitempty"`
	Source       string   `json:"source"`
	// Checkpoints are the published checkpoints (the publisher's first).
	Checkpoints []model.Checkpoint `json:"checkpoints,omitempty"`
}

// ModelsAnswer is the answer of hwaccel_models_json.
type ModelsAnswer struct {
	Models []Model `json:"models"`
}

// Models lists the catalog, keeping the entries whose name, Hugging Face id
// or alias contains filter (case-insensitive; "" keeps all) and, when q is
// not "", that publish a checkpoint at level q. The list is never nil.
func Models(filter string, q quant.Level) []Model {
	filter = strings.ToLower(strings.TrimSpace(filter))
	out := []Model{}
	for _, e := range model.Catalog() {
		if filter != "" && !matches(filter, append([]string{e.Name, e.HFID}, e.Aliases...)) {
			continue
		}
		m := model.Lookup(e.Name)
		if m == nil || (q != "" && !publishes(m, q)) {
			continue
		}
		c := Model{Name: e.Name, HFID: e.HFID, Aliases: e.Aliases, Params: m.Params, Layers: m.Layers,
			MaxContext: m.MaxContext, Source: e.Source, Checkpoints: m.Checkpoints}
		if m.ActiveParams != m.Params {
			c.ActiveParams = m.ActiveParams
		}
		out = append(out, c)
	}
	return out
}

// publishes reports whether m has a published checkpoint at level q.
func publishes(m *model.Model, q quant.Level) bool {
	for _, c := range m.Checkpoints {
		if l, err := quant.Parse(c.Quant); err == nil && l == q {
			return true
		}
	}
	return false
}

func matches(filter string, names []string) bool {
	for _, n := range names {
		if strings.Contains(strings.ToLower(n), filter) {
			return true
		}
	}
	return false
}

// FitRow is one catalog model planned on the machine.
type FitRow struct {
	Model  string `json:"model"`
	Params int64  `json:"params"`
	// Fits is the plan's fits: plan.FitUnknown (null in JSON) where it
	// cannot tell, no available device's memory being known (refusal
	// no_device) or devices of unknown memory left out of a refusal for
	// memory (plan's choice.fit).
	Fits             plan.Fit `json:"fits"`
	Quant            string   `json:"quant,omitempty"`
	Strategy         string   `json:"strategy,omitempty"`
	Devices          int      `json:"devices,omitempty"`
	MaxContextLength int      `json:"max_context_length,omitempty"`
	DecodeTokensPerS float64  `json:"decode_tokens_per_s,omitempty"`
	// Refusal is the code of why a model does not fit (plan.Refusal*).
	Refusal string `json:"refusal,omitempty"`
	// RefusalText is the plan's refusal text: why, in words (the fit
	// table shows it shortened, the JSON whole).
	RefusalText string `json:"refusal_text,omitempty"`
	// ValidatedOn is the plan's throughput.validated_on: which
	// measurements vouch for DecodeTokensPerS, or "not validated: ..."
	// (the CLI's table then shows no speed).
	ValidatedOn string `json:"validated_on,omitempty"`
	// NoCommand says why the plan of a fitting row prints no engine
	// command: what it needs (the load's needs: a vLLM int4 plan of a model
	// with no int4 checkpoint published), or that no GGUF of its type is
	// published (llama.cpp); "" when its command loads a published
	// checkpoint. The table marks such a row "(no checkpoint)": it fits,
	// but nothing published runs it as planned.
	NoCommand string `json:"no_command,omitempty"`
}

// FitAnswer is the answer of hwaccel_fit_json: every model asked about,
// those that fit first.
type FitAnswer struct {
	Models []FitRow `json:"models"`
}

// ContextFor is the context a model is planned at when the host asked for
// asked tokens (0: the planner's default): the engine refuses a context
// beyond a model's maximum, and the fit table plans such a model at its own
// maximum instead.
func ContextFor(m Model, asked int) int {
	if asked > 0 && m.MaxContext > 0 && asked > m.MaxContext {
		return m.MaxContext
	}
	return asked
}

// Row turns the plan of m into its row: the precision, strategy and number
// of devices of the plan, the longest context it holds capped at the
// model's own, and the decode speed; or why it does not fit.
func Row(m Model, p *plan.ShardingAnswer) FitRow {
	r := FitRow{Model: m.Name, Params: m.Params, Fits: p.Fits}
	if p.Refusal != nil {
		r.Refusal, r.RefusalText = p.Refusal.Code, p.Refusal.Text
	}
	if !p.Fits.Yes() {
		return r
	}
	r.Quant, r.Strategy, r.MaxContextLength = p.Quant, p.Strategy, p.MaxContextLength
	if m.MaxContext > 0 && r.MaxContextLength > m.MaxContext {
		r.MaxContextLength = m.MaxContext
	}
	seen := map[string]bool{}
	for _, s := range p.Shards {
		seen[s.DeviceID] = true
	}
	r.Devices = len(seen)
	if p.Throughput != nil {
		r.DecodeTokensPerS, r.ValidatedOn = p.Throughput.DecodeTokensPerS, p.Throughput.ValidatedOn
		if r.DecodeTokensPerS <= 0 {
			r.ValidatedOn = noSpeedWhy(p.Throughput.Assumptions)
		}
	}
	r.NoCommand = noCommand(p)
	return r
}

// noSpeedWhy is the validated_on of a row whose plan estimates no decode
// speed: the plan's own says "the assumptions say why", and a row carries
// no assumptions, so the row says why itself, from the plan's "decode
// omitted:" assumption.
func noSpeedWhy(assumptions []string) string {
	const omitted = "decode omitted: "
	why := plan.NotValidated + ": no decode speed is estimated"
	for _, a := range assumptions {
		if rest, ok := strings.CutPrefix(a, omitted); ok {
			return why + ": " + rest
		}
	}
	return why
}

// noCommand is why the plan's engine command is withheld (FitRow.NoCommand),
// from the load of the engine the plan was made for: one with no published
// repository serves nothing the plan names. "" when the plan loads a
// published checkpoint, or lists no load for its engine.
func noCommand(p *plan.ShardingAnswer) string {
	if p.Budget == nil {
		return ""
	}
	ld, ok := p.Load[p.Budget.Engine]
	switch {
	case !ok || ld.Repo != "":
		return ""
	case ld.Needs != "":
		return "needs " + ld.Needs
	case ld.GGUFType != "":
		return "no published " + ld.GGUFType + " GGUF of this model is known"
	}
	return ""
}

// Sort orders rows: fitting models first, larger models first, then faster.
func Sort(rows []FitRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		x, y := rows[i], rows[j]
		if x.Fits.Yes() != y.Fits.Yes() {
			return x.Fits.Yes()
		}
		if x.Params != y.Params {
			return x.Params > y.Params
		}
		return x.DecodeTokensPerS > y.DecodeTokensPerS
	})
}
