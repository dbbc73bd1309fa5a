package rent

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// readDay is the day the built-in prices were read (catalog.json "read").
var readDay = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func planRequest(t *testing.T, js string) *planreq.Request {
	t.Helper()
	r, _, err := wire.DecodeRequest([]byte(js))
	require.NoError(t, err)
	require.NoError(t, plan.Validate(r))
	return r
}

func builtin(t *testing.T) *Catalog {
	t.Helper()
	c, err := Builtin()
	require.NoError(t, err)
	return c
}

// TestCatalogSize is the floor: at least 40 types from at least
// five providers, the three large clouds among them.
func TestCatalogSize(t *testing.T) {
	c := builtin(t)
	providers := map[string]int{}
	for _, m := range c.Machines {
		providers[m.Provider]++
	}
	assert.GreaterOrEqual(t, len(c.Machines), 40)
	assert.GreaterOrEqual(t, len(providers), 5)
	for _, p := range []string{"aws", "gcp", "azure"} {
		assert.Positive(t, providers[p], p)
	}
}

// TestCatalogMatchesPublishedSpec checks every type's accelerators, as the
// registry built from the part table holds them, against the count and
// per-accelerator memory its source page states (Published, cited per
// record). Memory is compared within 8 %: pages write "80 GB" both for
// 80 x 10^9 bytes and for 80 GiB (7.4 % more), and the part table keeps the
// figure its own source gives.
func TestCatalogMatchesPublishedSpec(t *testing.T) {
	for _, m := range builtin(t).Machines {
		t.Run(m.Key(), func(t *testing.T) {
			require.NotNil(t, m.Published, "no published spec")
			assert.True(t, strings.HasPrefix(m.Published.Source, "http"), "published spec cites no page: %q", m.Published.Source)
			reg, err := m.Registry()
			require.NoError(t, err)
			var accel []registry.Device
			for _, d := range reg.Devices {
				if d.Kind != registry.KindCPU {
					accel = append(accel, d)
				}
			}
			require.NoError(t, reg.Validate(), "the registry must be one a host could send")
			require.Len(t, accel, m.Published.GPUs, "accelerator count")
			unit := map[string]float64{"MiB": 1 << 20, "GiB": 1 << 30, "GB": 1e9}[m.Published.Unit]
			require.Positive(t, unit, "unit %q", m.Published.Unit)
			published := m.Published.GPUMemory * unit
			for _, d := range accel {
				ratio := float64(d.MemoryBytes) / published
				assert.InDelta(t, 1, ratio, 0.08, "%s: part %q holds %d bytes, the page states %g %s", d.ID, m.Part, d.MemoryBytes, m.Published.GPUMemory, m.Published.Unit)
				assert.Positive(t, d.MemoryBandwidthGBs, "part %q states no bandwidth", m.Part)
			}
		})
	}
}

// TestCatalogPricesAreCited: every price has a page and a date.
func TestCatalogPricesAreCited(t *testing.T) {
	for _, m := range builtin(t).Machines {
		require.NotNil(t, m.Price, m.Key())
		assert.Positive(t, m.Price.USDPerHour, m.Key())
		assert.Contains(t, m.Price.Source, "http", m.Key())
		_, err := time.Parse(dateLayout, m.Price.Seen)
		assert.NoError(t, err, m.Key())
		if m.Network != nil {
			assert.Contains(t, m.Network.Source, "http", m.Key())
		}
	}
}

// TestNoAnswerListsATypeThatDoesNotFit plans each choice again, on its own,
// and finds it fits; every type is either a choice or a refusal. (The 8B
// case names llama.cpp, which reserves every sequence's full-context cache:
// under vLLM's paged pool the batch is concurrency and every type fits.)
func TestNoAnswerListsATypeThatDoesNotFit(t *testing.T) {
	cat := builtin(t)
	for _, js := range []string{
		`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":32768,"batch_size":8}`,
		`{"model":{"name":"Llama-3.1-70B"},"quant":"bf16"}`,
		`{"model":{"name":"DeepSeek-V3"},"quant":"fp8"}`,
	} {
		a, err := Rank(cat, &Request{Plan: planRequest(t, js), Now: readDay})
		require.NoError(t, err)
		assert.Equal(t, len(cat.Machines), len(a.Choices)+len(a.NotFit), js)
		assert.NotEmpty(t, a.Choices, js)
		assert.NotEmpty(t, a.NotFit, js)
		byKey := map[string]*Machine{}
		for i := range cat.Machines {
			byKey[cat.Machines[i].Key()] = &cat.Machines[i]
		}
		for _, c := range a.Choices {
			m := byKey[strings.ToLower(c.Provider)+"/"+c.Type]
			require.NotNil(t, m)
			reg, err := m.Registry()
			require.NoError(t, err)
			req := *planRequest(t, js)
			req.Registry = reg
			p, err := plan.PlanSharding(&req)
			require.NoError(t, err)
			assert.True(t, p.Fits.Yes(), "%s listed for %s but its plan does not fit", m.Key(), js)
		}
	}
}

