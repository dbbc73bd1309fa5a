package repocheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// foreignDocPaths are paths the pages name that are other projects' files,
// named without the project right before them, so the scanner cannot tell.
var foreignDocPaths = map[string]string{
	"tests/test-backend-ops.cpp": "llama.cpp's (docs/accuracy.md)",
	"include/llama.h":            "llama.cpp's public header (scripts/llamacpp-measure/README.md)",
	"docs/6.3.0":                 "a branch of https://github.com/ROCm/ROCm (docs/detection.md)",
	"docs/6.3.3":                 "a branch of https://github.com/ROCm/ROCm (docs/detection.md)",
}

// markdownLink matches the target of a Markdown link or image, "](target)".
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// docFiles are the pages a reader of the repository opens: README.md, every
// page of docs/ and schema/README.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	return append([]string{filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "schema", "README.md")}, pages...)
}

// docPaths returns the repository paths one Markdown page names: the
// targets of its relative links (resolved from the page's folder, anchors
// cut) and the repository paths its text names (by the scanner of Go
// comments, so other projects' paths are skipped the same way), each as
// "line: path".
func docPaths(t *testing.T, page string) (links, named []string) {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	dir, err := filepath.Abs(filepath.Dir(page))
	require.NoError(t, err)
	rel, err := filepath.Rel(root, dir)
	require.NoError(t, err)
	for i, line := range strings.Split(string(b), "\n") {
		at := func(p string) string { return strconv.Itoa(i+1) + ": " + p }
		for _, m := range markdownLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			links = append(links, at(filepath.ToSlash(filepath.Join(rel, target))))
		}
		for _, m := range repoPath.FindAllStringSubmatchIndex(line, -1) {
			if afterForeignName(repoRoot, line, m[2]) {
				continue
			}
			// A command's "../../testdata/..." is run from a folder the
			// page names (examples/rust); from the root it is "testdata/...".
			p := cleanPath(line[m[2]:m[3]])
			for strings.HasPrefix(p, "../") {
				p = p[len("../"):]
			}
			if _, foreign := foreignDocPaths[p]; !foreign && strings.Contains(p, "/") && ours(p) {
				named = append(named, at(p))
			}
		}
	}
	return links, named
}

// Every relative link of README.md, docs/*.md and schema/README.md leads to a
// file or folder of the repository, and every repository path their text
// names exists: a reader who follows the documentation finds what it names.
// Offline: nothing outside the repository is checked.
func TestDocPathsExist(t *testing.T) {
	var missing []string
	nLinks, nNamed := 0, 0
	for _, page := range docFiles(t) {
		links, named := docPaths(t, page)
		nLinks += len(links)
		nNamed += len(named)
		name, _ := filepath.Rel(repoRoot, page)
		for _, l := range links {
			_, p, _ := strings.Cut(l, ": ")
			if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
				missing = append(missing, name+":"+l+" (link)")
			}
		}
		for _, n := range named {
			_, p, _ := strings.Cut(n, ": ")
			if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
				missing = append(missing, name+":"+n)
			}
		}
	}
	assert.Greater(t, nLinks, 20, "the pages link to repository files")
	assert.Greater(t, nNamed, 100, "the pages name repository paths")
	assert.Empty(t, missing, "links and repository paths in the documentation that do not exist")
}

// The page scanner on a sample: a link, an anchor, a URL, a named path, a
// pattern, and another project's path.
func TestDocPathsScanner(t *testing.T) {
	page := filepath.Join(t.TempDir(), "x.md")
	src := "See [the ABI](abi.md#guarantees), [top](#x), [go](https://go.dev/dl/) and\n" +
		"`internal/plan/throughput.go`, testdata/machines/{a,b}; https://github.com/ROCm/ROCm docs/reference/x.rst.\n"
	require.NoError(t, os.WriteFile(page, []byte(src), 0o600))
	links, named := docPaths(t, page)
	require.Len(t, links, 1)
	_, target, _ := strings.Cut(links[0], ": ")
	assert.True(t, strings.HasSuffix(target, "abi.md"), target)
	assert.Equal(t, []string{"2: internal/plan/throughput.go", "2: testdata/machines"}, named)
}
