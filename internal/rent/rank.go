package rent

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Sort orders.
const (
	SortCost  = "cost"  // cost per million output tokens, cheapest first
	SortPrice = "price" // price per hour, cheapest first
	SortSpeed = "speed" // decode tokens/s, fastest first
)

// MaxNodes bounds the nodes of one answer (planreq.MaxClusterNodes bounds
// a cluster request; a rental of more nodes than this is not a question
// this answers).
const MaxNodes = 64

// Bounds of the filters a rent request gives (rent.max_price_per_hour and
// rent.target_tokens_per_s, both open): a billion dollars an hour or a
// trillion tokens a second is a unit mistake, not a filter.
const (
	PriceCeiling = 1e9  // USD per hour
	SpeedCeiling = 1e12 // tokens per second
)

// Request is a rent question: the planning request (model, context, batch,
// engine; no registry) and the filters.
type Request struct {
	Plan *planreq.Request
	// Providers keeps only these providers (lower case); nil keeps all.
	Providers []string
	// MaxPricePerHour drops types dearer than this (0: no limit).
	MaxPricePerHour float64
	// TargetTokensPerS drops answers slower than this (0: no limit).
	TargetTokensPerS float64
	// MaxNodes allows plans over up to this many nodes of a type that has a
	// network between nodes (default 1).
	MaxNodes int
	Sort     string
	// Prices replaces built-in prices (nil: none given).
	Prices *Catalog
	// Now is the time prices are aged against (StaleAfter).
	Now time.Time
	// Here is the machine the caller runs on, as detection names it
	// (registry Environment cloud and instance_type); nil when not asked.
	// It is planned and priced like any catalog type, whatever the filters.
	Here *MachineRef
}

// MachineRef names a machine type: a provider and its instance type.
type MachineRef struct {
	Provider string `json:"provider"`
	Type     string `json:"type"`
}

// ThisMachine is the caller's machine priced like the catalog's types.
type ThisMachine struct {
	Provider string `json:"provider"`
	Type     string `json:"type,omitempty"`
	// InCatalog says the catalog holds the type; Choice is its plan when the
	// model fits there, Reason why not otherwise.
	InCatalog bool    `json:"in_catalog"`
	Choice    *Choice `json:"choice,omitempty"`
	Reason    string  `json:"reason,omitempty"`
}

// Answer is the ranked list of machine types that run the model.
type Answer struct {
	Model   string   `json:"model"`
	Sort    string   `json:"sort"`
	Choices []Choice `json:"choices"`
	// NotFit lists the types that were planned and do not fit (or fit only
	// outside the filters), each with the reason.
	NotFit   []Rejected `json:"not_fit"`
	Warnings []string   `json:"warnings"`
	// ThisMachine is the caller's machine, when the request named it.
	ThisMachine *ThisMachine `json:"this_machine,omitempty"`
}

// Rejected is a type left out and why.
type Rejected struct {
	Provider string `json:"provider"`
	Type     string `json:"type"`
	Reason   string `json:"reason"`
}

// Choice is one machine type that runs the model, with the plan made on it.
type Choice struct {
	Provider    string `json:"provider"`
	Type        string `json:"type"`
	Region      string `json:"region,omitempty"`
	Accelerator string `json:"accelerator"`
	// Count is accelerators per node; Nodes the nodes planned on.
	Count   int    `json:"count"`
	Nodes   int    `json:"nodes"`
	ScaleUp string `json:"scale_up,omitempty"`
	Network string `json:"network,omitempty"`

	// PricePerHour is the price of all nodes; absent when the catalog has
	// no price for the type.
	PricePerHour *float64 `json:"price_per_hour,omitempty"`
	PriceSeen    string   `json:"price_seen,omitempty"`
	PriceSource  string   `json:"price_source,omitempty"`
	PriceFrom    string   `json:"price_from,omitempty"` // "catalog" or "user"

	Strategy string `json:"strategy"`
	Quant    string `json:"quant"`
	TPSize   int    `json:"tp_size"`
	PPSize   int    `json:"pp_size"`
	DPSize   int    `json:"dp_size,omitempty"`
	// DecodeTokensPerS is the decode rate of the whole plan (all replicas);
	// absent when the speed model has no figure for it.
	DecodeTokensPerS *float64 `json:"decode_tokens_per_s,omitempty"`
	// SpeedValidatedOn is the plan's throughput.validated_on: which
	// measurements vouch for the speed, or "not validated: ..." and why.
	SpeedValidatedOn string `json:"speed_validated_on,omitempty"`
	// CostPerMillionOutputTokens is price per hour / (tokens/s x 3600) x
	// 1e6; absent without a price or a speed.
	CostPerMillionOutputTokens *float64 `json:"cost_per_million_output_tokens,omitempty"`

	Engine     string            `json:"engine,omitempty"`
	EngineArgs []string          `json:"engine_args,omitempty"`
	EngineEnv  map[string]string `json:"engine_env,omitempty"`
	Load       *plan.Load        `json:"load,omitempty"`
	// NoCommand says why the engine's command cannot run the choice as
	// printed, "" when it can: no published checkpoint holds the weights
	// the plan loads and the request gave none (commandGap).
	NoCommand string `json:"no_command,omitempty"`
}

