package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// placeholderWord matches the stand-in names a command line could carry
// instead of weights: MODEL (vllm serve, sglang --model-path), MODEL.gguf
// and MODEL-Q4_K_M.gguf (llama-server -m), as the engines printed them
// before they withheld such a command (engine.vllm.Command,
// engine.llamaCPP.Command).
var placeholderWord = regexp.MustCompile(`(^|[\s=])MODEL([-.][A-Za-z0-9_.]*)?(\s|$)`)

// printedCommands are the command lines of a plan's human answer: the
// headline's "run: ..." and each line under "Engine commands:".
func printedCommands(out string) []string {
	var cmds []string
	lines := strings.Split(out, "\n")
	if _, run, ok := strings.Cut(lines[0], "; run: "); ok {
		cmds = append(cmds, run)
	}
	in := false
	for _, l := range lines {
		switch {
		case l == "Engine commands:":
			in = true
		case in && strings.HasPrefix(l, "  "):
			cmds = append(cmds, strings.TrimSpace(l))
		default:
			in = false
		}
	}
	return cmds
}

// No command a plan prints holds a placeholder a user would copy: over a
// spread of fixtures, catalog models (a GGUF repository, a model with no
// GGUF or no int4 checkpoint published, an AWQ repository, a model given
// by size) and engines at each level, every printed command names real
// weights, or the plan says "no command" and why. The new-user pass found
// `vllm serve MODEL` for ggml-org/gemma-3-27b-it-GGUF planned with vLLM
// and `llama-server -m MODEL-Q4_K_M.gguf` for Qwen2.5-72B-Instruct-AWQ.
func TestNoPrintedCommandHasAPlaceholder(t *testing.T) {
	fixtures := []string{"h200-vm", "dgx-h100", "slimbook-hero-rtx4060-igpu", "cpu-only"}
	models := []string{"ggml-org/gemma-3-27b-it-GGUF", "google/gemma-3-27b-it", "Qwen/Qwen2.5-72B-Instruct-AWQ",
		"mistralai/Mistral-7B-v0.3", "gpt-oss-20b", "qwen3:30b-a3b", "7b"}
	engines := []string{"vllm", "sglang", "llama.cpp"}
	levels := []string{"", "q4_k_m", "q8_0", "int4", "int8", "fp8", "bf16"}
	seen, withheld := 0, 0
	for _, fx := range fixtures {
		for _, m := range models {
			for _, e := range engines {
				for _, q := range levels {
					args := []string{"plan", "--model", m, "--engine", e}
					if q != "" {
						args = append(args, "--quant", q)
					}
					r := runUnchecked(withFixture(t, fx, args...)...)
					if r.code != 0 {
						continue // a refused request prints no command
					}
					for _, c := range printedCommands(r.stdout) {
						seen++
						if strings.Contains(c, "no command: ") {
							withheld++
							continue
						}
						assert.False(t, placeholderWord.MatchString(c), "%s %v prints a placeholder: %s", fx, args, c)
					}
				}
			}
		}
	}
	t.Logf("%d commands printed, %d withheld", seen, withheld)
	require.Greater(t, seen, 300, "the spread printed too few commands to mean anything")
	require.Greater(t, withheld, 0, "no plan of the spread withheld its command")
	require.Greater(t, seen-withheld, 150, "too few runnable commands in the spread")
}

// vLLM and SGLang do not plan a GGUF type: the answer says so and names
// llama.cpp, the engine that loads it, instead of a vllm serve line for a
// GGUF repository (vLLM's GGUF loading is experimental and out of tree,
// docs/features/quantization/gguf.md of vllm-project/vllm).
func TestGGUFLevelNamesLlamaCppForHuggingFaceEngines(t *testing.T) {
	for _, e := range []string{"vllm", "sglang"} {
		for _, args := range [][]string{
			{"plan", "--model", "ggml-org/gemma-3-27b-it-GGUF", "--quant", "q4_k_m", "--engine", e},
			{"plan", "--model", "google/gemma-3-27b-it", "--quant", "q8_0", "--engine", e},
		} {
			r := runCLI(t, withFixture(t, "h200-vm", args...)...)
			require.Equal(t, 0, r.code, r.stderr)
			head := strings.SplitN(r.stdout, "\n", 2)[0]
			assert.Contains(t, head, "does not fit", args)
			assert.Contains(t, head, "does not plan GGUF types", args)
			assert.Contains(t, head, "engine llama.cpp", args)
			assert.NotContains(t, r.stdout, "vllm serve", args)
			assert.NotContains(t, r.stdout, "launch_server", args)
		}
	}
}

