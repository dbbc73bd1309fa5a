// Command fit fits the planner's constants on the measurements of
// internal/calibration/data and writes them (constants_gen.go) and the
// generated parts of docs/accuracy.md. Run it with
// `go generate ./internal/calibration`.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	data := flag.String("data", "data", "folder of the measurement files")
	constants := flag.String("constants", "constants_gen.go", "Go file to write the constants to")
	docs := flag.String("docs", "../../docs/accuracy.md", "Markdown file whose generated parts to rewrite")
	flag.Parse()
	if err := run(*data, *constants, *docs); err != nil {
		fmt.Fprintln(os.Stderr, "fit:", err)
		os.Exit(1)
	}
}

func run(dataDir, constantsFile, docsFile string) error {
	src, doc, err := generate(dataDir, docsFile)
	if err != nil {
		return err
	}
	if err := os.WriteFile(constantsFile, src, 0o644); err != nil {
		return err
	}
	return os.WriteFile(docsFile, doc, 0o644)
}

// generate fits the constants and returns both outputs: the constants
// source and the docs file with its generated parts replaced.
func generate(dataDir, docsFile string) (constants, docs []byte, err error) {
	r, err := fitAll(dataDir)
	if err != nil {
		return nil, nil, err
	}
	if constants, err = constantsSource(r); err != nil {
		return nil, nil, err
	}
	old, err := os.ReadFile(docsFile)
	if err != nil {
		return nil, nil, err
	}
	docs, err = splice(old, docSections(r))
	return constants, docs, err
}
