package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// servingPrefillRow is one row of data/serving_prefill.json: the time to
// first token of a single-request vLLM or SGLang run with a stated input
// length.
type servingPrefillRow struct {
	Engine       string  `json:"engine"`
	Model        string  `json:"model"`
	Precision    string  `json:"precision"`
	GPU          string  `json:"gpu"`
	TP           int     `json:"tp"`
	Input        int     `json:"input_tokens"`
	Output       int     `json:"output_tokens"`
	Concurrency  int     `json:"concurrency"`
	TTFTms       float64 `json:"ttft_ms"`
	Replayed     bool    `json:"replayed"`
	Use          string  `json:"use"`
	WhyNot       string  `json:"why_not"`
	Spec         string  `json:"spec"`
	CatalogModel string  `json:"catalog_model"`
	Quote        string  `json:"quote"`
	Source       string  `json:"source"`
	// What a row whose requests hit vLLM's prefix cache measured (the
	// sixth rule of the file's description): the TTFT is the mean over
	// Requests timed requests of the prompt of PromptTokens tokens, request
	// k finding CachedPrefix[k] of them cached, as CachedDerivation says.
	// A row without them computed every one of its Input tokens.
	Requests         int    `json:"requests"`
	PromptTokens     int    `json:"prompt_tokens"`
	CachedPrefix     []int  `json:"cached_prefix_tokens"`
	CachedDerivation string `json:"cached_prefix_derivation"`
}

// vllmCacheBlock is the token count of a block of vLLM's KV cache
// (--block-size, 16 by default on GPUs): prefix caching hits whole blocks.
const vllmCacheBlock = 16

// servingPrefillCase is a replayed row of data/serving_prefill.json laid
// out: its prompt under its engine on its GPUs, one replay per timed
// request of a row whose requests hit cached prefixes.
type servingPrefillCase struct {
	row      servingPrefillRow
	replay   *plan.Replay
	requests []servingPrefillRequest
}

// servingPrefillRequest is one timed request of a row that states its
// cached prefixes: the tokens vLLM computed and their replay.
type servingPrefillRequest struct {
	uncached int
	replay   *plan.Replay
}

// plannedMS is the time to first token the planner gives the case under
// the constants c: the prompt at the plan's prefill tokens/s (which
// carries the request time once); for a row with cached prefixes the mean
// over its timed requests of each one's uncached tokens so planned, as
// the row's TTFT is their mean. 0 when no figure.
func (sc servingPrefillCase) plannedMS(c calibration.Throughput) float64 {
	if len(sc.requests) == 0 {
		return promptMS(sc.replay, sc.row.Input, c)
	}
	var sum float64
	for _, rq := range sc.requests {
		ms := promptMS(rq.replay, rq.uncached, c)
		if ms <= 0 {
			return 0
		}
		sum += ms
	}
	return sum / float64(len(sc.requests))
}

// promptMS is the time in milliseconds replay r plans for its prompt of
// tokens tokens under c, 0 when no figure.
func promptMS(r *plan.Replay, tokens int, c calibration.Throughput) float64 {
	p := r.Prefill(c)
	if p <= 0 {
		return 0
	}
	return float64(tokens) / p * 1000
}

// cachedPrefixError checks the cached-prefix members of the row name of
// file: none, or a derivation, the prompt's length, and one block-aligned
// cached length short of the whole prompt per timed request.
func cachedPrefixError(file, name string, r servingPrefillRow) error {
	if len(r.CachedPrefix) == 0 && r.Requests == 0 && r.PromptTokens == 0 && r.CachedDerivation == "" {
		return nil
	}
	if r.CachedDerivation == "" || r.PromptTokens <= 0 || r.PromptTokens > r.Input || r.Requests != len(r.CachedPrefix) {
		return fmt.Errorf("%s: %s: cached prefixes need a derivation, prompt_tokens up to input_tokens and one cached_prefix_tokens entry per timed request", file, name)
	}
	for _, c := range r.CachedPrefix {
		if c < 0 || c%vllmCacheBlock != 0 || c >= r.PromptTokens {
			return fmt.Errorf("%s: %s: cached prefix %d is not whole %d-token blocks short of the %d-token prompt", file, name, c, vllmCacheBlock, r.PromptTokens)
		}
	}
	return nil
}

