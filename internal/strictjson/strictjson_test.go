package strictjson

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

type inner struct {
	A int `json:"a"`
}

type embedded struct {
	E string `json:"e"`
}

type target struct {
	embedded
	ParamsB *float64          `json:"params_b"`
	Name    string            `json:"name"`
	In      inner             `json:"in"`
	List    []inner           `json:"list"`
	Env     map[string]string `json:"env"`
	Any     map[string]any    `json:"any"`
	Raw     json.RawMessage   `json:"raw"`
	Skip    string            `json:"-"`
}

func codeOf(t *testing.T, err error) string {
	t.Helper()
	require.Error(t, err)
	return errs.CodeOf(err)
}

func TestDecodeAcceptsWellFormedValues(t *testing.T) {
	var v target
	require.NoError(t, Decode([]byte(`{"params_b":7,"name":"x","e":"y","in":{"a":1},"list":[{"a":2},{"a":3}],
		"env":{"A":"1","a":"2"},"any":{"k":[{"x":1},{"y":2}]},"raw":{"z":1,"z":2}} `), &v, "request"))
	require.Equal(t, 7.0, *v.ParamsB)
	require.Equal(t, "y", v.E)
	require.Equal(t, 3, v.List[1].A)
	require.Equal(t, "2", v.Env["a"], "map keys differing in case are different keys")
	require.Equal(t, `{"z":1,"z":2}`, string(v.Raw), "a raw value is checked by whoever decodes it")
}

func TestDecodeRefusesRepeatedKeys(t *testing.T) {
	for _, in := range []string{
		`{"params_b":7,"params_b":700}`,
		`{"params_b":7,"PARAMS_B":700}`,    // the decoder matches fields ignoring case
		`{"name":"a","n\u0061me":"b"}`,     // an escaped spelling of the same key
		`{"in":{"a":1,"a":2}}`,             // nested struct
		`{"list":[{"a":1},{"a":2,"a":3}]}`, // inside a list
		`{"env":{"A":"1","A":"2"}}`,        // map
		`{"any":{"k":{"x":1,"x":2}}}`,      // interface values
		`{"e":"1","e":"2"}`,                // promoted from an embedded struct
	} {
		var v target
		err := Decode([]byte(in), &v, "request")
		require.Equal(t, errs.InvalidJSON, codeOf(t, err), in)
		require.Contains(t, errs.MessageOf(err), "more than once", in)
		require.Contains(t, errs.MessageOf(err), "request: ", in)
	}
}

func TestDecodeRefusesManyKeysRepeated(t *testing.T) {
	// Past 16 keys the map check switches from a list to a set.
	in := `{"env":{`
	for i := 0; i < 40; i++ {
		in += `"k` + string(rune('A'+i)) + `":"v",`
	}
	in += `"kC":"again"}}`
	var v target
	require.Equal(t, errs.InvalidJSON, codeOf(t, Decode([]byte(in), &v, "x")))
}

func TestDecodeUnknownFields(t *testing.T) {
	var v target
	err := Decode([]byte(`{"name":"x","bogus":1}`), &v, "request")
	require.Equal(t, errs.InvalidArgument, codeOf(t, err))
	require.Contains(t, errs.MessageOf(err), "unknown field")
	require.Contains(t, errs.MessageOf(err), "bogus")

	var w target
	require.NoError(t, DecodeIgnoringUnknown([]byte(`{"name":"x","bogus":{"a":[1]}}`), &w, "registry"))
	require.Equal(t, "x", w.Name)
	var u target
	err = DecodeIgnoringUnknown([]byte(`{"bogus":1,"bogus":2}`), &u, "registry")
	require.Equal(t, errs.InvalidJSON, codeOf(t, err), "an unknown key may not repeat either")
}

func TestDecodeSkipsDashFields(t *testing.T) {
	var v target
	err := Decode([]byte(`{"Skip":"x"}`), &v, "request")
	require.Equal(t, errs.InvalidArgument, codeOf(t, err), `a json:"-" field is not a key`)
}

func TestDecodeRefusesTrailingData(t *testing.T) {
	// The streaming decoder alone accepted a closing bracket after the value
	// (its More reports false there).
	for _, in := range []string{`{"name":"x"} {}`, `{"name":"x"}x`, `{} []`, `{"name":"x"}]`, `{"name":"x"}}`} {
		var v target
		err := Decode([]byte(in), &v, "request")
		require.Equal(t, errs.InvalidJSON, codeOf(t, err), in)
		var w target
		require.Equal(t, errs.InvalidJSON, codeOf(t, DecodeIgnoringUnknown([]byte(in), &w, "registry")), in)
	}
}

