package repocheck

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A passage is a text a reader reads and may follow a citation from: one Go
// comment group, one Go string literal or one Markdown page.
type passage struct {
	file string // relative to the repository root, slash-separated
	line int    // the line the text starts on
	text string
	kind passageKind
	// generated: a string of a generated file, whose text is its data's
	// (the catalog's sources cite other projects' files)
	generated bool
}

// passageKind says where a passage's text comes from.
type passageKind int

const (
	inComment passageKind = iota
	inString
	inPage
)

// at returns "file:line" of an offset of the passage's text.
func (p passage) at(offset int) string {
	return p.file + ":" + strconv.Itoa(p.line+strings.Count(p.text[:offset], "\n"))
}

// A repoIndex holds, for one repository tree, the passages that cite and
// what they may name: the Go files' identifiers and test functions, the
// pages' sections and headings' anchors.
type repoIndex struct {
	root     string
	tests    map[string][]string        // package folder → its Test, Benchmark, Fuzz and Example functions
	decls    map[string]map[string]bool // Go file → the identifiers of its code
	sections map[string][]string        // docs/NAME.md → its section titles, read when first asked
	anchors  map[string]map[string]bool // a page → its headings' anchors, read when first asked
	passages []passage
}

// pageFiles are the pages scanned for citations: README.md, schema/README.md,
// docs/*.md and the READMEs of scripts/ and of the fixture machines (not
// their captures, which are other people's text kept verbatim).
func pageFiles(root string) ([]string, error) {
	pages := []string{"README.md", "schema/README.md"}
	for _, pattern := range []string{"docs/*.md", "scripts/*/README.md", "testdata/machines/*/README.md"} {
		found, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			rel, err := filepath.Rel(root, f)
			if err != nil {
				return nil, err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
	}
	return pages, nil
}

// indexRepo parses every Go file under root's internal/, cmd/ and capi/ once
// (skipping testdata and this package, whose tests plant bad citations),
// on every CPU, and reads the pages, collecting the passages and what they
// may cite.
func indexRepo(t *testing.T, root string) *repoIndex {
	t.Helper()
	ix := &repoIndex{root: root, tests: map[string][]string{}, decls: map[string]map[string]bool{},
		sections: map[string][]string{}, anchors: map[string]map[string]bool{}}
	var files []string
	for _, dir := range goSourceDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				if err == nil && (d.Name() == "testdata" || d.Name() == "repocheck") {
					return filepath.SkipDir
				}
				return err
			}
			if strings.HasSuffix(p, ".go") {
				rel, err := filepath.Rel(root, p)
				files = append(files, filepath.ToSlash(rel))
				return err
			}
			return nil
		})
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
	}
	facts := make([]goFileFacts, len(files))
	errs := make([]error, len(files))
	fset := token.NewFileSet()
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				facts[i], errs[i] = readGoFile(fset, root, files[i])
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	for _, f := range facts {
		dir := path.Dir(f.file)
		ix.tests[dir] = append(ix.tests[dir], f.tests...)
		ix.decls[f.file] = f.names
		ix.passages = append(ix.passages, f.passages...)
	}
	pages, err := pageFiles(root)
	require.NoError(t, err)
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, page))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		ix.passages = append(ix.passages, passage{file: page, line: 1, text: string(b), kind: inPage})
	}
	return ix
}

// goFileFacts is what one Go file gives the index.
type goFileFacts struct {
	file     string
	tests    []string        // its test functions (of a _test.go file)
	names    map[string]bool // the identifiers of its code
	passages []passage       // its comment groups and string literals
}

