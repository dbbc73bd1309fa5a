/* shim.c: the C half of the export layer.
 *
 * The public functions of include/ai_hwaccel.h are defined here. The static
 * ones (version, ABI, free) never enter Go. The JSON ones check the fork flag
 * in C first and only then call the Go exports (aihw_go_*), so a child forked
 * after load never enters the Go runtime, which cannot run there
 * (https://github.com/golang/go/issues/15538: even a simple call into Go
 * hangs in a child forked while another thread was inside the library).
 *
 * Including both ai_hwaccel.h and cgo's _cgo_export.h makes the compiler check
 * every definition below against the public prototypes and every call against
 * the Go exports' generated prototypes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ai_hwaccel.h"
#include "_cgo_export.h"
#include "shim.h"

volatile int aihw_internal_forked = 0;

static void aihw_atfork_child(void) { aihw_internal_forked = 1; }

/* Registered at load, before any host fork can happen after it. */
__attribute__((constructor)) static void aihw_register_atfork(void) {
    pthread_atfork(NULL, NULL, aihw_atfork_child);
}

char *aihw_forked_error(const char *fn) {
    static const char fmt[] =
        "{\"error\":{\"code\":\"forked_child\",\"message\":\"%s called in a child "
        "process forked after libai_hwaccel was loaded; the Go runtime does not "
        "survive fork(): load the library in the child (or use spawn/forkserver)\"}}";
    int n = snprintf(NULL, 0, fmt, fn);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (s != NULL) snprintf(s, (size_t)n + 1, fmt, fn);
    return s;
}

const char *hwaccel_version(void) { return HWACCEL_VERSION_STRING; }

int hwaccel_abi_version(void) { return HWACCEL_ABI_VERSION; }

/* Results come from C malloc (C.CString), so plain free; free(NULL) is a no-op. */
void hwaccel_free_string(char *s) { free(s); }

char *hwaccel_detect_json(const char *options_json) {
    if (aihw_internal_forked) return aihw_forked_error("hwaccel_detect_json");
    return aihw_go_detect_json(options_json);
}

char *hwaccel_suggest_quant(const char *request_json) {
    if (aihw_internal_forked) return aihw_forked_error("hwaccel_suggest_quant");
    return aihw_go_suggest_quant(request_json);
}

char *hwaccel_plan_sharding(const char *request_json) {
    if (aihw_internal_forked) return aihw_forked_error("hwaccel_plan_sharding");
    return aihw_go_plan_sharding(request_json);
}

char *hwaccel_estimate_training(const char *request_json) {
    if (aihw_internal_forked) return aihw_forked_error("hwaccel_estimate_training");
    return aihw_go_estimate_training(request_json);
}
