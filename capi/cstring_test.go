package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExportPathCallsNoCString: cgo's C.CString (and C.CBytes) abort the
// process when malloc returns NULL ("runtime: C malloc failed"), which
// docs/abi.md promises a host never sees: answers go out through
// aihw_answer_alloc (cBytes) and names are passed from Go memory. The files
// compiled into the shipped library must not call them; exportcall.go is the
// tests' caller (it copies test inputs) and is left out.
func TestExportPathCallsNoCString(t *testing.T) {
	for _, file := range []string{"capi.go", "hoststate.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		require.NoError(t, err, file)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "C" {
				assert.NotContains(t, []string{"CString", "CBytes"}, sel.Sel.Name, "%s calls C.%s", file, sel.Sel.Name)
			}
			return true
		})
	}
}