// A Hugging Face checkpoint named for llama.cpp is not what llama.cpp
// loads: the answer says so and which GGUF it loads instead, or that none
// is published (deepseek-ai/DeepSeek-V4-Flash: the catalog lists no GGUF of
// DeepSeek-V4-Flash; poolside/Laguna-S-2.1-FP8: Poolside's own
// poolside/Laguna-S-2.1-GGUF; Qwen/Qwen2.5-72B-Instruct-AWQ:
// Qwen/Qwen2.5-72B-Instruct-GGUF, a GGUF of the same release;
// openai/gpt-oss-20b: ggml-org/gpt-oss-20b-GGUF).
func TestNamedCheckpointLlamaCppDoesNotLoadSaysWhatItLoads(t *testing.T) {
	obj, _ := runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "Qwen/Qwen2.5-72B-Instruct-AWQ", "--engine", "llama.cpp", "--json")...)
	expl := strings.Join(toStrings(obj["explanation"]), "\n")
	assert.Contains(t, expl, "llama.cpp: Qwen/Qwen2.5-72B-Instruct-AWQ, the checkpoint named, is a Hugging Face AWQ checkpoint, which llama.cpp does not load: it loads the Q4_K_M GGUF of Qwen/Qwen2.5-72B-Instruct-GGUF instead")

	obj, _ = runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "poolside/Laguna-S-2.1-FP8", "--engine", "llama.cpp", "--json")...)
	expl = strings.Join(toStrings(obj["explanation"]), "\n")
	assert.Contains(t, expl, "llama.cpp: poolside/Laguna-S-2.1-FP8, the checkpoint named, is a Hugging Face compressed-tensors checkpoint, which llama.cpp does not load: it loads the Q8_0 GGUF of poolside/Laguna-S-2.1-GGUF instead")

	obj, _ = runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "deepseek-ai/DeepSeek-V4-Flash", "--engine", "llama.cpp", "--json")...)
	expl = strings.Join(toStrings(obj["explanation"]), "\n")
	assert.Contains(t, expl, "llama.cpp: deepseek-ai/DeepSeek-V4-Flash, the checkpoint named, is a Hugging Face FP8 checkpoint, which llama.cpp does not load: it loads a Q3_K_M GGUF file, and the catalog knows none published of DeepSeek-V4-Flash")

	obj, _ = runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "openai/gpt-oss-20b", "--engine", "llama.cpp", "--json")...)
	expl = strings.Join(toStrings(obj["explanation"]), "\n")
	assert.Contains(t, expl, "llama.cpp: openai/gpt-oss-20b, the checkpoint named, is a Hugging Face MXFP4 checkpoint, which llama.cpp does not load: it loads the MXFP4_MOE GGUF of ggml-org/gpt-oss-20b-GGUF instead")

	// A 16-bit release (what a catalog name resolves to) gets no such note.
	obj, _ = runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "Qwen/Qwen3-30B-A3B", "--engine", "llama.cpp", "--quant", "q8_0", "--json")...)
	assert.NotContains(t, strings.Join(toStrings(obj["explanation"]), "\n"), "which llama.cpp does not load")

	obj, _ = runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "ggml-org/gemma-3-27b-it-GGUF", "--engine", "llama.cpp", "--json")...)
	assert.NotContains(t, strings.Join(toStrings(obj["explanation"]), "\n"), "which llama.cpp does not load", "a named GGUF repository is what llama.cpp loads")
}

