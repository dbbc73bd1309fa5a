package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text makes a string from the machine (a directory name, a vendor tool's
// output, a model file's metadata) safe to print for a human: control
// characters (C0, DEL, C1: ESC sequences could rewrite a terminal),
// line and paragraph separators, the bidirectional controls that reorder
// what a reader sees (Trojan Source, CVE-2021-42574:
// https://trojansource.codes/trojan-source.pdf) and bytes that are not
// UTF-8 print as Go-style escapes (\x1b, \n, \u202e). Printable text,
// accented letters and CJK included, is unchanged.
//
// JSON output needs none of this: its encoder escapes every control
// character already.
func Text(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape is the fast path of Text: almost every string is clean.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			if c < 0x80 {
				return true
			}
			// Non-ASCII: decide rune by rune.
			for _, r := range s[i:] {
				if r == utf8.RuneError || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unsafeRune(r) {
					return true
				}
			}
			return !utf8.ValidString(s[i:])
		}
	}
	return false
}

// unsafeRune reports the format characters that change how the text
// around them is laid out: the bidirectional embeddings, overrides and
// isolates (U+202A-U+202E, U+2066-U+2069), the directional marks (U+200E,
// U+200F, U+061C) and the line and paragraph separators (U+2028, U+2029).
// Unicode Standard Annex #9 (https://www.unicode.org/reports/tr9/) lists
// the bidi controls.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
