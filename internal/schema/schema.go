// Package schema validates JSON documents against the project's JSON Schema
// files (schema/*.schema.json). It implements the subset of JSON Schema
// draft 2020-12 those files use, and refuses to compile a schema that uses
// any other keyword: a constraint the validator would silently skip must not
// look checked.
//
// Supported assertions: type, properties, required, additionalProperties
// (boolean or schema), items, minItems, maxItems, uniqueItems, enum, const, minimum,
// maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength,
// pattern, oneOf, anyOf, allOf, and
// $ref to "#" or "#/$defs/<name>". Annotations ($schema, $id, $comment,
// title, description, examples, default, deprecated) are accepted and ignored.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// Schema is a compiled schema document.
type Schema struct {
	root     any
	patterns map[string]*regexp.Regexp
}

// Error is one failed assertion: where in the instance (a JSON pointer) and why.
type Error struct {
	Path    string
	Message string
}

// Error returns "path: message" ("(root)" for the document).
func (e Error) Error() string {
	p := e.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + e.Message
}

// Errors is every failed assertion of one validation.
type Errors []Error

// Error joins the errors' messages with "; ".
func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// annotations are keywords that assert nothing.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"examples": true, "default": true, "deprecated": true, "$defs": true,
}

// assertions are the keywords this validator checks.
var assertions = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "minItems": true, "maxItems": true, "uniqueItems": true, "enum": true, "const": true, "minimum": true,
	"maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "minLength": true, "maxLength": true,
	"pattern": true, "oneOf": true, "anyOf": true, "allOf": true, "$ref": true,
}

var typeNames = map[string]bool{
	"object": true, "array": true, "string": true, "number": true, "integer": true,
	"boolean": true, "null": true,
}

// Compile parses a schema and checks that it uses only supported keywords,
// that every keyword's value has the right shape, that every pattern compiles
// and that every $ref resolves.
func Compile(data []byte) (*Schema, error) {
	root, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s := &Schema{root: root, patterns: map[string]*regexp.Regexp{}}
	if err := s.check(root, "#"); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return s, nil
}

// decode parses JSON keeping numbers exact (json.Number) and rejecting
// trailing data.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func (s *Schema) check(node any, at string) error {
	switch n := node.(type) {
	case bool:
		return nil
	case map[string]any:
		keys := sortedKeys(n)
		for _, k := range keys {
			if !annotations[k] && !assertions[k] {
				return fmt.Errorf("%s: unsupported keyword %q", at, k)
			}
		}
		for _, k := range keys {
			if err := s.checkKeyword(k, n[k], at+"/"+k); err != nil {
				return err
			}
		}
		return nil
	default:
		return fmt.Errorf("%s: a schema must be an object or a boolean", at)
	}
}

func (s *Schema) checkKeyword(k string, v any, at string) error {
	switch k {
	case "$defs", "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: must be an object", at)
		}
		for _, name := range sortedKeys(m) {
			if err := s.check(m[name], at+"/"+name); err != nil {
				return err
			}
		}
	case "items", "additionalProperties":
		return s.check(v, at)
	case "oneOf", "anyOf", "allOf":
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return fmt.Errorf("%s: must be a non-empty array", at)
		}
		for i, sub := range list {
			if err := s.check(sub, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	case "type":
		return checkType(v, at)
	case "required":
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: must be an array of strings", at)
		}
		for _, x := range list {
			if _, ok := x.(string); !ok {
				return fmt.Errorf("%s: must be an array of strings", at)
			}
		}
	case "enum":
		if _, ok := v.([]any); !ok {
			return fmt.Errorf("%s: must be an array", at)
		}
	case "uniqueItems":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: must be a boolean", at)
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		if _, ok := v.(json.Number); !ok {
			return fmt.Errorf("%s: must be a number", at)
		}
	case "minItems", "maxItems", "minLength", "maxLength":
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: must be a non-negative integer", at)
		}
		if i, err := n.Int64(); err != nil || i < 0 {
			return fmt.Errorf("%s: must be a non-negative integer", at)
		}
	case "pattern":
		p, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: must be a string", at)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		s.patterns[p] = re
	case "$ref":
		ref, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: must be a string", at)
		}
		if _, err := s.resolve(ref); err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
	}
	return nil
}

