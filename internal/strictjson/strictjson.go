// Package strictjson is the one way the engine decodes JSON a host gave it:
// one value, nothing after it, no object key twice, and (for requests) no
// key the target type does not know. Failures carry the contract's codes:
// malformed text, trailing data and repeated keys are invalid_json; a
// well-formed value of the wrong shape (a string for a number, an unknown
// field) is invalid_argument.
//
// A repeated key is refused because decoders disagree on it: goccy/go-json
// and encoding/json keep the last value, others the first, so
// {"params_b":7,"params_b":700} would be planned as 700B here and as 7B by
// a host that checked it (RFC 8259 §4: names "SHOULD be unique",
// https://www.rfc-editor.org/rfc/rfc8259#section-4).
package strictjson

import (
	"bytes"
	"errors"
	"reflect"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// Decode decodes data, which must hold exactly one JSON value, into v (a
// non-nil pointer), refusing repeated object keys and keys v's structs do
// not know. what names the value in error messages ("request",
// "options").
func Decode(data []byte, v any, what string) error {
	return decode(data, v, what, true)
}

// DecodeIgnoringUnknown is Decode for documents that newer writers may
// extend (a registry): keys v's structs do not know are skipped; repeated
// keys and trailing data are still refused.
func DecodeIgnoringUnknown(data []byte, v any, what string) error {
	return decode(data, v, what, false)
}

// decode checks data against v's type first (one pass that finds repeated
// and unknown keys and the end of the value), then decodes it with goccy's
// whole-buffer decoder. Anything either refuses is decoded again, from a
// zero value, by goccy's streaming decoder, whose error messages are the
// ones this engine has always answered with.
func decode(data []byte, v any, what string, strict bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errs.New(errs.Internal, "%s: decode target is not a pointer", what)
	}
	problem := check(data, rv.Type().Elem(), strict)
	var shape *shapeError
	if errors.As(problem, &shape) {
		// A shape problem met first may hide a syntax problem later in
		// the text, which outranks it.
		switch p := syntaxProblem(data, rv.Type().Elem()); {
		case p == nil:
		case errors.Is(p, errSyntax):
			return malformed(data, what)
		case errors.Is(p, errTrailing):
			return errs.New(errs.InvalidJSON, "%s: trailing data after the JSON value", what)
		default:
			problem = p
		}
	}
	var dup *duplicateKey
	if errors.As(problem, &dup) {
		return errs.New(errs.InvalidJSON, "%s: key %q appears more than once in one object", what, dup.key)
	}
	if problem == nil {
		if json.Unmarshal(data, v) == nil {
			return nil
		}
	}
	rv.Elem().SetZero()
	err := streamDecode(data, v, strict)
	rv.Elem().SetZero()
	if errors.As(problem, &shape) && !isSyntax(err) {
		// The value is well-formed but does not fit: say where and why in
		// the contract's words (the decoder's message names Go types).
		return errs.New(errs.InvalidArgument, "%s: %s", what, shape.Error())
	}
	if err != nil {
		// A type's own UnmarshalJSON (an integer check) said what is
		// wrong but not where: find where.
		var e *errs.Error
		if errors.As(err, &e) {
			if at := locate(data, rv.Type().Elem(), strict); at != nil {
				return errs.New(e.Code, "%s: %s", what, at.Error())
			}
		}
		return classify(what, err)
	}
	if errors.Is(problem, errTrailing) {
		return errs.New(errs.InvalidJSON, "%s: trailing data after the JSON value", what)
	}
	// The check refused what the streaming decoder accepts: say what the
	// check found.
	return errs.New(errs.InvalidJSON, "%s: %v", what, problem)
}

// WellFormed is the invalid_json error for data that is not one JSON value
// or that repeats a key (compared exactly) in any object, nil otherwise. It
// knows no target type (WellFormedAs does).
func WellFormed(data []byte, what string) error {
	return wellFormed(data, nil, what)
}

