package strictjson

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// What check can find wrong. Syntax problems are only detected as far as
// walking the value needs; the decoders that follow judge the rest.
var (
	errTrailing = errors.New("trailing data after the JSON value")
	errSyntax   = errors.New("malformed JSON")
)

// shapeError is a well-formed value the target type cannot take: an unknown
// key or a value of the wrong JSON type. It says so in the contract's words
// (docs/requests.md), never in the decoder's, which name Go types. path is
// where the value sits, innermost segment last, filled in on the way out of
// the walk so the happy path costs nothing.
type shapeError struct {
	path []string
	msg  string
}

func (e *shapeError) Error() string {
	if len(e.path) == 0 {
		return e.msg
	}
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		seg := e.path[i]
		if i != len(e.path)-1 && !strings.HasPrefix(seg, "[") {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String() + ": " + e.msg
}

// within prepends a path segment (a key, or "[i]") to a shapeError.
func within(err error, seg string) error {
	if se, ok := err.(*shapeError); ok {
		se.path = append(se.path, seg)
	}
	return err
}

// duplicateKey is a key found twice in one object.
type duplicateKey struct{ key string }

func (d *duplicateKey) Error() string { return fmt.Sprintf("key %q appears more than once", d.key) }

// maxDepth bounds the nesting check recurses through (the api layer refuses
// more than 128 levels before any decoding).
const maxDepth = 1000

// check walks data once, guided by the type it will be decoded into: each
// object decoded into a struct may name a field once (matched the way the
// decoder matches: exactly, else ignoring case), and, when strict, only
// fields the struct has; objects decoded into maps or interfaces may not
// repeat a key; nothing may follow the value. json.RawMessage values are
// skipped: whoever decodes them later checks them with this package.
func check(data []byte, t reflect.Type, strict bool) error {
	return (&scanner{data: data, strict: strict}).whole(t)
}

// syntaxProblem is the first malformed text, repeated key or trailing data
// in data, found by walking past every shape problem (an unknown key, a
// value of the wrong type) and into json.RawMessage values, which are
// decoded with this package later. It runs after check found a shape
// problem, so that invalid_json outranks invalid_argument wherever in the
// text each sits (docs/requests.md, include/ai_hwaccel.h "Error codes"); nil when there is none.
func syntaxProblem(data []byte, t reflect.Type) error {
	err := (&scanner{data: data, lenient: true}).whole(t)
	var se *shapeError
	if errors.As(err, &se) {
		return nil // not reached: a lenient walk reports no shape
	}
	return err
}

// whole walks the one value data must hold and refuses what follows it.
func (s *scanner) whole(t reflect.Type) error {
	if err := s.value(t, 0); err != nil {
		return err
	}
	s.space()
	if s.pos != len(s.data) {
		return errTrailing
	}
	return nil
}

type scanner struct {
	data   []byte
	pos    int
	strict bool
	// unmarshal runs each value's own UnmarshalJSON (locate): off on the
	// way in, where the decoder runs them once.
	unmarshal bool
	// lenient walks a value of the wrong JSON type, and a raw value, as
	// any JSON instead of stopping or skipping (syntaxProblem); strict is
	// off with it, so unknown keys are walked too.
	lenient bool
}

// locate is where in data a type's own UnmarshalJSON refuses its value,
// as a shapeError whose message is that error's; nil when none does. It
// walks only after the decoder failed, to say where.
func locate(data []byte, t reflect.Type, strict bool) *shapeError {
	s := scanner{data: data, strict: strict, unmarshal: true}
	var se *shapeError
	if errors.As(s.value(t, 0), &se) {
		return se
	}
	return nil
}

// ownUnmarshal runs t's UnmarshalJSON on the value at the scanner, a
// shapeError with its message when it refuses it.
func (s *scanner) ownUnmarshal(t reflect.Type) error {
	start := s.pos
	if err := s.skip(); err != nil {
		return err
	}
	u, ok := reflect.New(t).Interface().(json.Unmarshaler)
	if !ok {
		return nil
	}
	var e *errs.Error
	if err := u.UnmarshalJSON(s.data[start:s.pos]); errors.As(err, &e) {
		return &shapeError{msg: e.Message}
	}
	return nil
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// shape is how check walks a value of a Go type.
type shape int

const (
	shapeAny    shape = iota // interface, or a type with its own UnmarshalJSON: any JSON, keys unique
	shapeRaw                 // json.RawMessage: skipped
	shapeStruct              // object keys are fields
	shapeMap                 // object keys are map keys
	shapeList                // slice or array
	shapeScalar              // string, number, bool
)

func shapeOf(t reflect.Type) (reflect.Type, shape) {
	if t == nil {
		return nil, shapeAny
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawMessageType:
		return t, shapeRaw
	case reflect.PointerTo(t).Implements(unmarshalerType), reflect.PointerTo(t).Implements(textUnmarshalerType):
		return t, shapeAny
	}
	switch t.Kind() {
	case reflect.Struct:
		return t, shapeStruct
	case reflect.Map:
		return t, shapeMap
	case reflect.Slice, reflect.Array:
		return t, shapeList
	case reflect.Interface:
		return t, shapeAny
	}
	return t, shapeScalar
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value(t reflect.Type, depth int) error {
	if depth > maxDepth {
		return errSyntax
	}
	s.space()
	if s.pos >= len(s.data) {
		return errSyntax
	}
	t, sh := shapeOf(t)
	if sh == shapeRaw {
		if !s.lenient {
			return s.skip()
		}
		t, sh = nil, shapeAny
	}
	if s.unmarshal && sh == shapeAny && t != nil && t.Kind() != reflect.Interface {
		return s.ownUnmarshal(t)
	}
	if err := s.kindCheck(t, sh); err != nil {
		if !s.lenient {
			return err
		}
		t, sh = nil, shapeAny
	}
	switch s.data[s.pos] {
	case '{':
		switch sh {
		case shapeStruct:
			return s.structObject(fieldsOf(t), depth)
		case shapeMap:
			return s.mapObject(t.Elem(), depth)
		}
		return s.mapObject(nil, depth)
	case '[':
		var elem reflect.Type
		if sh == shapeList {
			elem = t.Elem()
		}
		return s.list(elem, depth)
	case '"':
		_, err := s.str()
		return err
	}
	return s.literal()
}

// structObject checks an object decoded into a struct with fields fs.
func (s *scanner) structObject(fs *fieldSet, depth int) error {
	var seenBits uint64 // fields 0-63; seen holds the rest
	var seen []bool
	var unknown []string
	return s.members(func(key []byte) error {
		i, ok := fs.lookup(key)
		if !ok {
			if s.strict {
				return &shapeError{msg: unknownFieldMessage(string(key), fs.names)}
			}
			for _, k := range unknown {
				if k == string(key) {
					return &duplicateKey{k}
				}
			}
			unknown = append(unknown, string(key))
			return s.value(nil, depth+1)
		}
		if i < 64 {
			if seenBits&(1<<i) != 0 {
				return &duplicateKey{string(key)}
			}
			seenBits |= 1 << i
			return within(s.value(fs.types[i], depth+1), fs.names[i])
		}
		if seen == nil {
			seen = make([]bool, len(fs.types))
		}
		if seen[i] {
			return &duplicateKey{string(key)}
		}
		seen[i] = true
		return within(s.value(fs.types[i], depth+1), fs.names[i])
	})
}

// mapObject checks an object decoded into a map (or an interface: elem
// nil): every key once, compared exactly.
func (s *scanner) mapObject(elem reflect.Type, depth int) error {
	var keys []string
	var set map[string]bool
	return s.members(func(b []byte) error {
		key := string(b)
		if set == nil && len(keys) >= 16 {
			set = make(map[string]bool, 2*len(keys))
			for _, k := range keys {
				set[k] = true
			}
		}
		if set != nil {
			if set[key] {
				return &duplicateKey{key}
			}
			set[key] = true
		} else {
			for _, k := range keys {
				if k == key {
					return &duplicateKey{key}
				}
			}
			keys = append(keys, key)
		}
		return within(s.value(elem, depth+1), key)
	})
}

// members walks the object at s.pos, calling member for each key with the
// scanner at its value.
func (s *scanner) members(member func(key []byte) error) error {
	s.pos++ // '{'
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return errSyntax
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return errSyntax
		}
		s.pos++
		if err := member(key); err != nil {
			return err
		}
		if done, err := s.afterElement('}'); done || err != nil {
			return err
		}
	}
}

// afterElement reads what follows an element of an object or a list: a
// comma (more follow) or the closing byte (done).
func (s *scanner) afterElement(closing byte) (done bool, err error) {
	s.space()
	if s.pos >= len(s.data) {
		return false, errSyntax
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return false, nil
	case closing:
		s.pos++
		return true, nil
	}
	return false, errSyntax
}

func (s *scanner) list(elem reflect.Type, depth int) error {
	s.pos++ // '['
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := s.value(elem, depth+1); err != nil {
			return within(err, "["+strconv.Itoa(i)+"]")
		}
		if done, err := s.afterElement(']'); done || err != nil {
			return err
		}
	}
}

