package plan

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// engineNameConst matches the engine package's name constants
// (engine.NameVLLM, engine.NameLlamaCPP, ...), not engine.Names.
// engine.NameNone, the engine of no engine's rules, which a training
// estimate asks for (planning.engineRule), is not an engine's rule.
var engineNameConst = regexp.MustCompile(`^Name[A-Z]`)

// isEngineNameConst reports whether name is an engine name constant but
// NameNone.
func isEngineNameConst(name string) bool {
	return engineNameConst.MatchString(name) && name != "NameNone"
}

// engineNameUses lists, as "file:line: what", every place of the Go source
// src that names an engine: an engine name constant, a comparison or a
// switch on an engine's Name(), or a string literal spelling a registered
// engine's name (names).
func engineNameUses(t *testing.T, file string, src []byte, names []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	require.NoError(t, err, file)
	var out []string
	add := func(n ast.Node, what string) {
		p := fset.Position(n.Pos())
		out = append(out, filepath.Base(p.Filename)+":"+strconv.Itoa(p.Line)+": "+what)
	}
	isNameCall := func(e ast.Expr) bool {
		c, ok := e.(*ast.CallExpr)
		if !ok || len(c.Args) != 0 {
			return false
		}
		s, ok := c.Fun.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "Name"
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "engine" && isEngineNameConst(x.Sel.Name) {
				add(x, "engine."+x.Sel.Name)
			}
		case *ast.BinaryExpr:
			if (x.Op == token.EQL || x.Op == token.NEQ) && (isNameCall(x.X) || isNameCall(x.Y)) {
				add(x, "compares an engine's Name()")
			}
		case *ast.SwitchStmt:
			if x.Tag != nil && isNameCall(x.Tag) {
				add(x, "switches on an engine's Name()")
			}
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				if s, err := strconv.Unquote(x.Value); err == nil && slices.Contains(names, s) {
					add(x, "the literal "+x.Value)
				}
			}
		}
		return true
	})
	return out
}

// The planner asks engines and never names one (internal/engine/doc.go):
// no non-test file of internal/plan uses an engine name constant, compares
// or switches on an engine's Name(), or spells a registered engine's name
// (the none engine, no engine's rules, is left out: a training estimate
// asks for it, and "none" is also a strategy's word). A rule of one engine is a question it answers
// (engine.Parallelism, engine.Memory, engine.SpeedModelOf, the optional
// interfaces of internal/engine/engine.go).
func TestPlannerNamesNoEngine(t *testing.T) {
	var names []string
	for _, n := range engine.Names() {
		if n != engine.NameNone {
			names = append(names, n)
		}
	}
	require.NotEmpty(t, names)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var uses []string
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		uses = append(uses, engineNameUses(t, file, src, names)...)
		checked++
	}
	require.Greater(t, checked, 10, "the package's source files were read")
	assert.Empty(t, uses, "internal/plan names engines; ask the engine a question instead (internal/engine/doc.go)")
}

// The check finds each kind of naming it forbids.
func TestPlannerNamesNoEngineFindsNames(t *testing.T) {
	src := `package plan
func f(e engine.Engine, r *Request) bool {
	switch e.Name() {
	}
	_ = engine.NameSGLang
	_ = engine.NameNone
	_ = engine.Names()
	return e.Name() == x || "vllm" != r.Engine
}`
	uses := engineNameUses(t, "f.go", []byte(src), []string{"vllm", "llama.cpp"})
	assert.Equal(t, []string{
		"f.go:3: switches on an engine's Name()",
		"f.go:5: engine.NameSGLang",
		"f.go:8: compares an engine's Name()",
		"f.go:8: the literal \"vllm\"",
	}, uses)
}
