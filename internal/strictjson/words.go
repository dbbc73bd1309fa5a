package strictjson

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
)

// This file says what a value should have been in the words of the contract
// (docs/requests.md: "a string", "an integer", "an object"), so that no Go
// type or package name reaches a host: the decoder's own messages read
// "cannot unmarshal string into Go struct field wireRequest.devices of type
// []string".

// kindCheck refuses a value whose JSON type t cannot take, before the
// decoder does. null is taken by every type (it leaves the target unset).
func (s *scanner) kindCheck(t reflect.Type, sh shape) error {
	c := s.data[s.pos]
	if c == 'n' {
		return nil
	}
	got := jsonKind(s.data[s.pos:])
	switch sh {
	case shapeStruct, shapeMap:
		if c != '{' {
			return &shapeError{msg: "expected an object, got " + got}
		}
	case shapeList:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return nil // []byte: base64 text
		}
		if c != '[' {
			return &shapeError{msg: "expected " + wantWords(t) + ", got " + got}
		}
	case shapeScalar:
		if !takes(t.Kind(), s.data[s.pos:]) {
			return &shapeError{msg: "expected " + wantWords(t) + ", got " + got}
		}
		if n := overflows(t.Kind(), s.data[s.pos:]); n != "" {
			return &shapeError{msg: n + " is outside the range of " + rangeWords(t.Kind()) +
				" (at most " + strconv.FormatFloat(maxOf(t.Kind()), 'g', 2, 64) + " in magnitude)"}
		}
	}
	return nil
}

// overflows is the text of the number at the start of b when it is too
// large for kind k (1e400 in a float64, 2^64 in an int64): the decoder
// would call it a value of the wrong type. "" when it fits or k is no
// number. Only a float with an exponent or over 38 digits can overflow, so
// others are not parsed.
func overflows(k reflect.Kind, b []byte) string {
	if bits := intBits(k); bits > 0 {
		end := 0
		for end < len(b) && strings.IndexByte("-0123456789", b[end]) >= 0 {
			end++
		}
		var err error
		if k >= reflect.Uint && k <= reflect.Uintptr {
			_, err = strconv.ParseUint(string(b[:end]), 10, bits)
		} else {
			_, err = strconv.ParseInt(string(b[:end]), 10, bits)
		}
		if errors.Is(err, strconv.ErrRange) {
			return string(b[:end])
		}
		return ""
	}
	if k != reflect.Float32 && k != reflect.Float64 {
		return ""
	}
	end := 0
	exp := false
	for end < len(b) && strings.IndexByte("+-.0123456789eE", b[end]) >= 0 {
		exp = exp || b[end] == 'e' || b[end] == 'E'
		end++
	}
	if !exp && end <= 38 {
		return ""
	}
	bits := 64
	if k == reflect.Float32 {
		bits = 32
	}
	if f, err := strconv.ParseFloat(string(b[:end]), bits); err != nil && math.IsInf(f, 0) {
		return string(b[:end])
	}
	return ""
}

// maxOf is the largest magnitude a number of kind k holds.
func maxOf(k reflect.Kind) float64 {
	switch bits := intBits(k); {
	case bits > 0 && k >= reflect.Uint && k <= reflect.Uintptr:
		return math.Pow(2, float64(bits)) - 1
	case bits > 0:
		return math.Pow(2, float64(bits-1)) - 1
	case k == reflect.Float32:
		return math.MaxFloat32
	}
	return math.MaxFloat64
}

// rangeWords names the kind of number whose range a value left: "an
// integer" for the integer kinds, "a number" for floats.
func rangeWords(k reflect.Kind) string {
	if intBits(k) > 0 {
		return "an integer"
	}
	return "a number"
}

// intBits is the width of integer kind k, 0 for any other kind.
func intBits(k reflect.Kind) int {
	switch k {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	case reflect.Int64, reflect.Uint64:
		return 64
	case reflect.Int, reflect.Uint, reflect.Uintptr:
		return strconv.IntSize
	}
	return 0
}

// takes reports whether a scalar of kind k can hold the JSON value at the
// start of b.
func takes(k reflect.Kind, b []byte) bool {
	c := b[0]
	switch k {
	case reflect.String:
		return c == '"'
	case reflect.Bool:
		return c == 't' || c == 'f'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if c != '-' && (c < '0' || c > '9') {
			return false
		}
		for _, x := range b {
			switch {
			case x == '.' || x == 'e' || x == 'E':
				return false
			case x == ',' || x == '}' || x == ']' || x == ' ' || x == '\t' || x == '\n' || x == '\r':
				return true
			}
		}
		return true
	case reflect.Float32, reflect.Float64:
		return c == '-' || (c >= '0' && c <= '9')
	}
	return true
}

// jsonKind names the JSON value at the start of b ("a string", "the number
// 1.5").
func jsonKind(b []byte) string {
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	end := 0
	for end < len(b) && end < 24 && !strings.ContainsRune(",}] \t\n\r", rune(b[end])) {
		end++
	}
	return "the number " + string(b[:end])
}

// wantWords names what a value of Go type t must be in JSON.
func wantWords(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		elem := wantWords(t.Elem())
		if elem == "a value" {
			return "an array"
		}
		return "an array of " + plural(elem)
	}
	return "a value"
}

// plural turns "a string" into "strings", "an object" into "objects".
func plural(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "an "), "a ")
	switch {
	case s == "true or false":
		return "booleans"
	case strings.HasPrefix(s, "array of "):
		return "arrays"
	}
	return s + "s"
}

// unknownFieldMessage refuses key, naming the closest known field when one
// is near (a typo: "contxt_length" for "context_length"), else listing them.
func unknownFieldMessage(key string, known []string) string {
	if best := closest(key, known); best != "" {
		return "unknown field \"" + key + "\"; did you mean \"" + best + "\"?"
	}
	if len(known) > 0 && len(known) <= 24 {
		return "unknown field \"" + key + "\" (known: " + strings.Join(known, ", ") + ")"
	}
	return "unknown field \"" + key + "\""
}

// closest is the known name within a small edit distance of key (a third
// of its length, at most 3), or "" when none is that near: a one- or
// two-letter key has no suggestion.
func closest(key string, known []string) string {
	limit := min(len(key)/3, 3)
	if limit == 0 {
		return ""
	}
	best, bestD := "", limit+1
	for _, k := range known {
		// The distance is at least the difference in length: a key too
		// long or short to come within the limit is not measured (an
		// unknown key of megabytes would cost a table of its length
		// times each known key's).
		if abs(len(key)-len(k)) > limit {
			continue
		}
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the optimal-string-alignment distance of a and b in
// bytes: insertions, deletions, substitutions and swaps of two neighbours
// ("qunat" for "quant") cost one each.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Describe says why a decoder refused a document, for documents not decoded
// through Decode (a model's config.json, a snapshot manifest, a vendor
// tool's output): the syntax problem as the decoder words it without its
// "json: " prefix, or for a value of the wrong type only the JSON type it
// had, never the Go type it was meant for.
func Describe(err error) string {
	var ue *json.UnmarshalTypeError
	if errors.As(err, &ue) {
		if ue.Field != "" {
			return ue.Field + ": a value of the wrong type (" + ue.Value + ")"
		}
		return "a value of the wrong type (" + ue.Value + ")"
	}
	msg := err.Error()
	if strings.HasSuffix(msg, "EOF") {
		return "unexpected end of input"
	}
	return decoderWords(msg)
}