// WellFormedAs is WellFormed for data decoded into shape's type (shape is
// a pointer, as Decode's v): in an object decoded into a struct a key names
// a field as the decoder matches it, exactly else ignoring case, so "Quant"
// after "quant" is a repeat there, as Decode finds it. An entry point that
// refused a request for its shape or a value (invalid_argument and the
// like) asks it, so that a syntax problem anywhere, in a member it had not
// decoded yet too, outranks what it found; shape types such members as
// they are decoded later (a json.RawMessage in it is walked as any JSON,
// keys compared exactly).
func WellFormedAs(data []byte, shape any, what string) error {
	t := reflect.TypeOf(shape)
	if t == nil || t.Kind() != reflect.Pointer {
		return errs.New(errs.Internal, "%s: shape is not a pointer", what)
	}
	return wellFormed(data, t.Elem(), what)
}

func wellFormed(data []byte, t reflect.Type, what string) error {
	var dup *duplicateKey
	switch p := syntaxProblem(data, t); {
	case p == nil:
		return nil
	case errors.Is(p, errTrailing):
		return errs.New(errs.InvalidJSON, "%s: trailing data after the JSON value", what)
	case errors.As(p, &dup):
		return errs.New(errs.InvalidJSON, "%s: key %q appears more than once in one object", what, dup.key)
	}
	return malformed(data, what)
}

// malformed is the invalid_json error for data the scanner found malformed,
// in the decoder's words when it has them: decoding into an interface
// meets no shape problem first.
func malformed(data []byte, what string) error {
	var v any
	if err := streamDecode(data, &v, false); err != nil {
		if e := classify(what, err); errs.CodeOf(e) == errs.InvalidJSON {
			return e
		}
	}
	return errs.New(errs.InvalidJSON, "%s: %v", what, errSyntax)
}

// isSyntax reports whether the decoder found the text malformed (or cut
// short), which outranks a shape problem the check found earlier in it.
func isSyntax(err error) bool {
	if err == nil {
		return false
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, errTrailing) {
		return true
	}
	msg := err.Error()
	return strings.HasSuffix(msg, "EOF") || strings.Contains(msg, "unexpected end")
}

// streamDecode decodes one value with goccy's streaming decoder, unknown
// fields refused when strict; data after the value is errTrailing.
func streamDecode(data []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errTrailing
	}
	return nil
}

// classify turns a decoder error into an *errs.Error with the contract's
// code, the message prefixed by what.
func classify(what string, err error) error {
	if errors.Is(err, errTrailing) {
		return errs.New(errs.InvalidJSON, "%s: trailing data after the JSON value", what)
	}
	var e *errs.Error
	if errors.As(err, &e) {
		// A type's own UnmarshalJSON (an integer check) said what is wrong.
		return errs.New(e.Code, "%s: %s", what, e.Message)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return errs.New(errs.InvalidJSON, "%s: %s", what, decoderWords(se.Error()))
	}
	var ue *json.UnmarshalTypeError
	if errors.As(err, &ue) {
		// The check catches wrong types first; this is what it missed, said
		// without the Go type the decoder names.
		msg := "a value of the wrong type"
		if ue.Value != "" {
			msg = "a value of the wrong type (" + ue.Value + ")"
		}
		if f := ue.Field; f != "" {
			return errs.New(errs.InvalidArgument, "%s: %s: %s", what, f, msg)
		}
		return errs.New(errs.InvalidArgument, "%s: %s", what, msg)
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "unknown field"):
		return errs.New(errs.InvalidArgument, "%s: %s", what, decoderWords(msg))
	case strings.HasSuffix(msg, "EOF") || strings.Contains(msg, "unexpected end"):
		return errs.New(errs.InvalidJSON, "%s: unexpected end of input", what)
	case strings.Contains(msg, "expected an integer"):
		return errs.New(errs.InvalidArgument, "%s: %s", what, msg)
	}
	return errs.New(errs.InvalidJSON, "%s: %s", what, decoderWords(msg))
}

// decoderWords strips the decoder's "json: " prefix from its message; what
// is left describes the text, not Go types.
func decoderWords(msg string) string {
	return strings.TrimPrefix(msg, "json: ")
}
