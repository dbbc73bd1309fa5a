// Command genreg writes the planning inputs of the C benchmark harness
// (bench/bench.c): for each size N of benchreg.Sizes, DIR/registry-N.json (a
// registry of N H100s) and DIR/request-N.json (the planning request on it).
//
//	go run ./bench/genreg build/bench
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ai-hwaccel/ai-hwaccel/bench/benchreg"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genreg DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, n := range benchreg.Sizes {
		files := map[string][]byte{
			fmt.Sprintf("registry-%d.json", n): benchreg.RegistryJSON(n),
			fmt.Sprintf("request-%d.json", n):  benchreg.Request(n),
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
}
