package cli

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	json "github.com/goccy/go-json"
)

// The planning answers (plan, suggest, train) are printed from their JSON
// rather than from Go types, so the command keeps working while the answers
// gain fields. Units follow the contract's key suffixes: *_bytes print in
// GiB, *_gb_s in GB/s.

// leadKeys come first, in this order, when an answer has them; the rest
// follow alphabetically. Lists of reasons and warnings come last.
var leadKeys = []string{"fits", "reason", "model", "method", "strategy", "quant", "quantization",
	"context_length", "batch_size", "engine", "memory", "shards", "per_device", "devices",
	"throughput", "engine_args", "device_id", "layer_start", "layer_end"}

var tailKeys = []string{"explanation", "warnings"}

func orderedKeys(m map[string]any) []string {
	var out []string
	used := map[string]bool{}
	for _, k := range leadKeys {
		if _, ok := m[k]; ok {
			out = append(out, k)
			used[k] = true
		}
	}
	for _, k := range tailKeys {
		used[k] = true
	}
	var rest []string
	for k := range m {
		if !used[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	out = append(out, rest...)
	for _, k := range tailKeys {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

func writeField(w io.Writer, indent, key string, v any) {
	title := heading(key)
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return
		}
		fmt.Fprintf(w, "%s%s:\n", indent, title)
		for _, k := range orderedKeys(x) {
			writeField(w, indent+"  ", k, x[k])
		}
	case []any:
		if len(x) == 0 {
			if key == "warnings" {
				fmt.Fprintf(w, "%s%s: none\n", indent, title)
			}
			return
		}
		if rows, ok := objects(x); ok {
			fmt.Fprintf(w, "%s%s:\n", indent, title)
			writeRows(w, indent+"  ", rows)
			return
		}
		if key == "explanation" || key == "warnings" || !words(x) {
			fmt.Fprintf(w, "%s%s:\n", indent, title)
			for _, item := range x {
				fmt.Fprintf(w, "%s  - %s\n", indent, scalar("", item))
			}
			return
		}
		parts := make([]string, len(x))
		for i, item := range x {
			parts[i] = scalar("", item)
		}
		fmt.Fprintf(w, "%s%s: %s\n", indent, title, strings.Join(parts, " "))
	default:
		fmt.Fprintf(w, "%s%s: %s\n", indent, title, scalar(key, v))
	}
}

// heading turns a JSON key into a label: "kv_cache_bytes" -> "kv cache".
func heading(key string) string {
	for _, suffix := range []string{"_bytes", "_gb_s"} {
		key = strings.TrimSuffix(key, suffix)
	}
	return strings.ReplaceAll(key, "_", " ")
}

func objects(list []any) ([]map[string]any, bool) {
	rows := make([]map[string]any, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		rows = append(rows, m)
	}
	return rows, true
}

// words reports whether a list can print on one line separated by spaces
// (command-line arguments, ids): no item is nested or contains a space.
func words(list []any) bool {
	for _, item := range list {
		switch x := item.(type) {
		case map[string]any, []any:
			return false
		case string:
			if strings.ContainsAny(x, " \t\n") || x == "" {
				return false
			}
		}
	}
	return true
}

// writeRows prints a list of objects as a table whose columns are the union
// of their keys (first-seen order); nested values print as compact JSON.
func writeRows(w io.Writer, indent string, rows []map[string]any) {
	var cols []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, k := range orderedKeys(r) {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = strings.ToUpper(heading(c))
	}
	fmt.Fprintf(tw, "%s%s\n", indent, strings.Join(heads, "\t"))
	for _, r := range rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			v, ok := r[c]
			if !ok {
				cells[i] = Unknown
				continue
			}
			cells[i] = cell(scalar(c, v))
		}
		fmt.Fprintf(tw, "%s%s\n", indent, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// scalar formats one value, using the key's unit suffix for numbers.
func scalar(key string, v any) string {
	switch x := v.(type) {
	case nil:
		return Unknown
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case string:
		return Text(x)
	case json.Number:
		return number(key, x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

func number(key string, n json.Number) string {
	f, err := n.Float64()
	if err != nil {
		return n.String()
	}
	switch {
	case strings.HasSuffix(key, "_bytes"):
		return GiB(int64(f))
	case strings.HasSuffix(key, "_gb_s"):
		return GBs(f)
	case strings.HasSuffix(key, "_per_s"), strings.HasSuffix(key, "_per_s_total"):
		return strconv.FormatFloat(round1(f), 'f', -1, 64) + "/s"
	}
	return n.String()
}

// round1 keeps one decimal below 100 and none above: "12.3/s", "4521/s".
func round1(f float64) float64 {
	if math.Abs(f) >= 100 {
		return math.Round(f)
	}
	return math.Round(f*10) / 10
}
