package cli

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// slotServer is a made-up engine whose command gives its context as
// --ctx, shared by --slots sequences, and that reserves its workspace
// outside its fraction (engine.Memory.WorkspaceOutside), as SGLang does.
type slotServer struct{ engine.Base }

func (slotServer) Name() string                { return "slotserve" }
func (slotServer) Title() string               { return "SlotServe" }
func (slotServer) RunsOn(k registry.Kind) bool { return k == registry.KindCUDA }
func (slotServer) Memory(asked float64) engine.Memory {
	return engine.Memory{Fraction: 0.9, WorkspaceOutside: true}
}
func (slotServer) ContextSetting() string   { return "--ctx" }
func (slotServer) SequencesSetting() string { return "--slots" }

// registerSlotServer registers slotServer until the test ends.
func registerSlotServer(t *testing.T) {
	t.Helper()
	engine.Register(slotServer{})
	t.Cleanup(func() { engine.Unregister(slotServer{}.Name()) })
}

// The headline read a command's context by a table of the three engines'
// flags (contextFlags) and llama.cpp's -np by name: a made-up engine's
// headline stated no context. The engine now names its flags
// (engine.CommandContextNamer), and its headline and Room line state the
// context its command runs, shared by its sequences, as llama.cpp's do.
func TestHeadlineStatesAMadeUpEnginesContext(t *testing.T) {
	registerSlotServer(t)
	a := &plan.ShardingAnswer{
		EngineArgs:       map[string][]string{"slotserve": {"--ctx", "16384", "--slots", "4"}},
		MaxContextLength: 8000,
	}
	info := AnswerInfo{Engine: "slotserve"}
	assert.Equal(t, "context 16384 shared by 4 sequences (up to 7k each fits)", roomWords(a, info))
	a.MaxContextLength = 4200
	// 4096 is 4200 rounded down to llama.cpp's --fit step; SlotServe
	// names no fit of its own, so no engine's rounding is claimed.
	assert.Equal(t, " (the command's --ctx 16384 gives each of its 4 sequences 4096: that rounded down to a multiple of 256)", commandContextNote(a, info))
}

// llama.cpp's words are unchanged: -c shared by -np, rounded as its --fit
// rounds; vLLM's and SGLang's context flags are read.
func TestHeadlineContextUnchangedForTheEngines(t *testing.T) {
	a := &plan.ShardingAnswer{
		EngineArgs: map[string][]string{
			"llama.cpp": {"-c", "16384", "-np", "4"},
			"vllm":      {"--max-model-len", "4096"},
			"sglang":    {"--context-length", "4096"},
		},
		MaxContextLength: 4200,
	}
	assert.Equal(t, "context 16384 shared by 4 sequences", roomWords(a, AnswerInfo{Engine: "llama.cpp"}))
	assert.Equal(t, " (the command's -c 16384 gives each of its 4 sequences 4096: that rounded down to a multiple of 256, as llama.cpp's --fit rounds)", commandContextNote(a, AnswerInfo{Engine: "llama.cpp"}))
	for _, e := range []string{"vllm", "sglang"} {
		assert.Equal(t, "context 4096", roomWords(a, AnswerInfo{Engine: e}), e)
		assert.Equal(t, " (the command's "+a.EngineArgs[e][0]+" 4096 is that rounded down to a multiple of 256)", commandContextNote(a, AnswerInfo{Engine: e}), e)
	}
}

// The Budget line said what SGLang's fraction holds by SGLang's name; it
// now says it of any engine whose rule keeps its workspace outside its
// fraction (engine.Memory.WorkspaceOutside).
func TestWriteBudgetSaysWhatAWorkspaceOutsideFractionHolds(t *testing.T) {
	registerSlotServer(t)
	var b bytes.Buffer
	writeBudget(&b, &plan.Budget{Engine: "slotserve", MemoryFraction: 0.5, EngineReservedBytes: 1263271936})
	assert.Equal(t, "Budget: slotserve; 0.5 of each device's memory free once its CUDA context exists, for the weights and its KV pool; the engine holds 1.2 GiB per device beside it\n", b.String())
}

// cliEnginePhrases lists, as "file:line: phrase", every string literal of
// the Go source src that spells one of phrases or is one of settings, and
// every use of an engine.Name constant.
func cliEnginePhrases(t *testing.T, file string, src []byte, phrases, settings []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	require.NoError(t, err, file)
	var out []string
	at := func(n ast.Node) string { return file + ":" + strconv.Itoa(fset.Position(n.Pos()).Line) + ": " }
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(x.Value)
			require.NoError(t, err)
			for _, p := range phrases {
				if strings.Contains(s, p) {
					out = append(out, at(x)+p)
				}
			}
			if slices.Contains(settings, s) {
				out = append(out, at(x)+s)
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "engine" && strings.HasPrefix(x.Sel.Name, "Name") && x.Sel.Name != "Names" {
				out = append(out, at(x)+"engine."+x.Sel.Name)
			}
		}
		return true
	})
	return out
}

// The CLI spelled engines in its own literals (a table of their context
// flags, "-np" and "llama.cpp's --fit", SGLang's Budget words by
// engine.NameSGLang): no string of it now names a registered engine by
// name or title, nor a context setting an engine names, and it compares
// no engine.Name constant. The engines say them (internal/engine).
func TestCLISpellsNoEngine(t *testing.T) {
	var phrases, settings []string
	for _, e := range engine.All() {
		if e.Name() == engine.NameNone {
			continue
		}
		phrases = append(phrases, e.Name(), e.Title())
		if c, ok := e.(engine.CommandContextNamer); ok {
			settings = append(settings, c.ContextSetting())
			if s := c.SequencesSetting(); s != "" {
				settings = append(settings, s)
			}
		}
	}
	require.Subset(t, settings, []string{"-c", "-np", "--max-model-len", "--context-length"})
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var uses []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		uses = append(uses, cliEnginePhrases(t, file, src, phrases, settings)...)
	}
	assert.Empty(t, uses)
	// The check finds each kind.
	assert.Equal(t, []string{"f.go:2: vLLM", "f.go:3: -np", "f.go:4: engine.NameSGLang"},
		cliEnginePhrases(t, "f.go", []byte("package cli\nconst x = \"vLLM's\"\nconst z = \"-np\"\nvar y = engine.NameSGLang\n"), phrases, settings))
}