func TestCostPerMillion(t *testing.T) {
	// $36/h at 100 tokens/s: 360 000 tokens an hour, $100 per million.
	assert.InDelta(t, 100, CostPerMillion(36, 100), 1e-9)
}

func TestRankSortsByCostThenPriceThenSpeed(t *testing.T) {
	cat := builtin(t)
	req := func(sort string) *Answer {
		a, err := Rank(cat, &Request{Plan: planRequest(t, `{"model":{"name":"Llama-3.1-8B"}}`), Sort: sort, Now: readDay})
		require.NoError(t, err)
		require.Greater(t, len(a.Choices), 10)
		return a
	}
	a := req("")
	assert.Equal(t, SortCost, a.Sort)
	for i := 1; i < len(a.Choices); i++ {
		p, c := a.Choices[i-1].CostPerMillionOutputTokens, a.Choices[i].CostPerMillionOutputTokens
		if p != nil && c != nil {
			// Costs are compared to the cent, as printed; equal ones
			// cheapest per hour first.
			pc, cc := math.Round(*p*100), math.Round(*c*100)
			assert.LessOrEqual(t, pc, cc)
			if pc == cc {
				assert.LessOrEqual(t, *a.Choices[i-1].PricePerHour, *a.Choices[i].PricePerHour)
			}
		}
		if p == nil {
			assert.Nil(t, c, "a choice without a cost precedes one with")
		}
	}
	b := req(SortPrice)
	for i := 1; i < len(b.Choices); i++ {
		assert.LessOrEqual(t, *b.Choices[i-1].PricePerHour, *b.Choices[i].PricePerHour)
	}
	s := req(SortSpeed)
	for i := 1; i < len(s.Choices); i++ {
		if s.Choices[i].DecodeTokensPerS != nil {
			assert.GreaterOrEqual(t, *s.Choices[i-1].DecodeTokensPerS, *s.Choices[i].DecodeTokensPerS)
		}
	}
	_, err := Rank(cat, &Request{Plan: planRequest(t, `{"model":{"name":"Llama-3.1-8B"}}`), Sort: "cheapest"})
	assert.ErrorContains(t, err, "sort")
}

func TestRankFilters(t *testing.T) {
	cat := builtin(t)
	pr := planRequest(t, `{"model":{"name":"Llama-3.1-8B"}}`)
	a, err := Rank(cat, &Request{Plan: pr, Providers: []string{"AWS", "gcp"}, MaxPricePerHour: 10, TargetTokensPerS: 60, Now: readDay})
	require.NoError(t, err)
	require.NotEmpty(t, a.Choices)
	for _, c := range a.Choices {
		assert.Contains(t, []string{"aws", "gcp"}, c.Provider)
		assert.LessOrEqual(t, *c.PricePerHour, 10.0)
		assert.GreaterOrEqual(t, *c.DecodeTokensPerS, 60.0)
	}
	_, err = Rank(cat, &Request{Plan: pr, Providers: []string{"nosuchcloud"}})
	assert.ErrorContains(t, err, "unknown provider")
}

// TestMultiNodeOnlyWithNetwork: DeepSeek-V3 in bf16 fits no single node of
// 8 x 80 GB; with nodes allowed, only types with a network between nodes
// are planned over several.
func TestMultiNodeOnlyWithNetwork(t *testing.T) {
	cat := builtin(t)
	a, err := Rank(cat, &Request{Plan: planRequest(t, `{"model":{"name":"DeepSeek-V3"},"quant":"bf16"}`), MaxNodes: 4, Now: readDay})
	require.NoError(t, err)
	multi := 0
	for _, c := range a.Choices {
		if c.Nodes > 1 {
			multi++
			assert.NotEmpty(t, c.Network, "%s/%s planned over %d nodes without a network", c.Provider, c.Type, c.Nodes)
		}
	}
	assert.Positive(t, multi)
}