// The fit table does not present as runnable a plan that prints no command:
// Mistral-7B-v0.3 fits the Slimbook's 8 GB RTX 4060 under vLLM only at int4,
// of which no checkpoint is published, so its row says "no checkpoint" and
// the JSON row says what the plan needs (no_command); a row whose plan
// loads a published checkpoint has none.
func TestFitMarksRowsWithNoCommand(t *testing.T) {
	r := runCLI(t, withFixture(t, "slimbook-hero-rtx4060-igpu", "fit", "--engine", "vllm", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	marked, clean := 0, 0
	for _, row := range rows {
		why, _ := row["no_command"].(string)
		if row["model"] == "Mistral-7B-v0.3" {
			assert.Equal(t, "int4", row["quant"])
			assert.Contains(t, why, "needs a checkpoint of Mistral-7B-v0.3 stored at int4")
		}
		if why != "" {
			marked++
		} else if row["fits"] == true {
			clean++
		}
	}
	require.Positive(t, marked)
	require.Positive(t, clean, "rows with a published checkpoint carry no mark")

	r = runCLI(t, withFixture(t, "slimbook-hero-rtx4060-igpu", "fit", "--engine", "vllm", "--filter", "Mistral-7B-v0.3")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^Mistral-7B-v0\.3 +7\.2B +yes +int4 \(no checkpoint\) `, r.stdout)
	assert.Contains(t, r.stdout, "(no checkpoint): ")
}

// A GGUF repository named with an engine that does not load GGUF and quant
// auto plans the release's Hugging Face levels (google/gemma-3-27b-it, the
// release ggml-org/gemma-3-27b-it-GGUF, a repository of several types, was
// converted from) and says so,
// instead of refusing the GGUF type auto picked first and suggesting
// --cpu-offload for it.
func TestGGUFRepositoryUnderHuggingFaceEngineAutoPlansTheRelease(t *testing.T) {
	catalogTypesOf(t, "ggml-org/gemma-3-27b-it-GGUF") // a repository of several types
	for _, e := range []string{"vllm", "sglang"} {
		obj, _ := runJSON(t, withFixture(t, "h200-vm", "plan", "--model", "ggml-org/gemma-3-27b-it-GGUF", "--engine", e, "--json")...)
		require.Equal(t, true, obj["fits"], e)
		assert.Equal(t, "bf16", obj["quant"], e)
		load := obj["load"].(map[string]any)[e].(map[string]any)
		assert.Equal(t, "google/gemma-3-27b-it", load["repo"], e)
		expl := strings.Join(toStrings(obj["explanation"]), "\n")
		assert.Contains(t, expl, "auto: ggml-org/gemma-3-27b-it-GGUF is a GGUF repository, which "+map[string]string{"vllm": "vLLM", "sglang": "SGLang"}[e]+" does not load; auto plans the Hugging Face levels of its release", e)
	}
}

// A named GGUF repository of several types planned with llama.cpp and
// quant auto takes the best of its types that fits, from that repository:
// its widest on the H200, and on the 32 GB M2 Max (20.3 GiB of Metal
// working set) Q4_K_M, a lower type of the same repository, after the
// wider ones were tried and did not fit.
func TestGGUFRepositoryUnderLlamaCppAutoTakesTheBestOfItsTypesThatFits(t *testing.T) {
	const repo = "ggml-org/gemma-3-27b-it-GGUF"
	types := catalogTypesOf(t, repo)

	loaded := func(fixture string) (map[string]any, map[string]any) {
		obj, _ := runJSON(t, withFixture(t, fixture, "plan", "--model", repo, "--engine", "llama.cpp", "--json")...)
		require.Equal(t, true, obj["fits"], fixture)
		return obj, obj["load"].(map[string]any)["llama.cpp"].(map[string]any)
	}
	obj, load := loaded("h200-vm")
	assert.Equal(t, string(types[0]), obj["quant"])
	assert.Equal(t, repo, load["repo"])

	obj, load = loaded("macbook-m2-max-32gb")
	assert.Equal(t, "q4_k_m", obj["quant"])
	assert.Equal(t, repo, load["repo"])
	assert.Equal(t, "Q4_K_M", load["gguf_type"])
	var tried []string
	for _, row := range obj["levels"].([]any) {
		r := row.(map[string]any)
		tried = append(tried, r["quant"].(string))
		if r["quant"] != "q4_k_m" {
			assert.Equal(t, false, r["fits"], "%v", r)
		}
	}
	var want []string
	for _, l := range types {
		want = append(want, string(l))
	}
	assert.Equal(t, want, tried, "auto tries the repository's types, best first")
	assert.Contains(t, strings.Join(toStrings(obj["explanation"]), "\n"), "auto: "+repo+", the GGUF repository named, holds ")

	// A type the repository lacks, asked for, says so and what it holds.
	obj, _ = runJSON(t, withFixture(t, "h200-vm", "plan", "--model", repo, "--engine", "llama.cpp", "--quant", "q6_k", "--json")...)
	assert.Contains(t, strings.Join(toStrings(obj["explanation"]), "\n"), "llama.cpp: the catalog knows "+repo+", the repository named, at Q4_K_M, ")
}

// catalogTypesOf are the levels of the files the catalog lists in a GGUF
// repository, best first; the test fails unless it lists several, the
// case the callers are about.
func catalogTypesOf(t *testing.T, repo string) []quant.Level {
	t.Helper()
	var types []quant.Level
	for _, e := range model.Catalog() {
		for _, ck := range e.Checkpoints {
			if ck.Repo == repo {
				l, err := quant.Parse(ck.Quant)
				require.NoError(t, err, ck.Quant)
				types = append(types, l)
			}
		}
	}
	sort.Slice(types, func(a, b int) bool { return types[a].BitsPerWeight() > types[b].BitsPerWeight() })
	require.GreaterOrEqual(t, len(types), 2, "the catalog lists several types of %s", repo)
	return types
}

// Every plan answer of the golden files (testdata/golden: each fixture
// machine's answers to the golden requests), printed as the CLI prints it,
// has no placeholder in its headline's command or its Engine commands.
func TestGoldenPlansPrintNoPlaceholderCommand(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	commands := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		var answers map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &answers), file)
		for name, ans := range answers {
			if !strings.HasPrefix(name, "plan") {
				continue
			}
			var out bytes.Buffer
			if cli.WritePlan(&out, ans, cli.AnswerInfo{}) != nil {
				continue // an error answer prints no plan
			}
			for _, c := range printedCommands(out.String()) {
				commands++
				assert.False(t, placeholderWord.MatchString(c), "%s %s: %s", filepath.Base(file), name, c)
			}
		}
	}
	require.Greater(t, commands, 50, "the golden answers printed too few commands to mean anything")
	t.Logf("%d command lines checked", commands)
}
