package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/catalogq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

func TestModelsListsTheCatalog(t *testing.T) {
	r := runCLI(t, "models")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	assert.Equal(t, "NAME", strings.Fields(lines[0])[0])
	// One row per catalog entry, then a blank line and the count.
	assert.Len(t, lines, len(model.Catalog())+3)
	assert.Regexp(t, `(?m)^Llama-3\.1-8B +8B +— +32 +128k +meta-llama/Llama-3\.1-8B +bf16,int4,q8_0,q6_k,q5_k_m,q4_k_m,iq4_xs,q3_k_m,iq3_m,iq3_xs,iq2_m,q2_k$`, r.stdout)

	var list []catalogq.Model
	require.NoError(t, json.Unmarshal([]byte(runCLI(t, "models", "--filter", "LLAMA-3.1", "--json").stdout), &list))
	require.NotEmpty(t, list)
	for _, m := range list {
		assert.Contains(t, strings.ToLower(m.Name+m.HFID), "llama-3.1")
		assert.NotEmpty(t, m.Source, "every model says where its figures come from")
		assert.Positive(t, m.Params)
	}
	none := runCLI(t, "models", "--filter", "no-such-family")
	assert.Equal(t, 0, none.code)
	assert.Equal(t, "No catalog model matches \"no-such-family\".\n", none.stdout)
	assert.Equal(t, "[]\n", runCLI(t, "models", "--filter", "no-such-family", "--json").stdout)
}

func TestFitOnDGX(t *testing.T) {
	r := runCLI(t, withFixture(t, "dgx-h100", "fit")...)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	assert.Equal(t, []string{"MODEL", "PARAMS", "FITS", "QUANT", "DEVICES", "STRATEGY", "CONTEXT", "TOKENS/S"}, strings.Fields(lines[0]))
	// 8 H100 hold a 70B model in bf16 on two of them, tensor parallel; no
	// measurement vouches for a vLLM tensor-parallel speed, so the table
	// shows none (the JSON keeps the figure and its validated_on).
	assert.Regexp(t, `(?m)^Llama-3\.1-70B +70\.6B +yes +bf16 +2 +tensor parallel +[0-9]+k +—$`, r.stdout)

	var rows []catalogq.FitRow
	require.NoError(t, json.Unmarshal([]byte(runCLI(t, withFixture(t, "dgx-h100", "fit", "--all", "--json")...).stdout), &rows))
	require.Len(t, rows, len(model.Catalog()))
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		assert.True(t, a.Fits.Yes() || !b.Fits.Yes(), "fitting models first")
		if a.Fits.Yes() == b.Fits.Yes() {
			assert.GreaterOrEqual(t, a.Params, b.Params, "then larger models first: %s before %s", a.Model, b.Model)
		}
	}
	for _, row := range rows {
		if row.Fits.Yes() {
			assert.Empty(t, row.Refusal, row.Model)
			assert.Positive(t, row.DecodeTokensPerS, row.Model)
			assert.NotEmpty(t, row.ValidatedOn, row.Model)
			assert.Positive(t, row.Devices, row.Model)
			if m := model.Lookup(row.Model); m != nil && m.MaxContext > 0 {
				assert.LessOrEqual(t, row.MaxContextLength, m.MaxContext, "context capped at the model's own")
			}
		}
	}
}

func TestFitOnASmallMachineAndARegistryFile(t *testing.T) {
	reg := runCLI(t, withFixture(t, "cpu-only")...)
	require.Equal(t, 0, reg.code)
	file := t.TempDir() + "/cpu-only.json"
	require.NoError(t, os.WriteFile(file, []byte(reg.stdout), 0o644))

	var fromFile, detected []catalogq.FitRow
	require.NoError(t, json.Unmarshal([]byte(runCLI(t, "fit", "--all", "--json", "--registry", file).stdout), &fromFile))
	require.NoError(t, json.Unmarshal([]byte(runCLI(t, withFixture(t, "cpu-only", "fit", "--all", "--json")...).stdout), &detected))
	assert.Equal(t, detected, fromFile, "a registry file plans like the machine it came from")
	fits, refused := 0, 0
	for _, r := range fromFile {
		if r.Fits.Yes() {
			fits++
			continue
		}
		// A model that does not fit says why, by code and in words.
		assert.Contains(t, plan.RefusalCodes, r.Refusal, r.Model)
		assert.NotEmpty(t, r.RefusalText, r.Model)
		refused++
	}
	assert.Positive(t, fits)
	assert.Positive(t, refused)
	all := runCLI(t, withFixture(t, "cpu-only", "fit", "--all")...)
	assert.Regexp(t, `(?m)^DeepSeek-V3 .* no +— +— +insufficient memory +— +— +int4 needs [0-9.]+ GiB on one device \(…\) and the one cpu \(intel\) device has [0-9.]+ GiB free$`, all.stdout)

	// Without --all only fitting models are listed; a larger context leaves
	// less room.
	small := runCLI(t, withFixture(t, "cpu-only", "fit", "--context", "128k")...)
	require.Equal(t, 0, small.code, small.stderr)
	assert.NotContains(t, small.stdout, " no ")
}