// readGoFile parses one Go file, relative to root, for its test functions,
// identifiers, comments and strings.
func readGoFile(fset *token.FileSet, root, rel string) (goFileFacts, error) {
	facts := goFileFacts{file: rel, names: map[string]bool{}}
	f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.ParseComments)
	if err != nil {
		return facts, err
	}
	for _, decl := range f.Decls {
		if d, ok := decl.(*ast.FuncDecl); ok && d.Recv == nil && strings.HasSuffix(rel, "_test.go") && isTestFunc(d.Name.Name) {
			facts.tests = append(facts.tests, d.Name.Name)
		}
	}
	for _, group := range f.Comments {
		var lines []string
		for _, c := range group.List {
			text := strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*")
			lines = append(lines, strings.TrimSuffix(text, "*/"))
		}
		facts.passages = append(facts.passages, passage{file: rel, line: fset.Position(group.Pos()).Line,
			text: strings.Join(lines, "\n"), kind: inComment})
	}
	// Every identifier of the file's code counts as what the file has: a
	// reader sent to "ServingPromptMFU in constants_gen.go" finds it there
	// whether the file declares it or sets it.
	generated := ast.IsGenerated(f)
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			facts.names[x.Name] = true
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				break
			}
			if s, err := strconv.Unquote(x.Value); err == nil {
				facts.passages = append(facts.passages, passage{file: rel, line: fset.Position(x.Pos()).Line, text: s,
					kind: inString, generated: generated})
			}
		}
		return true
	})
	return facts, nil
}

// testFuncPrefixes are the prefixes go test runs functions by.
var testFuncPrefixes = []string{"Test", "Benchmark", "Fuzz", "Example"}

// isTestFunc reports whether name is one go test runs: a prefix of
// testFuncPrefixes then nothing or a character that is not a lower-case
// letter ("Testify" is not a test).
func isTestFunc(name string) bool {
	for _, prefix := range testFuncPrefixes {
		if rest, ok := strings.CutPrefix(name, prefix); ok && (rest == "" || !unicode.IsLower(rune(rest[0]))) {
			return true
		}
	}
	return false
}

// titlesOf returns the section titles of docs/NAME.md, reading it once.
func (ix *repoIndex) titlesOf(t *testing.T, page string) []string {
	t.Helper()
	if titles, ok := ix.sections[page]; ok {
		return titles
	}
	titles := sectionsOf(t, filepath.Join(ix.root, page))
	ix.sections[page] = titles
	return titles
}

// pageSectionRef matches a page and, in quotes, the section of it a reader
// is sent to: `docs/accuracy.md, "Serving prefill"`, `performance.md
// ("Fourth pass"` (a Go comment names a page of docs/ by its name alone),
// "`docs/abi.md` \"Guarantees\"", across a line break. The separator is
// captured: after a space alone the quote is a section only when it reads
// as a title (titleStart), since `docs/cli.md "default 4096"` quotes the
// page's words.
var pageSectionRef = regexp.MustCompile("(?:^|[^A-Za-z0-9_./-])((?:docs/)?[A-Za-z0-9_-]+\\.md)`?(,\\s*|\\s+|\\s*\\(\\s*)[\"“]([^\"”]{1,160})[\"”]")

// titleStart matches the start of a title: a capital, a digit or a code
// mark.
var titleStart = regexp.MustCompile("^[A-Z0-9`]")

// sectionPageRef matches the other order: `"Serving engines" in
// docs/accuracy.md`.
var sectionPageRef = regexp.MustCompile("[\"“]([^\"”]{1,160})[\"”],?\\s+in\\s+`?((?:docs/)?[A-Za-z0-9_-]+\\.md)\\b")

// A sectionCite is one citation of a page's section.
type sectionCite struct {
	at, page, section string
}

// sectionCites returns the sections of docs/ pages a passage cites. A page
// named without docs/ counts only where docs/ has it (CHANGELOG.md or
// formats.md are other projects' pages); a page named after another
// project's name or URL is that project's.
func (ix *repoIndex) sectionCites(p passage) []sectionCite {
	if !strings.Contains(p.text, ".md") {
		return nil
	}
	var cites []sectionCite
	add := func(pageAt int, page, section string, at int) {
		if afterForeignName(ix.root, p.text, pageAt) {
			return
		}
		page = "docs/" + strings.TrimPrefix(page, "docs/")
		if _, err := os.Stat(filepath.Join(ix.root, page)); err != nil {
			return
		}
		cites = append(cites, sectionCite{at: p.at(at), page: page, section: strings.Join(strings.Fields(section), " ")})
	}
	for _, m := range pageSectionRef.FindAllStringSubmatchIndex(p.text, -1) {
		section := p.text[m[6]:m[7]]
		if strings.TrimSpace(p.text[m[4]:m[5]]) == "" && !titleStart.MatchString(section) {
			continue
		}
		add(m[2], p.text[m[2]:m[3]], section, m[2])
	}
	for _, m := range sectionPageRef.FindAllStringSubmatchIndex(p.text, -1) {
		add(m[4], p.text[m[4]:m[5]], p.text[m[2]:m[3]], m[0])
	}
	return cites
}

