package cli

import "bytes"

// UnescapeHTML undoes the HTML escaping of a JSON text: the engine's
// encoder (goccy/go-json, like encoding/json) writes <, > and & inside
// strings as \u003c, \u003e and \u0026, which is safe in HTML but makes
// "bf16 > fp16" unreadable on a terminal. The result is the same JSON value;
// every other escape is kept as it was (\\u003e, an escaped backslash
// followed by "u003e", stays).
func UnescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(b):
			if r, ok := htmlEscape(b[i:]); ok {
				out = append(out, r)
				i += 5
				continue
			}
			out = append(out, c, b[i+1]) // keep the escape pair whole
			i++
			continue
		}
		out = append(out, c)
	}
	return out
}

// htmlEscape reads \u003c, \u003e or \u0026 (either case of hex digit) at
// the start of b.
func htmlEscape(b []byte) (byte, bool) {
	if len(b) < 6 || b[1] != 'u' {
		return 0, false
	}
	switch string(bytes.ToLower(b[2:6])) {
	case "003c":
		return '<', true
	case "003e":
		return '>', true
	case "0026":
		return '&', true
	}
	return 0, false
}
