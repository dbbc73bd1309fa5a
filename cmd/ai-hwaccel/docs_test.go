package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
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

// usageBlock is the ```text block of docs/cli.md that lists the command
// lines, one "ai-hwaccel ..." line each.
func usageBlock(t *testing.T, doc string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "```text\nai-hwaccel ")
	require.True(t, ok, "docs/cli.md lacks its usage block")
	block, _, ok := strings.Cut("ai-hwaccel "+rest, "```")
	require.True(t, ok)
	return strings.Split(strings.TrimSpace(block), "\n")
}

// TestDocsUsageMatchesHelp: the root lines of the usage block are the
// lines --help prints, and every flag a command's line names is a flag that
// command's --help lists (issue 24 item 5: the docs had drifted from the
// code: --watch said nothing of utilisation, plan lacked
// --tensor-parallel-size and --memory-fraction).
func TestDocsUsageMatchesHelp(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	require.NoError(t, err)
	help := runCLI(t, "--help")
	require.Equal(t, 0, help.code, help.stderr)
	helpFor := map[string]string{}
	flagWord := regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	for _, line := range usageBlock(t, string(doc)) {
		fields := strings.Fields(line)
		require.GreaterOrEqual(t, len(fields), 2, line)
		cmd := fields[1]
		if strings.HasPrefix(cmd, "-") || strings.HasPrefix(cmd, "[") {
			assert.Contains(t, help.stdout, "  "+line+"\n", "a root line of the usage block is what --help prints")
			continue
		}
		if _, ok := helpFor[cmd]; !ok {
			r := runCLI(t, cmd, "--help")
			helpFor[cmd] = r.stdout + r.stderr
		}
		for _, f := range flagWord.FindAllString(line, -1) {
			if f == "--version" || f == "--help" {
				continue
			}
			assert.Contains(t, helpFor[cmd], f, "docs/cli.md names %s for %s; its --help does not", f, cmd)
		}
	}
}

// TestDocsCommandsRun: every "$ ai-hwaccel ..." line of docs/cli.md outside
// the generated examples runs and exits 0 (on the dgx-h100 fixture when the
// line names no machine of its own), and every flag it names is one the
// command knows.
func TestDocsCommandsRun(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "cli.md"))
	require.NoError(t, err)
	head, rest, _ := strings.Cut(string(doc), docsBegin)
	_, tail, _ := strings.Cut(rest, docsEnd)
	t.Chdir(root)
	ran := 0
	for _, line := range strings.Split(head+tail, "\n") {
		cmdline, ok := strings.CutPrefix(line, "$ ai-hwaccel ")
		if !ok {
			continue
		}
		cmdline, _, _ = strings.Cut(cmdline, "#")
		args := strings.Fields(cmdline)
		if !contains(args, "--sysroot") && !contains(args, "--registry") {
			args = append(args, "--sysroot", "testdata/machines/dgx-h100/root", "--path", "testdata/machines/dgx-h100/bin")
		}
		r := runCLI(t, args...)
		assert.Equal(t, 0, r.code, "docs/cli.md: %s: %s", line, r.stderr)
		ran++
	}
	assert.Positive(t, ran, "docs/cli.md shows commands")
}