// requestReplays lays out each timed request of the row r (its uncached
// tokens) with replay, which builds the replay of a prompt of n tokens;
// requests alike share one.
func requestReplays(r servingPrefillRow, replay func(n int) *plan.Replay) []servingPrefillRequest {
	byTokens := map[int]*plan.Replay{}
	var out []servingPrefillRequest
	for _, c := range r.CachedPrefix {
		n := r.PromptTokens - c
		if byTokens[n] == nil {
			byTokens[n] = replay(n)
		}
		out = append(out, servingPrefillRequest{uncached: n, replay: byTokens[n]})
	}
	return out
}

// loadServingPrefill reads data/serving_prefill.json and lays out its
// replayed rows.
func loadServingPrefill(dataDir string) ([]servingPrefillCase, error) {
	const file = "serving_prefill.json"
	rows, err := readRows[servingPrefillRow](dataDir, file)
	if err != nil {
		return nil, err
	}
	var cases []servingPrefillCase
	for _, r := range rows {
		name := r.Model + " / " + r.GPU
		if !strings.HasPrefix(r.Source, "https://") || r.TTFTms <= 0 || r.Quote == "" {
			return nil, fmt.Errorf("%s: %s: needs an https source, a quote and a TTFT", file, name)
		}
		if !r.Replayed {
			if err := whyNotError(file, name, r.WhyNot); err != nil {
				return nil, err
			}
			continue
		}
		if r.Use != useFit && r.Use != useHeldOut || !servingEngines[r.Engine] || r.Concurrency != 1 || r.Input <= 0 {
			return nil, fmt.Errorf("%s: %s: a replayed row is a concurrency-1 vLLM or SGLang row with an input length, %q or %q", file, name, useFit, useHeldOut)
		}
		s, ok := specs.ByName(r.Spec)
		if !ok {
			return nil, fmt.Errorf("%s: %s: no datasheet record %q", file, name, r.Spec)
		}
		if err := cachedPrefixError(file, name, r); err != nil {
			return nil, err
		}
		m, l, err := resolveRow(file, name, r.CatalogModel, r.Precision)
		if err != nil {
			return nil, err
		}
		replay := func(prompt int) *plan.Replay {
			return plan.NewServingPromptReplay(r.Engine, m, l, s, r.TP, prompt, r.Input+r.Output/2)
		}
		cases = append(cases, servingPrefillCase{row: r, replay: replay(r.Input), requests: requestReplays(r, replay)})
	}
	return cases, nil
}

// servingPromptFit is the serving prompt model's two constants fitted on
// the fit rows of data/serving_prefill.json.
type servingPromptFit struct {
	mfuPercent int     // ServingPromptMFU in hundredths
	requestMS  int     // ServingPromptRequestSeconds in whole milliseconds
	n          int     // fit rows
	median     float64 // median |log(planned/measured)| on the fit rows
}

// The grid the fit searches: the efficiency in hundredths of the peak
// (5 % to 100 %: at most the peak), the request time in whole
// milliseconds up to 300 (above every fit row's TTFT).
const (
	servingPromptMFUMin     = 5
	servingPromptMFUMax     = 100
	servingPromptRequestMax = 300
)

// promptFitRows is the fit rows of the engine named engineName among cases
// (data selection by the name the rows carry).
func promptFitRows(cases []servingPrefillCase, engineName string) []servingPrefillCase {
	var fit []servingPrefillCase
	for _, sc := range cases {
		if sc.row.Use == useFit && sc.row.Engine == engineName {
			fit = append(fit, sc)
		}
	}
	return fit
}

