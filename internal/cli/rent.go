package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/rent"
)

// rentRows is how many choices the text answer lists after the headline.
const rentRows = 10

// WriteRent prints a rent answer for a person: first the best choice and
// the command that runs it, then the ranking, the warnings, and how many
// types were left out.
func WriteRent(w io.Writer, b []byte, info AnswerInfo) error {
	a, err := decode[rent.Answer](b)
	if err != nil {
		return err
	}
	name := info.Model
	if name == "" {
		name = a.Model
	}
	if len(a.Choices) == 0 && len(a.NotFit) == 0 {
		// The price and provider filters drop types before any plan
		// (internal/rent wanted): nothing was tried, nothing left out.
		writeHeadline(w, fmt.Sprintf("No catalog machine type is within --max-price and --provider, so none was planned for %s.", name))
		return nil
	}
	if len(a.Choices) == 0 {
		if why := sharedReason(a.NotFit); why != "" {
			// One reason for every type (vLLM asked for a GGUF type):
			// say it, rather than send the user to --json for it.
			if len(a.NotFit) == 1 {
				writeHeadline(w, fmt.Sprintf("No catalog machine runs %s: the one type planned (%s %s) does not fit: %s", name, Text(a.NotFit[0].Provider), Text(a.NotFit[0].Type), Text(why)))
				return nil
			}
			writeHeadline(w, fmt.Sprintf("No catalog machine runs %s: all %d types planned do not fit, each for the same reason: %s", name, len(a.NotFit), Text(why)))
			return nil
		}
		writeHeadline(w, Plurals(fmt.Sprintf("No catalog machine runs %s within the filters (%d type(s) left out; --json lists why).", name, len(a.NotFit))))
		return nil
	}
	best := &a.Choices[0]
	writeHeadline(w, fmt.Sprintf("Rent %s for %s: %s.", machineWords(best), name, rentFigures(best)))
	if cmd, withheld := rentCommand(best, info); cmd != "" {
		fmt.Fprintf(w, "  %s\n", Text(cmd))
	} else if withheld != "" {
		fmt.Fprintf(w, "  %s\n", Text(withheld))
		writeFirstRunnable(w, a.Choices, info)
	}
	fmt.Fprintf(w, "\nRanked by %s (%d of %d types fit):\n", sortWords(a.Sort), len(a.Choices), len(a.Choices)+len(a.NotFit))
	for i, c := range a.Choices {
		if i == rentRows {
			fmt.Fprintf(w, "  ... %d more (--json lists all)\n", len(a.Choices)-rentRows)
			break
		}
		line := fmt.Sprintf("  %2d. %s: %s; %s", i+1, Text(machineWords(&c)), rentFigures(&c), Text(planWords(&c)))
		if c.NoCommand != "" {
			// Listed, since it fits, but its command needs weights no
			// one publishes (rent.Choice.NoCommand).
			line += "; no command: " + Text(c.NoCommand)
		}
		fmt.Fprintln(w, line)
	}
	writeThisMachine(w, a)
	fmt.Fprintf(w, "\nPrices: %s.\n", Text(priceWords(best)))
	for _, warn := range a.Warnings {
		fmt.Fprintf(w, "warning: %s\n", Text(warn))
	}
	return nil
}

// writeFirstRunnable names, under a best choice whose command cannot run
// as printed, the first ranked choice whose command does, with that
// command; nothing when there is none.
func writeFirstRunnable(w io.Writer, choices []rent.Choice, info AnswerInfo) {
	for i := range choices {
		c := &choices[i]
		if c.NoCommand != "" {
			continue
		}
		if cmd, _ := rentCommand(c, info); cmd != "" {
			fmt.Fprintf(w, "  The best choice whose command runs as printed: %d. %s, %s:\n  %s\n", i+1, Text(machineWords(c)), Text(c.Quant), Text(cmd))
			return
		}
	}
}

func sortWords(s string) string {
	switch s {
	case rent.SortPrice:
		return "price per hour"
	case rent.SortSpeed:
		return "output tokens/s"
	}
	return "cost per million output tokens"
}