// TestPriceFileOverridesBuiltinPrice: a user's price replaces the catalog's
// for that type, is marked as the user's, and changes the cost per token.
func TestPriceFileOverridesBuiltinPrice(t *testing.T) {
	cat := builtin(t)
	user, err := ParsePrices([]byte(`{"schema":1,"machines":[{"provider":"aws","type":"p5.4xlarge","price":{"usd_per_hour":1.5,"seen":"2026-11-20"}}]}`))
	require.NoError(t, err)
	pr := planRequest(t, `{"model":{"name":"Llama-3.1-8B"}}`)
	find := func(a *Answer) *Choice {
		for i := range a.Choices {
			if a.Choices[i].Type == "p5.4xlarge" {
				return &a.Choices[i]
			}
		}
		t.Fatal("p5.4xlarge not in the answer")
		return nil
	}
	before, err := Rank(cat, &Request{Plan: pr, Providers: []string{"aws"}, Now: readDay})
	require.NoError(t, err)
	after, err := Rank(cat, &Request{Plan: pr, Providers: []string{"aws"}, Prices: user, Now: readDay})
	require.NoError(t, err)
	b, u := find(before), find(after)
	assert.Equal(t, 6.88, *b.PricePerHour)
	assert.Equal(t, "catalog", b.PriceFrom)
	assert.Equal(t, 1.5, *u.PricePerHour)
	assert.Equal(t, "user", u.PriceFrom)
	assert.Equal(t, "2026-11-20", u.PriceSeen)
	assert.InDelta(t, *b.CostPerMillionOutputTokens*1.5/6.88, *u.CostPerMillionOutputTokens, 1e-9)
	// The built-in catalog is not changed by the override.
	assert.Equal(t, 6.88, builtin(t).Machines[1].Price.USDPerHour)

	_, err = ParsePrices([]byte(`{"schema":1,"machines":[{"provider":"aws","type":"p5.4xlarge","price":{"usd_per_hour":1.5},"discount":3}]}`))
	assert.Error(t, err, "an unknown key is refused")
	_, err = cat.WithPrices(&Catalog{Machines: []Machine{{Provider: "aws", Type: "p9.huge", Price: &Price{USDPerHour: 1}}}})
	assert.ErrorContains(t, err, "not in the catalog")
}

// TestStalePriceWarns: a built-in price seen more than 180 days before now
// warns; a fresh one does not, nor a price the user gave.
func TestStalePriceWarns(t *testing.T) {
	cat := builtin(t)
	pr := planRequest(t, `{"model":{"name":"Llama-3.1-8B"}}`)
	fresh, err := Rank(cat, &Request{Plan: pr, Providers: []string{"aws"}, Now: readDay})
	require.NoError(t, err)
	assert.Empty(t, fresh.Warnings)

	later := readDay.Add(StaleAfter + 48*time.Hour)
	stale, err := Rank(cat, &Request{Plan: pr, Providers: []string{"aws"}, Now: later})
	require.NoError(t, err)
	require.NotEmpty(t, stale.Warnings)
	assert.Contains(t, strings.Join(stale.Warnings, "\n"), "aws/p5.48xlarge: the built-in price $55.04/h was seen 2026-11-28")

	user, err := ParsePrices([]byte(`{"schema":1,"machines":[{"provider":"aws","type":"p5.48xlarge","price":{"usd_per_hour":40,"seen":"2026-11-28"}}]}`))
	require.NoError(t, err)
	own, err := Rank(cat, &Request{Plan: pr, Providers: []string{"aws"}, Prices: user, Now: later})
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(own.Warnings, "\n"), "aws/p5.48xlarge")
	assert.Equal(t, len(stale.Warnings)-1, len(own.Warnings))
}

func TestCostNeedsSpeed(t *testing.T) {
	// A choice without a speed has no cost and sorts last.
	p, s := 3.0, 10.0
	cs := []Choice{{Type: "a", PricePerHour: &p}, {Type: "b", PricePerHour: &p, DecodeTokensPerS: &s}}
	c := CostPerMillion(p, s)
	cs[1].CostPerMillionOutputTokens = &c
	sortChoices(cs, SortCost)
	assert.Equal(t, "b", cs[0].Type)
	assert.False(t, math.IsNaN(*cs[0].CostPerMillionOutputTokens))
}