func checkType(v any, at string) error {
	switch t := v.(type) {
	case string:
		if !typeNames[t] {
			return fmt.Errorf("%s: unknown type %q", at, t)
		}
	case []any:
		if len(t) == 0 {
			return fmt.Errorf("%s: empty type list", at)
		}
		for _, x := range t {
			if err := checkType(x, at); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s: must be a type name or a list of them", at)
	}
	return nil
}

// resolve follows a local reference: "#" or a JSON pointer under "#/".
func (s *Schema) resolve(ref string) (any, error) {
	if ref == "#" {
		return s.root, nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("only local references (#/...) are supported, not %q", ref)
	}
	node := s.root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("reference %q does not resolve", ref)
		}
		if node, ok = m[tok]; !ok {
			return nil, fmt.Errorf("reference %q does not resolve", ref)
		}
	}
	return node, nil
}

// Validate checks a JSON document against the schema. It returns nil, an
// Errors listing every failed assertion, or the decoder's error for input
// that is not JSON.
func (s *Schema) Validate(doc []byte) error {
	v, err := decode(doc)
	if err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	if es := s.validate(s.root, v, "", 0); len(es) > 0 {
		return es
	}
	return nil
}

// maxRefDepth stops a self-referencing schema from recursing forever on a
// deep instance.
const maxRefDepth = 256

func (s *Schema) validate(node, v any, path string, depth int) Errors {
	if depth > maxRefDepth {
		return Errors{{path, "schema nesting too deep"}}
	}
	switch n := node.(type) {
	case bool:
		if !n {
			return Errors{{path, "no value is allowed here"}}
		}
		return nil
	case map[string]any:
		var out Errors
		for _, k := range sortedKeys(n) {
			out = append(out, s.keyword(n, k, v, path, depth)...)
		}
		return out
	}
	return Errors{{path, "invalid schema node"}}
}