func TestDecodeClassifiesErrors(t *testing.T) {
	cases := map[string]string{
		`{"name":`:         errs.InvalidJSON,
		``:                 errs.InvalidJSON,
		`{"name" 1}`:       errs.InvalidJSON,
		`{"name":"x",}`:    errs.InvalidJSON,
		`{"name":1}`:       errs.InvalidArgument,
		`{"params_b":"7"}`: errs.InvalidArgument,
		`{"list":{"a":1}}`: errs.InvalidArgument,
		`[1,2]`:            errs.InvalidArgument,
		`{"in":{"a":1.5}}`: errs.InvalidArgument,
	}
	for in, want := range cases {
		var v target
		require.Equal(t, want, codeOf(t, Decode([]byte(in), &v, "request")), in)
	}
}

func TestDecodeLeavesNoPartialValueOnError(t *testing.T) {
	v := target{Name: "before"}
	require.Error(t, Decode([]byte(`{"name":"x","name":"y"}`), &v, "r"))
	v = target{}
	require.Error(t, Decode([]byte(`{"name":"x","in":{"a":"no"}}`), &v, "r"))
	require.Empty(t, v.Name)
}

func TestDecodeDeepNestingIsAnError(t *testing.T) {
	in := ""
	for i := 0; i < 2*maxDepth; i++ {
		in += "["
	}
	var v any
	require.Error(t, Decode([]byte(in), &v, "r"))
}

// TestDecodeAgreesWithStreamingDecoder checks that the checked whole-buffer
// path gives the value, or an error of the code, that the streaming decoder
// gives, for every input without a repeated key. The messages differ on
// purpose: Decode says what is wrong in the contract's words (words.go).
func TestDecodeAgreesWithStreamingDecoder(t *testing.T) {
	for _, in := range []string{
		`{"name":"x","params_b":7,"list":[{"a":1}],"env":{"k":"v"},"raw":[1,{"x":2}]}`,
		`{"name":"x"} x`, `{"name":"x",}`, `{"name":1}`, `{"bogus":1}`,
		`{"in":{"a":1.5}}`, `{"in":{"a":"1"}}`, `null`, ``, ` `, `{`, `[]`, `"s"`,
		"{\"name\":\"\xff\"}", `{"NAME":"x"}`, `{"raw":{"b":1,"b":2}}`, `{"any":{"k":[1,2,{"z":null}]}}`,
	} {
		var fast, slow target
		errFast := Decode([]byte(in), &fast, "request")
		errSlow := streamDecode([]byte(in), &slow, true)
		if errSlow != nil {
			errSlow = classify("request", errSlow)
			slow = target{}
		}
		assert.Equal(t, errs.CodeOf(errSlow), errs.CodeOf(errFast), in)
		assert.Equal(t, slow, fast, in)
	}
}

// TestDecodeRepeatedKeyPastSixtyFourFields covers structs with more fields
// than the check's bit set holds.
func TestDecodeRepeatedKeyPastSixtyFourFields(t *testing.T) {
	var fields []reflect.StructField
	for i := 0; i < 70; i++ {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[int](),
			Tag: reflect.StructTag(fmt.Sprintf(`json:"f%d"`, i))})
	}
	v := reflect.New(reflect.StructOf(fields)).Interface()
	require.NoError(t, Decode([]byte(`{"f3":1,"f68":2,"f69":3}`), v, "wide"))
	require.Equal(t, errs.InvalidJSON, codeOf(t, Decode([]byte(`{"f68":1,"f3":1,"f68":2}`), v, "wide")))
	require.Equal(t, errs.InvalidJSON, codeOf(t, Decode([]byte(`{"f3":1,"f68":1,"f3":2}`), v, "wide")))
}

// TestDecodeSaysWhatAndWhereInContractWords: every refusal of a well-formed
// value names the place (a dotted path with [i] for list elements) and the
// JSON type expected and found, never a Go type.
func TestDecodeSaysWhatAndWhereInContractWords(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":1}`:           `request: name: expected a string, got the number 1`,
		`{"params_b":"7"}`:     `request: params_b: expected a number, got a string`,
		`{"list":{"a":1}}`:     `request: list: expected an array of objects, got an object`,
		`{"list":[{"a":"x"}]}`: `request: list[0].a: expected an integer, got a string`,
		`{"in":{"a":1.5}}`:     `request: in.a: expected an integer, got the number 1.5`,
		`{"env":{"k":true}}`:   `request: env.k: expected a string, got a boolean`,
		`[1,2]`:                `request: expected an object, got an array`,
		`{"nmae":"x"}`:         `request: unknown field "nmae"; did you mean "name"?`,
		`{"in":{"b":1}}`:       `request: in: unknown field "b" (known: a)`,
		`{"paramsb":7}`:        `request: unknown field "paramsb"; did you mean "params_b"?`,
		`{"name":"x"`:          `request: unexpected end of input`,
	} {
		var v target
		err := Decode([]byte(in), &v, "request")
		require.Error(t, err, in)
		assert.Equal(t, want, errs.MessageOf(err), in)
	}
}