// TestThisMachineIsPricedLikeTheCatalog: the caller's machine, named as
// detection names it, is planned and priced whatever the filters; a type
// the catalog lacks, or none, says so.
func TestThisMachineIsPricedLikeTheCatalog(t *testing.T) {
	cat := builtin(t)
	pr := planRequest(t, `{"model":{"name":"Llama-3.1-8B"}}`)
	a, err := Rank(cat, &Request{Plan: pr, Providers: []string{"lambda"}, Here: &MachineRef{Provider: "aws", Type: "p5.48xlarge"}, Now: readDay})
	require.NoError(t, err)
	require.NotNil(t, a.ThisMachine)
	assert.True(t, a.ThisMachine.InCatalog)
	require.NotNil(t, a.ThisMachine.Choice)
	assert.Equal(t, 55.04, *a.ThisMachine.Choice.PricePerHour)
	assert.NotNil(t, a.ThisMachine.Choice.CostPerMillionOutputTokens)
	for _, c := range a.Choices {
		assert.Equal(t, "lambda", c.Provider, "the filters still apply to the ranking")
	}

	a, err = Rank(cat, &Request{Plan: pr, Here: &MachineRef{Provider: "aws", Type: "c5.metal"}, Now: readDay})
	require.NoError(t, err)
	assert.False(t, a.ThisMachine.InCatalog)
	assert.Nil(t, a.ThisMachine.Choice)
	assert.Contains(t, a.ThisMachine.Reason, "does not hold")

	a, err = Rank(cat, &Request{Plan: pr, Here: &MachineRef{Provider: "azure"}, Now: readDay})
	require.NoError(t, err)
	assert.Contains(t, a.ThisMachine.Reason, "names no instance type")
}