// Rank plans the model on every type of cat that passes the filters and
// ranks those where it fits.
func Rank(cat *Catalog, r *Request) (*Answer, error) {
	if r == nil || r.Plan == nil || r.Plan.Model == nil {
		return nil, errs.New(errs.InvalidArgument, "rent: model is required")
	}
	if r.Plan.Registry != nil || len(r.Plan.Cluster) > 0 {
		return nil, errs.New(errs.InvalidArgument, "rent: the machines are the catalog's; give no registry or cluster")
	}
	order, err := sortOrder(r.Sort)
	if err != nil {
		return nil, err
	}
	if r.Prices != nil {
		if cat, err = cat.WithPrices(r.Prices); err != nil {
			return nil, err
		}
	}
	if r.MaxNodes < 0 || r.MaxNodes > MaxNodes {
		return nil, errs.New(errs.InvalidArgument, "rent: max_nodes %d is outside [1, %d]", r.MaxNodes, MaxNodes)
	}
	if err := checkProviders(cat, r.Providers); err != nil {
		return nil, err
	}
	ans := &Answer{Model: modelName(r.Plan.Model), Sort: order, Choices: []Choice{}, NotFit: []Rejected{}, Warnings: []string{}}
	for i := range cat.Machines {
		m := &cat.Machines[i]
		if !wanted(m, r) {
			continue
		}
		c, why, err := planOn(m, r)
		if err != nil {
			return nil, err
		}
		if c == nil {
			ans.NotFit = append(ans.NotFit, Rejected{Provider: m.Provider, Type: m.Type, Reason: why})
			continue
		}
		if why := outsideTarget(c, r); why != "" {
			ans.NotFit = append(ans.NotFit, Rejected{Provider: m.Provider, Type: m.Type, Reason: why})
			continue
		}
		if w := staleWarning(m, r.Now); w != "" {
			ans.Warnings = append(ans.Warnings, w)
		}
		ans.Choices = append(ans.Choices, *c)
	}
	sortChoices(ans.Choices, order)
	if r.Here != nil {
		tm, err := thisMachine(cat, r)
		if err != nil {
			return nil, err
		}
		ans.ThisMachine = tm
	}
	return ans, nil
}

// thisMachine plans the request on the caller's machine type when the
// catalog holds it (whatever the filters: it is the comparison).
func thisMachine(cat *Catalog, r *Request) (*ThisMachine, error) {
	tm := &ThisMachine{Provider: strings.ToLower(r.Here.Provider), Type: r.Here.Type}
	if tm.Type == "" {
		tm.Reason = "the machine names no instance type (DMI names one on AWS only)"
		return tm, nil
	}
	for i := range cat.Machines {
		m := &cat.Machines[i]
		if m.Key() != tm.Provider+"/"+tm.Type {
			continue
		}
		tm.InCatalog = true
		one := *r
		one.MaxPricePerHour, one.TargetTokensPerS = 0, 0
		c, why, err := planOn(m, &one)
		if err != nil {
			return nil, err
		}
		tm.Choice, tm.Reason = c, why
		return tm, nil
	}
	tm.Reason = "the catalog does not hold this type"
	return tm, nil
}

