//go:build hwaccel_testhooks

package main

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
)

// hwaccel_testhook_panic exists only in the test library
// build/test/libai_hwaccel_testhooks.so (build tag hwaccel_testhooks, version
// script exports_testhooks.map): it fails inside guard the way a bug would,
// so tests/c/test_panic.c can prove that guard turns it into an "internal"
// error object instead of aborting the host. kind: "panic" (plain panic),
// "index" (index out of range), "nil" (nil pointer dereference, a SIGSEGV
// the Go runtime turns into a panic).
//
//export hwaccel_testhook_panic
func hwaccel_testhook_panic(kind *C.hwaccel_cchar) *C.char {
	return guard("hwaccel_testhook_panic", kind, func(_ context.Context, in []byte, _ api.Env) []byte {
		switch string(in) {
		case "index":
			var xs []int
			i := len(in)
			return []byte(fmt.Sprint(xs[i]))
		case "nil":
			var p *struct{ n int }
			return []byte(fmt.Sprint(p.n))
		default:
			panic("testhook: deliberate panic")
		}
	})
}

// hwaccel_testhook_fail_alloc exists only in the test library: the next n
// answer allocations (aihw_answer_alloc, shim.c) fail as malloc() would, so
// tests/c/test_alloc_fail.c can prove that an export then returns NULL, as
// include/ai_hwaccel.h promises, instead of aborting the host.
//
//export hwaccel_testhook_fail_alloc
func hwaccel_testhook_fail_alloc(n C.int) {
	C.aihw_testhook_fail_allocs(n)
}
