package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/catalogq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

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
	list := catalogq.Models(filter, level)
	if asJSON {
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

func writeModelsTable(w io.Writer, list []catalogq.Model) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPARAMS\tACTIVE\tLAYERS\tCONTEXT\tHUGGING FACE ID\tFORMATS")
	for _, m := range list {
		active := cli.Unknown
		if m.ActiveParams > 0 {
			active = cli.Params(float64(m.ActiveParams))
		}
		ctx := cli.Unknown
		if m.MaxContext > 0 {
			ctx = cli.TokensAtMost(float64(m.MaxContext))
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

// fit plans every catalog model on this machine (or a registry file).
func (a *app) fit(args []string) error {
	f := newFlags("fit", "  ai-hwaccel fit [--filter TEXT] [--quant QUANT] [--engine ENGINE] [--context N] [--registry FILE] [--all] [--json]",
		"Plans every catalog model (ai-hwaccel models) on this machine, or on the registry in FILE, and\nprints one table sorted by size: the precision that fits, how the model is spread over\nthe fewest devices that hold it (as plan --placement fewest), the longest context the memory\nleft holds (capped at the model's own) and the expected decode speed. plan's default placement\nmay use more devices (vLLM and SGLang serving layouts, llama.cpp GPUs for the trained context).\nModels that do not fit are listed after the others with --all.")
	var filter, registryFile, context, q, engine string
	var asJSON, pretty, all bool
	f.StringVar(&filter, "filter", "", "only models whose name, Hugging Face id or alias contains `TEXT`")
	f.StringVar(&q, "quant", "", "plan every model at precision `QUANT` (fp8, int4, or a GGUF type: q4_k_m, q8_0, iq4_xs; default auto)")
	f.StringVar(&engine, "engine", "", "plan for inference `ENGINE`: "+strings.Join(engineNames, ", "))
	f.StringVar(&context, "context", "", "plan for a context of `N` tokens (4096, 32k; default: as plan --placement fewest without --context, fits judged at 4096)")
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
	if filter != "" {
		req["filter"] = filter
	}
	if engine != "" {
		req["engine"] = engine
	}
	if f.isSet("context") {
		n, err := countFlag("fit", "context", context, planreq.MaxContextLength)
		if err != nil {
			return err
		}
		req["context_length"] = n
	}
	reg, err := a.fitRegistry(f, d, registryFile)
	if err != nil {
		return err
	}
	req["registry"] = reg
	rows, err := a.fitRows(req)
	if err != nil {
		return err
	}
	if len(rows) == 0 && filter != "" && !asJSON {
		// Nothing matched: not a machine too small for what did.
		_, err := fmt.Fprintf(a.stdout, "No catalog model matches %q (ai-hwaccel models lists the catalog).\n", filter)
		return err
	}
	if !all {
		if line := noFitLine(rows); line != "" && !asJSON {
			_, err := fmt.Fprintln(a.stdout, line)
			return err
		}
		kept := rows[:0]
		for _, r := range rows {
			if r.Fits.Yes() {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	if asJSON {
		b, err := json.Marshal(append([]catalogq.FitRow{}, rows...))
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

// fitRows asks the engine's fit (hwaccel_fit_json) for every catalog model
// the request's filter keeps, planned on its registry.
func (a *app) fitRows(req map[string]any) ([]catalogq.FitRow, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	a.send("fit", body)
	out := api.Fit(a.ctx, body, a.getenv)
	if err := answerError(out); err != nil {
		return nil, err
	}
	var ans catalogq.FitAnswer
	if err := json.Unmarshal(out, &ans); err != nil {
		return nil, err
	}
	return ans.Models, nil
}

func strategyWords(s string) string {
	if s == "none" {
		return "one device"
	}
	return strings.ReplaceAll(s, "_", " ")
}

// noFitLine is what fit without --all prints where none of rows fits, and
// "" where one does. A row whose fits is null (no available device's
// memory is known) is not a "no": where every row is such, it says it
// cannot tell, with the engine's reason where the rows share one.
func noFitLine(rows []catalogq.FitRow) string {
	unknown := 0
	for _, r := range rows {
		if r.Fits.Yes() {
			return ""
		}
		if r.Fits.Unknown() {
			unknown++
		}
	}
	switch {
	case unknown == 0:
		return "No catalog model fits (ai-hwaccel fit --all lists them with the reason in plan)."
	case unknown < len(rows):
		return fmt.Sprintf("No catalog model is known to fit: %d of %d cannot be told (ai-hwaccel fit --all lists them with the reason in plan).", unknown, len(rows))
	}
	why := rows[0].RefusalText
	for _, r := range rows[1:] {
		if r.RefusalText != why {
			why = "the memory of the devices is not known"
			break
		}
	}
	return fmt.Sprintf("Cannot tell which catalog models fit: %s (ai-hwaccel fit --all lists them).", why)
}

func writeFitTable(w io.Writer, rows []catalogq.FitRow) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "No catalog model fits (ai-hwaccel fit --all lists them with the reason in plan).")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "MODEL\tPARAMS\tFITS\tQUANT\tDEVICES\tSTRATEGY\tCONTEXT\tTOKENS/S"
	if !rows[len(rows)-1].Fits.Yes() {
		// Refused rows come last (catalogq.Sort): the table has a WHY
		// column only when it lists one.
		header += "\tWHY"
	}
	fmt.Fprintln(tw, header)
	marked, elided := false, false
	for _, r := range rows {
		if !r.Fits.Yes() {
			// The strategy column says which refusal: "insufficient memory";
			// WHY says why in words. FITS is "unknown", not "no", where no
			// device's memory is known (JSON fits null), as plan says.
			code := cli.Unknown
			if r.Refusal != "" {
				code = strings.ReplaceAll(r.Refusal, "_", " ")
			}
			fits := "no"
			if r.Fits.Unknown() {
				fits = "unknown"
			}
			why, cut := shortReason(r.RefusalText)
			elided = elided || cut
			fmt.Fprintf(tw, "%s\t%s\t%s\t—\t—\t%s\t—\t—\t%s\n", cli.Text(r.Model), cli.Params(float64(r.Params)), fits, code, cli.Text(cli.Plurals(why)))
			continue
		}
		ctx, tps := cli.Unknown, cli.Unknown
		if r.MaxContextLength > 0 {
			ctx = cli.TokensAtMost(float64(r.MaxContextLength))
		}
		if r.DecodeTokensPerS > 0 && cli.SpeedValidated(r.ValidatedOn) {
			tps = cli.Rate(r.DecodeTokensPerS)
		}
		quant := cli.Text(r.Quant)
		if r.NoCommand != "" {
			quant += noCheckpointMark
			marked = true
		}
		fmt.Fprintf(tw, "%s\t%s\tyes\t%s\t%d\t%s\t%s\t%s\n", cli.Text(r.Model), cli.Params(float64(r.Params)), quant,
			r.Devices, strategyWords(r.Strategy), ctx, tps)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if marked {
		if _, err := fmt.Fprintln(w, "\n(no checkpoint): fits, but nothing published at that precision runs it with this engine, so its plan withholds the command (ai-hwaccel plan --model NAME says what it needs; no_command in --json)."); err != nil {
			return err
		}
	}
	if elided {
		if _, err := fmt.Fprintln(w, "\n"+elidedNote); err != nil {
			return err
		}
	}
	return nil
}

// elidedNote follows a fit table whose WHY column left out an aside of a
// reason (shortReason): the row reads "(…)" where it was, and the whole
// reason is one flag away.
const elidedNote = elidedMark + ": a parenthesised part of the reason left out here (the memory broken down, a source, what the devices may use); --json gives the whole reason (refusal_text), as ai-hwaccel plan --model NAME does."

// elidedMark stands in a WHY cell for each aside shortReason left out.
const elidedMark = "(…)"

// noCheckpointMark follows the precision of a row that fits but whose plan
// prints no command (catalogq.FitRow.NoCommand).
const noCheckpointMark = " (no checkpoint)"

// shortReason is a refusal text for one table row: each parenthesised
// aside of more than one word (the sources it cites, the memory broken
// down, what the devices may use, a qualification) replaced by elidedMark,
// so that the row does not read as the whole sentence, and whether one
// was; the JSON's refusal_text keeps them. A one-word aside such as
// "(intel)" stays.
func shortReason(text string) (string, bool) {
	var b strings.Builder
	elided := false
	for {
		open := strings.Index(text, " (")
		if open < 0 {
			break
		}
		end := closingParen(text, open+1)
		if end < 0 || !strings.Contains(text[open+2:end], " ") {
			b.WriteString(text[:open+2])
			text = text[open+2:]
			continue
		}
		b.WriteString(text[:open+1] + elidedMark)
		text = text[end+1:]
		elided = true
	}
	b.WriteString(text)
	return b.String(), elided
}

// closingParen is the index of the parenthesis closing the one at open in
// s, or -1.
func closingParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
