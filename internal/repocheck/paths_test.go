package repocheck

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoPath matches a path-like token that starts at one of the repository's
// top-level folders ("internal/plan/engine.go", "docs/abi.md",
// "testdata/machines/dgx-h100").
var repoPath = regexp.MustCompile(`(?:^|[\s(\x60"'\[])((?:\.\./)*(?:internal|cmd|capi|docs|testdata|tests|scripts|schema|include|python|examples|bench|packaging)/[A-Za-z0-9_.{}<>*,/-]*)`)

// foreignRepo matches the words before a path that names another project's
// file ("https://github.com/ROCm/ROCm docs/...", "utkuozdemir/nvidia_gpu_exporter
// internal/captures", "ggml docs/gguf.md", "Linux include/uapi/...",
// "ROCm/k8s-device-plugin `testdata/...`"): such a path is that project's,
// not ours.
var foreignRepo = regexp.MustCompile("(?:https?://\\S+|[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+|\\b(?:ggml|ROCm|Linux|llama\\.cpp|vLLM))[\\s(`]+$")

// ours reports whether a path of three or more components is this
// repository's: its first two components exist here. "include/uapi/linux/
// wait.h" (Linux) and "docs/serving/x.md" (vLLM) name folders we do not
// have, so they are other projects' files cited without their name.
func ours(p string) bool {
	parts := strings.Split(p, "/")
	if len(parts) < 3 {
		return true
	}
	_, err := os.Stat(filepath.Join(repoRoot, parts[0], parts[1]))
	return err == nil
}

// sharedCitation matches a citation of the notes beside the repository,
// which a reader of the repository cannot open.
var sharedCitation = regexp.MustCompile(`\.\./shared/|\bformats\.md\b|\bcabi-notes\b|\bdevices\.json\b|\breference-study\b`)

// cleanPath cuts a path token at its first pattern character ({, <, *) and
// trims the punctuation a sentence puts after it.
func cleanPath(tok string) string {
	if i := strings.IndexAny(tok, "{<*"); i >= 0 {
		tok = tok[:i]
	}
	return strings.TrimRight(tok, ".,;:)'\"`/")
}

// commentPaths returns the repository paths named in the comments of one Go
// file, and the citations of notes outside the repository.
func commentPaths(t *testing.T, fset *token.FileSet, file string) (paths, shared []string) {
	t.Helper()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	require.NoError(t, err, file)
	for _, group := range f.Comments {
		for _, c := range group.List {
			text := c.Text
			if sharedCitation.MatchString(text) {
				shared = append(shared, fset.Position(c.Pos()).String()+": "+strings.TrimSpace(text))
			}
			for _, m := range repoPath.FindAllStringSubmatchIndex(text, -1) {
				if afterForeignName(repoRoot, text, m[2]) {
					continue
				}
				if p := cleanPath(text[m[2]:m[3]]); strings.Contains(p, "/") && ours(p) {
					paths = append(paths, p)
				}
			}
		}
	}
	return paths, shared
}

// exists reports whether a path named in a comment of file exists, from the
// repository root or from the file's own folder (a package's testdata).
func exists(file, p string) bool {
	for _, base := range []string{repoRoot, filepath.Dir(file)} {
		if _, err := os.Stat(filepath.Join(base, p)); err == nil {
			return true
		}
	}
	return false
}

// Every repository path a Go comment names exists, and no comment cites the
// notes beside the repository (../shared/formats.md, cabi-notes.md,
// devices.json, reference-study.md), which a reader cannot open: comments
// cite public URLs or files of the repository instead.
func TestCommentPathsExist(t *testing.T) {
	fset := token.NewFileSet()
	var missing, shared []string
	n := 0
	for _, file := range append(goFiles(t), goTestFiles(t)...) {
		if filepath.Base(filepath.Dir(file)) == "repocheck" {
			continue // this package's comments describe the patterns
		}
		paths, cites := commentPaths(t, fset, file)
		n += len(paths)
		for _, p := range paths {
			if !exists(file, p) {
				missing = append(missing, file+": "+p)
			}
		}
		shared = append(shared, cites...)
	}
	assert.Greater(t, n, 50, "comments name repository paths")
	assert.Empty(t, missing, "repository paths named in comments that do not exist")
	assert.Empty(t, shared, "comments citing notes that are not in the repository")
}

// The path scanner on a sample: a repository path, a pattern, a path of
// another repository and a citation of the shared notes.
func TestCommentPathsScanner(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.go")
	src := "package x\n\n// See internal/plan/throughput.go, testdata/machines/{a,b} and\n" +
		"// https://github.com/ROCm/ROCm docs/reference/x.rst, Linux include/uapi/linux/wait.h;\n" +
		"// ../shared/formats.md.\nvar X = 1\n"
	require.NoError(t, os.WriteFile(file, []byte(src), 0o600))
	paths, shared := commentPaths(t, token.NewFileSet(), file)
	assert.Equal(t, []string{"internal/plan/throughput.go", "testdata/machines"}, paths)
	assert.Len(t, shared, 1)
}
