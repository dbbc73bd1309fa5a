package schema

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testSchema exercises every supported keyword.
const testSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "test", "title": "t", "description": "d",
  "type": "object",
  "required": ["id", "kind"],
  "properties": {
    "id": {"type": "string", "pattern": "^[a-z]+:[0-9]+$", "minLength": 3, "maxLength": 10},
    "kind": {"enum": ["cpu", "gpu"]},
    "version": {"const": 1},
    "bytes": {"type": "integer", "minimum": 0, "maximum": 100},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
    "node": {"$ref": "#/$defs/node"},
    "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    "any": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
    "both": {"allOf": [{"type": "integer"}, {"minimum": 5}]},
    "strict": {"type": "object", "properties": {"a": true}, "additionalProperties": false},
    "typed": {"type": "object", "additionalProperties": {"type": "number"}},
    "never": false,
    "nullable": {"type": ["string", "null"]}
  },
  "$defs": {
    "node": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "child": {"$ref": "#/$defs/node"}}}
  }
}`

func TestValidate(t *testing.T) {
	s, err := Compile([]byte(testSchema))
	require.NoError(t, err)
	cases := []struct {
		name, doc string
		want      []string // expected error substrings; empty = valid
	}{
		{"minimal", `{"id":"cpu:0","kind":"cpu"}`, nil},
		{"all valid", `{"id":"cuda:1","kind":"gpu","version":1.0,"bytes":100,"ratio":0.5,"tags":["a"],
			"node":{"id":1,"child":{"id":2}},"either":"x","any":null,"both":7,"strict":{"a":1},
			"typed":{"x":1.5},"nullable":null}`, nil},
		{"extra root field allowed", `{"id":"cpu:0","kind":"cpu","future":{"x":1}}`, nil},
		{"not an object", `[1]`, []string{"is array, want object"}},
		{"missing required", `{"id":"cpu:0"}`, []string{`required property "kind" is missing`}},
		{"wrong type", `{"id":5,"kind":"cpu"}`, []string{"/id: is integer, want string"}},
		{"pattern", `{"id":"CPU0","kind":"cpu"}`, []string{`does not match`}},
		{"minLength", `{"id":"a:","kind":"cpu"}`, []string{"minLength 3", "does not match"}},
		{"maxLength", `{"id":"abcdefghij:1","kind":"cpu"}`, []string{"maxLength 10"}},
		{"enum", `{"id":"cpu:0","kind":"tpu"}`, []string{`"tpu" is not one of`}},
		{"const", `{"id":"cpu:0","kind":"cpu","version":2}`, []string{"/version: 2 is not 1"}},
		{"integer", `{"id":"cpu:0","kind":"cpu","bytes":1.5}`, []string{"/bytes: is number, want integer"}},
		{"minimum", `{"id":"cpu:0","kind":"cpu","bytes":-1}`, []string{"violates minimum 0"}},
		{"maximum", `{"id":"cpu:0","kind":"cpu","bytes":101}`, []string{"violates maximum 100"}},
		{"exclusiveMinimum", `{"id":"cpu:0","kind":"cpu","ratio":0}`, []string{"violates exclusiveMinimum 0"}},
		{"exclusiveMaximum", `{"id":"cpu:0","kind":"cpu","ratio":1.0}`, []string{"violates exclusiveMaximum 1"}},
		{"below exclusiveMaximum", `{"id":"cpu:0","kind":"cpu","ratio":0.999999999999999999999}`, nil},
		{"items", `{"id":"cpu:0","kind":"cpu","tags":["a",2]}`, []string{"/tags/1: is integer, want string"}},
		{"minItems", `{"id":"cpu:0","kind":"cpu","tags":[]}`, []string{"want at least 1"}},
		{"maxItems", `{"id":"cpu:0","kind":"cpu","tags":["a","b","c"]}`, []string{"has 3 items, want at most 2"}},
		{"at maxItems", `{"id":"cpu:0","kind":"cpu","tags":["a","b"]}`, nil},
		{"ref recursion", `{"id":"cpu:0","kind":"cpu","node":{"id":1,"child":{"id":"x"}}}`, []string{"/node/child/id: is string"}},
		{"ref required", `{"id":"cpu:0","kind":"cpu","node":{"child":{"id":1}}}`, []string{`/node: required property "id"`}},
		{"oneOf none", `{"id":"cpu:0","kind":"cpu","either":true}`, []string{"matches none of oneOf"}},
		{"anyOf none", `{"id":"cpu:0","kind":"cpu","any":1}`, []string{"matches none of anyOf"}},
		{"allOf", `{"id":"cpu:0","kind":"cpu","both":3}`, []string{"violates minimum 5"}},
		{"additionalProperties false", `{"id":"cpu:0","kind":"cpu","strict":{"a":1,"b":2}}`, []string{`property "b" is not allowed`}},
		{"additionalProperties schema", `{"id":"cpu:0","kind":"cpu","typed":{"x":"1"}}`, []string{"/typed/x: is string, want number"}},
		{"false schema", `{"id":"cpu:0","kind":"cpu","never":1}`, []string{"/never: no value is allowed"}},
		{"type list", `{"id":"cpu:0","kind":"cpu","nullable":1}`, []string{"want string or null"}},
		{"several errors", `{"id":1,"kind":"x"}`, []string{"/id: is integer", "/kind: \"x\" is not one of"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Validate([]byte(c.doc))
			if len(c.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			var es Errors
			require.ErrorAs(t, err, &es)
			assert.Len(t, es, len(c.want), "errors: %v", err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestOneOfMoreThanOne(t *testing.T) {
	s, err := Compile([]byte(`{"oneOf":[{"type":"integer"},{"minimum":0}]}`))
	require.NoError(t, err)
	assert.NoError(t, s.Validate([]byte(`-1`)))
	assert.ErrorContains(t, s.Validate([]byte(`1`)), "matches 2 branches of oneOf")
}

func TestEqualIsJSONEquality(t *testing.T) {
	s, err := Compile([]byte(`{"const":{"a":[1,{"b":null}],"c":"x"}}`))
	require.NoError(t, err)
	assert.NoError(t, s.Validate([]byte(`{"c":"x","a":[1.0,{"b":null}]}`)))
	assert.Error(t, s.Validate([]byte(`{"c":"x","a":[1,{"b":false}]}`)))
	assert.Error(t, s.Validate([]byte(`{"c":"x","a":[1,{"b":null}],"d":1}`)))
}

// uniqueItems true (draft 2020-12 validation §6.4.3): no two items of an
// array are equal, by JSON equality (1 and 1.0 are one number, objects
// whatever their key order); false and non-arrays assert nothing.
func TestUniqueItems(t *testing.T) {
	s, err := Compile([]byte(`{"properties":{"ids":{"type":"array","uniqueItems":true},"any":{"uniqueItems":false}}}`))
	require.NoError(t, err)
	for doc, want := range map[string]string{
		`{"ids":["a","b","a"]}`:                       `/ids: items 0 and 2 are equal ("a")`,
		`{"ids":[1,2,1.0]}`:                           `/ids: items 0 and 2 are equal (1.0)`,
		`{"ids":[{"a":1,"b":[2]},{"b":[2.0],"a":1}]}`: `/ids: items 0 and 1 are equal`,
		`{"ids":[[1,"x"],[1,"x"]]}`:                   `/ids: items 0 and 1 are equal`,
		`{"ids":[null,false,null]}`:                   `/ids: items 0 and 2 are equal (null)`,
		`{"ids":["a","b","c"]}`:                       ``,
		`{"ids":[1,"1",[1],{"1":1},true,null]}`:       ``,
		`{"ids":[{"a":1},{"a":2}]}`:                   ``,
		`{"ids":[]}`:                                  ``,
		`{"ids":"aa"}`:                                `is string, want array`,
		`{"any":["a","a"]}`:                           ``,
	} {
		err := s.Validate([]byte(doc))
		if want == "" {
			assert.NoError(t, err, doc)
			continue
		}
		assert.ErrorContains(t, err, want, doc)
	}
}

func TestValidateRejectsNonJSON(t *testing.T) {
	s, err := Compile([]byte(`true`))
	require.NoError(t, err)
	assert.ErrorContains(t, s.Validate([]byte(`{"a":`)), "instance")
	assert.ErrorContains(t, s.Validate([]byte(`{} {}`)), "trailing data")
	assert.NoError(t, s.Validate([]byte(`{"anything":[1,2]}`)))
}

func TestCompileRejects(t *testing.T) {
	cases := map[string]string{
		"unsupported keyword":   `{"type":"object","patternProperties":{}}`,
		"nested unsupported":    `{"properties":{"a":{"format":"uri"}}}`,
		"unknown type":          `{"type":"int"}`,
		"bad pattern":           `{"pattern":"("}`,
		"remote ref":            `{"$ref":"https://example.com/s.json"}`,
		"dangling ref":          `{"$ref":"#/$defs/missing"}`,
		"required not strings":  `{"required":[1]}`,
		"empty oneOf":           `{"oneOf":[]}`,
		"schema not object":     `{"items":3}`,
		"negative minItems":     `{"minItems":-1}`,
		"fractional maxItems":   `{"maxItems":1.5}`,
		"uniqueItems not bool":  `{"uniqueItems":1}`,
		"exclusiveMaximum text": `{"exclusiveMaximum":"1"}`,
		"minimum not a number":  `{"minimum":"0"}`,
		"not json":              `{`,
		"enum not array":        `{"enum":"a"}`,
		"properties not object": `{"properties":[]}`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Compile([]byte(doc))
			assert.Error(t, err)
		})
	}
}

func TestRefToRootAndEscapes(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"a/b":{"$ref":"#"}},"additionalProperties":{"type":"integer"}}`))
	require.NoError(t, err)
	assert.NoError(t, s.Validate([]byte(`{"a/b":{"a/b":{"x":1}}}`)))
	err = s.Validate([]byte(`{"a/b":{"x":"no"}}`))
	assert.ErrorContains(t, err, "/a~1b/x: is string")
}
