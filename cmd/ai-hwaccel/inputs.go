package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// The command line reads values the way the output writes them, so an
// answer can be pasted back: token counts with a k (1024) suffix, device
// ranges as the table folds them, durations with or without a unit.

// countPattern is a whole count with an optional binary suffix: 4096, 32k,
// 128K, 1m. k is 1024 because context windows are powers of two: Llama
// 3.1's "128K context" is max_position_embeddings 131072 (internal/model/
// catalog.json), and the text output prints 131072 tokens as "128k".
var countPattern = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([kKmM]?)$`)

// parseCount reads a whole count >= 1: "8192", "32k", "128K", "1m".
func parseCount(s string) (int, error) {
	m := countPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a count like 8192 or 32k", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a count like 8192 or 32k", s)
	}
	switch strings.ToLower(m[2]) {
	case "k":
		v *= 1 << 10
	case "m":
		v *= 1 << 20
	}
	if v != math.Trunc(v) || v < 1 {
		return 0, fmt.Errorf("%q must be a whole number >= 1", s)
	}
	if v > math.MaxInt32 {
		return 0, countTooLarge(strings.TrimSpace(s))
	}
	return int(v), nil
}

// countTooLarge is a whole count >= 1 above any count a flag takes; the
// flag's own range is the usage error (countFlag).
type countTooLarge string

func (c countTooLarge) Error() string { return fmt.Sprintf("%q is too large", string(c)) }

// countFlag reads the value of flag name as a count from 1 to max
// (parseCount): the usage error names the flag and, for a count above
// max, its range with the value given ("--context must be 1-16777216, got
// 99999999999").
func countFlag(cmd, name, val string, max int) (int, error) {
	n, err := parseCount(val)
	var big countTooLarge
	switch {
	case errors.As(err, &big):
		return 0, usagef(cmd, "--%s must be 1-%d, got %s", name, max, string(big))
	case err != nil:
		return 0, usagef(cmd, "--%s: %v", name, err)
	case n > max:
		return 0, usagef(cmd, "--%s must be 1-%d, got %d", name, max, n)
	}
	return n, nil
}

// parseFraction reads a share of memory: 0.95, or 95% (a percentage).
func parseFraction(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a fraction like 0.95 or 95%%", s)
	}
	if pct {
		v /= 100
	}
	if v <= 0 || v > 1 {
		return 0, fmt.Errorf("%q must be above 0 and at most 1 (100%%)", s)
	}
	return v, nil
}

// deviceIDPattern is the shape of a contract device id, optionally
// prefixed by its cluster node: "cuda:0", "aws_neuron:3", "node1/cuda:0".
// A range "cuda:0-3" is what the table prints for cuda:0 to cuda:3.
var deviceIDPattern = regexp.MustCompile(`^((?:node[0-9]+/)?[a-z][a-z0-9_]*):([0-9]+)(?:-([0-9]+))?$`)

// maxRange bounds one range so a typo cannot expand to millions of ids.
const maxRange = 4096

// deviceList reads --devices: ids and ranges, comma-separated, no id named
// twice.
func deviceList(cmd, s string) ([]string, error) {
	var out []string
	named := map[string]bool{}
	for _, id := range strings.Split(s, ",") {
		id = strings.TrimSpace(id)
		m := deviceIDPattern.FindStringSubmatch(id)
		if m == nil {
			return nil, usagef(cmd, "--devices: %q is not a device id like cuda:0 or a range like cuda:0-3", id)
		}
		lo, err1 := strconv.Atoi(m[2])
		hi := lo
		var err2 error
		if m[3] != "" {
			hi, err2 = strconv.Atoi(m[3])
		}
		if err1 != nil || err2 != nil || hi < lo || hi-lo >= maxRange {
			return nil, usagef(cmd, "--devices: %q is not a range from a lower to a higher index", id)
		}
		for i := lo; i <= hi; i++ {
			// A device named twice is wrong on every machine, so it is
			// a usage error here; whether an id exists depends on the
			// machine detected, which the engine checks (status 1).
			d := m[1] + ":" + strconv.Itoa(i)
			if named[d] {
				return nil, usagef(cmd, "--devices: %s is named twice", d)
			}
			named[d] = true
			out = append(out, d)
		}
	}
	return out, nil
}

// parseDuration reads a duration the same way for every flag: with a unit
// as Go writes it ("500ms", "2s", "1m30s", "2h"), or a bare number in the
// flag's unit (milliseconds for --timeout, seconds for --watch and
// --expiry). Zero and negative durations are refused.
func parseDuration(s string, bare time.Duration) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(n) || math.IsInf(n, 0) || n*float64(bare) > math.MaxInt64 {
			return 0, fmt.Errorf("%q is not a duration like 2s", s)
		}
		d = time.Duration(n * float64(bare))
	} else {
		d, err = time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is neither a number of %s nor a duration like 2s", s, unitName(bare))
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", s)
	}
	return d, nil
}

func unitName(d time.Duration) string {
	if d == time.Millisecond {
		return "milliseconds"
	}
	return "seconds"
}

// durationFlag is a flag.Value holding a duration read by parseDuration.
type durationFlag struct {
	d    time.Duration
	bare time.Duration
}

func (v *durationFlag) String() string {
	if v == nil || v.d == 0 {
		return ""
	}
	return v.d.String()
}

func (v *durationFlag) Set(s string) error {
	d, err := parseDuration(s, v.bare)
	if err != nil {
		return err
	}
	v.d = d
	return nil
}

var _ flag.Value = (*durationFlag)(nil)

// didYouMean is ` (did you mean X?)` for the known word closest to s, or ""
// when none is close: within the limit below in edits, or a prefix. prefix is put before the suggestion ("--" for flags).
func didYouMean(s string, known []string, prefix string) string {
	best, bestD := "", math.MaxInt
	for _, k := range known {
		d := model.EditDistance(strings.ToLower(s), strings.ToLower(k))
		if strings.HasPrefix(k, s) && len(s) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	// Two edits (a transposition: modle, plna) for words of four letters
	// or more, one below; longer words allow a third of their length.
	limit := max(len(s)/3, 1)
	if len(s) >= 4 {
		limit = max(limit, 2)
	}
	if best == "" || bestD > limit {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s%s?)", prefix, best)
}

// flagUndefined is how the flag package reports an unknown flag.
var flagUndefined = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)

// How the flag package reports a bad value (src/flag/flag.go of the Go
// distribution, FlagSet.parseOne: "invalid value %q for flag -%s: %v",
// "invalid boolean value %q for -%s: %v", "flag needs an argument: -%s"):
// with one dash, where every flag of this CLI is written with two.
var (
	flagBadValue = regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -+([^:]+): (.*)$`)
	flagBadBool  = regexp.MustCompile(`^invalid boolean value ("(?:[^"\\]|\\.)*") for -+([^:]+): `)
	flagNoValue  = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// explain rewrites a flag package error for a person, in the CLI's own
