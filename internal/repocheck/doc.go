// Package repocheck holds checks over the repository's own source: every
// exported identifier's doc comment starts with its name (doccomment_test.go)
// and every repository path a comment names exists (paths_test.go). It has
// no code; its tests read the source tree with go/parser.
package repocheck
