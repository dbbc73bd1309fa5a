package repocheck

import (
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boldTitle matches a paragraph title at the start of a line or of a list
// item, the pages' sections below their headings: a bold run-in title
// ending in a full stop or a colon, "**Prefill by architecture (today's
// build).**", "- **The profile run's encoder pass.**", "**Split, by GPU,
// before replaying:**", or a bold name with what it adds in parentheses
// after it, "**The vision projector** (issue 25)", "**Fourth pass**
// (branch ...)". A bold phrase that starts a sentence ("**held-out** rows,
// which ...") is not a title.
var boldTitle = regexp.MustCompile(`^(?:[-*+] |\d+\. )?\*\*(?:([^*]+?)[.:]\*\*|([^*]+)\*\* \()`)

// headingPrefix matches the hashes of a Markdown heading.
var headingPrefix = regexp.MustCompile(`^#+\s+`)

// sectionsOf returns the section titles of a Markdown page: its headings
// and its bold paragraph titles, outside fenced code blocks (where "# ..."
// is a shell comment).
func sectionsOf(t *testing.T, page string) []string {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	var titles []string
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		} else if fenced {
			continue
		} else if loc := headingPrefix.FindStringIndex(line); loc != nil {
			titles = append(titles, strings.TrimSpace(line[loc[1]:]))
		} else if m := boldTitle.FindStringSubmatch(line); m != nil {
			titles = append(titles, m[1]+m[2])
		}
	}
	return titles
}

// namesSection reports whether a reference names one of titles: the title
// itself, or the title without what it adds in parentheses or after a
// comma or a colon ("Prefill by architecture" for "Prefill by
// architecture (today's build)", "vLLM's start-up accounting" for "vLLM's
// start-up accounting, as vLLM states it", "Fifth pass" for "Fifth pass:
// the caller's hand-offs"). Code marks (backticks) do not count.
func namesSection(ref string, titles []string) bool {
	ref = strings.ReplaceAll(ref, "`", "")
	for _, title := range titles {
		title = strings.ReplaceAll(title, "`", "")
		if title == ref || strings.HasPrefix(title, ref+" (") ||
			strings.HasPrefix(title, ref+", ") || strings.HasPrefix(title, ref+": ") {
			return true
		}
	}
	return false
}

// Every section of docs/ that an answer's words send a reader to (a Go
// string of the code, not of its tests, naming `docs/accuracy.md,
// "Section"`) is a heading or a bold paragraph title of that page:
// "held-out H200 records" was a phrase in a paragraph, not a section a
// reader could find. The citations are read as TestCitedSectionsExist reads
// them (sectionCites), which checks comments and pages too.
func TestAnswerSectionReferencesExist(t *testing.T) {
	ix := repoIndexOnce(t)
	var missing []string
	n := 0
	for _, p := range ix.passages {
		if p.kind != inString || strings.HasSuffix(p.file, "_test.go") {
			continue
		}
		for _, c := range ix.sectionCites(p) {
			n++
			if !namesSection(c.section, ix.titlesOf(t, c.page)) {
				missing = append(missing, c.at+": "+c.page+" has no section \""+c.section+"\"")
			}
		}
	}
	assert.Greater(t, n, 5, "answers name sections of the docs")
	assert.Empty(t, missing, "sections named in answers that the pages do not have")
}

// The section scanner on a sample: a heading, bold titles (with a
// parenthesis, in a list item, before a parenthesis, ending in a colon), a
// bold phrase inside a paragraph or starting one (no section), a shell
// comment in a code block (no section), and string literals that name them.
func TestSectionReferenceScanner(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "x.md")
	require.NoError(t, os.WriteFile(page, []byte("# Top\n\n## Weights\n\n**Prefill by architecture (today's build).** Rows.\n"+
		"The **held-out records** are here.\n\n- **vLLM's start-up accounting, as vLLM states it.** Item.\n\n"+
		"**Fourth pass** (branch x), text.\n\n**Split, by GPU:** rows.\n\n**held-out** rows.\n\n"+
		"### Fifth pass: the caller's hand-offs (2026-11-28)\n\n```\n# a shell comment\n```\n"), 0o600))
	titles := sectionsOf(t, page)
	assert.Equal(t, []string{"Top", "Weights", "Prefill by architecture (today's build)", "vLLM's start-up accounting, as vLLM states it",
		"Fourth pass", "Split, by GPU", "Fifth pass: the caller's hand-offs (2026-11-28)"}, titles)
	assert.True(t, namesSection("Weights", titles))
	assert.True(t, namesSection("Prefill by architecture", titles))
	assert.True(t, namesSection("vLLM's start-up accounting", titles))
	assert.True(t, namesSection("Fifth pass", titles))
	assert.True(t, namesSection("`Fourth pass`", titles))
	assert.False(t, namesSection("Prefill", titles))
	assert.False(t, namesSection("vLLM's start-up", titles))
	assert.False(t, namesSection("held-out records", titles))
	assert.False(t, namesSection("held-out", titles))
	assert.False(t, namesSection("a shell comment", titles))

	require.NoError(t, os.Mkdir(filepath.Join(dir, "docs"), 0o755))
	require.NoError(t, os.Rename(page, filepath.Join(dir, "docs", "accuracy.md")))
	src := "package x\n\nvar A = \"rows (docs/accuracy.md, \\\"Weights\\\")\"\n" +
		"var B = `docs/accuracy.md (\"Top\" and more)`\n// docs/accuracy.md, \"Comment\"\nvar C = 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o600))
	facts, err := readGoFile(token.NewFileSet(), dir, "x.go")
	require.NoError(t, err)
	ix := &repoIndex{root: dir}
	var refs []sectionCite
	for _, p := range facts.passages {
		if p.kind == inString {
			refs = append(refs, ix.sectionCites(p)...)
		}
	}
	assert.Equal(t, []sectionCite{{"x.go:3", "docs/accuracy.md", "Weights"}, {"x.go:4", "docs/accuracy.md", "Top"}}, refs)
}
