package repocheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository root, two levels above this package.
const repoRoot = "../.."

// goSourceDirs are the folders of the module's Go code.
var goSourceDirs = []string{"internal", "cmd", "capi"}

// goFiles lists the module's non-test Go files, skipping testdata.
func goFiles(t *testing.T) []string { return walkGo(t, false) }

// goTestFiles lists the module's Go test files, skipping testdata.
func goTestFiles(t *testing.T) []string { return walkGo(t, true) }

// walkGo lists the module's Go files, test files or the others.
func walkGo(t *testing.T, tests bool) []string {
	t.Helper()
	var files []string
	for _, dir := range goSourceDirs {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") && strings.HasSuffix(p, "_test.go") == tests {
				files = append(files, p)
			}
			return nil
		})
		require.NoError(t, err)
	}
	return files
}

// docStartsWith reports whether a doc comment starts with name, as Go's doc
// convention asks (an article before it is accepted: "A Foo is ...").
func docStartsWith(doc *ast.CommentGroup, name string) bool {
	if doc == nil {
		return false
	}
	text := doc.Text()
	for _, article := range []string{"", "A ", "An ", "The "} {
		rest, ok := strings.CutPrefix(text, article+name)
		if ok && (rest == "" || !isIdentRune(rest[0])) {
			return true
		}
	}
	return false
}

func isIdentRune(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// receiverExported reports whether a method's receiver type is exported (a
// method of an unexported type is not part of the package's API).
func receiverExported(fn *ast.FuncDecl) bool {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return true
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
		case *ast.IndexExpr:
			typ = x.X
		case *ast.IndexListExpr:
			typ = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// undocumented lists the exported declarations of one file whose doc
// comment does not start with their name. Specs of a parenthesised const,
// var or type group are covered by the group's comment and are not checked.
func undocumented(fset *token.FileSet, f *ast.File) []string {
	var bad []string
	report := func(pos token.Pos, name string) {
		bad = append(bad, fmt.Sprintf("%s: %s", fset.Position(pos), name))
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && receiverExported(d) && !docStartsWith(d.Doc, d.Name.Name) {
				report(d.Pos(), d.Name.Name)
			}
		case *ast.GenDecl:
			if d.Lparen.IsValid() || len(d.Specs) != 1 {
				continue
			}
			doc := d.Doc
			switch s := d.Specs[0].(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() && !docStartsWith(doc, s.Name.Name) {
					report(s.Pos(), s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() && !docStartsWith(doc, n.Name) {
						report(n.Pos(), n.Name)
					}
				}
			}
		}
	}
	return bad
}

// Every exported function, method of an exported type, type, constant and
// variable declared on its own has a doc comment that starts with its name.
func TestExportedDocCommentsStartWithTheirName(t *testing.T) {
	fset := token.NewFileSet()
	var bad []string
	files := goFiles(t)
	require.Greater(t, len(files), 100)
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		require.NoError(t, err, p)
		bad = append(bad, undocumented(fset, f)...)
	}
	assert.Empty(t, bad, "exported identifiers whose doc comment does not start with their name")
}

// The check itself: a missing comment and a comment naming another
// identifier are caught; a matching one, with or without an article, is not.
func TestUndocumentedFindsBadComments(t *testing.T) {
	src := `package p

// old lower-case name.
func Renamed() {}

func Missing() {}

// Good does it.
func Good() {}

// A Thing is a thing.
type Thing struct{}

// unexported is fine.
func unexported() {}

// Goodness is not Good.
const Good2 = 1
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	require.NoError(t, err)
	bad := undocumented(fset, f)
	require.Len(t, bad, 3, bad)
	assert.Contains(t, bad[0], "Renamed")
	assert.Contains(t, bad[1], "Missing")
	assert.Contains(t, bad[2], "Good2")
}
