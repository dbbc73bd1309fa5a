package modelio

import (
	"errors"

	json "github.com/goccy/go-json"
)

// eachMember calls f with the raw key (quotes included) and raw value of
// every member of the JSON object obj, in order, without building a map or
// copying values: a safetensors header of 100 MB holds millions of small
// tensor entries, and decoding it into map[string]json.RawMessage cost about
// eight times its size in allocations (issue 14 item 5). obj must already be
// known to be valid JSON (json.Valid); a top-level value that is not an
// object is an error.
func eachMember(obj []byte, f func(key, value []byte) error) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return errors.New("header is not a JSON object")
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		keyEnd := skipString(obj, i)
		key := obj[i:keyEnd]
		i = skipSpace(obj, keyEnd)
		i = skipSpace(obj, i+1) // ':'
		valueEnd := skipValue(obj, i)
		if err := f(key, obj[i:valueEnd]); err != nil {
			return err
		}
		i = skipSpace(obj, valueEnd)
		if i >= len(obj) || obj[i] == '}' {
			return nil
		}
		i = skipSpace(obj, i+1) // ','
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the JSON string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the JSON value starting at b[i]. Nesting
// is counted, not recursed into, so depth costs no stack.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// memberName is the decoded text of a raw JSON key.
func memberName(raw []byte) (string, error) {
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' {
			var s string
			err := json.Unmarshal(raw, &s)
			return s, err
		}
	}
	return string(raw[1 : len(raw)-1]), nil
}