// form ("--name: why", as its other value errors): an unknown flag gets
// the closest known flag.
func (f *flags) explain(err error) string {
	if m := flagBadValue.FindStringSubmatch(err.Error()); m != nil {
		// An integer flag's value the flag package refuses is worded by
		// strconv: "parse error", "value out of range" (flag.go's
		// numError), which name neither the value nor what was wanted.
		switch m[3] {
		case "parse error":
			return fmt.Sprintf("--%s: %s is not a whole number", m[2], m[1])
		case "value out of range":
			return fmt.Sprintf("--%s: %s is out of range", m[2], m[1])
		}
		return fmt.Sprintf("--%s: %s", m[2], m[3])
	}
	if m := flagBadBool.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Sprintf("--%s: %s is not true or false", m[2], m[1])
	}
	if m := flagNoValue.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Sprintf("--%s needs a value", m[1])
	}
	m := flagUndefined.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	var names []string
	f.VisitAll(func(fl *flag.Flag) {
		if !f.hidden[fl.Name] {
			names = append(names, fl.Name)
		}
	})
	hint := didYouMean(m[1], names, "--")
	if hint == "" && f.cmd == "" && findCommand(m[1]) != nil {
		hint = fmt.Sprintf(" (%s is a command: ai-hwaccel %s)", m[1], m[1])
	}
	return fmt.Sprintf("unknown flag --%s%s", m[1], hint)
}

func commandNames() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
	}
	return out
}
