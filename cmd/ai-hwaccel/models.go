package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// catalogModel is one row of `ai-hwaccel models`: a catalog entry with the
// figures the engine computes from its config.
type catalogModel struct {
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

// catalogModels lists the catalog, keeping the entries whose name, Hugging
// Face id or alias contains filter (case-insensitive; "" keeps all) and,
// when q is not "", that publish a checkpoint at level q.
func catalogModels(filter string, q quant.Level) []catalogModel {
	filter = strings.ToLower(strings.TrimSpace(filter))
	var out []catalogModel
	for _, e := range model.Catalog() {
		if filter != "" && !matches(filter, append([]string{e.Name, e.HFID}, e.Aliases...)) {
			continue
		}
		m := model.Lookup(e.Name)
		if m == nil || (q != "" && !publishes(m, q)) {
			continue
		}
		c := catalogModel{Name: e.Name, HFID: e.HFID, Aliases: e.Aliases, Params: m.Params, Layers: m.Layers,
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

// formats lists the levels of a model's published checkpoints, each once.
func formats(cks []model.Checkpoint) string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cks {
		if !seen[c.Quant] {
			seen[c.Quant] = true
			out = append(out, c.Quant)
		}
	}
	if len(out) == 0 {
		return cli.Unknown
	}
	return strings.Join(out, ",")
}

// quantFlag parses a --quant value of cmd: "" (not given) or a level name,
// GGUF types included (quant.Parse).
func quantFlag(cmd, v string) (quant.Level, error) {
	if strings.TrimSpace(v) == "" {
		return "", nil
	}
	l, err := quant.Parse(v)
	if err != nil {
		return "", usagef(cmd, "--quant: %s", errs.MessageOf(err))
	}
	return l, nil
}

func matches(filter string, names []string) bool {
	for _, n := range names {
		if strings.Contains(strings.ToLower(n), filter) {
			return true
		}
	}
	return false
}

// models prints the embedded model catalog.
func (a *app) models(args []string) error {
	f := newFlags("models", "  ai-hwaccel models [--filter TEXT] [--quant QUANT] [--json]",
		"Lists the models the engine knows by name (internal/model/catalog.json): parameters, layers,\nlongest context, Hugging Face id, the formats of its published checkpoints and the source of\nevery figure. Any of these names (or its Hugging Face id, or a checkpoint's) works as --model.")
	var filter, q string
	var asJSON, pretty bool
	f.StringVar(&filter, "filter", "", "only models whose name, Hugging Face id or alias contains `TEXT` (case-insensitive)")
	f.StringVar(&q, "quant", "", "only models with a published checkpoint in precision `QUANT` (fp8, mxfp4, int4, or a GGUF type: q4_k_m)")
	f.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	f.BoolVar(&pretty, "pretty", false, "indent the JSON (with --json)")
	f.group("Flags", "filter", "quant", "json", "pretty")
	if err := f.parse(a, args); err != nil {
		return ignoreHelp(err)
	}
	if pretty && !asJSON {
		return usagef("models", "--pretty applies to --json output")
	}
	level, err := quantFlag("models", q)
	if err != nil {
		return err
	}
	list := catalogModels(filter, level)
	if asJSON {
		if list == nil {
			list = []catalogModel{}
		}
		b, err := json.Marshal(list)
		if err != nil {
			return err
		}
		return a.writeJSON(b, pretty)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(a.stdout, "No catalog model matches %q.\n", filter)
		return err
	}
	return writeModelsTable(a.stdout, list)
}

func writeModelsTable(w io.Writer, list []catalogModel) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPARAMS\tACTIVE\tLAYERS\tCONTEXT\tHUGGING FACE ID\tFORMATS")
	for _, m := range list {
		active := cli.Unknown
		if m.ActiveParams > 0 {
			active = cli.Params(float64(m.ActiveParams))
		}
		ctx := cli.Unknown
		if m.MaxContext > 0 {
			ctx = cli.Tokens(float64(m.MaxContext))
		}
		hf := m.HFID
		if hf == "" {
			hf = cli.Unknown
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", cli.Text(m.Name), cli.Params(float64(m.Params)), active, m.Layers, ctx, cli.Text(hf), cli.Text(formats(m.Checkpoints)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d models. Sources of every figure: ai-hwaccel models --json (field source).\n", len(list))
	return err
}

// fitRow is one catalog model planned on the machine.
type fitRow struct {
	Model            string  `json:"model"`
	Params           int64   `json:"params"`
	Fits             bool    `json:"fits"`
	Quant            string  `json:"quant,omitempty"`
	Strategy         string  `json:"strategy,omitempty"`
	Devices          int     `json:"devices,omitempty"`
	MaxContextLength int     `json:"max_context_length,omitempty"`
	DecodeTokensPerS float64 `json:"decode_tokens_per_s,omitempty"`
	// Refusal is the code of why a model does not fit (plan.Refusal*).
	Refusal string `json:"refusal,omitempty"`
	// ValidatedOn is the plan's throughput.validated_on: the table shows
	// the speed only when a measured set vouches for it.
	ValidatedOn string `json:"validated_on,omitempty"`
}

// fit plans every catalog model on this machine (or a registry file).
func (a *app) fit(args []string) error {
	f := newFlags("fit", "  ai-hwaccel fit [--filter TEXT] [--quant QUANT] [--engine ENGINE] [--context N] [--registry FILE] [--all] [--json]",
		"Plans every catalog model (ai-hwaccel models) on this machine, or on the registry in FILE, and\nprints one table sorted by size: the precision that fits, how the model is spread, the longest\ncontext the memory left holds (capped at the model's own) and the expected decode speed.\nModels that do not fit are listed after the others with --all.")
	var filter, registryFile, context, q, engine string
	var asJSON, pretty, all bool
	f.StringVar(&filter, "filter", "", "only models whose name, Hugging Face id or alias contains `TEXT`")
	f.StringVar(&q, "quant", "", "plan every model at precision `QUANT` (fp8, int4, or a GGUF type: q4_k_m, q8_0, iq4_xs; default auto)")
	f.StringVar(&engine, "engine", "", "plan for inference `ENGINE`: "+strings.Join(engineNames, ", "))
	f.StringVar(&context, "context", "", "plan for a context of `N` tokens (4096, 32k; default 4096)")
	f.StringVar(&registryFile, "registry", "", "plan on the registry in `FILE` (ai-hwaccel > FILE on another machine)")
	f.BoolVar(&all, "all", false, "also list the models that do not fit")
	f.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	f.BoolVar(&pretty, "pretty", false, "indent the JSON (with --json)")
	f.group("Flags", "filter", "quant", "engine", "context", "registry", "all", "json", "pretty")
	d := &detectFlags{}
	d.register(f)
	if err := f.parse(a, args); err != nil {
		return ignoreHelp(err)
	}
	if pretty && !asJSON {
		return usagef("fit", "--pretty applies to --json output")
	}
	req := map[string]any{}
	level, err := quantFlag("fit", q)
	if err != nil {
		return err
	}
	if level != "" {
		req["quant"] = string(level)
	}
	if engine != "" {
		req["engine"] = engine
	}
	if f.isSet("context") {
		n, err := parseCount(context)
		if err != nil {
			return usagef("fit", "--context: %v", err)
		}
		req["context_length"] = n
	}
	reg, err := a.fitRegistry(f, d, registryFile)
	if err != nil {
		return err
	}
	req["registry"] = reg
	rows, err := a.fitRows(req, catalogModels(filter, ""))
	if err != nil {
		return err
	}
	if !all {
		kept := rows[:0]
		for _, r := range rows {
			if r.Fits {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	if asJSON {
		b, err := json.Marshal(append([]fitRow{}, rows...))
		if err != nil {
			return err
		}
		return a.writeJSON(b, pretty)
	}
	return writeFitTable(a.stdout, rows)
}

// fitRegistry is the registry fit plans on: the file, else one detection of
// this machine shared by every model's plan.
func (a *app) fitRegistry(f *flags, d *detectFlags, file string) (json.RawMessage, error) {
	if f.isSet("registry") {
		return readJSONFile("fit", "registry", file)
	}
	opts, err := d.optionsJSON(f)
	if err != nil {
		return nil, err
	}
	out := a.detectJSON(opts)
	if err := answerError(out); err != nil {
		return nil, err
	}
	return out, nil
}

// fitRows plans each model with the engine (plan_sharding, quant auto) and
// sorts the answers: fitting models first, larger models first, then faster.
func (a *app) fitRows(req map[string]any, models []catalogModel) ([]fitRow, error) {
	var rows []fitRow
	asked, _ := req["context_length"].(int)
	for _, m := range models {
		req["model"] = map[string]any{"name": m.Name}
		// The engine refuses a context beyond a model's maximum; the fit
		// table plans such a model at its own maximum instead.
		if asked > 0 && m.MaxContext > 0 && asked > m.MaxContext {
			req["context_length"] = m.MaxContext
		} else if asked > 0 {
			req["context_length"] = asked
		}
		body, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		a.send("planning", body)
		out := api.PlanSharding(a.ctx, body, a.getenv)
		if err := answerError(out); err != nil {
			return nil, fmt.Errorf("planning %s: %w", m.Name, err)
		}
		var p plan.ShardingAnswer
		if err := json.Unmarshal(out, &p); err != nil {
			return nil, fmt.Errorf("planning %s: %w", m.Name, err)
		}
		r := fitRow{Model: m.Name, Params: m.Params, Fits: p.Fits}
		if p.Refusal != nil {
			r.Refusal = p.Refusal.Code
		}
		if p.Fits {
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
			}
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		x, y := rows[i], rows[j]
		if x.Fits != y.Fits {
			return x.Fits
		}
		if x.Params != y.Params {
			return x.Params > y.Params
		}
		return x.DecodeTokensPerS > y.DecodeTokensPerS
	})
	return rows, nil
}

func strategyWords(s string) string {
	if s == "none" {
		return "one device"
	}
	return strings.ReplaceAll(s, "_", " ")
}

func writeFitTable(w io.Writer, rows []fitRow) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "No catalog model fits (ai-hwaccel fit --all lists them with the reason in plan).")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPARAMS\tFITS\tQUANT\tDEVICES\tSTRATEGY\tCONTEXT\tTOKENS/S")
	for _, r := range rows {
		if !r.Fits {
			// The strategy column says why there is none: "insufficient memory".
			why := cli.Unknown
			if r.Refusal != "" {
				why = strings.ReplaceAll(r.Refusal, "_", " ")
			}
			fmt.Fprintf(tw, "%s\t%s\tno\t—\t—\t%s\t—\t—\n", cli.Text(r.Model), cli.Params(float64(r.Params)), why)
			continue
		}
		ctx, tps := cli.Unknown, cli.Unknown
		if r.MaxContextLength > 0 {
			ctx = cli.Tokens(float64(r.MaxContextLength))
		}
		if r.DecodeTokensPerS > 0 && cli.SpeedValidated(r.ValidatedOn) {
			tps = fmt.Sprintf("%.1f", r.DecodeTokensPerS)
		}
		fmt.Fprintf(tw, "%s\t%s\tyes\t%s\t%d\t%s\t%s\t%s\n", cli.Text(r.Model), cli.Params(float64(r.Params)), cli.Text(r.Quant),
			r.Devices, strategyWords(r.Strategy), ctx, tps)
	}
	return tw.Flush()
}
