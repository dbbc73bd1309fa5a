package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated examples of docs/cli.md")

// docExamples are the commands docs/cli.md shows with their real output,
// each run on the dgx-h100 fixture machine.
var docExamples = [][]string{
	{"--table"},
	{"--watch", "2", "--watch-count", "1"}, // one refresh: the table with utilisation, power, temperature
	{"plan", "--model", "Llama-3.3-70B"},
	{"plan", "--model", "Llama-3.1-405B", "--quant", "bf16", "--devices", "cuda:0-3"},
	{"plan", "--model", "Llama-3.1-8B", "--quant", "q4_k_m", "--context", "128k", "--engine", "llama.cpp"},
	{"suggest", "--model", "Qwen2.5-72B", "--context", "32k"},
	{"train", "--model", "Llama-3.1-8B", "--method", "qlora", "--gradient-checkpointing"},
	{"fit", "--filter", "llama"},
	{"models", "--filter", "qwen2.5"}, // no detection flags: the catalog is the same everywhere
	{"nfd"},
}

const (
	docsBegin = "<!-- BEGIN GENERATED EXAMPLES (cmd/ai-hwaccel/docs_test.go) -->\n"
	docsEnd   = "<!-- END GENERATED EXAMPLES -->\n"
)

// TestDocsExamples keeps the examples of docs/cli.md equal to what the
// command prints, so the documentation cannot go stale.
func TestDocsExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	t.Chdir(root) // relative fixture paths: the output holds no checkout path
	fixture := []string{"--sysroot", "testdata/machines/dgx-h100/root", "--path", "testdata/machines/dgx-h100/bin"}
	var b strings.Builder
	for _, args := range docExamples {
		full := append([]string{}, args...)
		if args[0] != "models" { // the catalog does not depend on the machine
			full = append(full, fixture...)
		}
		r := runCLI(t, full...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		b.WriteString("```console\n$ ai-hwaccel " + strings.Join(args, " ") + "\n" + r.stdout + "```\n\n")
	}
	generated := b.String()

	path := filepath.Join(root, "docs", "cli.md")
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	head, rest, ok := strings.Cut(string(doc), docsBegin)
	require.True(t, ok, "docs/cli.md lacks %q", docsBegin)
	_, tail, ok := strings.Cut(rest, docsEnd)
	require.True(t, ok, "docs/cli.md lacks %q", docsEnd)
	want := head + docsBegin + generated + docsEnd + tail
	if *updateDocs {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	assert.Equal(t, want, string(doc), "docs/cli.md examples are stale: go test ./cmd/ai-hwaccel -run TestDocsExamples -update-docs")
}