// citesNamingNoSection returns the citations of sections that their page
// does not have.
func (ix *repoIndex) citesNamingNoSection(t *testing.T) (dead []string, n int) {
	t.Helper()
	for _, p := range ix.passages {
		for _, c := range ix.sectionCites(p) {
			n++
			if !namesSection(c.section, ix.titlesOf(t, c.page)) {
				dead = append(dead, c.at+": "+c.page+" has no section \""+c.section+"\"")
			}
		}
	}
	return dead, n
}

// Every section of docs/ that a Go comment, a Go string or a page sends a
// reader to (`docs/accuracy.md, "Serving prefill"`, `"Serving engines" in
// docs/accuracy.md`) is a heading or a paragraph title of that page: a
// renamed section leaves a reader at a dead end.
func TestCitedSectionsExist(t *testing.T) {
	ix := repoIndexOnce(t)
	dead, n := ix.citesNamingNoSection(t)
	assert.Greater(t, n, 80, "comments and pages cite sections of the docs")
	assert.Empty(t, dead, "sections cited that their page does not have")
}

// markdownLinkText matches a Markdown link, whose text alone is a
// heading's words.
var markdownLinkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// anchorOf returns the anchor GitHub gives a heading: its words in lower
// case, without the characters that are neither letters, digits, "-" nor
// "_" (code marks, punctuation, an en dash), spaces made hyphens.
func anchorOf(heading string) string {
	heading = markdownLinkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchorsOf returns the anchors of a page's headings (outside fenced code),
// a repeated heading's numbered "-1", "-2" as GitHub numbers them.
func (ix *repoIndex) anchorsOf(t *testing.T, page string) map[string]bool {
	t.Helper()
	if anchors, ok := ix.anchors[page]; ok {
		return anchors
	}
	b, err := os.ReadFile(filepath.Join(ix.root, page))
	require.NoError(t, err)
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		loc := headingPrefix.FindStringIndex(line)
		if fenced || loc == nil {
			continue
		}
		anchor := anchorOf(strings.TrimSpace(line[loc[1]:]))
		if n := seen[anchor]; n > 0 {
			anchors[anchor+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[anchor] = true
		}
		seen[anchor]++
	}
	ix.anchors[page] = anchors
	return anchors
}

// deadAnchors returns the links of a page to a heading of one of the
// repository's pages ("[NVML](detection.md#nvml-nvidia-in-process)",
// "[below](#how-to-reproduce)") that no heading of that page has.
func (ix *repoIndex) deadAnchors(t *testing.T, p passage) (dead []string, n int) {
	t.Helper()
	if p.kind != inPage {
		return nil, 0
	}
	for _, m := range markdownLink.FindAllStringSubmatchIndex(p.text, -1) {
		target, anchor, ok := strings.Cut(p.text[m[2]:m[3]], "#")
		if !ok || strings.Contains(target, "://") || anchor == "" || strings.HasPrefix(anchor, "L") && strings.Trim(anchor[1:], "0123456789-L") == "" {
			continue
		}
		page := p.file
		if target != "" {
			page = path.Join(path.Dir(p.file), target)
		}
		if !strings.HasSuffix(page, ".md") {
			continue
		}
		if _, err := os.Stat(filepath.Join(ix.root, page)); err != nil {
			continue // TestDocPathsExist reports the page
		}
		n++
		if !ix.anchorsOf(t, page)[anchor] {
			dead = append(dead, p.at(m[2])+": "+page+" has no heading #"+anchor)
		}
	}
	return dead, n
}

// linksToNoHeading returns the pages' links to headings their page does
// not have, and how many links to headings there are.
func (ix *repoIndex) linksToNoHeading(t *testing.T) (dead []string, n int) {
	t.Helper()
	for _, p := range ix.passages {
		d, k := ix.deadAnchors(t, p)
		dead, n = append(dead, d...), n+k
	}
	return dead, n
}

// Every link of a page to a heading ("performance.md#fourth-pass",
// "#targets") leads to a heading that page has: GitHub drops a reader at
// the top of the page, silently, when a heading was renamed.
func TestPageAnchorsExist(t *testing.T) {
	dead, n := repoIndexOnce(t).linksToNoHeading(t)
	assert.Greater(t, n, 20, "the pages link to headings")
	assert.Empty(t, dead, "links to headings that their page does not have")
}

// pathsNamed returns the repository paths a Go string or one of the pages
// that TestDocPathsExist does not read names (Go comments and the other pages
// are that test's and TestCommentPathsExist's), by the same scanner: after
// another project's name or URL a path is that project's. A format verb
// ("internal/%s") ends a path as a pattern does; a path ending in "-" is
// the start of a name completed at run time ("h200-speed-" + build).
// Generated files' strings are their data's text, checked where the data
// is written.
func (ix *repoIndex) pathsNamed(p passage) (paths, at []string) {
	if p.kind == inComment || p.generated || p.kind == inPage && docPage(p.file) || !strings.Contains(p.text, "/") {
		return nil, nil
	}
	for _, m := range repoPath.FindAllStringSubmatchIndex(p.text, -1) {
		if afterForeignName(ix.root, p.text, m[2]) {
			continue
		}
		tok := p.text[m[2]:m[3]]
		if i := strings.IndexByte(tok, '%'); i >= 0 {
			tok = tok[:i]
		}
		if strings.HasSuffix(tok, "-") {
			continue
		}
		name := cleanPath(tok)
		for strings.HasPrefix(name, "../") {
			name = name[len("../"):]
		}
		if _, foreign := foreignDocPaths[name]; !foreign && strings.Contains(name, "/") && ix.ours(name) {
			paths, at = append(paths, name), append(at, p.at(m[2]))
		}
	}
	return paths, at
}

// afterForeignName reports whether the words before offset name another
// project (foreignRepo: a URL, "owner/repo", "vLLM"), so that the path or
// page named at offset is that project's. A path of this repository before
// it ("internal/calibration/data/apple_today.json (docs/accuracy.md, ...")
// looks like "owner/repo" but is ours. Only the last 200 bytes are read,
// enough for the name, so that a long page is not scanned for each match.
func afterForeignName(root, text string, offset int) bool {
	before := text[max(0, offset-200):offset]
	if !foreignRepo.MatchString(before) {
		return false
	}
	words := strings.Fields(strings.TrimRight(before, " \t\n(`"))
	if len(words) == 0 {
		return true
	}
	word := strings.Trim(words[len(words)-1], "`(\"'")
	if strings.Contains(word, "://") || !strings.Contains(word, "/") {
		return true
	}
	_, err := os.Stat(filepath.Join(root, cleanPath(word)))
	return err != nil
}

// docPage reports whether TestDocPathsExist reads a page (docFiles).
func docPage(page string) bool {
	return page == "README.md" || page == "schema/README.md" || path.Dir(page) == "docs"
}

// ours is the root-relative form of the package's ours: a path of three or
// more components is this repository's when its first two exist.
func (ix *repoIndex) ours(p string) bool {
	parts := strings.Split(p, "/")
	if len(parts) < 3 {
		return true
	}
	_, err := os.Stat(filepath.Join(ix.root, parts[0], parts[1]))
	return err == nil
}

// pathExists reports whether a path a passage names exists, from the
// repository root or from the passage's folder (a package's testdata, a
// fixture machine's files).
func (ix *repoIndex) pathExists(p passage, name string) bool {
	for _, base := range []string{ix.root, filepath.Join(ix.root, filepath.Dir(p.file))} {
		if _, err := os.Stat(filepath.Join(base, name)); err == nil {
			return true
		}
	}
	return false
}

// pathsMissing returns the paths that Go strings and the READMEs outside
// docFiles name and the repository does not have, and how many they name.
func (ix *repoIndex) pathsMissing() (missing []string, n int) {
	for _, p := range ix.passages {
		paths, at := ix.pathsNamed(p)
		n += len(paths)
		for i, name := range paths {
			if !ix.pathExists(p, name) {
				missing = append(missing, at[i]+": "+name)
			}
		}
	}
	return missing, n
}

// Every repository path a Go string names (an answer's "see
// docs/accuracy.md", a test's "testdata/golden/..."), and every one the
// READMEs of scripts/ and of the fixture machines name, exists.
func TestStringAndReadmePathsExist(t *testing.T) {
	missing, n := repoIndexOnce(t).pathsMissing()
	assert.Greater(t, n, 50, "strings and READMEs name repository paths")
	assert.Empty(t, missing, "repository paths named in Go strings and READMEs that do not exist")
}

// testFlag matches a go test flag that selects tests or benchmarks and its
// pattern: `-run TestX`, `-run 'TestA|TestB'`, `-test.bench=DetectLive`.
var testFlag = regexp.MustCompile(`(?:^|[\s\x60(])-(?:test\.)?(run|bench)(?:=|\s+)('[^'\n]*'|"[^"\n]*"|[^\s\x60'");&|]+)`)

// runsNothing are the patterns that select no test on purpose, so that only
// the benchmarks run: `-run xxx`, `-run '^$'`.
var runsNothing = map[string]bool{"xxx": true, "XXX": true, "^$": true, `^\$`: true, "NONE": true, "none": true}

// goTestPackage matches a package argument of go test, "./internal/plan/",
// or the folder a command is run in, "cd internal/detect &&".
var goTestPackage = regexp.MustCompile(`(?:^|\s)(?:\./|cd\s+)((?:internal|cmd|capi)(?:/[A-Za-z0-9_.-]+)*)/?(?:\s|$|\x60|;|&)`)

// commandAround returns the command a flag at offset belongs to: its line,
// cut at the code marks (backticks) and semicolons on either side of the
// flag.
func commandAround(text string, offset int) string {
	start := strings.LastIndexAny(text[:offset], "\n`;") + 1
	end := strings.IndexAny(text[offset:], "\n`;")
	if end < 0 {
		end = len(text) - offset
	}
	return text[start : offset+end]
}

// testsFor returns the test functions a command's flag may select from:
// those of the packages it names ("./internal/api", "./internal/..."), or
// every package's when it names none.
func (ix *repoIndex) testsFor(command string) []string {
	var dirs []string
	for _, m := range goTestPackage.FindAllStringSubmatch(command, -1) {
		dirs = append(dirs, m[1])
	}
	var names []string
	for _, dir := range sortedKeys(ix.tests) {
		if len(dirs) == 0 || slices.ContainsFunc(dirs, func(d string) bool {
			base, tree := strings.CutSuffix(d, "/...")
			return dir == base || tree && strings.HasPrefix(dir, base+"/")
		}) {
			names = append(names, ix.tests[dir]...)
		}
	}
	return names
}

// topLevelPattern returns the part of a -run or -bench pattern that go test
// matches against the top-level functions: the text before the first slash
// outside parentheses and brackets ("DetectFixture" of
// "DetectFixture/(dgx-h100|cpu-only)$").
func topLevelPattern(pattern string) string {
	depth := 0
	for i, c := range pattern {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '/':
			if depth == 0 {
				return pattern[:i]
			}
		}
	}
	return pattern
}

