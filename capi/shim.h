/* shim.h: declarations shared by the Go files of package capi and shim.c.
 * Internal to the library; hosts use include/ai_hwaccel.h. */
#ifndef AIHW_CAPI_SHIM_H
#define AIHW_CAPI_SHIM_H

#include <stddef.h>

/* const char under a name cgo can spell: Go exports take *C.hwaccel_cchar, so
 * cgo's generated header declares `hwaccel_cchar*` (= const char *) and agrees
 * with the const-correct public header (include/ai_hwaccel.h). */
typedef const char hwaccel_cchar;

/* aihw_internal_forked is set in a child forked after load by the
 * pthread_atfork child handler in shim.c. It is named outside the hwaccel_
 * namespace and hidden, so it can never leak into the exported surface. */
extern volatile int aihw_internal_forked __attribute__((visibility("hidden")));

/* aihw_forked_error returns a forked_child error object naming fn, built in
 * C only (the Go runtime must not run in a forked child), in memory from
 * aihw_answer_alloc: NULL when malloc fails. aihw_forked_error_n names the
 * len bytes at fn (a Go string's bytes, not NUL-terminated: guard's name is
 * not copied, so no allocation but the answer's can fail). */
char *aihw_forked_error(const char *fn) __attribute__((visibility("hidden")));
char *aihw_forked_error_n(const char *fn, int len) __attribute__((visibility("hidden")));

/* aihw_answer_alloc returns n bytes of C malloc memory for an answer, or
 * NULL when malloc fails: the header promises NULL then, while cgo's
 * C.CString and C.malloc abort the process ("runtime: C malloc failed",
 * _cgo_cmalloc in cmd/cgo/out.go). aihw_testhook_fail_allocs(n), called only
 * by the test library's hwaccel_testhook_fail_alloc, makes the next n calls
 * fail as malloc would. */
void *aihw_answer_alloc(size_t n) __attribute__((visibility("hidden")));
void aihw_testhook_fail_allocs(int n) __attribute__((visibility("hidden")));

/* aihw_stdio_enter and aihw_stdio_leave bracket each call into Go: while
 * any call runs, each of descriptors 0-2 that the host left closed holds a
 * /dev/null placeholder (shim.c). Each returns the number of calls in the
 * library after it (a result, so cgo's wrapper has no unused parameter). */
int aihw_stdio_enter(void) __attribute__((visibility("hidden")));
int aihw_stdio_leave(void) __attribute__((visibility("hidden")));

/* The host's RLIMIT_NOFILE as it was when the library was loaded, recorded
 * by a constructor in hoststate.c before the Go runtime raised it;
 * aihw_host_nofile_known is 0 when getrlimit failed. */
struct rlimit;
extern struct rlimit aihw_host_nofile __attribute__((visibility("hidden")));
extern int aihw_host_nofile_known __attribute__((visibility("hidden")));

#endif
