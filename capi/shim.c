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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ai_hwaccel.h"
#include "_cgo_export.h"
#include "shim.h"

volatile int aihw_internal_forked = 0;

static void aihw_atfork_child(void) { aihw_internal_forked = 1; }

/* Registered at load, before any host fork can happen after it. */
__attribute__((constructor)) static void aihw_register_atfork(void) {
    pthread_atfork(NULL, NULL, aihw_atfork_child);
}

char *aihw_forked_error_n(const char *fn, int len) {
    static const char fmt[] =
        "{\"error\":{\"code\":\"forked_child\",\"message\":\"%.*s called in a child "
        "process forked after libai_hwaccel was loaded; the Go runtime does not "
        "survive fork(): load the library in the child (or use spawn/forkserver)\"}}";
    int n = snprintf(NULL, 0, fmt, len, fn);
    if (n < 0) return NULL;
    char *s = aihw_answer_alloc((size_t)n + 1);
    if (s != NULL) snprintf(s, (size_t)n + 1, fmt, len, fn);
    return s;
}

char *aihw_forked_error(const char *fn) { return aihw_forked_error_n(fn, (int)strlen(fn)); }

static int aihw_fail_allocs; /* set by the test library only */

void aihw_testhook_fail_allocs(int n) { __atomic_store_n(&aihw_fail_allocs, n, __ATOMIC_SEQ_CST); }

void *aihw_answer_alloc(size_t n) {
    int left = __atomic_load_n(&aihw_fail_allocs, __ATOMIC_SEQ_CST);
    while (left > 0) {
        if (__atomic_compare_exchange_n(&aihw_fail_allocs, &left, left - 1, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST)) {
            return NULL;
        }
    }
    return malloc(n);
}

/* Descriptors 0-2 during a call (issue 23 item 2). A host that closed any
 * of them after loading (a daemon) would otherwise find the library's own
 * descriptors there after a call: the Go runtime and the library open files
 * that live on (the poller's epoll instance, sysroot directory handles of
 * the detection memo), and open() takes the lowest free number, so the
 * host's next printf would write into them. While at least one call is in
 * the library, each of 0-2 that the host left closed holds a close-on-exec
 * /dev/null placeholder, so nothing opened meanwhile can land there; when
 * the last call returns the placeholders are closed again, leaving 0-2 as
 * the host had them. A placeholder the host replaced meanwhile (dup2, so no
 * longer close-on-exec or no longer /dev/null) is left alone. Tools never
 * see the placeholders: they get /dev/null and pipes as 0-2 explicitly.
 * guard (capi.go) brackets every Go export with enter and leave, so the
 * public functions below stay tail calls into Go: a C frame holding the
 * answer after the call would leave a stale copy of the pointer on the
 * stack, where leak checkers find it (c_asan_canary stopped seeing the
 * leaked answer in 8 of 10 runs). */
static pthread_mutex_t aihw_stdio_mu = PTHREAD_MUTEX_INITIALIZER;
static int aihw_stdio_calls;
static struct stat aihw_stdio_null[3];
static int aihw_stdio_filled[3];

int aihw_stdio_enter(void) {
    pthread_mutex_lock(&aihw_stdio_mu);
    if (aihw_stdio_calls++ == 0) {
        for (int fd = 0; fd <= 2; fd++) {
            aihw_stdio_filled[fd] = 0;
            if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
            int n = open("/dev/null", O_RDWR | O_CLOEXEC); /* the lowest free: fd itself */
            if (n == fd && fstat(n, &aihw_stdio_null[fd]) == 0) {
                aihw_stdio_filled[fd] = 1;
            } else if (n >= 0) {
                close(n); /* a host thread took fd meanwhile */
            }
        }
    }
    int calls = aihw_stdio_calls;
    pthread_mutex_unlock(&aihw_stdio_mu);
    return calls;
}

int aihw_stdio_leave(void) {
    pthread_mutex_lock(&aihw_stdio_mu);
    if (--aihw_stdio_calls == 0) {
        for (int fd = 0; fd <= 2; fd++) {
            if (!aihw_stdio_filled[fd]) continue;
            aihw_stdio_filled[fd] = 0;
            struct stat st;
            int flags = fcntl(fd, F_GETFD);
            if (flags != -1 && (flags & FD_CLOEXEC) && fstat(fd, &st) == 0 &&
                st.st_dev == aihw_stdio_null[fd].st_dev && st.st_ino == aihw_stdio_null[fd].st_ino)
                close(fd);
        }
    }
    int calls = aihw_stdio_calls;
    pthread_mutex_unlock(&aihw_stdio_mu);
    return calls;
}

const char *hwaccel_version(void) { return HWACCEL_VERSION_STRING; }

int hwaccel_abi_version(void) { return HWACCEL_ABI_VERSION; }

/* Answers are C malloc memory (aihw_answer_alloc above, through cBytes in
 * capi.go; never C.CString, whose failed malloc aborts the host), so plain
 * free; free(NULL) is a no-op. */
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

/* Since 0.2.0 (ABI 1): the model catalog and what fits. */
char *hwaccel_models_json(const char *request_json) {
    if (aihw_internal_forked) return aihw_forked_error("hwaccel_models_json");
    return aihw_go_models_json(request_json);
}

char *hwaccel_fit_json(const char *request_json) {
    if (aihw_internal_forked) return aihw_forked_error("hwaccel_fit_json");
    return aihw_go_fit_json(request_json);
}

/* Since 0.2.0 (ABI 1): what to rent (issue 26). */
char *hwaccel_rent_json(const char *request) {
    if (aihw_internal_forked) return aihw_forked_error("hwaccel_rent_json");
    return aihw_go_rent_json(request);
}
