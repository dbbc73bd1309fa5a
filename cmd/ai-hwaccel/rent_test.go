package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRentFirstLineIsTheBestChoice: the text answer's first line names the
// machine to rent, its price and its cost per million output tokens, and
// the next the engine command; --json is the library's answer.
func TestRentFirstLineIsTheBestChoice(t *testing.T) {
	r := runCLI(t, "rent", "--model", "Llama-3.1-8B", "--provider", "aws", "--sort", "price")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(r.stdout, "\n")
	assert.Regexp(t, `^Rent aws \S+ \(1 x NVIDIA .*\) for Llama-3.1-8B: \$[0-9.]+/h, about [0-9]+(\.[0-9])? output tokens/s( \(estimate, not validated\))?, \$[0-9.]+ per million output tokens\.$`, lines[0])
	assert.Contains(t, r.stdout, "vllm serve ")
	assert.Contains(t, r.stdout, "Ranked by price per hour")

	j := runCLI(t, "rent", "--model", "Llama-3.1-8B", "--provider", "aws", "--json")
	require.Equal(t, 0, j.code, j.stderr)
	var a struct {
		Choices []struct {
			Provider string `json:"provider"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.stdout), &a))
	require.NotEmpty(t, a.Choices)
	for _, c := range a.Choices {
		assert.Equal(t, "aws", c.Provider)
	}
}

// TestRentPriceFile: --prices replaces a built-in price and the answer
// says the price is the user's.
func TestRentPriceFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"schema":1,"machines":[{"provider":"aws","type":"p5.4xlarge","price":{"usd_per_hour":0.5,"seen":"2026-11-27"}}]}`), 0o600))
	r := runCLI(t, "rent", "--model", "Llama-3.1-8B", "--provider", "aws", "--prices", file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "Rent aws p5.4xlarge (1 x NVIDIA H100 SXM5 80GB) for Llama-3.1-8B: $0.50/h"), r.stdout)
	assert.Contains(t, r.stdout, "from your price file")
}

func TestRentUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"rent"},
		{"rent", "--model", "8b", "--sort", "cheapest"},
		{"rent", "--model", "8b", "--max-price", "-3"},
		{"rent", "--model", "8b", "--max-nodes", "0"},
		{"rent", "--model", "8b", "--prices", "/nonexistent/prices.json"},
	} {
		r := runCLI(t, args...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
	}
	r := runCLI(t, "rent", "--model", "8b", "--provider", "nosuchcloud")
	assert.Equal(t, exitError, r.code)
	// It named no flag ("invalid_argument: rent: unknown provider"); the
	// known providers are the price catalog's, which --prices replaces, so
	// it stays the engine's answer (status 1), naming the flag.
	assert.Equal(t, "ai-hwaccel: invalid_argument: --provider holds an unknown provider \"nosuchcloud\" (known: aws, azure, gcp, lambda, oci, runpod)\n", r.stderr)
}

// TestRentHerePricesThisMachine: --here reads the cloud and instance type
// from DMI (a sysroot holding what an EC2 Nitro instance reports: sys_vendor
// "Amazon EC2", product_name the instance type) and prices that type.
func TestRentHerePricesThisMachine(t *testing.T) {
	root := t.TempDir()
	dmi := filepath.Join(root, "sys", "devices", "virtual", "dmi", "id")
	require.NoError(t, os.MkdirAll(dmi, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dmi, "sys_vendor"), []byte("Amazon EC2\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dmi, "product_name"), []byte("p5.48xlarge\n"), 0o644))
	r := runCLI(t, "rent", "--model", "Llama-3.1-8B", "--provider", "lambda", "--here", "--sysroot", root, "--no-exec")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `This machine \(aws p5\.48xlarge\): \$55\.04/h, about [0-9]+ output tokens/s( \(estimate, not validated\))?, \$[0-9.]+ per million output tokens\.`, r.stdout)

	bare := runCLI(t, "rent", "--model", "Llama-3.1-8B", "--here", "--sysroot", t.TempDir(), "--no-exec")
	require.Equal(t, 0, bare.code, bare.stderr)
	assert.Contains(t, bare.stderr, "names no cloud")
	assert.NotContains(t, bare.stdout, "This machine")
}

// TestRentAgesPricesOnTheAppClock: a built-in price is aged against the
// app's clock, as --watch stamps its refreshes, so a test (and the generated
// rent answers of docs/rent.md) can run on a fixed day. The GCP g4 prices
// were seen 2025-10-22 (internal/rent/catalog.json): 402 days before
// 2026-11-28, stale; 72 days before testApp's 2026-01-02, fresh.
func TestRentAgesPricesOnTheAppClock(t *testing.T) {
	args := []string{"rent", "--model", "Llama-3.1-8B", "--provider", "gcp"}
	late := runCLIAt(t, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), args...)
	require.Equal(t, 0, late.code, late.stderr)
	assert.Contains(t, late.stdout, "warning: gcp/g4-standard-48: the built-in price $4.50/h was seen 2025-10-22, 402 days ago;")

	early := runCLI(t, args...)
	require.Equal(t, 0, early.code, early.stderr)
	assert.NotContains(t, early.stdout, "days ago")
}

