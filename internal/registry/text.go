package registry

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// UnsafeTextReplacement replaces each character ScrubText removes.
const UnsafeTextReplacement = '\uFFFD'

// IsUnsafeText reports the characters no string of a registry answer may
// hold (issue 23 item 11: hosts print device names and log warning
// messages, and these characters rewrite a terminal or reorder what a reader
// sees): C0 controls U+0000-U+001F (tab and newline included), DEL U+007F,
// C1 controls U+0080-U+009F (ESC and CSI start terminal escape sequences),
// and the Unicode bidirectional formatting characters U+061C, U+200E,
// U+200F, U+202A-U+202E and U+2066-U+2069 (Unicode Standard Annex #9,
// https://www.unicode.org/reports/tr9/, section 2; U+202E is the
// right-to-left override used in "Trojan Source" attacks, CVE-2021-42574).
func IsUnsafeText(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// ScrubString returns s with every unsafe character (IsUnsafeText) and every
// invalid UTF-8 byte replaced by U+FFFD; s itself when it has none.
func ScrubString(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, IsUnsafeText) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || IsUnsafeText(r) {
			r = UnsafeTextReplacement
		}
		b.WriteRune(r)
		i += size
	}
	return b.String()
}

// ScrubText applies ScrubString to every string in r (device names, ids,
// warning messages, map keys and values), in place, so that no answer built
// from a detection carries them, whichever backend read the string.
func ScrubText(r *Registry) {
	if r != nil {
		scrubValue(reflect.ValueOf(r).Elem())
	}
}

func scrubValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := ScrubString(v.String()); s != v.String() {
				v.SetString(s)
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scrubValue(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				scrubValue(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			scrubValue(v.Index(i))
		}
	case reflect.Map:
		scrubMap(v)
	}
}

// holdsNoString reports kinds that cannot hold a string.
func holdsNoString(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	}
	return false
}

// scrubMap rewrites a map whose keys or string values need scrubbing.
func scrubMap(v reflect.Value) {
	if v.IsNil() {
		return
	}
	it := v.MapRange()
	type entry struct{ oldKey, key, val reflect.Value }
	var changed []entry
	kt, et := v.Type().Key(), v.Type().Elem()
	flat := kt.Kind() == reflect.String && (et.Kind() == reflect.String || holdsNoString(et.Kind()))
	for it.Next() {
		k, val := it.Key(), it.Value()
		if flat { // map[string]string and the like: no copy unless a string changes
			nk, nv, dirty := k, val, false
			if s := ScrubString(k.String()); s != k.String() {
				nk, dirty = reflect.ValueOf(s).Convert(kt), true
			}
			if et.Kind() == reflect.String {
				if s := ScrubString(val.String()); s != val.String() {
					nv, dirty = reflect.ValueOf(s).Convert(et), true
				}
			}
			if dirty {
				changed = append(changed, entry{k, nk, nv})
			}
			continue
		}
		nk := reflect.New(k.Type()).Elem()
		nk.Set(k)
		scrubValue(nk)
		nv := reflect.New(val.Type()).Elem()
		nv.Set(val)
		scrubValue(nv)
		changed = append(changed, entry{k, nk, nv})
	}
	for _, e := range changed {
		v.SetMapIndex(e.oldKey, reflect.Value{})
		v.SetMapIndex(e.key, e.val)
	}
}
