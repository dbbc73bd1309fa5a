// Command capi is the C ABI of the engine, built with -buildmode=c-shared into
// libai_hwaccel.so. It holds no logic: each export copies the host's input
// into Go memory, calls the matching internal/api entry point and returns the
// answer in C memory. The public functions themselves are defined in shim.c,
// which checks for a forked child before calling the exports below.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -O2 -Wall -Wextra
#include <stdlib.h>
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// readLimit bounds how far the host's string is scanned: one byte past the
// largest accepted input, so an oversized (or unterminated) input is
// recognised as too_large without reading further.
const readLimit = api.MaxInput + 1

//export aihw_go_detect_json
func aihw_go_detect_json(in *C.hwaccel_cchar) *C.char {
	return guard("hwaccel_detect_json", in, api.Detect)
}

//export aihw_go_suggest_quant
func aihw_go_suggest_quant(in *C.hwaccel_cchar) *C.char {
	return guard("hwaccel_suggest_quant", in, api.SuggestQuant)
}

//export aihw_go_plan_sharding
func aihw_go_plan_sharding(in *C.hwaccel_cchar) *C.char {
	return guard("hwaccel_plan_sharding", in, api.PlanSharding)
}

//export aihw_go_estimate_training
func aihw_go_estimate_training(in *C.hwaccel_cchar) *C.char {
	return guard("hwaccel_estimate_training", in, api.EstimateTraining)
}

// The catalog exports (since version 0.2.0, ABI 1: added, not changed),
// kept together after the
// first four so later additions stay one block.

//export aihw_go_models_json
func aihw_go_models_json(in *C.hwaccel_cchar) *C.char {
	return guard("hwaccel_models_json", in, api.Models)
}

//export aihw_go_fit_json
func aihw_go_fit_json(in *C.hwaccel_cchar) *C.char {
	return guard("hwaccel_fit_json", in, api.Fit)
}

//export aihw_go_rent_json
func aihw_go_rent_json(in *C.hwaccel_cchar) *C.char {
	return guard("hwaccel_rent_json", in, api.Rent)
}

// guard runs one JSON export: fork check, panic recovery, bounded copy of the
// input, call-time environment, answer in C memory. Every export goes
// through it (docs/abi.md, "Guarantees").
func guard(export string, in *C.hwaccel_cchar, entry func(context.Context, []byte, api.Env) []byte) (out *C.char) {
	if C.aihw_internal_forked != 0 {
		// shim.c already answered; this is the last line of defence. The
		// name's bytes are passed, not copied: C.CString's malloc would
		// abort the host when it fails (as cBytes explains), and the answer
		// itself is NULL then (aihw_answer_alloc).
		return C.aihw_forked_error_n((*C.char)(unsafe.Pointer(unsafe.StringData(export))), C.int(len(export)))
	}
	// Descriptors 0-2 the host closed hold placeholders during the call,
	// so nothing the call opens lands there (shim.c).
	_ = C.aihw_stdio_enter()
	defer C.aihw_stdio_leave()
	defer func() {
		if p := recover(); p != nil {
			out = cBytes(api.ErrorJSONCode(errs.Internal, fmt.Sprintf("panic in %s: %v", export, p)))
		}
	}()
	input, err := copyInput(in)
	if err != nil {
		return cBytes(api.ErrorJSON(err))
	}
	return cBytes(entry(context.Background(), input, cGetenv))
}

// copyInput copies the host's NUL-terminated string into Go memory, reading
// at most readLimit bytes. NULL gives a nil slice, "" an empty one.
func copyInput(in *C.hwaccel_cchar) ([]byte, error) {
	if in == nil {
		return nil, nil
	}
	n := C.strnlen(in, C.size_t(readLimit))
	if n > C.size_t(api.MaxInput) {
		return nil, errs.New(errs.TooLarge, "input is longer than %d bytes", api.MaxInput)
	}
	if n == 0 {
		return []byte{}, nil
	}
	return C.GoBytes(unsafe.Pointer(in), C.int(n)), nil
}

// cGetenv reads the environment through C getenv at call time: os.Getenv
// only sees the environment the process was started with, so a host's
// setenv after load would be ignored (https://github.com/golang/go/issues/27693).
// A NULL from getenv is an unset variable; "" is a variable set empty. The
// name goes to getenv from Go memory, NUL-terminated, not through
// C.CString, whose failed malloc would abort the host (as cBytes explains);
// getenv keeps no pointer to it, and a byte slice holds no Go pointers.
func cGetenv(name string) (string, bool) {
	cname := make([]byte, len(name)+1)
	copy(cname, name)
	v := C.getenv((*C.char)(unsafe.Pointer(&cname[0])))
	if v == nil {
		return "", false
	}
	return C.GoString(v), true
}

// cBytes returns b as a NUL-terminated string in C malloc memory, which the
// host frees with hwaccel_free_string or free; nil when malloc fails, as
// include/ai_hwaccel.h promises. Not C.CString: its allocation aborts the
// process when malloc returns NULL ("runtime: C malloc failed", _cgo_cmalloc
// in cmd/cgo/out.go).
func cBytes(b []byte) *C.char {
	p := C.aihw_answer_alloc(C.size_t(len(b) + 1))
	if p == nil {
		return nil
	}
	dst := unsafe.Slice((*byte)(p), len(b)+1)
	copy(dst, b)
	dst[len(b)] = 0
	return (*C.char)(p)
}

func main() {}
