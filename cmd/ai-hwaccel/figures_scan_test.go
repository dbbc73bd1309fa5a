package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
)

// figureScanModels are the catalog models the figure scan asks for on
// every fixture: dense sizes from 1B to 405B, MoE, MLA, sliding windows,
// a hybrid and a vision model.
var figureScanModels = []string{
	"Llama-3.2-1B", "Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B",
	"Qwen3-30B-A3B", "Qwen2.5-72B", "Mixtral-8x7B-Instruct-v0.1", "DeepSeek-V3",
	"gpt-oss-20b", "gpt-oss-120b", "gemma-3-27b-it", "Qwen3-Next-80B-A3B-Instruct",
}

// figureScanSkip are fixtures whose detection waits on hanging tools by
// design (their timeout, each run): what they detect is planned as any
// other fixture's devices are.
var figureScanSkip = map[string]bool{"hostile": true, "slow-tools": true}

// TestTextFiguresAreTheJSONFigures asks plan (as planned, and as two
// llama.cpp replicas), suggest and train for a dozen catalog models on
// every fixture machine, and rent for each model,
// in text and in JSON, and checks that a figure the text prints is the
// JSON answer's figure by the text's rounding rule (cli.GiB for memory,
// one decimal below 100 tokens/s and none above for speeds), and that one
// quantity printed twice reads the same both times. Before it, a refused
// level's row said 326.3 GiB beside its reason's 327.2 GiB (suggest for
// DeepSeek-V3 on the Slimbook), "4 replicas x 161 tokens/s = 643", rent
// rounded speeds to whole tokens/s (37 for 37.4) where plan keeps a
// decimal, and train's Memory line read "gradients <0.1 GiB" above its
// explanation's "gradients 0.0 GiB".
func TestTextFiguresAreTheJSONFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("asks every command for a dozen models on every fixture")
	}
	var disagree []string
	answers := 0
	checked = map[string]int{}
	for _, m := range machines(t) {
		if figureScanSkip[m] {
			continue
		}
		for _, model := range figureScanModels {
			for _, cmd := range [][]string{{"plan"}, {"plan", "--replicas", "2", "--engine", "llama.cpp"}, {"suggest"}, {"train", "--method", "lora"}} {
				args := withFixture(t, m, append(cmd, "--model", model)...)
				text, obj, ok := textAndJSON(t, args)
				if !ok {
					continue
				}
				answers++
				where := fmt.Sprintf("%s %s %s", m, cmd[0], model)
				for _, d := range figureDisagreements(cmd[0], text, obj) {
					disagree = append(disagree, where+": "+d)
				}
			}
		}
	}
	for _, model := range figureScanModels {
		text, obj, ok := textAndJSON(t, []string{"rent", "--model", model})
		require.True(t, ok, "rent %s", model)
		answers++
		for _, d := range rentDisagreements(text, obj) {
			disagree = append(disagree, "rent "+model+": "+d)
		}
	}
	assert.Greater(t, answers, 1500, "answers compared")
	// Each check found its lines: a pattern that stopped matching the
	// text would otherwise pass by comparing nothing.
	for _, k := range []string{"GiB figure", "Levels row", "refused row", "headline speed", "data-parallel headline", "Throughput decode_tokens_per_s", "Throughput prefill_tokens_per_s", "Throughput decode_tokens_per_s_total", "Memory line", "Memory per device line", "train explanation", "rent line", "tokens/s figure"} {
		assert.Greater(t, checked[k], 10, "%s compared", k)
	}
	t.Logf("%d answers; figures compared: %v", answers, checked)
	assert.Empty(t, disagree, "%d of %d answers' figures disagree:\n%s", len(disagree), answers, strings.Join(disagree, "\n"))
}