// notAPattern matches what stands for a pattern rather than being one: a
// placeholder ("<name>") or a shell variable ("$NAME", "${x}"); a "$" that
// ends a pattern is its anchor.
var notAPattern = regexp.MustCompile(`<|\$[A-Za-z_{(]`)

// flagSelectsNothing returns why a -run or -bench flag at m selects no
// function of the packages its command names, or "" when it selects one
// or deliberately none, or is a placeholder ('<name>').
func (ix *repoIndex) flagSelectsNothing(p passage, m []int) string {
	kind, pattern := p.text[m[2]:m[3]], strings.Trim(p.text[m[4]:m[5]], `'"`)
	if p.kind == inPage {
		pattern = strings.ReplaceAll(pattern, `\|`, "|") // a pipe escaped in a table
	}
	if kind == "run" && runsNothing[pattern] || pattern == "" || notAPattern.MatchString(pattern) {
		return ""
	}
	re, err := regexp.Compile(topLevelPattern(pattern))
	if err != nil {
		return ""
	}
	command := commandAround(p.text, m[0])
	for _, name := range ix.testsFor(command) {
		if strings.HasPrefix(name, "Benchmark") == (kind == "bench") && re.MatchString(name) {
			return ""
		}
	}
	return p.at(m[4]) + ": -" + kind + " " + pattern + " selects no function in `" + strings.TrimSpace(command) + "`"
}