// rent rounds a speed as plan does (one decimal below 100 tokens/s): its
// lines read "about 37 output tokens/s" for a choice whose
// decode_tokens_per_s is 37.422, where plan's answer keeps 37.4.
func TestRentSpeedIsRoundedAsPlanRoundsIt(t *testing.T) {
	obj, r := runJSON(t, "rent", "--model", "Llama-3.1-70B", "--json")
	best := obj["choices"].([]any)[0].(map[string]any)
	speed := best["decode_tokens_per_s"].(float64)
	require.Less(t, speed, 100.0, r.stdout)
	text := runCLI(t, "rent", "--model", "Llama-3.1-70B")
	require.Equal(t, 0, text.code, text.stderr)
	headline, _, _ := strings.Cut(text.stdout, "\n")
	assert.Contains(t, headline, "about "+rateText(speed)+" output tokens/s")
}

// TestRentUsageLineNamesItsFlags: the usage line of rent names every flag
// of its own Flags group but --pretty (which only goes with --json), so a
// user reading the line sees --quant and --here, which rent takes.
func TestRentUsageLineNamesItsFlags(t *testing.T) {
	r := runCLI(t, "rent", "--help")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(r.stdout, "\n")
	require.Greater(t, len(lines), 1)
	usage := lines[1]
	_, flagsPart, ok := strings.Cut(r.stdout, "\nFlags:\n")
	require.True(t, ok, r.stdout)
	flagsPart, _, _ = strings.Cut(flagsPart, "\n\n")
	named := 0
	for _, line := range strings.Split(flagsPart, "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !strings.HasPrefix(name, "--") || name == "--pretty" {
			continue
		}
		named++
		assert.Regexp(t, `\[?`+regexp.QuoteMeta(name)+`[ \]]`, usage, "the usage line lacks %s", name)
	}
	assert.Equal(t, 13, named, "every flag of the Flags group but --pretty")
}

// Where every machine type is left out for the same reason, the headline
// says it rather than send the user to --json: vLLM asked for a GGUF type
// is refused on every type. Before: "No catalog machine runs Llama-3.1-8B
// within the filters (52 types left out; --json lists why)." A reason
// shared by some types only still sends to --json.
func TestRentNamesTheOneReasonEveryTypeIsLeftOut(t *testing.T) {
	r := runCLI(t, "rent", "--model", "Llama-3.1-8B", "--quant", "q4_k_m", "--engine", "vllm", "--provider", "aws")
	require.Equal(t, 0, r.code, r.stderr)
	head := strings.SplitN(r.stdout, "\n", 2)[0]
	assert.Regexp(t, `^No catalog machine runs Llama-3\.1-8B: all \d+ types planned do not fit, each for the same reason: vLLM does not plan GGUF types \(q4_k_m\)`, head)
	assert.NotContains(t, head, "--json lists why")

	big := runCLI(t, "rent", "--model", "3t", "--provider", "aws")
	require.Equal(t, 0, big.code, big.stderr)
	assert.Contains(t, big.stdout, "--json lists why")
}

// One type left out names itself and its reason.
func TestRentNamesTheOneTypeLeftOut(t *testing.T) {
	r := runCLI(t, "rent", "--model", "DeepSeek-R1", "--provider", "aws", "--max-price", "10")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^No catalog machine runs DeepSeek-R1: the one type planned \(aws \S+\) does not fit: int4 needs`, r.stdout)
}
