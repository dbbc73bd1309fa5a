package schema

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The host-language pages are what an integrator follows instead of the
// header; these tests hold them to the header and to the bindings' code.

// TestRustDocsListEveryFunction: docs/rust.md's API table names every
// public function of the crate (examples/rust/src/lib.rs). It left out
// rent (hwaccel_rent_json, since 0.2.0) and take, the raw layer's
// error reader.
func TestRustDocsListEveryFunction(t *testing.T) {
	src, err := os.ReadFile(repoPath(t, "examples", "rust", "src", "lib.rs"))
	require.NoError(t, err)
	doc, err := os.ReadFile(repoPath(t, "docs", "rust.md"))
	require.NoError(t, err)
	fns := regexp.MustCompile(`(?m)^pub fn (\w+)`).FindAllStringSubmatch(string(src), -1)
	require.GreaterOrEqual(t, len(fns), 10)
	for _, f := range fns {
		assert.True(t, strings.Contains(string(doc), "`"+f[1]+"("), "docs/rust.md names %s", f[1])
	}
}

// TestDocsStateTheHeadersAddressSpaceFloor: the header measured that the Go
// runtime aborts loading below the host's mappings + 2 GiB of RLIMIT_AS
// (every time at 1200-1300 MiB); docs/c-cpp.md still said 1 GiB was enough.
// Every line of docs/ that names RLIMIT_AS as a floor gives the header's.
func TestDocsStateTheHeadersAddressSpaceFloor(t *testing.T) {
	header, err := os.ReadFile(repoPath(t, "include", "ai_hwaccel.h"))
	require.NoError(t, err)
	require.Contains(t, string(header), "RLIMIT_AS must allow the host's own mappings + 2 GiB")
	b, err := os.ReadFile(repoPath(t, "docs", "c-cpp.md"))
	require.NoError(t, err)
	// The page's bullet may wrap: read it as one paragraph.
	text := strings.Join(strings.Fields(string(b)), " ")
	at := strings.Index(text, "RLIMIT_AS")
	require.Positive(t, at, "docs/c-cpp.md names RLIMIT_AS")
	bullet := text[max(at-160, 0):min(at+160, len(text))]
	assert.Contains(t, bullet, "+ 2 GiB", bullet)
	assert.NotContains(t, bullet, "at least 1 GiB", bullet)
}