// Every speed a choice ranks by says what vouches for it (the plan's
// validated_on), so a host can tell the model's unchecked estimate (vLLM on
// HBM GPUs today) from a figure measured rows check.
func TestEverySpeedSaysWhatValidatesIt(t *testing.T) {
	cat := builtin(t)
	a, err := Rank(cat, &Request{Plan: planRequest(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","quant":"q4_k_m"}`), Now: readDay})
	require.NoError(t, err)
	validated := 0
	for _, c := range a.Choices {
		if c.DecodeTokensPerS == nil {
			assert.Empty(t, c.SpeedValidatedOn, c.Type)
			continue
		}
		require.NotEmpty(t, c.SpeedValidatedOn, c.Type)
		if !strings.HasPrefix(c.SpeedValidatedOn, plan.NotValidated) {
			validated++
		}
	}
	assert.Positive(t, validated, "llama.cpp q4_k_m on NVIDIA GPUs is covered by measured rows")
}

// ai-hwaccel rent --model Qwen3-30B-A3B ranked first "runpod 1x RTX 4090 ...
// $1.84 per million output tokens" with "no command: needs a checkpoint of
// Qwen3-30B-A3B stored at int4 (AWQ, GPTQ or compressed-tensors); the
// catalog knows none published": the cheapest machine to rent was one no
// command could run the model on. A choice is now one a command runs: with
// no engine asked, a vLLM plan without a checkpoint is planned again with
// llama.cpp at the same level (int4 is its Q4_K_M, published as a GGUF);
// where nothing runs it the type is listed among those that do not fit,
// saying why. A level the request names is its own (a bf16 DeepSeek-V3,
// TestMultiNodeOnlyWithNetwork, stays listed with what it needs).
func TestEveryChoiceHasACommand(t *testing.T) {
	cat := builtin(t)
	for _, js := range []string{
		`{"model":{"name":"Qwen3-30B-A3B"}}`,
		`{"model":{"name":"Qwen3-30B-A3B"},"engine":"vllm"}`,
	} {
		a, err := Rank(cat, &Request{Plan: planRequest(t, js), Now: readDay})
		require.NoError(t, err)
		require.NotEmpty(t, a.Choices, js)
		assert.Equal(t, len(cat.Machines), len(a.Choices)+len(a.NotFit), js)
		for _, c := range a.Choices {
			require.NotEmpty(t, c.Engine, "%s %s/%s", js, c.Provider, c.Type)
			require.NotEmpty(t, c.EngineArgs, "%s %s/%s", js, c.Provider, c.Type)
			if c.Load != nil {
				assert.True(t, c.Load.Needs == "" || c.Load.Repo != "", "%s %s/%s: %s at %s needs %s", js, c.Provider, c.Type, c.Engine, c.Quant, c.Load.Needs)
			}
		}
		for _, c := range a.Choices {
			if c.Provider == "runpod" && strings.Contains(c.Type, "RTX 4090") && !strings.Contains(js, "vllm") {
				assert.Equal(t, "llama.cpp", c.Engine, "no int4 vLLM checkpoint: llama.cpp runs Q4_K_M")
			}
		}
	}
}

// A choice whose command cannot run as printed says so (no_command) and
// stays listed: a model given by its size has no published checkpoint
// (runnable keeps such plans, or a bare size would rent nothing), and a
// catalog model's plan at a GGUF type nobody publishes (where no published
// type fits the machine) names no file. Built here: Qwen3-235B-A22B with
// one published GGUF type, Q4_K_M, so the choices that fit only lower are
// the ones without a command.
func TestChoicesSayWhenTheirCommandCannotRun(t *testing.T) {
	cat := builtin(t)
	a, err := Rank(cat, &Request{Plan: planRequest(t, `{"model":"70b","engine":"llama.cpp"}`), Now: readDay})
	require.NoError(t, err)
	require.NotEmpty(t, a.Choices)
	for _, c := range a.Choices {
		assert.Equal(t, "no published "+c.Load.GGUFType+" GGUF of this model is known; give its file to get the command", c.NoCommand, "%s/%s", c.Provider, c.Type)
	}

	// With no engine named, the planner's engines load nothing for a bare
	// size (plan.Load absent): no command runs, and the choices say so as
	// the headline of the text answer does (internal/cli withheldLine).
	a, err = Rank(cat, &Request{Plan: planRequest(t, `{"model":"70b"}`), Now: readDay})
	require.NoError(t, err)
	require.NotEmpty(t, a.Choices)
	for _, c := range a.Choices {
		assert.Nil(t, c.Load, "%s/%s", c.Provider, c.Type)
		assert.Equal(t, "no published checkpoint of this model is known; name one to get the command", c.NoCommand, "%s/%s %s", c.Provider, c.Type, c.Engine)
	}
	// The same model served from weights the request gave (a folder's
	// safetensors set FileQuant) runs from them: no gap.
	given := planRequest(t, `{"model":"70b"}`)
	gm := *given.Model
	gm.FileQuant = "bf16"
	given.Model = &gm
	a, err = Rank(cat, &Request{Plan: given, Now: readDay})
	require.NoError(t, err)
	require.NotEmpty(t, a.Choices)
	for _, c := range a.Choices {
		assert.Empty(t, c.NoCommand, "%s/%s %s", c.Provider, c.Type, c.Engine)
	}

	req := planRequest(t, `{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp"}`)
	m := *req.Model
	m.Checkpoints = []model.Checkpoint{{Quant: "bf16", Repo: "Qwen/Qwen3-235B-A22B"}, {Quant: "q4_k_m", Repo: "r/Qwen3-235B-A22B-GGUF", Method: "gguf", File: "Q4_K_M"}}
	req.Model = &m
	a, err = Rank(cat, &Request{Plan: req, Now: readDay})
	require.NoError(t, err)
	runs, not := 0, 0
	for _, c := range a.Choices {
		require.NotNil(t, c.Load, "%s/%s", c.Provider, c.Type)
		if c.Quant == "q4_k_m" {
			runs++
			assert.Equal(t, "r/Qwen3-235B-A22B-GGUF", c.Load.Repo)
			assert.Empty(t, c.NoCommand, "%s/%s", c.Provider, c.Type)
			continue
		}
		not++
		assert.Empty(t, c.Load.Repo)
		assert.Contains(t, c.NoCommand, "no published "+strings.ToUpper(c.Quant)+" GGUF of this model is known", "%s/%s", c.Provider, c.Type)
	}
	assert.Positive(t, runs, "types where the published Q4_K_M fits")
	assert.Positive(t, not, "types where only an unpublished level fits, kept")
}

// TestDataParallelRateIsTheBatchs: a data-parallel plan's total decode rate
// assumes every replica busy (plan's note: "the batch of 1 keeps 1 of the 4
// replicas busy"). Rent ranks the request asked, so Llama-3.1-8B at batch 1
// on Lambda's 4 x A6000 (one copy per GPU) decodes at one replica's rate,
// not four times it, and costs four times as much per token as that rate
// on the whole machine; a batch of 4 keeps all four busy.
func TestDataParallelRateIsTheBatchs(t *testing.T) {
	cat := builtin(t)
	for _, tc := range []struct {
		batch, busy int
	}{{1, 1}, {2, 2}, {4, 4}, {8, 4}} {
		pr := planRequest(t, fmt.Sprintf(`{"model":{"name":"Llama-3.1-8B"},"batch_size":%d}`, tc.batch))
		a, err := Rank(cat, &Request{Plan: pr, Providers: []string{"lambda"}, Now: readDay})
		require.NoError(t, err)
		var c *Choice
		for i := range a.Choices {
			if a.Choices[i].Type == "gpu_4x_a6000" {
				c = &a.Choices[i]
			}
		}
		require.NotNil(t, c, "batch %d", tc.batch)
		require.Equal(t, "data_parallel", c.Strategy)
		require.Equal(t, 4, c.DPSize)
		one := onGPU4xA6000(t, cat, pr)
		require.Positive(t, one.DecodeTokensPerS)
		// The plan rounds its total to 3 decimals of the unrounded product.
		assert.InEpsilon(t, one.DecodeTokensPerS*float64(tc.busy), *c.DecodeTokensPerS, 1e-3, "batch %d keeps %d replicas busy", tc.batch, tc.busy)
		assert.InEpsilon(t, CostPerMillion(*c.PricePerHour, one.DecodeTokensPerS*float64(tc.busy)), *c.CostPerMillionOutputTokens, 1e-3)
	}
}

// onGPU4xA6000 is the plan's throughput for pr on Lambda's gpu_4x_a6000.
func onGPU4xA6000(t *testing.T, cat *Catalog, pr *planreq.Request) *plan.Throughput {
	t.Helper()
	for _, m := range cat.Machines {
		if m.Provider == "lambda" && m.Type == "gpu_4x_a6000" {
			reg, err := m.Registry()
			require.NoError(t, err)
			req := *pr
			req.Registry = reg
			a, err := plan.PlanSharding(&req)
			require.NoError(t, err)
			require.True(t, a.Fits.Yes())
			require.NotNil(t, a.Throughput)
			return a.Throughput
		}
	}
	t.Fatal("no lambda gpu_4x_a6000 in the catalog")
	return nil
}

// TestSortTiesGoToTheBetterBuy: under --sort speed, types of the same speed
// rank cheapest per hour first (Llama-3.1-70B in bf16: OCI's 8 x B200 at
// $112/h and 8 x MI355X at $68.80/h both decode 105.4 tokens/s, 8 TB/s
// each); under --sort price, types of the same price rank fastest first.
func TestSortTiesGoToTheBetterBuy(t *testing.T) {
	cat := builtin(t)
	ties := map[string]int{}
	for _, order := range []string{SortSpeed, SortPrice} {
		a, err := Rank(cat, &Request{Plan: planRequest(t, `{"model":{"name":"Llama-3.1-70B"}}`), Sort: order, Now: readDay})
		require.NoError(t, err)
		for i := 1; i < len(a.Choices); i++ {
			p, c := &a.Choices[i-1], &a.Choices[i]
			if p.DecodeTokensPerS == nil || c.DecodeTokensPerS == nil || p.PricePerHour == nil || c.PricePerHour == nil {
				continue
			}
			switch {
			case order == SortSpeed && *p.DecodeTokensPerS == *c.DecodeTokensPerS:
				ties[order]++
				assert.LessOrEqual(t, *p.PricePerHour, *c.PricePerHour, "%s before %s at the same speed", p.Type, c.Type)
			case order == SortPrice && *p.PricePerHour == *c.PricePerHour:
				ties[order]++
				assert.GreaterOrEqual(t, *p.DecodeTokensPerS, *c.DecodeTokensPerS, "%s before %s at the same price", p.Type, c.Type)
			}
		}
	}
	// The check above is vacuous without ties: the catalog has both.
	assert.Positive(t, ties[SortSpeed])
	assert.Positive(t, ties[SortPrice])
}