// textAndJSON runs args as text and with --json; ok is false when the
// command refuses (exit status 1 both ways, an error and no answer).
func textAndJSON(t *testing.T, args []string) (string, map[string]any, bool) {
	t.Helper()
	text := runCLI(t, args...)
	js := runCLI(t, append(args, "--json")...)
	require.Equal(t, text.code, js.code, "%v: %s / %s", args, text.stderr, js.stderr)
	if text.code != 0 {
		return "", nil, false
	}
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(js.stdout), &obj), js.stdout)
	return text.stdout, obj, true
}

// checked counts the figures each check of the scan compared.
var checked map[string]int

var (
	gibFigure     = regexp.MustCompile(`(<0\.1|\d+\.\d) GiB`)
	rateFigure    = regexp.MustCompile(`(?:^|[ (])(\d+(?:\.\d+)?) (?:output )?tokens/s`)
	levelRow      = regexp.MustCompile(`(?m)^  (\S+) +(\S+ GiB|—) +(yes|no|unknown)\b`)
	needsOnOne    = regexp.MustCompile(`^(?:doesn't fit: )?(\S+) needs (\d+\.\d GiB) on one device`)
	headlineSpeed = regexp.MustCompile(`, about ([0-9.]+) tokens/s(?: per replica \((\d+) x [0-9.]+ = ([0-9.]+) tokens/s when all)?`)
	decodeLine    = regexp.MustCompile(`(?m)^Throughput: decode ([0-9.]+) tokens/s`)
	prefillLine   = regexp.MustCompile(`(?m)^Throughput: .*prefill ([0-9.]+) tokens/s`)
	allLine       = regexp.MustCompile(`(?m)^Throughput: .*, ([0-9.]+) tokens/s in all`)
	memoryLine    = regexp.MustCompile(`(?m)^Memory \([^)]*\): (\S+ GiB) = weights (\S+ GiB) \+ KV cache (\S+ GiB)(?: \([^)]*\))? \+ activations (\S+ GiB) \+ runtime overhead (\S+ GiB)`)
	trainMemory   = regexp.MustCompile(`(?m)^Memory per device: (\S+ GiB) = weights (\S+ GiB) \+ gradients (\S+ GiB) \+ optimizer (\S+ GiB) \+ activations (\S+ GiB)(?: \+ frozen models (\S+ GiB))? \+ runtime overhead (\S+ GiB)`)
	trainExplain  = regexp.MustCompile(`(?m)^  - per device: weights (\S+ GiB), gradients (\S+ GiB), optimizer (\S+ GiB), activations (\S+ GiB), frozen models (\S+ GiB), runtime (\S+ GiB)`)
	rentLine      = regexp.MustCompile(`(?m)^(?:Rent |\s+\d+\. ).*?: \$([0-9.]+)/h, about ([0-9.]+) output tokens/s.*?, \$([0-9.]+) per million output tokens`)
)

// figureDisagreements lists where the text of a plan, suggest or train
// answer prints a figure other than its JSON's.
func figureDisagreements(cmd, text string, obj map[string]any) []string {
	var out []string
	known := jsonGiB(obj, map[string]bool{})
	for _, f := range gibFigure.FindAllString(text, -1) {
		checked["GiB figure"]++
		if !known[f] {
			out = append(out, fmt.Sprintf("%q is no figure of the JSON answer", f))
		}
	}
	rates := jsonRates(obj, map[string]bool{})
	for _, m := range rateFigure.FindAllStringSubmatch(text, -1) {
		checked["tokens/s figure"]++
		if !rates[m[1]] && !rates[moreDigits(m[1])] {
			out = append(out, fmt.Sprintf("%q tokens/s is no figure of the JSON answer", m[1]))
		}
	}
	if cmd == "train" {
		return append(out, trainDisagreements(text, obj)...)
	}
	out = append(out, levelDisagreements(text, obj)...)
	out = append(out, speedDisagreements(text, obj)...)
	if m := memoryLine.FindStringSubmatch(text); m != nil {
		checked["Memory line"]++
		mem := obj["memory"].(map[string]any)
		for i, k := range []string{"total_bytes", "weights_bytes", "kv_cache_bytes", "activations_bytes", "overhead_bytes"} {
			if want := cli.GiB(int64(num(mem[k]))); m[i+1] != want {
				out = append(out, fmt.Sprintf("Memory line %s %s, memory.%s %s", k, m[i+1], k, want))
			}
		}
	}
	return out
}

