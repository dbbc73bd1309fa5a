package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated blocks of the docs (generatedDocs)")

// docExamples are the commands docs/cli.md shows with their real output,
// each run on the dgx-h100 fixture machine.
var docExamples = [][]string{
	{"--table"},
	{"--watch", "2", "--watch-count", "1"}, // one refresh: the table with utilisation, power, temperature
	{"plan", "--model", "Llama-3.3-70B"},
	{"plan", "--model", "Llama-3.1-405B", "--quant", "bf16", "--devices", "cuda:0-3"},
	{"plan", "--model", "Llama-3.1-8B", "--quant", "q4_k_m", "--context", "128k", "--engine", "llama.cpp"},
	{"plan", "--model", "Llama-3.3-70B-Instruct", "--engine", "llama.cpp", "--quant", "q8_0"}, // no context: the GPUs llama.cpp's --fit would keep the model's context on
	{"suggest", "--model", "Qwen2.5-72B", "--context", "32k"},
	{"train", "--model", "Llama-3.1-8B", "--method", "qlora", "--gradient-checkpointing"},
	{"fit", "--filter", "llama"},
	{"models", "--filter", "qwen2.5"}, // no detection flags: the catalog is the same everywhere
	{"nfd"},
}

// docBlock is one generated block of a documentation file: the real output
// of its commands, between the markers blockBegin(name) and blockEnd(name).
type docBlock struct {
	name     string
	commands [][]string
}

// generatedDocs are the documentation files that show the command's real
// output, from the repository root, each with its generated blocks.
var generatedDocs = []struct {
	path   string
	blocks []docBlock
}{
	{"docs/cli.md", []docBlock{{"EXAMPLES", docExamples}}},
	{"docs/rent.md", []docBlock{
		{"RENT LLAMA-3.1-8B", [][]string{{"rent", "--model", "Llama-3.1-8B", "--max-nodes", "4"}}},
		{"RENT LLAMA-3.1-70B", [][]string{{"rent", "--model", "Llama-3.1-70B", "--max-nodes", "4"}}},
		{"RENT DEEPSEEK-V3", [][]string{{"rent", "--model", "DeepSeek-V3", "--quant", "fp8", "--max-nodes", "4"}}},
	}},
	{"docs/kubernetes.md", []docBlock{{"NFD", [][]string{{"nfd"}}}}},
}

// readsNoMachine are the commands whose answer does not depend on the
// machine: they run without the fixture's detection flags. models reads
// the model catalog; rent plans on the rental catalog's machine types
// (without --here).
var readsNoMachine = map[string]bool{"models": true, "rent": true}

// docsNow is the clock of the generated blocks: the day the rental
// catalog's prices were read (internal/rent/catalog.json, docs/rent.md), so
// rent's stale-price warnings are those of that day, whatever day the test
// runs; the time of day is testApp's, which --watch's example prints.
var docsNow = time.Date(2026, 11, 28, 3, 4, 5, 0, time.UTC)

// blockBegin and blockEnd are the markers around a generated block.
func blockBegin(name string) string {
	return "<!-- BEGIN GENERATED " + name + " (cmd/ai-hwaccel/docs_test.go) -->\n"
}

func blockEnd(name string) string { return "<!-- END GENERATED " + name + " -->\n" }