func TestClosestNameIsNearOrNothing(t *testing.T) {
	known := []string{"context_length", "batch_size", "quant"}
	assert.Equal(t, "context_length", closest("contxt_length", known))
	assert.Equal(t, "quant", closest("qunat", known))
	assert.Equal(t, "", closest("zzz", known))
	assert.Equal(t, "", closest("x", known))
	// A key whose length alone puts it past the limit is not measured:
	// the distance table of a 4000-byte key against every known key cost
	// 10-15 ms an error answer (python's test_answers_are_freed makes
	// 44000 of them), and one of megabytes would cost gigabytes.
	long := strings.Repeat("k", 4000)
	assert.Equal(t, "", closest(long, known))
	assert.Zero(t, testing.AllocsPerRun(10, func() { closest(long, known) }))
	assert.Equal(t, "context_length", closest("context_lengths", known), "one longer is still near")
}

// evenInt is a type with its own UnmarshalJSON that refuses odd numbers
// with an errs error, as the request's integer and context types do.
type evenInt struct{ V int }

func (e *evenInt) UnmarshalJSON(b []byte) error {
	var v int
	if err := json.Unmarshal(b, &v); err != nil || v%2 != 0 {
		return errs.New(errs.InvalidArgument, "expected an even integer, got %s", b)
	}
	e.V = v
	return nil
}

// An error a type's own UnmarshalJSON returns says where the value is, as
// a wrong JSON type does: the request's context_length "8k" answered
// "request: expected an integer, got "8k"", naming no member.
func TestDecodeUnmarshalerErrorNamesThePath(t *testing.T) {
	var v struct {
		N    evenInt `json:"n"`
		List []struct {
			M *evenInt `json:"m"`
		} `json:"list"`
	}
	err := Decode([]byte(`{"n": 3}`), &v, "request")
	require.Error(t, err)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	assert.Equal(t, "request: n: expected an even integer, got 3", errs.MessageOf(err))
	err = Decode([]byte(`{"n": 2, "list": [{"m": 4}, {"m": 5}]}`), &v, "request")
	require.Error(t, err)
	assert.Equal(t, "request: list[1].m: expected an even integer, got 5", errs.MessageOf(err))
	require.NoError(t, Decode([]byte(`{"n": 2, "list": [{"m": 4}]}`), &v, "request"))
	assert.Equal(t, 4, v.List[0].M.V)
}

// Malformed text, trailing data and a repeated key are invalid_json even
// when an unknown key or a value of the wrong type comes first in the text:
// which code a host gets must not depend on where in the request the two
// problems sit (brief smallfix item 1; before, the first problem met won).
func TestDecodeSyntaxOutranksShapeWhereverItIs(t *testing.T) {
	for _, in := range []string{
		`{"bogus":1} x`,                                // unknown key, then trailing data
		`{"bogus":1,"name":"a","name":"b"}`,            // unknown key, then a repeated key
		`{"bogus":1,"bogus":2}`,                        // the unknown key itself repeated
		`{"name":1} x`,                                 // wrong type, then trailing data
		`{"name":1,"in":{"a":1,"a":2}}`,                // wrong type, then a nested repeat
		`{"in":{"a":"x"},"params_b":7,"PARAMS_B":700}`, // wrong type, then a repeat by case
		`{"bogus":1,"raw":{"z":1,"z":2}}`,              // unknown key, then a repeat in a raw value
		`{"bogus":{"x":1,"x":2}}`,                      // a repeat inside the unknown key's value
		`{"name":[1,{"k":1,"k":2}]}`,                   // a repeat inside a value of the wrong type
		`{"bogus":1,"name":"a",}`,                      // unknown key, then malformed text
	} {
		var v target
		err := Decode([]byte(in), &v, "request")
		assert.Equal(t, errs.InvalidJSON, codeOf(t, err), "%s: %v", in, err)
	}
	// Alone, the same shape problems stay invalid_argument.
	for _, in := range []string{`{"bogus":1}`, `{"name":1}`, `{"bogus":{"x":1,"y":2}}`} {
		var v target
		assert.Equal(t, errs.InvalidArgument, codeOf(t, Decode([]byte(in), &v, "request")), in)
	}
}

func TestDecodeMalformedAfterShapeSaysWhere(t *testing.T) {
	var v target
	err := Decode([]byte(`{"bogus":1,"name":"a",}`), &v, "request")
	assert.Equal(t, errs.InvalidJSON, codeOf(t, err))
	assert.NotContains(t, errs.MessageOf(err), "unknown field", "the syntax problem is the one named")
	assert.Contains(t, errs.MessageOf(err), "request: ")
}

