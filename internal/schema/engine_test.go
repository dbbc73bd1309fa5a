package schema

import (
	"os"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// The engines and KV cache types a request may name are internal/engine's
// registry (engine.Names, engine.CacheTypes). These tests keep the schemas,
// the C header and the docs listing exactly those.

// orderedEnum returns the enum of the schema node at path, in schema order
// (enumAt sorts it).
func orderedEnum(t *testing.T, file string, path ...string) []string {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "schema", file+".schema.json"))
	require.NoError(t, err)
	var node any
	require.NoError(t, json.Unmarshal(b, &node))
	for _, p := range path {
		m, ok := node.(map[string]any)
		require.True(t, ok, "%s: %v", file, path)
		node = m[p]
	}
	m, ok := node.(map[string]any)
	require.True(t, ok, "%s: %v", file, path)
	raw, ok := m["enum"].([]any)
	require.True(t, ok, "%s: %v has an enum", file, path)
	out := make([]string, len(raw))
	for i, v := range raw {
		out[i], _ = v.(string)
	}
	return out
}

func TestSchemasListTheRegisteredEngines(t *testing.T) {
	names := engine.Names()
	require.Contains(t, names, engine.NameNone)
	assert.Equal(t, names, orderedEnum(t, "request", "properties", "engine"))
	assert.Equal(t, names, orderedEnum(t, "plan", "$defs", "budget", "properties", "engine"))
	assert.Equal(t, names, orderedEnum(t, "suggest", "$defs", "budget", "properties", "engine"))
	// "auto" and "" are the model's 16-bit type, which the decoder takes
	// besides the cache types.
	assert.Equal(t, append([]string{"auto", ""}, engine.CacheTypes()...),
		orderedEnum(t, "request", "properties", "kv_cache_dtype"))
}

// docLine is the first line of a repository file holding marker.
func docLine(t *testing.T, marker string, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, parts...))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) {
			return l
		}
	}
	require.Failf(t, "marker not found", "%q in %v", marker, parts)
	return ""
}

func TestHeaderAndDocsListTheRegisteredEngines(t *testing.T) {
	names := engine.Names()
	header := docLine(t, `"engine": `, "include", "ai_hwaccel.h")
	assert.Contains(t, header, `"`+strings.Join(names, `" | "`)+`"`)
	requests := docLine(t, "| `engine` |", "docs", "requests.md")
	cli := docLine(t, "| `--engine ", "docs", "cli.md")
	assert.Contains(t, cli, "`--engine "+strings.Join(names, `\|`)+"`")
	for _, n := range names {
		assert.Contains(t, requests, "`"+n+"`", "docs/requests.md lists engine %q", n)
	}
	kv := docLine(t, "| `kv_cache_dtype` |", "docs", "requests.md")
	for _, n := range engine.CacheTypes() {
		assert.Contains(t, kv, "`"+n+"`", "docs/requests.md lists kv_cache_dtype %q", n)
	}
}