// testMention matches a test function named in prose, "TestGoldenAnswers",
// or a family of them, "TestGaudiFixture*"; not a qualified name
// ("fstest.TestFS", another package's function).
var testMention = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.])((?:Test|Benchmark|Fuzz)[A-Z0-9_][A-Za-z0-9_]*)(\*?)`)

// deadTestNames returns the -run and -bench patterns of a passage that
// select nothing and the test functions it names that no package has, and
// how many patterns and names it gives.
func (ix *repoIndex) deadTestNames(p passage, all map[string]bool) (dead []string, n int) {
	if !strings.Contains(p.text, "Test") && !strings.Contains(p.text, "Benchmark") && !strings.Contains(p.text, "Fuzz") &&
		!strings.Contains(p.text, "-run") && !strings.Contains(p.text, "bench") {
		return nil, 0
	}
	flags := testFlag.FindAllStringSubmatchIndex(p.text, -1)
	n += len(flags)
	for _, m := range flags {
		if why := ix.flagSelectsNothing(p, m); why != "" {
			dead = append(dead, why)
		}
	}
	for _, m := range testMention.FindAllStringSubmatchIndex(p.text, -1) {
		if slices.ContainsFunc(flags, func(f []int) bool { return m[2] >= f[4] && m[2] < f[5] }) {
			continue // a pattern, checked above
		}
		n++
		name, family := p.text[m[2]:m[3]], m[5] > m[4]
		if all[name] || family && slices.ContainsFunc(sortedKeys(all), func(test string) bool { return strings.HasPrefix(test, name) }) {
			continue
		}
		dead = append(dead, p.at(m[2])+": no test function "+name+p.text[m[4]:m[5]])
	}
	return dead, n
}

// testsMissing returns the test functions named that no package has and
// the go test patterns that select none, and how many names and patterns
// there are.
func (ix *repoIndex) testsMissing() (dead []string, n int) {
	all := map[string]bool{}
	for _, names := range ix.tests {
		for _, name := range names {
			all[name] = true
		}
	}
	for _, p := range ix.passages {
		d, k := ix.deadTestNames(p, all)
		dead, n = append(dead, d...), n+k
	}
	return dead, n
}

// Every test function a Go comment, a Go string or a page names exists, and
// every `go test -run` or `-bench` pattern they give selects a function of
// the package the command names: a renamed test leaves a reader's command
// running nothing, silently.
func TestCitedTestsExist(t *testing.T) {
	ix := repoIndexOnce(t)
	n := 0
	for _, names := range ix.tests {
		n += len(names)
	}
	require.Greater(t, n, 500, "the repository's test functions are indexed")
	dead, cited := ix.testsMissing()
	assert.Greater(t, cited, 300, "comments, strings and pages name tests and give go test patterns")
	assert.Empty(t, dead, "tests named, or go test patterns given, that select no test function")
}

// declInFile matches an identifier said to be in a Go file of the
// repository: "`shapeFitModels` in internal/calibration/fit/fit.go",
// "setupWeights in internal/calibration/fit/servingcv.go",
// "llamaCPP.KVRules in internal/engine/llamacpp.go", or before the file in
// parentheses, "`machine.EnrichPCI` (`internal/detect/machine/pci.go`)".
// The identifier counts when it reads as code (a code mark, "()", a capital
// after its first letter), not as an English word ("reproduced in
// internal/quant/mix.go"); before a parenthesis only in a code mark ("the
// model (internal/plan/throughput.go)" is prose).
var declInFile = regexp.MustCompile("(?:^|[^A-Za-z0-9_.`])(`?)((?:[A-Za-z_][A-Za-z0-9_]*\\.)*[A-Za-z_][A-Za-z0-9_]*)(\\(\\))?`?(,?\\s+(?:in|of)\\s+|\\s+\\()`?((?:internal|cmd|capi)/[A-Za-z0-9_/.-]+\\.go)\\b")

// declInFileAtEnd is declInFile ending where its text ends.
var declInFileAtEnd = regexp.MustCompile(declInFile.String() + "$")

// declsBeforeGoFiles returns declInFile's matches in text, as
// FindAllStringSubmatchIndex does, but reading only the words before each
// ".go" (a long page is not scanned whole): a window of 200 bytes, started
// after a space so that it cuts no word.
func declsBeforeGoFiles(text string) [][]int {
	var found [][]int
	for at := 0; ; {
		i := strings.Index(text[at:], ".go")
		if i < 0 {
			return found
		}
		end := at + i + len(".go")
		at = end
		if end < len(text) && isIdentRune(text[end]) {
			continue // ".golden", ".goreleaser"
		}
		start := max(0, end-200)
		if start > 0 {
			space := strings.IndexAny(text[start:end], " \t\n")
			if space < 0 {
				continue
			}
			start += space
		}
		if m := declInFileAtEnd.FindStringSubmatchIndex(text[start:end]); m != nil {
			for k := range m {
				if m[k] >= 0 {
					m[k] += start
				}
			}
			found = append(found, m)
		}
	}
}

// readsAsCode reports whether a word names code: a capital after its
// first letter (camelCase, PascalCase with two words, a qualified name's
// member).
func readsAsCode(word string) bool {
	return strings.ContainsFunc(word[1:], unicode.IsUpper)
}

// Every identifier a comment or a page says is in a Go file of the
// repository ("`shapeFitModels` in internal/calibration/fit/fit.go") is in
// that file's code: a function moved to another file leaves the reader
// looking in the wrong one.
func TestCitedDeclarationsExist(t *testing.T) {
	dead, n := repoIndexOnce(t).declsMissing()
	assert.Greater(t, n, 20, "comments and pages name declarations in files")
	assert.Empty(t, dead, "identifiers said to be in a file whose code does not have them")
}

// declsMissing returns the identifiers that comments and pages say are in a
// Go file of the repository whose code does not have them, and how many
// they name.
func (ix *repoIndex) declsMissing() (dead []string, n int) {
	for _, p := range ix.passages {
		if p.kind == inString {
			continue
		}
		for _, m := range declsBeforeGoFiles(p.text) {
			word, marked := p.text[m[4]:m[5]], m[3] > m[2]
			inParens := strings.HasSuffix(p.text[m[8]:m[9]], "(")
			if inParens && !marked || !marked && m[7] == m[6] && !readsAsCode(word) {
				continue
			}
			file := p.text[m[10]:m[11]]
			decls, ok := ix.decls[file]
			if !ok {
				continue // not a Go file of ours; TestCommentPathsExist and TestDocPathsExist check the path
			}
			n++
			name := word[strings.LastIndexByte(word, '.')+1:]
			if !decls[name] {
				dead = append(dead, p.at(m[4])+": "+file+" has no "+name)
			}
		}
	}
	return dead, n
}

var (
	sharedIndex     *repoIndex
	sharedIndexRoot string
)

// repoIndexOnce indexes the repository once for the tests that read it.
func repoIndexOnce(t *testing.T) *repoIndex {
	t.Helper()
	if sharedIndex == nil || sharedIndexRoot != repoRoot {
		sharedIndex, sharedIndexRoot = indexRepo(t, repoRoot), repoRoot
	}
	return sharedIndex
}

// sortedKeys returns a map's keys in order, for stable reports.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