func TestWellFormedKnowsNoType(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b":[{"c":1}]}`: "",
		`{"a":1,"A":2}`:         "", // case matters only for a struct's fields
		`[1,2]`:                 "",
		`{"a":1} x`:             errs.InvalidJSON,
		`{"a":{"b":1,"b":2}}`:   errs.InvalidJSON,
		`{"a":1,}`:              errs.InvalidJSON,
	} {
		err := WellFormed([]byte(in), "request")
		if want == "" {
			assert.NoError(t, err, in)
			continue
		}
		assert.Equal(t, want, codeOf(t, err), in)
		assert.Contains(t, errs.MessageOf(err), "request: ", in)
	}
}

func TestDecodeOverflowingNumberIsOutOfRange(t *testing.T) {
	for _, in := range []string{`{"params_b":1e400}`, `{"params_b":-1E+999}`, `{"params_b":1` + fmt.Sprintf("%0400d", 0) + `}`} {
		var v target
		err := Decode([]byte(in), &v, "request")
		assert.Equal(t, errs.InvalidArgument, codeOf(t, err), in)
		assert.Contains(t, errs.MessageOf(err), "is outside the range of a number (at most 1.8e+308 in magnitude)", in)
	}
	var v target
	require.NoError(t, Decode([]byte(`{"params_b":1e308}`), &v, "request"))
	require.NoError(t, Decode([]byte(`{"params_b":1e-400}`), &v, "request"), "underflow is 0, as the decoder reads it")
}

// An integer past its Go type's range is out of range too, in the words
// of an integer, not "a value of the wrong type"; the type's own bounds
// still decode.
func TestDecodeOverflowingIntegerIsOutOfRange(t *testing.T) {
	type ints struct {
		I8  int8   `json:"i8"`
		U8  uint8  `json:"u8"`
		I64 int64  `json:"i64"`
		U64 uint64 `json:"u64"`
	}
	for in, want := range map[string]string{
		`{"i8":128}`:                   "request: i8: 128 is outside the range of an integer (at most 1.3e+02 in magnitude)",
		`{"i8":-129}`:                  "request: i8: -129 is outside the range of an integer (at most 1.3e+02 in magnitude)",
		`{"u8":256}`:                   "request: u8: 256 is outside the range of an integer (at most 2.6e+02 in magnitude)",
		`{"i64":9223372036854775808}`:  "request: i64: 9223372036854775808 is outside the range of an integer (at most 9.2e+18 in magnitude)",
		`{"u64":18446744073709551616}`: "request: u64: 18446744073709551616 is outside the range of an integer (at most 1.8e+19 in magnitude)",
	} {
		var v ints
		err := Decode([]byte(in), &v, "request")
		assert.Equal(t, errs.InvalidArgument, codeOf(t, err), in)
		assert.Equal(t, want, errs.MessageOf(err), in)
	}
	var v ints
	require.NoError(t, Decode([]byte(`{"i8":-128,"u8":255,"i64":-9223372036854775808,"u64":18446744073709551615}`), &v, "request"))
	assert.Equal(t, ints{-128, 255, -9223372036854775808, 18446744073709551615}, v)
}

// WellFormedAs knows the target type: a struct's field named twice, the
// second time in other letter case, is a repeat as Decode finds it; a map's
// keys that differ in case stay different keys; a raw value is walked as
// any JSON. WellFormed, knowing no type, finds none of the case repeats.
func TestWellFormedAsFindsCaseRepeatsOfFields(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":"a","NAME":"b"}`:                   errs.InvalidJSON,
		`{"params_b":7,"in":{"a":1,"A":2}}`:         errs.InvalidJSON, // in a nested struct
		`{"list":[{},{"a":1,"A":1}]}`:               errs.InvalidJSON, // in a list's struct
		`{"list":[{},{"a":1}],"any":{"a":1,"A":2}}`: "",
		`{"env":{"a":"1","A":"2"}}`:                 "", // map keys: case matters
		`{"raw":{"z":1,"Z":2}}`:                     "", // raw: any JSON
		`{"raw":{"z":1,"z":2}}`:                     errs.InvalidJSON,
		`{"name":1,"Name":2}`:                       errs.InvalidJSON, // the wrong type does not hide it
	} {
		var v target
		err := WellFormedAs([]byte(in), &v, "request")
		if want == "" {
			assert.NoError(t, err, in)
		} else {
			assert.Equal(t, want, codeOf(t, err), "%s: %v", in, err)
		}
		if want != "" && !strings.Contains(in, `"z":1,"z"`) {
			assert.NoError(t, WellFormed([]byte(in), "request"), "WellFormed knows no type: %s", in)
		}
	}
	assert.Equal(t, errs.Internal, codeOf(t, WellFormedAs([]byte(`{}`), target{}, "request")), "a shape that is not a pointer")
}
