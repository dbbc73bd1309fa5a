package strictjson

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// Int is a JSON member that must be an integer, read exactly from its text
// (wholeNumber) in any form JSON allows: V is its value, or the nearest
// int64 for one beyond int64 (1e400), which a member's range refuses; Text
// is the number as written, which a refusal quotes (Quote). A string, a
// fraction or any other JSON type is invalid_argument, "expected an
// integer, got ..." in the words a Go int member's refusal has (kindCheck),
// so that every integer member of every request is read one way
// (docs/requests.md).
type Int struct {
	V    int64
	Text string
}

// UnmarshalJSON implements json.Unmarshaler.
func (w *Int) UnmarshalJSON(b []byte) error {
	s := bytes.TrimSpace(b)
	if len(s) == 0 {
		return errs.New(errs.InvalidArgument, "expected an integer")
	}
	v, ok := wholeNumber(string(s))
	if !ok || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return errs.New(errs.InvalidArgument, "expected an integer, got %s", jsonKind(s))
	}
	w.V, w.Text = v, string(s)
	return nil
}

// MarshalJSON writes the number as it was read (its value when it was
// set in Go, with no text).
func (w Int) MarshalJSON() ([]byte, error) {
	if w.Text != "" {
		return []byte(w.Text), nil
	}
	return strconv.AppendInt(nil, w.V, 10), nil
}

// Within reports whether the integer lies in [lo, hi].
func (w *Int) Within(lo, hi int64) bool { return w.V >= lo && w.V <= hi }

// Quote is the number as written, cut at 40 bytes (a refusal quotes it).
func (w *Int) Quote() string {
	if len(w.Text) > 40 {
		return w.Text[:40] + "..."
	}
	return w.Text
}

// wholeNumber reads the text of a JSON number exactly, with no float64 in
// between (2^53 + 1 is not 2^53): ok says it is an integer, written in any
// form JSON allows (4096, 4096.0, 4.096e3, -0; a JSON Schema "integer" is
// any number with no fractional part, draft 2020-12 validation §6.1.1);
// v is its value, or math.MaxInt64 / math.MinInt64 for one beyond int64,
// which every integer member's range refuses. Text that is not a JSON
// number (RFC 8259 §6) is not ok.
func wholeNumber(s string) (v int64, ok bool) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	mant, expText, hasExp := strings.Cut(strings.ToLower(body), "e")
	intPart, frac, hasFrac := strings.Cut(mant, ".")
	if !digitsOnly(intPart) || (hasFrac && !digitsOnly(frac)) || (len(intPart) > 1 && intPart[0] == '0') {
		return 0, false
	}
	// The value is digits x 10^exp.
	digits := strings.TrimLeft(intPart+frac, "0")
	exp := -len(frac)
	if hasExp {
		e := strings.TrimPrefix(strings.TrimPrefix(expText, "+"), "-")
		if !digitsOnly(e) {
			return 0, false
		}
		if digits == "" {
			return 0, true // zero, whatever its exponent
		}
		n, err := strconv.Atoi(e)
		if err != nil || n > 1<<20 {
			// An exponent this long: far beyond int64 upward, a
			// fraction downward.
			if strings.HasPrefix(expText, "-") {
				return 0, false
			}
			return saturated(neg), true
		}
		if strings.HasPrefix(expText, "-") {
			n = -n
		}
		exp += n
	}
	if digits == "" {
		return 0, true
	}
	for strings.HasSuffix(digits, "0") {
		digits, exp = digits[:len(digits)-1], exp+1
	}
	if exp < 0 {
		return 0, false // a nonzero digit after the point
	}
	if len(digits)+exp > 19 {
		return saturated(neg), true
	}
	u, err := strconv.ParseUint(digits+strings.Repeat("0", exp), 10, 64)
	switch {
	case err != nil || (!neg && u > math.MaxInt64) || (neg && u > 1<<63):
		return saturated(neg), true
	case neg:
		return -int64(u-1) - 1, true // -2^63 too
	}
	return int64(u), true
}

func saturated(neg bool) int64 {
	if neg {
		return math.MinInt64
	}
	return math.MaxInt64
}

// digitsOnly: one or more ASCII digits.
func digitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