// str reads the string at s.pos and returns its text (escapes decoded),
// without copying when it has no escape.
func (s *scanner) str() ([]byte, error) {
	start := s.pos
	end := stringEnd(s.data, start+1)
	if end >= len(s.data) {
		return nil, errSyntax
	}
	s.pos = end + 1
	raw := s.data[start+1 : end]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, nil
	}
	var out string
	if err := json.Unmarshal(s.data[start:end+1], &out); err != nil {
		return nil, errSyntax
	}
	return []byte(out), nil
}

// literal reads a number, true, false or null.
func (s *scanner) literal() error {
	start := s.pos
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if s.pos == start {
				return errSyntax
			}
			return nil
		case '{', '[', '"', ':':
			return errSyntax
		}
		s.pos++
	}
	if s.pos == start {
		return errSyntax
	}
	return nil
}

// skip passes over one value without looking inside it (brackets are
// counted outside strings).
func (s *scanner) skip() error {
	s.space()
	if s.pos >= len(s.data) {
		return errSyntax
	}
	switch s.data[s.pos] {
	case '"':
		_, err := s.str()
		return err
	case '{', '[':
	default:
		return s.literal()
	}
	d := 0
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '"':
			s.pos = stringEnd(s.data, s.pos+1)
		case '{', '[':
			d++
		case '}', ']':
			d--
			if d == 0 {
				s.pos++
				return nil
			}
		}
		s.pos++
	}
	return errSyntax
}

