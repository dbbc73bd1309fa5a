package cputime

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Work done on this goroutine shows in Process, and the clock never runs
// backwards.
func TestProcessCountsWork(t *testing.T) {
	before := Process(t)
	deadline := time.Now().Add(50 * time.Millisecond)
	n := 0
	for time.Now().Before(deadline) {
		n++
	}
	after := Process(t)
	assert.GreaterOrEqual(t, after, before)
	assert.Greater(t, after-before, time.Duration(0), "%d loops over 50 ms of wall time used no CPU time", n)
}

const importPath = "github.com/ai-hwaccel/ai-hwaccel/internal/cputime"

// TestOnlyTestsImportIt: the package imports testing, which must not be
// linked into the shared library or the command: only _test.go files may
// import it.
func TestOnlyTestsImportIt(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	var testers []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "build" || name == "target") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.Dir(path) == mustAbs(t, ".") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return nil // not this test's concern
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
				rel, _ := filepath.Rel(root, path)
				if strings.HasSuffix(path, "_test.go") {
					testers = append(testers, rel)
				} else {
					t.Errorf("%s imports %s: only test files may", rel, importPath)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.NotEmpty(t, testers, "no test imports the package: delete it")
	t.Logf("imported by %v", testers)
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	require.NoError(t, err)
	return a
}
