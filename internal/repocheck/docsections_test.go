package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sectionRef matches, in the text of a Go string (an answer's words), a
// page of docs/ followed by the section a reader is sent to, in quotes:
// `docs/accuracy.md, "Prefill on Apple GPUs"` or `docs/accuracy.md ("Weights"`.
var sectionRef = regexp.MustCompile(`docs/([A-Za-z0-9_-]+\.md)(?:,\s*|\s+|\s*\(\s*)"([^"]+)"`)

// boldTitle matches a paragraph title, "**Prefill by architecture (today's
// build).**" at the start of a line: the pages' sections below their
// headings.
var boldTitle = regexp.MustCompile(`^\*\*([^*]+)\.\*\*`)

// headingPrefix matches the hashes of a Markdown heading.
var headingPrefix = regexp.MustCompile(`^#+\s+`)

// sectionsOf returns the section titles of a Markdown page: its headings
// and its bold paragraph titles.
func sectionsOf(t *testing.T, page string) []string {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	var titles []string
	for _, line := range strings.Split(string(b), "\n") {
		if loc := headingPrefix.FindStringIndex(line); loc != nil {
			titles = append(titles, strings.TrimSpace(line[loc[1]:]))
		} else if m := boldTitle.FindStringSubmatch(line); m != nil {
			titles = append(titles, m[1])
		}
	}
	return titles
}

// namesSection reports whether a reference names one of titles: the title
// itself, or the title without what it adds in parentheses after the name
// ("Prefill by architecture" for "Prefill by architecture (today's
// build)").
func namesSection(ref string, titles []string) bool {
	for _, title := range titles {
		if title == ref || strings.HasPrefix(title, ref+" (") {
			return true
		}
	}
	return false
}

// stringSectionRefs returns, per Go file, the page sections its string
// literals send a reader to, each as "file:line: page \"section\"".
func stringSectionRefs(t *testing.T, fset *token.FileSet, file string) [][3]string {
	t.Helper()
	f, err := parser.ParseFile(fset, file, nil, 0)
	require.NoError(t, err, file)
	var refs [][3]string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		for _, m := range sectionRef.FindAllStringSubmatch(s, -1) {
			refs = append(refs, [3]string{fset.Position(lit.Pos()).String(), m[1], m[2]})
		}
		return true
	})
	return refs
}

// Every section of docs/ that an answer's words send a reader to (a Go
// string naming `docs/accuracy.md, "Section"`) is a heading or a bold
// paragraph title of that page: "held-out H200 records" was a phrase in a
// paragraph, not a section a reader could find.
func TestAnswerSectionReferencesExist(t *testing.T) {
	fset := token.NewFileSet()
	titles := map[string][]string{}
	var missing []string
	n := 0
	for _, file := range goFiles(t) {
		for _, r := range stringSectionRefs(t, fset, file) {
			page := filepath.Join(repoRoot, "docs", r[1])
			if _, err := os.Stat(page); err != nil {
				missing = append(missing, r[0]+": docs/"+r[1]+" does not exist")
				continue
			}
			if titles[page] == nil {
				titles[page] = sectionsOf(t, page)
			}
			n++
			if !namesSection(r[2], titles[page]) {
				missing = append(missing, r[0]+": docs/"+r[1]+" has no section \""+r[2]+"\"")
			}
		}
	}
	assert.Greater(t, n, 5, "answers name sections of the docs")
	assert.Empty(t, missing, "sections named in answers that the pages do not have")
}

// The section scanner on a sample: a heading, a bold title with its
// parenthesis, a bold phrase inside a paragraph (no section), and string
// literals that name them.
func TestSectionReferenceScanner(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "x.md")
	require.NoError(t, os.WriteFile(page, []byte("# Top\n\n## Weights\n\n**Prefill by architecture (today's build).** Rows.\n"+
		"The **held-out records** are here.\n"), 0o600))
	titles := sectionsOf(t, page)
	assert.Equal(t, []string{"Top", "Weights", "Prefill by architecture (today's build)"}, titles)
	assert.True(t, namesSection("Weights", titles))
	assert.True(t, namesSection("Prefill by architecture", titles))
	assert.False(t, namesSection("Prefill", titles))
	assert.False(t, namesSection("held-out records", titles))

	file := filepath.Join(dir, "x.go")
	src := "package x\n\nvar A = \"rows (docs/accuracy.md, \\\"Weights\\\")\"\n" +
		"var B = `docs/accuracy.md (\"Top\" and more)`\n// docs/accuracy.md, \"Comment\"\nvar C = 1\n"
	require.NoError(t, os.WriteFile(file, []byte(src), 0o600))
	refs := stringSectionRefs(t, token.NewFileSet(), file)
	require.Len(t, refs, 2)
	assert.Equal(t, [2]string{"accuracy.md", "Weights"}, [2]string{refs[0][1], refs[0][2]})
	assert.Equal(t, [2]string{"accuracy.md", "Top"}, [2]string{refs[1][1], refs[1][2]})
}