// levelDisagreements: each row of the Levels table is its levels[] entry,
// and a row refused for memory is the figure its reason says it needs.
func levelDisagreements(text string, obj map[string]any) []string {
	levels, _ := obj["levels"].([]any)
	rows := levelRow.FindAllStringSubmatch(text, -1)
	if len(levels) == 0 {
		return nil
	}
	if len(rows) != len(levels) {
		return []string{fmt.Sprintf("%d rows in the Levels table, %d levels", len(rows), len(levels))}
	}
	var out []string
	for i, l := range levels {
		row := l.(map[string]any)
		b := int64(num(row["total_bytes"]))
		want := cli.GiB(b)
		if b <= 0 {
			want = cli.Unknown
		}
		checked["Levels row"]++
		if rows[i][1] != row["quant"] || rows[i][2] != want {
			out = append(out, fmt.Sprintf("Levels row %q %q, levels[%d] %v %s", rows[i][1], rows[i][2], i, row["quant"], want))
		}
		reason, _ := row["reason"].(string)
		if m := needsOnOne.FindStringSubmatch(reason); m != nil && m[1] == row["quant"] {
			checked["refused row"]++
			if m[2] != rows[i][2] {
				out = append(out, fmt.Sprintf("Levels row %s %s, its reason needs %s", m[1], rows[i][2], m[2]))
			}
		}
	}
	return out
}

// speedDisagreements: the headline's and the Throughput line's rates are
// the throughput's, and a data-parallel headline's figures multiply.
func speedDisagreements(text string, obj map[string]any) []string {
	tp, _ := obj["throughput"].(map[string]any)
	one, total, prefill := num(tp["decode_tokens_per_s"]), num(tp["decode_tokens_per_s_total"]), num(tp["prefill_tokens_per_s"])
	headline, _, _ := strings.Cut(text, "\n")
	var out []string
	if m := headlineSpeed.FindStringSubmatch(headline); m != nil {
		if m[2] == "" {
			checked["headline speed"]++
		}
		if m[2] == "" && m[1] != rateText(one) {
			out = append(out, fmt.Sprintf("headline %s tokens/s, decode_tokens_per_s %s", m[1], rateText(one)))
		}
		if m[2] != "" {
			checked["data-parallel headline"]++
			n, _ := strconv.Atoi(m[2])
			shown, _ := strconv.ParseFloat(m[1], 64)
			if m[3] != rateText(total) || rateText(float64(n)*shown) != m[3] {
				out = append(out, fmt.Sprintf("headline %s, decode_tokens_per_s_total %s", m[0], rateText(total)))
			}
		}
	}
	for _, c := range []struct {
		re   *regexp.Regexp
		name string
		v    float64
	}{{decodeLine, "decode_tokens_per_s", one}, {prefillLine, "prefill_tokens_per_s", prefill}, {allLine, "decode_tokens_per_s_total", total}} {
		if m := c.re.FindStringSubmatch(text); m != nil {
			checked["Throughput "+c.name]++
			if m[1] != rateText(c.v) {
				out = append(out, fmt.Sprintf("Throughput %s %s, JSON %s", c.name, m[1], rateText(c.v)))
			}
		}
	}
	return out
}

