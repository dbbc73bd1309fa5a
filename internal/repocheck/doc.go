// Package repocheck holds checks over the repository's own source: every
// exported identifier's doc comment starts with its name (doccomment_test.go),
// every repository path a comment or a page names exists (paths_test.go,
// docpaths_test.go), and every place a comment, a string or a page cites
// exists (citations_test.go): a section of docs/ or a heading a link leads
// to, a path, a test function or a go test pattern, an identifier in a named
// Go file. It has no code; its tests read the source tree with go/parser.
package repocheck