func (s *Schema) keyword(n map[string]any, k string, v any, path string, depth int) Errors {
	arg := n[k]
	switch k {
	case "type":
		if !hasType(arg, v) {
			return Errors{{path, fmt.Sprintf("is %s, want %s", typeOf(v), typeList(arg))}}
		}
	case "$ref":
		target, err := s.resolve(arg.(string))
		if err != nil {
			return Errors{{path, err.Error()}}
		}
		return s.validate(target, v, path, depth+1)
	case "enum":
		for _, want := range arg.([]any) {
			if equal(want, v) {
				return nil
			}
		}
		return Errors{{path, fmt.Sprintf("%s is not one of %s", short(v), short(arg))}}
	case "const":
		if !equal(arg, v) {
			return Errors{{path, fmt.Sprintf("%s is not %s", short(v), short(arg))}}
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		return checkBound(k, arg.(json.Number), v, path)
	case "minLength", "maxLength":
		str, ok := v.(string)
		if !ok {
			return nil
		}
		limit, _ := arg.(json.Number).Int64()
		l := int64(utf8.RuneCountInString(str))
		if (k == "minLength" && l < limit) || (k == "maxLength" && l > limit) {
			return Errors{{path, fmt.Sprintf("length %d violates %s %d", l, k, limit)}}
		}
	case "pattern":
		str, ok := v.(string)
		if ok && !s.patterns[arg.(string)].MatchString(str) {
			return Errors{{path, fmt.Sprintf("%q does not match %q", str, arg)}}
		}
	case "required":
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		var out Errors
		for _, name := range arg.([]any) {
			if _, ok := obj[name.(string)]; !ok {
				out = append(out, Error{path, fmt.Sprintf("required property %q is missing", name)})
			}
		}
		return out
	case "properties":
		return s.properties(arg.(map[string]any), v, path, depth)
	case "additionalProperties":
		return s.additional(n, arg, v, path, depth)
	case "items":
		arr, ok := v.([]any)
		if !ok {
			return nil
		}
		var out Errors
		for i, x := range arr {
			out = append(out, s.validate(arg, x, path+"/"+strconv.Itoa(i), depth+1)...)
		}
		return out
	case "minItems":
		arr, ok := v.([]any)
		limit, _ := arg.(json.Number).Int64()
		if ok && int64(len(arr)) < limit {
			return Errors{{path, fmt.Sprintf("has %d items, want at least %d", len(arr), limit)}}
		}
	case "maxItems":
		arr, ok := v.([]any)
		limit, _ := arg.(json.Number).Int64()
		if ok && int64(len(arr)) > limit {
			return Errors{{path, fmt.Sprintf("has %d items, want at most %d", len(arr), limit)}}
		}
	case "uniqueItems":
		arr, ok := v.([]any)
		if ok && arg.(bool) {
			return unique(arr, path)
		}
	case "allOf":
		var out Errors
		for _, sub := range arg.([]any) {
			out = append(out, s.validate(sub, v, path, depth+1)...)
		}
		return out
	case "anyOf", "oneOf":
		return s.combine(k, arg.([]any), v, path, depth)
	}
	return nil
}

func (s *Schema) properties(props map[string]any, v any, path string, depth int) Errors {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out Errors
	for _, name := range sortedKeys(props) {
		if x, ok := obj[name]; ok {
			out = append(out, s.validate(props[name], x, path+"/"+escape(name), depth+1)...)
		}
	}
	return out
}

func (s *Schema) additional(n map[string]any, arg, v any, path string, depth int) Errors {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	props, _ := n["properties"].(map[string]any)
	var out Errors
	for _, name := range sortedKeys(obj) {
		if _, declared := props[name]; declared {
			continue
		}
		if b, ok := arg.(bool); ok && !b {
			out = append(out, Error{path, fmt.Sprintf("property %q is not allowed", name)})
			continue
		}
		out = append(out, s.validate(arg, obj[name], path+"/"+escape(name), depth+1)...)
	}
	return out
}

// combine checks anyOf (at least one branch) and oneOf (exactly one).
func (s *Schema) combine(k string, branches []any, v any, path string, depth int) Errors {
	matched := 0
	var first Errors
	for _, sub := range branches {
		es := s.validate(sub, v, path, depth+1)
		if len(es) == 0 {
			matched++
		} else if first == nil {
			first = es
		}
	}
	switch {
	case matched == 0:
		return Errors{{path, fmt.Sprintf("matches none of %s (first branch: %v)", k, first)}}
	case k == "oneOf" && matched > 1:
		return Errors{{path, fmt.Sprintf("matches %d branches of oneOf, want exactly 1", matched)}}
	}
	return nil
}

func checkBound(k string, limit json.Number, v any, path string) Errors {
	num, ok := v.(json.Number)
	if !ok {
		return nil
	}
	c := rat(num).Cmp(rat(limit))
	bad := (k == "minimum" && c < 0) || (k == "maximum" && c > 0) ||
		(k == "exclusiveMinimum" && c <= 0) || (k == "exclusiveMaximum" && c >= 0)
	if bad {
		return Errors{{path, fmt.Sprintf("%s violates %s %s", num, k, limit)}}
	}
	return nil
}

func rat(n json.Number) *big.Rat {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return new(big.Rat)
	}
	return r
}

func hasType(arg, v any) bool {
	switch t := arg.(type) {
	case string:
		return isType(t, v)
	case []any:
		for _, x := range t {
			if isType(x.(string), v) {
				return true
			}
		}
	}
	return false
}

func isType(t string, v any) bool {
	switch x := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case json.Number:
		return t == "number" || (t == "integer" && rat(x).IsInt())
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if rat(x).IsInt() {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func typeList(arg any) string {
	if s, ok := arg.(string); ok {
		return s
	}
	var names []string
	for _, x := range arg.([]any) {
		names = append(names, x.(string))
	}
	return strings.Join(names, " or ")
}

// unique refuses the first item of arr equal to an earlier one (JSON
// equality, as equal: 1 and 1.0 are one number). Items are compared by a
// canonical text, so a list of 65536 device ids costs one pass, not 2^31
// comparisons.
func unique(arr []any, path string) Errors {
	first := make(map[string]int, len(arr))
	for i, x := range arr {
		key := canonical(x)
		if j, ok := first[key]; ok {
			return Errors{{path, fmt.Sprintf("items %d and %d are equal (%s); uniqueItems", j, i, short(x))}}
		}
		first[key] = i
	}
	return nil
}

// canonical is a text equal for two values exactly when equal holds:
// numbers by exact value, object members in key order.
func canonical(v any) string {
	switch x := v.(type) {
	case json.Number:
		return "n" + rat(x).RatString()
	case string:
		return "s" + strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = canonical(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, strconv.Quote(k)+":"+canonical(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v) // true, false, null
}

// equal is JSON equality: numbers compare by value (1 == 1.0), objects by
// their members regardless of order.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		return ok && rat(x).Cmp(rat(y)) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

func escape(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