// trainDisagreements: the Memory per device line is per_device, and the
// explanation's per-device line prints the same figures.
func trainDisagreements(text string, obj map[string]any) []string {
	m := trainMemory.FindStringSubmatch(text)
	if m == nil {
		return []string{"no Memory per device line"}
	}
	checked["Memory per device line"]++
	pd := obj["per_device"].(map[string]any)
	var out []string
	line := map[string]string{"total_bytes": m[1], "weights_bytes": m[2], "gradients_bytes": m[3], "optimizer_bytes": m[4], "activations_bytes": m[5], "frozen_models_bytes": m[6], "overhead_bytes": m[7]}
	for k, shown := range line {
		if want := cli.GiB(int64(num(pd[k]))); shown != "" && shown != want {
			out = append(out, fmt.Sprintf("Memory per device %s %s, per_device.%s %s", k, shown, k, want))
		}
	}
	if e := trainExplain.FindStringSubmatch(text); e != nil {
		checked["train explanation"]++
		for i, k := range []string{"weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "frozen_models_bytes", "overhead_bytes"} {
			if want := cli.GiB(int64(num(pd[k]))); e[i+1] != want {
				out = append(out, fmt.Sprintf("explanation per device %s %s, per_device.%s %s", k, e[i+1], k, want))
			}
		}
	}
	return out
}

// rentDisagreements: the best choice's headline and each ranked line
// print their choice's price, speed and cost.
func rentDisagreements(text string, obj map[string]any) []string {
	choices, _ := obj["choices"].([]any)
	lines := rentLine.FindAllStringSubmatch(text, -1)
	if len(choices) == 0 || len(lines) < 2 {
		return nil
	}
	var out []string
	// The headline is choices[0]; ranked line i is choices[i-1].
	for i, m := range lines {
		checked["rent line"]++
		c := choices[max(i-1, 0)].(map[string]any)
		price, speed, cost := fmt.Sprintf("%.2f", num(c["price_per_hour"])), rateText(num(c["decode_tokens_per_s"])), fmt.Sprintf("%.2f", num(c["cost_per_million_output_tokens"]))
		if m[1] != price || m[2] != speed || m[3] != cost {
			out = append(out, fmt.Sprintf("line %d: $%s/h, %s tokens/s, $%s per million; JSON $%s/h, %s tokens/s, $%s", i, m[1], m[2], m[3], price, speed, cost))
		}
	}
	return out
}

// jsonGiB collects every memory figure of a JSON answer as the text
// writes it: each *_bytes number by cli.GiB, and each "N.N GiB" inside a
// string (reasons and explanations).
func jsonGiB(v any, into map[string]bool) map[string]bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if f, ok := e.(float64); ok && strings.HasSuffix(k, "_bytes") {
				into[cli.GiB(int64(f))] = true
				continue
			}
			jsonGiB(e, into)
		}
	case []any:
		for _, e := range x {
			jsonGiB(e, into)
		}
	case string:
		for _, f := range gibFigure.FindAllString(x, -1) {
			into[f] = true
		}
	}
	return into
}

// jsonRates collects every speed of a JSON answer as the text writes it:
// each *tokens_per_s* number by the rate rule, and each "N tokens/s"
// inside a string.
func jsonRates(v any, into map[string]bool) map[string]bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if f, ok := e.(float64); ok && strings.Contains(k, "tokens_per_s") {
				into[rateText(f)] = true
				for d := 1; d <= 3; d++ {
					// A data-parallel headline's per-replica figure
					// carries the digits that make its product the total
					// (replicaRate).
					into[moreDigits(strconv.FormatFloat(f, 'f', d, 64))] = true
				}
				continue
			}
			jsonRates(e, into)
		}
	case []any:
		for _, e := range x {
			jsonRates(e, into)
		}
	case string:
		for _, m := range rateFigure.FindAllStringSubmatch(x, -1) {
			into[m[1]] = true
		}
	}
	return into
}

// moreDigits marks a figure written with decimals beyond the rate rule's.
func moreDigits(f string) string { return f + " (digits)" }

// num is a JSON number, 0 when absent.
func num(v any) float64 {
	f, _ := v.(float64)
	return f
}
