package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandPlaceholder matches the stand-ins an engine command printed before
// it was withheld instead: MODEL, MODEL.gguf, MODEL-Q4_K_M.gguf.
var commandPlaceholder = regexp.MustCompile(`(^|[\s=])MODEL([-.][A-Za-z0-9_.]*)?(\s|$)`)

// Every plan answer of the golden files (testdata/golden: each fixture
// machine's answers to the golden requests), printed as the CLI prints it,
// has no placeholder in its headline's command or its Engine commands.
func TestGoldenPlansPrintNoPlaceholderCommand(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	commands := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		var answers map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &answers), file)
		for name, ans := range answers {
			if !strings.HasPrefix(name, "plan") {
				continue
			}
			var out bytes.Buffer
			if WritePlan(&out, ans, AnswerInfo{}) != nil {
				continue // an error answer prints no plan
			}
			for _, line := range strings.Split(out.String(), "\n") {
				_, run, headline := strings.Cut(line, "; run: ")
				if !headline && !strings.HasPrefix(line, "  ") || !strings.Contains(line, "serve") && !strings.Contains(line, "llama-server") && !strings.Contains(line, "launch_server") {
					continue
				}
				if headline {
					line = run
				}
				commands++
				assert.False(t, commandPlaceholder.MatchString(line), "%s %s: %s", filepath.Base(file), name, line)
			}
		}
	}
	require.Greater(t, commands, 50, "the golden answers printed too few commands to mean anything")
	t.Logf("%d command lines checked", commands)
}