func machineWords(c *rent.Choice) string {
	s := fmt.Sprintf("%s %s (%d x %s)", c.Provider, c.Type, c.Count, c.Accelerator)
	if c.Nodes > 1 {
		s = fmt.Sprintf("%d x %s %s (%d x %s each, %s)", c.Nodes, c.Provider, c.Type, c.Count, c.Accelerator, c.Network)
	}
	return s
}

// rentFigures is "$1.09/h, about 17.4 tokens/s, $17.41 per million output
// tokens" with "speed unknown" where the speed model has no figure and
// "(estimate, not validated)" where no measurement vouches for it.
func rentFigures(c *rent.Choice) string {
	var parts []string
	if c.PricePerHour != nil {
		parts = append(parts, fmt.Sprintf("$%.2f/h", *c.PricePerHour))
	} else {
		parts = append(parts, "no price")
	}
	if c.DecodeTokensPerS != nil {
		// Rounded as plan's headline rounds a speed (rate): one decimal
		// below 100 tokens/s. It rounded to whole tokens/s, 37 where
		// plan's answer for the same machine read 37.4.
		speed := "about " + Rate(*c.DecodeTokensPerS) + " output tokens/s"
		if !SpeedValidated(c.SpeedValidatedOn) {
			// Rent ranks by the model's figure either way; the text says
			// when no measurement checks it (plan's headline omits it then).
			speed += " (estimate, not validated)"
		}
		parts = append(parts, speed)
	} else {
		parts = append(parts, "speed unknown")
	}
	if c.CostPerMillionOutputTokens != nil {
		parts = append(parts, fmt.Sprintf("$%.2f per million output tokens", *c.CostPerMillionOutputTokens))
	}
	return strings.Join(parts, ", ")
}

func planWords(c *rent.Choice) string {
	return fmt.Sprintf("%s, %s", c.Quant, strategyWords(c.Strategy))
}

func priceWords(c *rent.Choice) string {
	from := "the built-in catalog"
	if c.PriceFrom == "user" {
		from = "your price file"
	}
	return fmt.Sprintf("on-demand, from %s; the first seen %s at %s", from, c.PriceSeen, c.PriceSource)
}

// rentCommand is the engine command of a choice, as `ai-hwaccel plan`
// writes it, or when no published checkpoint runs the choice the line
// that says what it needs instead (withheldLine).
func rentCommand(c *rent.Choice, info AnswerInfo) (cmd, withheld string) {
	if c.Engine == "" {
		return "", ""
	}
	a := &plan.ShardingAnswer{EngineArgs: map[string][]string{c.Engine: c.EngineArgs}}
	if c.EngineEnv != nil {
		a.EngineEnv = map[string]map[string]string{c.Engine: c.EngineEnv}
	}
	if c.Load != nil {
		a.Load = map[string]plan.Load{c.Engine: *c.Load}
	}
	info.Engine = c.Engine
	return engineCommand(a, info)
}

// writeThisMachine prints the caller's machine, priced like the choices,
// with its place in the ranking.
func writeThisMachine(w io.Writer, a *rent.Answer) {
	tm := a.ThisMachine
	if tm == nil {
		return
	}
	name := strings.TrimSpace(tm.Provider + " " + tm.Type)
	if tm.Choice == nil {
		fmt.Fprintf(w, "\nThis machine (%s): %s.\n", Text(name), Text(tm.Reason))
		return
	}
	place := ""
	for i := range a.Choices {
		if a.Choices[i].Provider == tm.Choice.Provider && a.Choices[i].Type == tm.Choice.Type {
			place = fmt.Sprintf(" (rank %d of %d)", i+1, len(a.Choices))
		}
	}
	fmt.Fprintf(w, "\nThis machine (%s): %s%s.\n", Text(name), rentFigures(tm.Choice), place)
}

// sharedReason is the reason every left-out type gives, without its "does
// not fit: " lead (the headline says it), when they all give one; "" when
// they differ.
func sharedReason(out []rent.Rejected) string {
	if len(out) == 0 {
		return ""
	}
	for _, r := range out[1:] {
		if r.Reason != out[0].Reason {
			return ""
		}
	}
	return strings.TrimPrefix(out[0].Reason, "does not fit: ")
}