// fitServingPrompt fits ServingPromptMFU and ServingPromptRequestSeconds on
// the SGLang fit rows, minimizing the sum of squared log errors (each row's
// planned over measured time to first token): a time ratio, so a row
// planned twice too slow and one twice too fast weigh the same. The
// planned time is affine in the request time, so each efficiency's
// prompt times are replayed once (request time zero) and the request time
// added.
func fitServingPrompt(cases []servingPrefillCase, c calibration.Throughput) (servingPromptFit, error) {
	fit := promptFitRows(cases, engine.NameSGLang)
	if len(fit) == 0 {
		return servingPromptFit{}, fmt.Errorf("serving_prefill.json: no SGLang fit rows")
	}
	best, bestLoss := servingPromptFit{n: len(fit)}, math.Inf(1)
	for mfu := servingPromptMFUMin; mfu <= servingPromptMFUMax; mfu++ {
		k := c
		k.ServingPromptMFU, k.ServingPromptRequestSeconds = float64(mfu)/100, 0
		prompt, err := plannedPrompts(fit, k)
		if err != nil {
			return servingPromptFit{}, err
		}
		if req, loss, median := bestRequestTime(fit, prompt); loss < bestLoss {
			bestLoss = loss
			best.mfuPercent, best.requestMS, best.median = mfu, req, median
		}
	}
	return best, nil
}

// plannedPrompts is each row's planned time to first token under c, in
// milliseconds.
func plannedPrompts(fit []servingPrefillCase, c calibration.Throughput) ([]float64, error) {
	prompt := make([]float64, len(fit))
	for i, sc := range fit {
		if prompt[i] = sc.plannedMS(c); prompt[i] <= 0 {
			return nil, fmt.Errorf("serving_prefill.json: %s / %s: no prefill figure", sc.row.Model, sc.row.GPU)
		}
	}
	return prompt, nil
}

// bestRequestTime is the request time in whole milliseconds, 0 to
// servingPromptRequestMax, that added to each row's planned prompt time
// minimises the sum of squared log errors against its measured time to
// first token (the first minimum), with that sum and the median |log
// error|.
func bestRequestTime(fit []servingPrefillCase, prompt []float64) (reqMS int, loss, median float64) {
	loss = math.Inf(1)
	errs := make([]float64, len(fit))
	for req := 0; req <= servingPromptRequestMax; req++ {
		var l float64
		for i, sc := range fit {
			errs[i] = math.Abs(math.Log((prompt[i] + float64(req)) / sc.row.TTFTms))
			l += errs[i] * errs[i]
		}
		if l < loss {
			reqMS, loss, median = req, l, quantile(errs, 0.5)
		}
	}
	return reqMS, loss, median
}

// apply sets the fitted constants in c.
func (f servingPromptFit) apply(c calibration.Throughput) calibration.Throughput {
	c.ServingPromptMFU = float64(f.mfuPercent) / 100
	c.ServingPromptRequestSeconds = float64(f.requestMS) / 1000
	return c
}

// vllmPromptFit is vLLM's fixed time per request fitted on the vLLM fit
// rows of data/serving_prefill.json.
type vllmPromptFit struct {
	requestMS int     // VLLMPromptRequestSeconds in whole milliseconds
	n         int     // fit rows
	median    float64 // median |log(planned/measured)| on the fit rows
}

// fitVLLMPromptRequest fits VLLMPromptRequestSeconds on the vLLM fit rows
// under the constants c (ServingPromptMFU already fitted on the SGLang
// rows: the efficiency of the GEMMs is the GPU's and the kernels', the
// request time the engine's), minimizing the sum of squared log errors as
// fitServingPrompt does, over whole milliseconds up to
// servingPromptRequestMax.
func fitVLLMPromptRequest(cases []servingPrefillCase, c calibration.Throughput) (vllmPromptFit, error) {
	fit := promptFitRows(cases, engine.NameVLLM)
	if len(fit) == 0 {
		return vllmPromptFit{}, fmt.Errorf("serving_prefill.json: no vLLM fit rows")
	}
	k := c
	k.VLLMPromptRequestSeconds = 0
	prompt, err := plannedPrompts(fit, k)
	if err != nil {
		return vllmPromptFit{}, err
	}
	req, _, median := bestRequestTime(fit, prompt)
	return vllmPromptFit{requestMS: req, n: len(fit), median: median}, nil
}

// apply sets the fitted request time in c.
func (f vllmPromptFit) apply(c calibration.Throughput) calibration.Throughput {
	c.VLLMPromptRequestSeconds = float64(f.requestMS) / 1000
	return c
}
