// Package cli turns engine answers into what the ai-hwaccel command prints:
// the device table, the summary, Node Feature Discovery labels and the
// human form of planning answers. It holds no detection or planning logic.
package cli

import (
	"fmt"
	"math"
	"strconv"
)

// Unknown is what a table cell shows for a value the engine did not report.
// It is never "0": zero is a real value (free memory can be 0).
const Unknown = "—"

const gib = 1 << 30

// GiB formats a byte count as GiB with one decimal ("79.6 GiB"). A count
// too small to show at that precision reads "<0.1 GiB", so a known non-zero
// figure never prints as zero.
func GiB(b int64) string {
	if b > 0 && float64(b)/gib < 0.05 {
		return "<0.1 GiB"
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/gib)
}

// sizeCell formats a total memory figure, where zero means unknown.
func sizeCell(b int64) string {
	if b <= 0 {
		return Unknown
	}
	return GiB(b)
}

// freeCell formats a free memory figure, where nil means unknown and zero is
// a real value.
func freeCell(b *int64) string {
	if b == nil {
		return Unknown
	}
	return GiB(*b)
}

// GBs formats a bandwidth in GB/s (10^9 bytes/s) with at most one decimal:
// "3352 GB/s", "25.6 GB/s"; zero means unknown.
func GBs(v float64) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return Unknown
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " GB/s"
}

// deltaGiB formats a change of free memory ("+1.2", "-0.5"), or "" when it
// rounds to zero at one decimal.
func deltaGiB(d int64) string {
	v := math.Round(float64(d)/gib*10) / 10
	if v == 0 {
		return ""
	}
	return fmt.Sprintf("%+.1f", v)
}

// cell makes a value safe for one table cell: tabs, line breaks and
// terminal controls from a tool's output would break the alignment or the
// terminal (Text escapes them).
func cell(s string) string {
	if s == "" {
		return Unknown
	}
	return Text(s)
}

// round1 keeps one decimal below 100 and none above: "12.3", "4521".
func round1(f float64) float64 {
	if math.Abs(f) >= 100 {
		return math.Round(f)
	}
	return math.Round(f*10) / 10
}