// consoleBlocks runs each command at docsNow, on the dgx-h100 fixture
// machine unless it reads none, and writes it as a console block: the
// command line as typed, then its output.
func consoleBlocks(t *testing.T, commands [][]string) string {
	t.Helper()
	fixture := []string{"--sysroot", "testdata/machines/dgx-h100/root", "--path", "testdata/machines/dgx-h100/bin"}
	var b strings.Builder
	for _, args := range commands {
		full := append([]string{}, args...)
		if !readsNoMachine[args[0]] {
			full = append(full, fixture...)
		}
		r := runCLIAt(t, docsNow, full...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		b.WriteString("```console\n$ ai-hwaccel " + strings.Join(args, " ") + "\n" + r.stdout + "```\n\n")
	}
	return b.String()
}

// cutBlock splits doc around the generated block name: the text before its
// begin marker, the block's body and the text after its end marker. Each
// marker must appear once, the end after the begin.
func cutBlock(doc, name string) (head, body, tail string, err error) {
	begin, end := blockBegin(name), blockEnd(name)
	if n, m := strings.Count(doc, begin), strings.Count(doc, end); n != 1 || m != 1 {
		return "", "", "", fmt.Errorf("want each marker of block %q once, found %d %q and %d %q", name, n, begin, m, end)
	}
	head, rest, _ := strings.Cut(doc, begin)
	body, tail, ok := strings.Cut(rest, end)
	if !ok {
		return "", "", "", fmt.Errorf("block %q ends before it begins", name)
	}
	return head, body, tail, nil
}

// replaceBlock is doc with the body of the generated block name replaced.
func replaceBlock(doc, name, body string) (string, error) {
	head, _, tail, err := cutBlock(doc, name)
	if err != nil {
		return "", err
	}
	return head + blockBegin(name) + body + blockEnd(name) + tail, nil
}

// outsideBlocks is doc without the generated blocks' contents.
func outsideBlocks(doc string, blocks []docBlock) (string, error) {
	var err error
	for _, b := range blocks {
		if doc, err = replaceBlock(doc, b.name, ""); err != nil {
			return "", err
		}
	}
	return doc, nil
}

// TestDocsExamples keeps every generated block of generatedDocs equal to
// what its commands print, so the documentation cannot go stale.
func TestDocsExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	t.Chdir(root) // relative fixture paths: the output holds no checkout path
	for _, d := range generatedDocs {
		t.Run(d.path, func(t *testing.T) {
			b, err := os.ReadFile(d.path)
			require.NoError(t, err)
			doc := string(b)
			want := doc
			for _, blk := range d.blocks {
				_, body, _, err := cutBlock(doc, blk.name)
				require.NoError(t, err, d.path)
				generated := consoleBlocks(t, blk.commands)
				if *updateDocs {
					want, err = replaceBlock(want, blk.name, generated)
					require.NoError(t, err, d.path)
					continue
				}
				assert.Equal(t, generated, body, "%s, block %s is stale: go test ./cmd/ai-hwaccel -run TestDocsExamples -update-docs", d.path, blk.name)
			}
			if *updateDocs {
				require.NoError(t, os.WriteFile(d.path, []byte(want), 0o644))
			}
		})
	}
}

// TestDocsGeneratedMarkersKnown: every generated-block marker in the docs
// and the README belongs to a block of generatedDocs, so no block is left
// unchecked (one copied to another file, or renamed by hand).
func TestDocsGeneratedMarkersKnown(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append(files, filepath.Join(root, "README.md"))
	known := map[string]int{}
	for _, d := range generatedDocs {
		known[d.path] = len(d.blocks)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		for _, marker := range []string{"<!-- BEGIN GENERATED ", "<!-- END GENERATED "} {
			assert.Equal(t, known[filepath.ToSlash(rel)], strings.Count(string(b), marker), "%s: %q markers", rel, marker)
		}
	}
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

// TestDocsCommandsRun: every "$ ai-hwaccel ..." line of the docs of
// generatedDocs outside their generated blocks runs and exits 0 (on the
// dgx-h100 fixture when the line names no machine of its own), and every
// flag it names is one the command knows.
func TestDocsCommandsRun(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	t.Chdir(root)
	ran := 0
	for _, d := range generatedDocs {
		doc, err := os.ReadFile(d.path)
		require.NoError(t, err)
		text, err := outsideBlocks(string(doc), d.blocks)
		require.NoError(t, err)
		for _, line := range strings.Split(text, "\n") {
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
			assert.Equal(t, 0, r.code, "%s: %s: %s", d.path, line, r.stderr)
			ran++
		}
	}
	assert.Positive(t, ran, "the docs show commands")
}

// TestDocsNFDExcerpts: the two-column excerpts of docs/kubernetes.md (a
// layout no generated block gives) hold only labels that each fixture's
// `ai-hwaccel nfd` prints. A column's machine is named by its "# <fixture>"
// heading; the left column is each line's first field, the right its second.
func TestDocsNFDExcerpts(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "kubernetes.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "Excerpts from other fixture machines")
	require.True(t, ok, "docs/kubernetes.md lacks its excerpts")
	_, rest, _ = strings.Cut(rest, "```text\n")
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	t.Chdir(root)
	labels := map[string]string{} // fixture -> its nfd output
	var columns [2]string
	checked := 0
	for _, line := range strings.Split(block, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "#" {
			columns = [2]string{f[1], ""}
			for i := 2; i+1 < len(f); i++ {
				if f[i] == "#" {
					columns[1] = f[i+1]
					break
				}
			}
			continue
		}
		require.LessOrEqual(t, len(f), 2, line)
		for i, label := range f {
			m := columns[i]
			require.NotEmpty(t, m, "a label before its fixture's heading: %s", line)
			if _, ok := labels[m]; !ok {
				r := runCLI(t, "nfd", "--sysroot", "testdata/machines/"+m+"/root", "--path", "testdata/machines/"+m+"/bin")
				require.Equal(t, 0, r.code, "%s: %s", m, r.stderr)
				labels[m] = r.stdout
			}
			assert.Contains(t, strings.Split(labels[m], "\n"), label, "docs/kubernetes.md excerpt of %s", m)
			checked++
		}
	}
	assert.Equal(t, 4, len(labels), "four fixtures excerpted")
	assert.Positive(t, checked)
}
