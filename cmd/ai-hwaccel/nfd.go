package main

import (
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
		return cli.WriteFileAtomic(output, data)
	}
	_, err = a.stdout.Write(data)
	return err
}
