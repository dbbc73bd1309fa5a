package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
)

// rentFlags are the flags of rent beyond the planning ones it shares.
type rentFlags struct {
	providers, targetTPS, maxPrice, maxNodes, sort, prices string
	here                                                   bool
}

func (a *app) rent(args []string) error {
	f := newFlags("rent",
		"  ai-hwaccel rent --model MODEL [--quant QUANT] [--context N] [--batch N] [--engine E] [--provider aws,gcp,...] [--target-tps N] [--max-price USD] [--max-nodes N] [--sort cost|price|speed] [--prices FILE] [--here] [--json]",
		"Which machine to rent for a model: every machine type of the built-in catalog (AWS, Azure,\nGCP, Lambda, OCI, RunPod; docs/rent.md) is planned as `ai-hwaccel plan` would plan it, and the\ntypes where the model fits are ranked by cost per million output tokens. The first line is the\nbest choice and the next the command that runs it. Prices are on-demand, each with the date it\nwas seen and its page; --prices FILE replaces them (same shape as the catalog). Nothing is\ndetected and no network is used.")
	p := &planFlags{}
	r := &rentFlags{}
	f.StringVar(&p.model, "model", "", "the `MODEL` (required): a size (70b), a catalog name (Llama-3.1-70B) or a model file or directory")
	f.StringVar(&p.quant, "quant", "auto", "precision `QUANT`: auto, fp16, bf16, fp8, int8, int4 or a GGUF type")
	f.StringVar(&p.context, "context", "", "context length in tokens, `N` >= 1: 8192, 32k (default: as plan without --context, fits judged at 4096)")
	f.StringVar(&p.batch, "batch", "", "sequences served at once, each up to --context tokens, `N` >= 1 (default 1)")
	f.StringVar(&p.engine, "engine", "", "plan for inference `ENGINE`: "+strings.Join(engineNames, ", "))
	f.StringVar(&r.providers, "provider", "", "keep only these `PROVIDERS`, comma-separated: aws, azure, gcp, lambda, oci, runpod")
	f.StringVar(&r.targetTPS, "target-tps", "", "keep only plans that decode at least `N` output tokens/s")
	f.StringVar(&r.maxPrice, "max-price", "", "keep only machines up to `USD` per hour")
	f.StringVar(&r.maxNodes, "max-nodes", "", "plan over up to `N` nodes of types with a network between nodes (default 1)")
	f.StringVar(&r.sort, "sort", "cost", "rank by `ORDER`: cost (per million output tokens), price (per hour), speed (tokens/s)")
	f.StringVar(&r.prices, "prices", "", "replace built-in prices with those in `FILE` (docs/rent.md)")
	f.BoolVar(&r.here, "here", false, "also price this machine: detect its cloud and instance type (DMI, no network) and plan on that type")
	f.BoolVar(&p.json, "json", false, "print the engine's JSON answer instead of text")
	f.BoolVar(&p.pretty, "pretty", false, "indent the JSON (with --json)")
	f.group("Flags", "model", "quant", "context", "batch", "engine", "provider", "target-tps", "max-price", "max-nodes", "sort", "prices", "here", "json", "pretty")
	d := &detectFlags{}
	d.register(f)
	if err := f.parse(a, args); err != nil {
		return ignoreHelp(err)
	}
	req, err := p.request(f)
	if err != nil {
		return err
	}
	ro, err := r.object(f)
	if err != nil {
		return err
	}
	if r.here {
		if err := a.thisMachine(f, d, ro); err != nil {
			return err
		}
	}
	req["rent"] = ro
	m, err := parseModel(f.cmd, p.model)
	if err != nil {
		return err
	}
	// Prices are aged against the app's clock (tests and the generated
	// answers of docs/rent.md run on a fixed day).
	rentNow := func(ctx context.Context, in []byte, _ api.Env) []byte { return api.RentAt(ctx, in, a.now()) }
	out, m, err := a.callWithModel(f.cmd, req, m, p.model, p.hub, rentNow)
	if err != nil {
		return err
	}
	if p.json {
		return a.writeJSON(out, p.pretty)
	}
	info := cli.AnswerInfo{Model: shownName(m, p.model)}
	info.ServeModel, info.ModelFile = engineModel(m)
	return cli.WriteRent(a.stdout, out, info)
}

// object is the request's "rent" member from the flags.
func (r *rentFlags) object(f *flags) (map[string]any, error) {
	o := map[string]any{}
	if f.isSet("provider") {
		var ps []string
		for _, p := range strings.Split(r.providers, ",") {
			if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			return nil, usagef(f.cmd, "--provider needs at least one provider (aws, gcp, ...)")
		}
		o["providers"] = ps
	}
	for _, x := range []struct{ flag, key, val string }{{"target-tps", "target_tokens_per_s", r.targetTPS}, {"max-price", "max_price_per_hour", r.maxPrice}} {
		if !f.isSet(x.flag) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(x.val), "$"), 64)
		if err != nil || !(v > 0) {
			return nil, usagef(f.cmd, "--%s %q: want a number > 0", x.flag, x.val)
		}
		o[x.key] = v
	}
	if f.isSet("max-nodes") {
		n, err := strconv.Atoi(strings.TrimSpace(r.maxNodes))
		if err != nil || n < 1 {
			return nil, usagef(f.cmd, "--max-nodes %q: want a whole number >= 1", r.maxNodes)
		}
		o["max_nodes"] = n
	}
	sorts := []string{"cost", "price", "speed"}
	if s := strings.ToLower(strings.TrimSpace(r.sort)); !contains(sorts, s) {
		return nil, usagef(f.cmd, "--sort %q: want one of %s%s", r.sort, strings.Join(sorts, ", "), didYouMean(s, sorts, ""))
	} else {
		o["sort"] = s
	}
	if f.isSet("prices") {
		b, err := os.ReadFile(r.prices)
		if err != nil {
			return nil, usagef(f.cmd, "--prices: %v", err)
		}
		o["prices"] = json.RawMessage(b)
	}
	return o, nil
}

// thisMachine detects this machine and names it in the rent object: the
// cloud and instance type detection reads from DMI (internal/detect/host,
// envCloud). A machine with no cloud named is said so on stderr, and the
// ranking is answered without it.
func (a *app) thisMachine(f *flags, d *detectFlags, ro map[string]any) error {
	opts, err := d.optionsJSON(f)
	if err != nil {
		return err
	}
	reg, err := a.detectRegistry(opts)
	if err != nil {
		return err
	}
	env := reg.SystemIO.Environment
	if env == nil || env.Cloud == "" {
		fmt.Fprintln(a.stderr, "ai-hwaccel: rent --here: this machine names no cloud in its DMI; nothing to compare")
		return nil
	}
	ro["this_machine"] = map[string]any{"provider": env.Cloud, "type": env.InstanceType}
	return nil
}
