/* test_alloc_fail.c: when malloc() fails for an answer, the export returns
 * NULL and the host keeps running (include/ai_hwaccel.h: "never returns NULL
 * except when malloc() itself fails"). Uses the test-only
 * build/test/libai_hwaccel_testhooks.so, whose hwaccel_testhook_fail_alloc
 * makes the next answer allocations fail as malloc() would; the shipped
 * library has no such export (c_dlopen and scripts/check-symbols.sh). Also
 * a child forked after load: its forked_child answer is NULL then too. */
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int main(void) {
    void *h = dlopen(HWACCEL_TESTHOOKS_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL, "dlopen(%s): %s", HWACCEL_TESTHOOKS_LIB, dlerror());
    if (h == NULL) return check_summary();
    void (*fail_alloc)(int);
    void (*free_string)(char *);
    char *(*detect)(const char *);
    char *(*models)(const char *);
    *(void **)&fail_alloc = dlsym(h, "hwaccel_testhook_fail_alloc");
    *(void **)&free_string = dlsym(h, "hwaccel_free_string");
    *(void **)&detect = dlsym(h, "hwaccel_detect_json");
    *(void **)&models = dlsym(h, "hwaccel_models_json");
    CHECK(fail_alloc != NULL && free_string != NULL && detect != NULL && models != NULL, "dlsym: %s", dlerror());
    if (check_failed) return check_summary();

    for (int round = 0; round < 3; round++) {
        /* An error answer and a large one (the whole catalog). */
        fail_alloc(1);
        char *s = detect("{");
        CHECK(s == NULL, "round %d: detect with malloc failing returns NULL, not %.80s", round, s);
        free_string(s);
        fail_alloc(1);
        s = models(NULL);
        CHECK(s == NULL, "round %d: models with malloc failing returns NULL, not %.80s", round, s);
        free_string(s);
        /* The next calls allocate again and answer. */
        s = detect("{");
        CHECK(is_error_with(s, "invalid_json"), "round %d: after a failed allocation: %.200s", round, s);
        free_string(s);
        s = models("{\"filter\":\"llama-3.1-8b\"}");
        CHECK(contains(s, "{\"models\":[{"), "round %d: models after a failed allocation: %.200s", round, s);
        free_string(s);
    }
    /* A child forked after load gets shim.c's forked_child answer, built in
     * C (no Go in the child) with the same allocator: NULL when it fails.
     * The failure is armed before fork (the hook is a Go export, which a
     * forked child cannot call); alarm(5) is the hang detector. */
    fflush(stdout);
    fflush(stderr);
    fail_alloc(1);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5);
        char *c = detect("{}");
        _exit(c == NULL ? 0 : 1);
    }
    fail_alloc(0);
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "forked child: with malloc failing the answer is NULL (status %#x)", status);
    return check_summary();
}