func writeFileString(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// A precision is accepted by name wherever the CLI takes one, GGUF types
// included (issue 12 item 5): models --quant keeps the models with a
// published checkpoint of that type, fit --quant plans every model at it.
func TestModelsAndFitAcceptGGUFNames(t *testing.T) {
	var list []catalogq.Model
	r := runCLI(t, "models", "--quant", "Q4_K_M", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	var names, repos []string
	for _, m := range list {
		names = append(names, m.Name)
		for _, c := range m.Checkpoints {
			repos = append(repos, c.Repo)
		}
	}
	assert.Subset(t, names, []string{"Llama-3.3-70B-Instruct", "Qwen3-8B", "Qwen3-32B"})
	assert.Subset(t, repos, []string{"bartowski/Llama-3.3-70B-Instruct-GGUF", "Qwen/Qwen3-8B-GGUF", "ggml-org/Qwen3-32B-GGUF"})

	r = runCLI(t, "models", "--quant", "mxfp4")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^gpt-oss-120b +117B +5\.1B +36 +128k +openai/gpt-oss-120b +mxfp4$`, r.stdout)

	var rows []catalogq.FitRow
	r = runCLI(t, withFixture(t, "dgx-h100", "fit", "--quant", "iq4_xs", "--filter", "Llama-3.3", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, "iq4_xs", rows[0].Quant)

	r = runCLI(t, withFixture(t, "dgx-h100", "fit", "--quant", "q4_k_m", "--engine", "llama.cpp", "--filter", "gpt-oss-20b", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, "q4_k_m", rows[0].Quant)

	for _, cmd := range [][]string{{"models", "--quant", "q9_z"}, {"fit", "--quant", "q9_z"}} {
		bad := runCLI(t, cmd...)
		assert.Equal(t, 2, bad.code, cmd)
		assert.Contains(t, bad.stderr, "unknown quantization", cmd)
	}
}

// On a fixture machine, llama.cpp loads Qwen3-32B's official GGUF
// repository at the planned type (-hf REPO:TYPE), and where that repository
// lacks the type the answer says what it publishes and how to make the
// file (issue 27 item 5).
func TestLlamaCPPCommandLoadsTheOfficialGGUF(t *testing.T) {
	r := runCLI(t, withFixture(t, "two-nvidia", "plan", "--model", "Qwen3-32B", "--engine", "llama.cpp", "--quant", "q8_0")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "llama-server -hf ggml-org/Qwen3-32B-GGUF:Q8_0 ")
	assert.NotContains(t, r.stdout, "MODEL-Q8_0.gguf")

	r = runCLI(t, withFixture(t, "two-nvidia", "plan", "--model", "Qwen3-32B", "--engine", "llama.cpp", "--quant", "iq4_xs")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "the catalog knows ggml-org/Qwen3-32B-GGUF at Q4_K_M, Q8_0, F16; Qwen/Qwen3-32B-GGUF at Q6_K, Q5_K_M, not IQ4_XS")
	assert.Contains(t, r.stdout, "llama-quantize Qwen3-32B-F16.gguf Qwen3-32B-IQ4_XS.gguf IQ4_XS (from a 16-bit GGUF; --imatrix IMATRIX.gguf")
}

// On the real H200 fixture, the default llama.cpp plans of Qwen3-235B-A22B
// (Q4_K_M) and Qwen3-Next-80B-A3B-Instruct (Q8_0) load Qwen's own GGUF
// repositories at the planned type, which the catalog lists with their
// sources, instead of a MODEL-TYPE.gguf placeholder (issue 27 item 5).
func TestLlamaCPPDefaultPlanLoadsNewlyListedGGUF(t *testing.T) {
	for _, c := range []struct{ model, hf, placeholder string }{
		{"Qwen3-235B-A22B", "llama-server -hf Qwen/Qwen3-235B-A22B-GGUF:Q4_K_M ", "MODEL-Q4_K_M.gguf"},
		{"Qwen3-Next-80B-A3B-Instruct", "llama-server -hf Qwen/Qwen3-Next-80B-A3B-Instruct-GGUF:Q8_0 ", "MODEL-Q8_0.gguf"},
	} {
		r := runCLI(t, withFixture(t, "h200-vm", "plan", "--model", c.model, "--engine", "llama.cpp")...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, c.hf, c.model)
		assert.NotContains(t, r.stdout, c.placeholder, c.model)
	}

	// A type the repository does not publish: the answer names the types
	// it does (the catalog's order) and how to make the planned one.
	r := runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "Qwen3-235B-A22B", "--engine", "llama.cpp", "--quant", "q3_k_m")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "the catalog knows Qwen/Qwen3-235B-A22B-GGUF at Q8_0, Q4_K_M; unsloth/Qwen3-235B-A22B-GGUF at Q6_K, Q5_K_M, IQ4_XS, Q2_K, BF16, not Q3_K_M")
	assert.Contains(t, r.stdout, "llama-quantize Qwen3-235B-A22B-F16.gguf Qwen3-235B-A22B-Q3_K_M.gguf Q3_K_M (from a 16-bit GGUF; --imatrix")
}

// --draft-model and --mmproj put a draft model and a projector in the plan
// (counted on the first GPU) and in llama.cpp's command (-md, --mmproj).
func TestPlanWithDraftModelAndProjector(t *testing.T) {
	mm := filepath.Join(t.TempDir(), "mmproj-F16.gguf")
	require.NoError(t, os.WriteFile(mm, make([]byte, 4096), 0o644))
	r := runCLI(t, withFixture(t, "two-nvidia", "plan", "--model", "Qwen3-8B", "--engine", "llama.cpp", "--quant", "q4_k_m",
		"--draft-model", "Qwen3-0.6B", "--mmproj", mm, "--no-mmproj-offload")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "llama-server -hf Qwen/Qwen3-8B-GGUF:Q4_K_M ")
	// The draft's Q4_K_M is published (unsloth/Qwen3-0.6B-GGUF): -hfd fetches it.
	assert.Contains(t, r.stdout, "-hfd unsloth/Qwen3-0.6B-GGUF:Q4_K_M -ngld 29 --mmproj "+mm+" --no-mmproj-offload")
	assert.NotContains(t, r.stdout, " -md ")

	// No Q5_0 of the draft is known: -md names the file to make, and a note says so.
	r = runCLI(t, withFixture(t, "two-nvidia", "plan", "--model", "Qwen3-14B", "--engine", "llama.cpp", "--quant", "q5_0",
		"--draft-model", "Qwen3-0.6B")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "llama-server -hf Qwen/Qwen3-14B-GGUF:Q5_0 ")
	assert.Contains(t, r.stdout, "-md Qwen3-0.6B-Q5_0.gguf -ngld 29")
	assert.Contains(t, r.stdout, "no published GGUF of the draft model at Q5_0 is known; -md Qwen3-0.6B-Q5_0.gguf stands for one")

	r = runCLI(t, withFixture(t, "two-nvidia", "plan", "--model", "Qwen3-8B", "--no-mmproj-offload")...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--no-mmproj-offload applies to --mmproj FILE")
}

// fit plans each model on the fewest devices that hold it, as plan
// --placement fewest does, and its help says so: on the DGX H100 a
// llama.cpp row of Llama-3.1-70B is one GPU at 27k, where plan's default
// spreads it over two for the trained context. Before, the help said
// "default: as plan without --context", which a user checked against plan
// and found two answers.
func TestFitSaysItPlansTheFewestDevices(t *testing.T) {
	r := runCLI(t, withFixture(t, "dgx-h100", "fit", "--filter", "Llama-3.1-70B", "--engine", "llama.cpp")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^Llama-3\.1-70B +70\.6B +yes +q8_0 +1 +one device +27k`, r.stdout)
	fewest, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-70B", "--engine", "llama.cpp", "--placement", "fewest", "--json")...)
	assert.Len(t, fewest["shards"], 1, "plan --placement fewest agrees with the row")

	help := runCLI(t, "fit", "--help")
	text := help.stdout + help.stderr
	assert.Contains(t, text, "the fewest devices that hold it (as plan --placement fewest)")
	assert.NotContains(t, text, "as plan without --context")
}

// TestFitSaysUnknownWhereNoMemoryIsKnown: on a registry whose only device
// has no known memory, plan says "cannot tell whether it fits"; fit --all
// said FITS "no" and --json "fits": false. Both now say unknown.
func TestFitSaysUnknownWhereNoMemoryIsKnown(t *testing.T) {
	file := t.TempDir() + "/nomem.json"
	require.NoError(t, os.WriteFile(file, []byte(`{"devices":[{"kind":"cuda_gpu","index":0,"available":true,"name":"X"}]}`), 0o644))
	plan := runCLI(t, "plan", "--model", "Llama-3.1-8B", "--registry", file)
	require.Equal(t, 0, plan.code, plan.stderr)
	assert.Contains(t, plan.stdout, "cannot tell whether it fits")

	table := runCLI(t, "fit", "--all", "--filter", "Llama-3.1-8B", "--registry", file)
	require.Equal(t, 0, table.code, table.stderr)
	lines := strings.Split(strings.TrimSpace(table.stdout), "\n")
	require.Len(t, lines, 4, table.stdout) // the header, the row, a blank line and elidedNote
	assert.Equal(t, elidedNote, lines[3])
	assert.Regexp(t, `^Llama-3\.1-8B\s+8B\s+unknown\s+—\s+—\s+no device\s`, lines[1])

	var rows []map[string]any
	out := runCLI(t, "fit", "--all", "--json", "--filter", "Llama-3.1-8B", "--registry", file)
	require.NoError(t, json.Unmarshal([]byte(out.stdout), &rows), out.stdout)
	require.Len(t, rows, 1)
	fits, ok := rows[0]["fits"]
	assert.True(t, ok, "fits is present")
	assert.Nil(t, fits, out.stdout)
}
