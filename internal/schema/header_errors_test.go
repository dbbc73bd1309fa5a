package schema

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The error codes of include/ai_hwaccel.h are the contract's: the header's
// "Error codes" block, the codes each export says it answers, and the codes
// the code returns must be the same set (internal/errs/errs.go). The schema's
// enum is checked against errs.go in TestRegistrySchemaEnumsMatchGo.

// headerComment is the header's text with the " * " comment margins removed,
// so that a list broken over lines reads as one sentence.
func headerComment(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "include", "ai_hwaccel.h"))
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "*")
		lines = append(lines, strings.TrimSpace(l))
	}
	return strings.Join(lines, " ")
}

// errorCodes maps each constant of internal/errs/errs.go to its code.
func errorCodes(t *testing.T) map[string]string {
	return namedConstants(t, "internal/errs/errs.go", "")
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func TestHeaderErrorCodeBlockListsTheCodes(t *testing.T) {
	b, err := os.ReadFile(repoPath(t, "include", "ai_hwaccel.h"))
	require.NoError(t, err)
	text := string(b)
	start := strings.Index(text, " * Error codes\n")
	require.GreaterOrEqual(t, start, 0, "the header's Error codes block")
	end := strings.Index(text[start:], "*/")
	require.Greater(t, end, 0)
	row := regexp.MustCompile(`(?m)^ \*\s+"([a-z_]+)"\s+stable\s`)
	var listed []string
	for _, m := range row.FindAllStringSubmatch(text[start:start+end], -1) {
		listed = append(listed, m[1])
	}
	sort.Strings(listed)
	assert.Equal(t, sortedValues(errorCodes(t)), listed)
}

// Every export answers its input through capi's guard, which can answer
// too_large (copyInput), forked_child and internal (a recovered panic), and
// decodes JSON (invalid_json, invalid_argument): each export's list must name
// those, and only codes errs.go defines.
func TestHeaderExportErrorListsNameKnownCodes(t *testing.T) {
	codes := map[string]bool{}
	for _, v := range errorCodes(t) {
		codes[v] = true
	}
	text := headerComment(t)
	list := regexp.MustCompile(`error object with code ((?:"[a-z_]+"(?:,\s*|\s+or\s+))+"[a-z_]+")`)
	quoted := regexp.MustCompile(`"([a-z_]+)"`)
	lists := list.FindAllStringSubmatch(text, -1)
	// detect, the planning functions, models and fit enumerate theirs; the
	// others refer to these.
	require.Len(t, lists, 4, "the header's 'error object with code ...' lists")
	for _, l := range lists {
		named := map[string]bool{}
		for _, q := range quoted.FindAllStringSubmatch(l[1], -1) {
			assert.True(t, codes[q[1]], "header names error code %q, which internal/errs does not define", q[1])
			named[q[1]] = true
		}
		for _, always := range []string{"invalid_json", "invalid_argument", "too_large", "forked_child", "internal"} {
			assert.True(t, named[always], "every export can answer %q; the header's list %s lacks it", always, l[1])
		}
	}
}

// A code the contract lists but no code path returns is a false promise:
// each constant must be used by the engine (errs.<Name> outside tests and
// outside internal/errs), or, for forked_child, written by capi/shim.c, which
// answers a forked child before Go runs.
func TestEveryErrorCodeIsReturnedSomewhere(t *testing.T) {
	used := map[string]bool{}
	ref := regexp.MustCompile(`\berrs\.([A-Z][A-Za-z]+)\b`)
	root := repoPath(t)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "build":
				return filepath.SkipDir
			}
			if p == filepath.Join(root, "internal", "errs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range ref.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	shim, err := os.ReadFile(repoPath(t, "capi", "shim.c"))
	require.NoError(t, err)
	for name, code := range errorCodes(t) {
		if used[name] {
			continue
		}
		assert.Contains(t, string(shim), `\"code\":\"`+code+`\"`,
			"error code %q (errs.%s) is listed by the header but returned by no code", code, name)
	}
}
