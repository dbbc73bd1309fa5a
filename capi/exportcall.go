package main

/*
#include <stdlib.h>
#include "ai_hwaccel.h"
#include "shim.h"

extern char *aihw_go_detect_json(hwaccel_cchar *in);

typedef char *(*aihw_export_fn)(const char *);

static char *aihw_call(aihw_export_fn fn, const char *in) { return fn(in); }

static aihw_export_fn aihw_public_export(int i) {
	switch (i) {
	case 0: return hwaccel_detect_json;
	case 1: return hwaccel_suggest_quant;
	case 2: return hwaccel_plan_sharding;
	case 3: return hwaccel_estimate_training;
	case 4: return hwaccel_rent_json;
	}
	return NULL;
}

static void aihw_set_forked(int v) { aihw_internal_forked = v; }
*/
import "C"

import "unsafe"

// This file lets Go tests (which cannot import "C") drive the public C
// functions exactly as a host does: input copied into C memory as a
// NUL-terminated string, the answer copied out and freed with
// hwaccel_free_string, so fuzz targets reach the exports.

// exportNames are the JSON exports, in aihw_public_export order.
var exportNames = []string{"hwaccel_detect_json", "hwaccel_suggest_quant", "hwaccel_plan_sharding", "hwaccel_estimate_training",
	"hwaccel_rent_json"}

// callExport calls public JSON export i with in (nil means a NULL pointer;
// bytes after a NUL are not seen, as in C) and returns the answer, or
// ok=false when the export returned NULL.
func callExport(i int, in []byte) (answer string, ok bool) {
	var cin *C.char
	if in != nil {
		cin = (*C.char)(C.CBytes(append(append([]byte{}, in...), 0)))
		defer C.free(unsafe.Pointer(cin))
	}
	out := C.aihw_call(C.aihw_public_export(C.int(i)), cin)
	if out == nil {
		return "", false
	}
	defer C.hwaccel_free_string(out)
	return C.GoString(out), true
}

// callGoDetect calls the Go export behind hwaccel_detect_json directly,
// bypassing shim.c's fork check, to test guard's own.
func callGoDetect(in string) string {
	cin := C.CString(in)
	defer C.free(unsafe.Pointer(cin))
	out := C.aihw_go_detect_json(cin)
	defer C.hwaccel_free_string(out)
	return C.GoString(out)
}

// callGoDetectRaw is callGoDetect that reports a NULL answer: ok is false.
func callGoDetectRaw(in string) (answer string, ok bool) {
	cin := C.CString(in)
	defer C.free(unsafe.Pointer(cin))
	out := C.aihw_go_detect_json(cin)
	if out == nil {
		return "", false
	}
	defer C.hwaccel_free_string(out)
	return C.GoString(out), true
}

// failAllocs makes the next n answer allocations (aihw_answer_alloc,
// shim.c) fail as malloc() would; 0 ends that.
func failAllocs(n int) { C.aihw_testhook_fail_allocs(C.int(n)) }

// goString copies an answer of guard and frees it.
func goString(out *C.char) string {
	defer C.hwaccel_free_string(out)
	return C.GoString(out)
}

// setForked sets the fork flag as the pthread_atfork child handler would.
func setForked(forked bool) {
	v := 0
	if forked {
		v = 1
	}
	C.aihw_set_forked(C.int(v))
}
