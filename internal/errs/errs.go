// Package errs defines the error codes of the public contract. Every error that
// crosses the C ABI is an *Error whose Code is one of the stable constants
// below; messages are for humans and are not part of the API.
package errs

import (
	"errors"
	"fmt"
)

// Stable error codes (include/ai_hwaccel.h lists the same set). Never rename or
// reuse one; new codes may be added.
const (
	InvalidJSON     = "invalid_json"
	InvalidArgument = "invalid_argument"
	UnknownModel    = "unknown_model"
	ModelFile       = "model_file"
	TooLarge        = "too_large"
	DetectionFailed = "detection_failed"
	ForkedChild     = "forked_child"
	Internal        = "internal"
)

// Error is an error with a stable contract code.
type Error struct {
	Code    string
	Message string
	Err     error // optional cause, for errors.Is/As
}

// Error returns "code: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the wrapped cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with a formatted message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error carrying err as its cause and err's text as message
// (prefixed by context when given).
func Wrap(code string, err error, context string) *Error {
	msg := err.Error()
	if context != "" {
		msg = context + ": " + msg
	}
	return &Error{Code: code, Message: msg, Err: err}
}

// CodeOf returns the contract code of err: the code of the first *Error in its
// chain, or Internal for anything else.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// MessageOf returns the human message of err without the code prefix.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
