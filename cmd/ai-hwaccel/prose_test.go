package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proseFigure is a figure the prose of a doc quotes from one command's
// answer on a fixture machine, outside any generated block: the quote must
// be in the doc and in the command's output (text, or --json where args
// ask for it), both read with runs of white space as one space, since the
// doc wraps its lines.
type proseFigure struct {
	doc     string   // path from the repository root
	fixture string   // testdata/machines/<fixture>
	args    []string // the command, without the fixture's flags
	quote   string
}

// proseFigures are the figures hand-written sentences quote (docs audit of
// session 12: before it, docs/cli.md quoted a 57671-token room and a
// 942 tokens/s batch rate that the answers no longer gave).
var proseFigures = []proseFigure{
	{"docs/cli.md", "macbook-m3-pro", []string{"plan", "--model", "Llama-3.1-8B"},
		"Room: context up to 115102 tokens (the command's -c 114944 is that rounded down to a multiple of 256, as llama.cpp's --fit rounds); up to 1 sequence at once"},
	{"docs/cli.md", "macbook-m3-pro", []string{"plan", "--model", "Llama-3.1-8B", "--batch", "4"},
		"the command's -c 114688 gives each of its 4 sequences 28672: that rounded down"},
	{"docs/cli.md", "h200-vm", []string{"plan", "--model", "qwen3:30b-a3b", "--batch", "64", "--context", "32k"},
		"decode 650 tokens/s over 22 sequences (29.5 per sequence)"},
	{"docs/cli.md", "slimbook-hero-rtx4060-igpu", []string{"suggest", "--model", "DeepSeek-V3"},
		"int4 needs 327.2 GiB on one device"},
	{"docs/cli.md", "slimbook-hero-rtx4060-igpu", []string{"suggest", "--model", "DeepSeek-V3"},
		"int4 327.2 GiB no"},
}

// oneSpace is s with every run of white space read as one space.
func oneSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestDocsProseFigures: every figure of proseFigures is what its command
// answers today and what its doc says, so a change of the answer fails
// here until the sentence is rewritten.
func TestDocsProseFigures(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	docs := map[string]string{}
	for _, f := range proseFigures {
		if _, ok := docs[f.doc]; !ok {
			b, err := os.ReadFile(filepath.Join(root, f.doc))
			require.NoError(t, err)
			docs[f.doc] = oneSpace(string(b))
		}
		assert.True(t, strings.Contains(docs[f.doc], f.quote), "%s no longer quotes %q", f.doc, f.quote)
		r := runCLI(t, withFixture(t, f.fixture, f.args...)...)
		require.Equal(t, 0, r.code, "%s %v: %s", f.fixture, f.args, r.stderr)
		assert.True(t, strings.Contains(oneSpace(r.stdout), f.quote), "%s %v no longer answers %q: rewrite the sentence of %s", f.fixture, f.args, f.quote, f.doc)
	}
}
