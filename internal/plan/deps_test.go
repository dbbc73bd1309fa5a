package plan

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonStillVia lists the packages through which the planner still depends
// on JSON, each with why (issue 20 item 3: "go list -deps ./internal/plan
// lists neither a JSON package nor the strict decoder"). The list only
// shrinks: the test fails when another package brings JSON in, and when a
// listed one no longer does (then delete its line). It is empty: the model
// catalog is compiled into Go (internal/model/catalog_gen.go) and the file
// and config.json readers are in internal/modelio, which the planner does
// not import.
var jsonStillVia = map[string]string{}

// isJSONPackage reports whether an import path is a JSON codec.
func isJSONPackage(path string) bool {
	return path == "encoding/json" || path == "github.com/goccy/go-json" ||
		strings.HasPrefix(path, "github.com/goccy/go-json/")
}

// TestPlannerDependsOnNoJSON runs go list -deps on this package (not its
// tests) and checks that no package the planner is built from imports a
// JSON codec, beyond jsonStillVia, and that internal/strictjson is not
// among them at all.
func TestPlannerDependsOnNoJSON(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, ok := strings.Cut(line, ":")
		require.True(t, ok, line)
		deps[path] = strings.Fields(imports)
	}
	require.Contains(t, deps, "github.com/ai-hwaccel/ai-hwaccel/internal/plan")
	_, strict := deps["github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"]
	assert.False(t, strict, "internal/strictjson is a dependency of the planner; the strict decoder belongs to internal/api/wire")
	var via []string
	for path, imports := range deps {
		if isJSONPackage(path) {
			continue
		}
		for _, imp := range imports {
			if isJSONPackage(imp) {
				via = append(via, path)
				break
			}
		}
	}
	sort.Strings(via)
	var want []string
	for path := range jsonStillVia {
		want = append(want, path)
	}
	sort.Strings(want)
	assert.Equal(t, want, via, "packages of the planner that import a JSON codec")
}
