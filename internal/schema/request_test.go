package schema

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The request schemas (schema/request.schema.json, detect-options) are the
// written contract of what the engine accepts. These tests keep them equal
// to the Go structs the engine decodes requests into, and keep the header
// and docs/requests.md listing every member.

// structTags finds the struct type name in any file under internal/<dir>
// (so a file moved within the package is still found) and returns its JSON
// member names.
func structTags(t *testing.T, dir, name string) []string {
	t.Helper()
	var out []string
	found := 0
	err := filepath.WalkDir(repoPath(t, "internal", dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != name {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			found++
			for _, field := range st.Fields.List {
				if field.Tag == nil {
					continue
				}
				tag, err := strconv.Unquote(field.Tag.Value)
				require.NoError(t, err)
				key, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if key != "" && key != "-" {
					out = append(out, key)
				}
			}
			return false
		})
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 1, found, "type %s under internal/%s", name, dir)
	sort.Strings(out)
	return out
}

// propertyNames returns the member names of the schema object at path.
func propertyNames(t *testing.T, file string, path ...string) []string {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "schema", file+".schema.json"))
	require.NoError(t, err)
	var node any
	require.NoError(t, json.Unmarshal(b, &node))
	for _, p := range append(path, "properties") {
		m, ok := node.(map[string]any)
		require.True(t, ok, "%s: %v", file, path)
		node = m[p]
	}
	props, ok := node.(map[string]any)
	require.True(t, ok, "%s: %v has properties", file, path)
	var out []string
	for k := range props {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestRequestSchemasMatchTheEngine(t *testing.T) {
	assert.Equal(t, structTags(t, filepath.Join("api", "wire"), "wireRequest"), propertyNames(t, "request"))
	assert.Equal(t, structTags(t, filepath.Join("api", "wire"), "wireTraining"), propertyNames(t, "request", "properties", "training"))
	assert.Equal(t, structTags(t, "model", "Spec"), propertyNames(t, "request", "$defs", "model"))
	assert.Equal(t, structTags(t, "api", "wireOptions"), propertyNames(t, "detect-options"))
	assert.Equal(t, structTags(t, "api", "wireModelsRequest"), propertyNames(t, "models-request"))
	assert.Equal(t, structTags(t, "api", "wireFitRequest"), propertyNames(t, "fit-request"))
	assert.Equal(t, structTags(t, "catalogq", "Model"), propertyNames(t, "models", "properties", "models", "items"))
	assert.Equal(t, structTags(t, "catalogq", "FitRow"), propertyNames(t, "fit", "properties", "models", "items"))
}

func TestHeaderAndDocsListEveryRequestMember(t *testing.T) {
	header, err := os.ReadFile(repoPath(t, "include", "ai_hwaccel.h"))
	require.NoError(t, err)
	docs, err := os.ReadFile(repoPath(t, "docs", "requests.md"))
	require.NoError(t, err)
	var members []string
	members = append(members, propertyNames(t, "request")...)
	members = append(members, propertyNames(t, "request", "properties", "training")...)
	members = append(members, propertyNames(t, "request", "$defs", "model")...)
	members = append(members, propertyNames(t, "detect-options")...)
	require.Greater(t, len(members), 30)
	for _, m := range members {
		assert.Contains(t, string(header), `"`+m+`"`, "include/ai_hwaccel.h lists %q", m)
		assert.Contains(t, string(docs), "`"+m+"`", "docs/requests.md lists %q", m)
	}
}