func sortOrder(s string) (string, error) {
	switch s {
	case "":
		return SortCost, nil
	case SortCost, SortPrice, SortSpeed:
		return s, nil
	}
	return "", errs.New(errs.InvalidArgument, "rent: sort %q is not one of cost, price, speed", s)
}

func checkProviders(cat *Catalog, want []string) error {
	known := map[string]bool{}
	for i := range cat.Machines {
		known[strings.ToLower(cat.Machines[i].Provider)] = true
	}
	for _, p := range want {
		if !known[strings.ToLower(p)] {
			var ks []string
			for k := range known {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			return errs.New(errs.InvalidArgument, "request: rent.providers holds an unknown provider %q (known: %s)", p, strings.Join(ks, ", "))
		}
	}
	return nil
}

// wanted applies the provider and price filters (before planning: they
// need no plan).
func wanted(m *Machine, r *Request) bool {
	if len(r.Providers) > 0 {
		ok := false
		for _, p := range r.Providers {
			ok = ok || strings.EqualFold(p, m.Provider)
		}
		if !ok {
			return false
		}
	}
	if r.MaxPricePerHour > 0 && (m.Price == nil || m.Price.USDPerHour > r.MaxPricePerHour) {
		return false
	}
	return true
}

// planOn plans the request on m: one node, then, when that does not fit and
// the type has a network between nodes, on 2 .. MaxNodes nodes. It returns
// the choice, or nil and the planner's reason.
func planOn(m *Machine, r *Request) (*Choice, string, error) {
	reg, err := m.Registry()
	if err != nil {
		return nil, "", err
	}
	maxNodes := r.MaxNodes
	if maxNodes == 0 {
		maxNodes = 1
	}
	if m.Network == nil {
		maxNodes = 1
	}
	var why string
	for n := 1; n <= maxNodes; n++ {
		if r.MaxPricePerHour > 0 && m.Price != nil && m.Price.USDPerHour*float64(n) > r.MaxPricePerHour {
			break
		}
		req := *r.Plan
		if n == 1 {
			req.Registry = reg
		} else {
			req.Registry, req.Cluster = nil, make([]*registry.Registry, n)
			for i := range req.Cluster {
				req.Cluster[i] = reg
			}
		}
		a, err := plan.PlanSharding(&req)
		if err != nil {
			return nil, errs.MessageOf(err), nil
		}
		if a.Fits.Yes() {
			return runnableChoice(m, n, &req, a, r.Plan.Engine)
		}
		why = refusalText(a)
	}
	return nil, why, nil
}

// runnableChoice is the choice of a fitting plan a on m when a command runs
// it. When the level was the planner's (quant auto), a plan whose weights
// no published checkpoint holds (a vLLM int4 plan of a model without an
// AWQ/GPTQ repository: load.needs, no repo) is not a machine to rent for
// the model: with no engine asked it is planned again with llama.cpp at the
// same level (int4 is Q4_K_M there), which loads a GGUF; else the type does
// not fit, and the reason says why. A level the request named is kept: its
// line says which checkpoint it needs.
func runnableChoice(m *Machine, nodes int, req *planreq.Request, a *plan.ShardingAnswer, engine string) (*Choice, string, error) {
	c := choiceOf(m, nodes, a, engine, req.BatchSize)
	if runnable(c) || (req.Quant != "" && req.Quant != "auto") {
		c.NoCommand = commandGap(c, req.Model)
		return c, "", nil
	}
	if engine == "" && c.Engine != engineLlamaCPP {
		again := *req
		again.Engine, again.Quant = engineLlamaCPP, a.Quant
		if b, err := plan.PlanSharding(&again); err == nil && b.Fits.Yes() {
			if lc := choiceOf(m, nodes, b, engineLlamaCPP, req.BatchSize); runnable(lc) {
				lc.NoCommand = commandGap(lc, req.Model)
				return lc, "", nil
			}
		}
	}
	return nil, fmt.Sprintf("fits at %s with %s, but no command runs it: needs %s", a.Quant, c.Engine, c.Load.Needs), nil
}

// engineLlamaCPP is llama.cpp's engine name, the engine a plan without a
// published checkpoint is tried again with (it loads GGUF files, published
// for the catalog's models at the common types).
const engineLlamaCPP = "llama.cpp"

// runnable reports whether choice c is a machine to rent for the model:
// it has engine arguments and its plan does not need a checkpoint of
// another kind than is published (plan.Load: with Needs and no Repo, a
// vLLM int4 plan of a model without an AWQ/GPTQ repository, no command
// can run it, and llama.cpp is tried instead). A load without Needs or a
// repository is runnable: the engine loads weights of the planned kind
// that nobody publishes for this model (a llama.cpp GGUF type) or the
// model names no checkpoint at all (a model given by its size or config,
// whose every plan is such a load, so that requiring a repository would
// rent nothing for "70b"); the user supplies the file, and the choice
// says so (commandGap).
func runnable(c *Choice) bool {
	return c.Engine != "" && (c.Load == nil || c.Load.Needs == "" || c.Load.Repo != "")
}

// commandGap says why the command of c, on model m, cannot run as
// printed, "" when it can: its load names no published checkpoint
// (plan.Load without Repo, or no load at all: a model given by its size
// names nothing the engine loads) and the request gave no weights of its
// own (m has no FileQuant: a model given as a file, a folder or a fetched
// repository is served from them). c has engine arguments (runnable), so
// its engine is one whose command names the model it serves. The words
// follow the CLI's "no command: ..." line of a plan (internal/cli
// withheldLine), which stands for a missing load too.
func commandGap(c *Choice, m *model.Model) string {
	ld := c.Load
	if ld == nil {
		ld = &plan.Load{}
	}
	switch {
	case ld.Repo != "":
		return ""
	case ld.Needs != "":
		return "needs " + ld.Needs
	case m != nil && m.FileQuant != "":
		return ""
	case ld.GGUFType != "":
		return fmt.Sprintf("no published %s GGUF of this model is known; give its file to get the command", ld.GGUFType)
	}
	return "no published checkpoint of this model is known; name one to get the command"
}

// refusalText is the planner's reason a plan does not fit.
func refusalText(a *plan.ShardingAnswer) string {
	if n := len(a.Explanation); n > 0 {
		return a.Explanation[n-1]
	}
	return "does not fit"
}

func choiceOf(m *Machine, nodes int, a *plan.ShardingAnswer, engine string, batch int) *Choice {
	c := &Choice{Provider: m.Provider, Type: m.Type, Region: m.Region, Accelerator: m.Part, Count: m.Count, Nodes: nodes,
		ScaleUp: m.ScaleUp, Strategy: a.Strategy, Quant: a.Quant, TPSize: a.TPSize, PPSize: a.PPSize, DPSize: a.DPSize}
	if m.Network != nil {
		c.Network = fmt.Sprintf("%s %g Gbit/s", m.Network.Kind, m.Network.GbitS)
	}
	if p := m.Price; p != nil && p.USDPerHour > 0 {
		total := p.USDPerHour * float64(nodes)
		c.PricePerHour, c.PriceSeen, c.PriceSource, c.PriceFrom = &total, p.Seen, p.Source, "catalog"
		if m.priceFromUser {
			c.PriceFrom = "user"
		}
	}
	if t := a.Throughput; t != nil {
		tps := batchRate(t, a.DPSize, batch)
		if tps > 0 {
			c.DecodeTokensPerS = &tps
			c.SpeedValidatedOn = t.ValidatedOn
		}
	}
	if c.PricePerHour != nil && c.DecodeTokensPerS != nil {
		cost := CostPerMillion(*c.PricePerHour, *c.DecodeTokensPerS)
		c.CostPerMillionOutputTokens = &cost
	}
	c.Engine = pickEngine(a, engine)
	if c.Engine != "" {
		c.EngineArgs, c.EngineEnv = a.EngineArgs[c.Engine], a.EngineEnv[c.Engine]
		if l, ok := a.Load[c.Engine]; ok {
			c.Load = &l
		}
	}
	return c
}

// batchRate is the decode rate of the request's batch on a plan with dp
// replicas. A data-parallel plan's total (decode_tokens_per_s_total) assumes
// every replica busy; a batch of fewer sequences than the replicas decode
// together keeps ceil(batch / per-replica sequences) of them busy (the plan's
// own note: "the batch of 1 keeps 1 of the 4 replicas busy"), and the
// machine is paid for whole, so its cost per token is that of the busy
// replicas' rate.
func batchRate(t *plan.Throughput, dp, batch int) float64 {
	if t.DecodeTokensPerSTotal == 0 || dp < 2 {
		return t.DecodeTokensPerS
	}
	if batch < 1 {
		batch = 1
	}
	running := max(t.Sequences, 1)
	busy := (batch + running - 1) / running
	if busy >= dp {
		return t.DecodeTokensPerSTotal
	}
	return t.DecodeTokensPerS * float64(busy)
}

// CostPerMillion is the cost of a million output tokens at usdPerHour and
// tokensPerS decoded: usdPerHour / (tokensPerS x 3600) x 1e6.
func CostPerMillion(usdPerHour, tokensPerS float64) float64 {
	return usdPerHour / (tokensPerS * 3600) * 1e6
}

// pickEngine is the engine asked for, else the first the plan has args for
// in the order the CLI shows them (vLLM, then llama.cpp).
func pickEngine(a *plan.ShardingAnswer, asked string) string {
	order := []string{"vllm", "llama.cpp"}
	if asked != "" {
		order = []string{asked}
	}
	for _, e := range order {
		if _, ok := a.EngineArgs[e]; ok {
			return e
		}
	}
	return ""
}

// outsideTarget says why a choice misses target_tokens_per_s ("" when it
// meets it or none was asked). A choice of unknown speed cannot be shown
// to meet a target, so it is left out when one is asked.
func outsideTarget(c *Choice, r *Request) string {
	if r.TargetTokensPerS <= 0 {
		return ""
	}
	if c.DecodeTokensPerS == nil {
		return "fits, but its speed is unknown, so it cannot be shown to reach the target"
	}
	if *c.DecodeTokensPerS < r.TargetTokensPerS {
		return fmt.Sprintf("fits, but decodes about %.0f tokens/s, below the target %.0f", *c.DecodeTokensPerS, r.TargetTokensPerS)
	}
	return ""
}

// sortChoices orders choices; a choice missing the figure sorted on comes
// last, and ties keep the catalog's order.
func sortChoices(cs []Choice, order string) {
	key := func(c *Choice) (float64, bool) {
		switch order {
		case SortPrice:
			if c.PricePerHour == nil {
				return 0, false
			}
			return *c.PricePerHour, true
		case SortSpeed:
			if c.DecodeTokensPerS == nil {
				return 0, false
			}
			return -*c.DecodeTokensPerS, true
		}
		if c.CostPerMillionOutputTokens == nil {
			return 0, false
		}
		// To the cent, as the answer prints it: data-parallel copies of
		// one machine cost the same per token but for rounding in the
		// sixth digit, which must not rank the 8-GPU type above the
		// 1-GPU one (the price per hour breaks the tie below).
		return math.Round(*c.CostPerMillionOutputTokens * 100), true
	}
	price := func(c *Choice) float64 {
		if c.PricePerHour == nil {
			return math.Inf(1)
		}
		return *c.PricePerHour
	}
	speed := func(c *Choice) float64 {
		if c.DecodeTokensPerS == nil {
			return 0
		}
		return *c.DecodeTokensPerS
	}
	sort.SliceStable(cs, func(i, j int) bool {
		ki, oki := key(&cs[i])
		kj, okj := key(&cs[j])
		if oki != okj {
			return oki
		}
		// A tie goes to the better buy: of the same cost per token or
		// the same speed, the cheaper per hour (OCI's 8 x MI355X before
		// its 8 x B200, both 105.4 tokens/s for Llama-3.1-70B); of the
		// same price, the faster.
		if oki && ki == kj {
			if order == SortPrice {
				return speed(&cs[i]) > speed(&cs[j])
			}
			return price(&cs[i]) < price(&cs[j])
		}
		return oki && ki < kj && !math.IsNaN(ki)
	})
}

// modelName is what the answer calls the model: its name, or for a model
// given by its size alone ({"params_b":70}, "70b"), which has none, that
// size in billions ("70B"), as the CLI's text names it by what was typed.
// The plan answer leaves the name out there and gives "params"; a rent
// answer's "model" is a required string.
func modelName(m *model.Model) string {
	if m.Name != "" {
		return m.Name
	}
	return strconv.FormatFloat(float64(m.Params)/1e9, 'f', -1, 64) + "B"
}
