package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
)

// nfd prints or writes the Node Feature Discovery feature file.
func (a *app) nfd(args []string) error {
	f := newFlags("nfd", "  ai-hwaccel nfd [--output FILE] [--expiry DURATION]",
		"Prints Kubernetes node labels for Node Feature Discovery's local source: one key=value per\nline, sorted (docs/kubernetes.md explains every label). With --output the file is replaced\natomically (written as a dot-file, which NFD ignores, then renamed).")
	var output string
	expiry := durationFlag{bare: time.Second}
	f.StringVar(&output, "output", "", "write to `FILE` atomically instead of stdout, e.g.\n\t/etc/kubernetes/node-feature-discovery/features.d/ai-hwaccel")
	f.Var(&expiry, "expiry", "add NFD's expiry-time directive: labels lapse `DURATION` after writing unless refreshed (2h, 90m; a bare number is seconds)")
	f.group("Flags", "output", "expiry")
	d := &detectFlags{}
	d.register(f)
	if err := f.parse(a, args); err != nil {
		return ignoreHelp(err)
	}
	if f.isSet("output") && output == "" {
		return usagef("nfd", "--output needs a file name")
	}
	optsJSON, err := d.optionsJSON(f)
	if err != nil {
		return err
	}
	reg, err := a.detectRegistry(optsJSON)
	if err != nil {
		return err
	}
	var until time.Time
	if expiry.d > 0 {
		until = a.now().Add(expiry.d)
	}
	data := cli.FeatureFile(cli.Labels(reg), until)
	if output != "" {
		return writeOutput(output, data)
	}
	_, err = a.stdout.Write(data)
	return err
}

// writeOutput writes --output FILE atomically; an error names the flag,
// the path given and what is wrong with it, not the temporary dot-file
// cli.WriteFileAtomic writes first or its rename.
func writeOutput(path string, data []byte) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--output %s: is a directory; give the file to write, e.g. %s", path, filepath.Join(path, "ai-hwaccel"))
	}
	err := cli.WriteFileAtomic(path, data)
	if err == nil {
		return nil
	}
	dir := filepath.Dir(path)
	if _, statErr := os.Stat(dir); errors.Is(statErr, fs.ErrNotExist) {
		return fmt.Errorf("--output %s: the directory %s does not exist", path, dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("--output %s: %w", path, err)
}
