package repocheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTree writes files (path → content) under a new temporary folder and
// returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	return root
}

// sampleTree is a small repository whose comments, strings and pages cite
// good and dead places of each kind; each dead one is named "gone", "lost"
// or "missing".
var sampleTree = map[string]string{
	"docs/accuracy.md": "# Accuracy\n\n## Weights\n\n**Serving prefill (today).** Rows.\n\n" +
		"- **The encoder pass.** Item.\n\n**Fourth pass** (branch x), text.\n\n**held-out** rows are a phrase.\n\n" +
		"## Weights\n\n```\n# Not a section\n```\n\n" +
		"[w](#weights) [again](#weights-1) [gone](#gone-heading) [o](other.md#the-other-page-21-µs) " +
		"[missing](other.md#missing) [line](https://x.org/a.md#L3) [code](other.md#L12-L20)\n",
	"docs/other.md": "# The other page (2.1 µs)\n",
	"README.md": "See docs/accuracy.md, \"Weights\" and `docs/accuracy.md` \"Gone section\"; " +
		"docs/accuracy.md \"a phrase quoted\" is words; \"The encoder pass\" in docs/accuracy.md;\n" +
		"\"Not a section\" in docs/accuracy.md; CHANGELOG.md, \"AMD SMI (26.0.0)\" is another project's; " +
		"vLLM docs/accuracy.md, \"Lost vLLM page\" too.\n\n" +
		"`go test ./internal/... -run TestReal` and `go test ./internal/q -run 'TestReal|TestOther'`.\n",
	"scripts/tool/README.md": "Writes `internal/p/gone.json` and reads internal/p/p.go; " +
		"ROCm/k8s-device-plugin `testdata/topo-x` is theirs.\n",
	"internal/p/p.go": "package p\n\n" +
		"// Rows (docs/accuracy.md, \"Serving prefill\"); accuracy.md (\"Fourth pass\"); performance.md,\n" +
		"// \"Not our page\"; docs/accuracy.md, \"held-out\" is no section; docs/accuracy.md, \"Serving\n" +
		"// prefill\" across lines.\n" +
		"//\n// `realFunc` in internal/p/p.go, lostFunc() in internal/p/p.go, Fitted.Rate in internal/p/p.go,\n" +
		"// reproduced in internal/p/p.go (a word), `x` in internal/p/nofile.go, `lostToo` (`internal/p/p.go`),\n" +
		"// the rule (internal/p/p.go), `realFunc` (internal/p/p.go).\n" +
		"func realFunc() {}\n\n" +
		"var Fitted = struct{ Rate float64 }{Rate: 1}\n\n" +
		"var s = \"see internal/p/gone.txt, internal/p/p.go, internal/p/h200-\" + \"x and internal/%s/p.go\"\n",
	"internal/p/p_test.go": "package p\n\nimport \"testing\"\n\n" +
		"// go test ./internal/p -run TestReal -v; go test ./internal/p -run TestGone;\n" +
		"// go test -run xxx -bench Real ./internal/p/; go test -run '^$' -bench 'Gone$' ./internal/p/;\n" +
		"// go test ./internal/p -run TestOther (that test is q's); -run 'TestReal/sub' -bench '<name>' -run $T;\n" +
		"// TestReal, TestMissing, TestRe* and TestNo*, fstest.TestFS and Testify.\n" +
		"func TestReal(t *testing.T) {}\n\nfunc BenchmarkReal(b *testing.B) {}\n",
	"internal/q/q_test.go": "package q\n\nimport \"testing\"\n\nfunc TestOther(t *testing.T) {}\n",
}

// The checkers on a small repository: every dead citation planted in
// sampleTree is reported, at its line, and none of the live ones or the
// look-alikes (a quoted phrase, another project's page or path, a word
// before "in file.go", a pattern that runs nothing on purpose).
func TestCitationCheckersOnASample(t *testing.T) {
	ix := indexRepo(t, writeTree(t, sampleTree))

	sections, n := ix.citesNamingNoSection(t)
	assert.ElementsMatch(t, []string{
		`README.md:1: docs/accuracy.md has no section "Gone section"`,
		`README.md:2: docs/accuracy.md has no section "Not a section"`,
		`internal/p/p.go:4: docs/accuracy.md has no section "held-out"`,
	}, sections)
	assert.Equal(t, 8, n, "cited sections, the three dead ones with them")

	anchors, n := ix.linksToNoHeading(t)
	assert.ElementsMatch(t, []string{
		"docs/accuracy.md:19: docs/accuracy.md has no heading #gone-heading",
		"docs/accuracy.md:19: docs/other.md has no heading #missing",
	}, anchors)
	assert.Equal(t, 5, n, "links to headings, a line anchor and a URL not among them")

	paths, n := ix.pathsMissing()
	assert.ElementsMatch(t, []string{
		"internal/p/p.go:14: internal/p/gone.txt",
		"scripts/tool/README.md:1: internal/p/gone.json",
	}, paths)
	assert.Equal(t, 4, n, "paths named in strings and READMEs, a pattern and a name's start not among them")

	tests, n := ix.testsMissing()
	assert.ElementsMatch(t, []string{
		"internal/p/p_test.go:5: -run TestGone selects no function in `go test ./internal/p -run TestGone`",
		"internal/p/p_test.go:6: -bench Gone$ selects no function in `go test -run '^$' -bench 'Gone$' ./internal/p/`",
		"internal/p/p_test.go:7: -run TestOther selects no function in `go test ./internal/p -run TestOther (that test is q's)`",
		"internal/p/p_test.go:8: no test function TestMissing",
		"internal/p/p_test.go:8: no test function TestNo*",
	}, tests)
	assert.Equal(t, 16, n, "test names and go test patterns, a placeholder and a variable among them")

	decls, n := ix.declsMissing()
	assert.Equal(t, []string{"internal/p/p.go:7: internal/p/p.go has no lostFunc", "internal/p/p.go:8: internal/p/p.go has no lostToo"}, decls)
	assert.Equal(t, 5, n, "code said to be in a file of ours")
}

// GitHub's anchors of headings: lower case, punctuation and code marks
// dropped, letters of any script kept, spaces made hyphens.
func TestAnchorOf(t *testing.T) {
	assert.Equal(t, "steady-state-detection-357-ms-against-032-ms", anchorOf("Steady-state detection (3.5–7 ms against 0.32 ms)"))
	assert.Equal(t, "planning-0439-ms-against-20-µs", anchorOf("Planning (0.4–3.9 ms against 20 µs)"))
	assert.Equal(t, "placement", anchorOf("`placement`"))
	assert.Equal(t, "nvml-nvidia-in-process", anchorOf("NVML (NVIDIA, in-process)"))
	assert.Equal(t, "see-the-abi", anchorOf("See [the ABI](abi.md)"))
}