// Depth returns the deepest nesting of [ and { outside strings in b,
// stopping early once past limit. Strings are skipped with bytes.IndexByte:
// in a registry most bytes are inside strings. It is how the api layer
// refuses deep input before any decoder sees it.
func Depth(b []byte, limit int) int {
	d, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i+1)
		case '[', '{':
			d++
			if d > deepest {
				deepest = d
				if deepest > limit {
					return deepest
				}
			}
		case ']', '}':
			d--
		}
	}
	return deepest
}

// stringEnd returns the index of the quote that closes the string whose
// content starts at i (a backslash escapes the byte after it), or len(b)
// when the string is not closed.
func stringEnd(b []byte, i int) int {
	for i < len(b) {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		e := bytes.IndexByte(b[i:i+q], '\\')
		if e < 0 {
			return i + q
		}
		i += e + 2
	}
	return len(b)
}

// fieldSet is the JSON names of a struct's fields, as the decoder matches
// them (embedded structs' fields promoted, "-" and unexported fields left
// out).
type fieldSet struct {
	names []string
	types []reflect.Type
	exact map[string]int
}

// lookup finds the field a key sets: an exact name, else the first name
// equal under case folding (encoding/json's rule, which goccy follows).
func (fs *fieldSet) lookup(key []byte) (int, bool) {
	if i, ok := fs.exact[string(key)]; ok {
		return i, true
	}
	for i, n := range fs.names {
		if strings.EqualFold(n, string(key)) {
			return i, true
		}
	}
	return 0, false
}

var fieldSets sync.Map // reflect.Type → *fieldSet

func fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{exact: map[string]int{}}
	addFields(fs, t)
	fieldSets.Store(t, fs)
	return fs
}

func addFields(fs *fieldSet, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				addFields(fs, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := fs.exact[name]; dup {
			continue
		}
		fs.exact[name] = len(fs.names)
		fs.names = append(fs.names, name)
		fs.types = append(fs.types, f.Type)
	}
}
