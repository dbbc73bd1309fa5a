/* test_panic.c: a panic inside an export becomes an "internal" error object
 * naming the export, and the host keeps running (docs/abi.md, "Guarantees"). Uses the test-only build/test/libai_hwaccel_testhooks.so, whose
 * hwaccel_testhook_panic export fails on purpose inside the same guard every
 * public export uses; the shipped library has no such export (c_dlopen and
 * scripts/check-symbols.sh check that). */
#include <dlfcn.h>

#include "check.h"

int main(void) {
    void *h = dlopen(HWACCEL_TESTHOOKS_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL, "dlopen(%s): %s", HWACCEL_TESTHOOKS_LIB, dlerror());
    if (h == NULL) return check_summary();
    char *(*hook)(const char *);
    void (*free_string)(char *);
    char *(*detect)(const char *);
    *(void **)&hook = dlsym(h, "hwaccel_testhook_panic");
    *(void **)&free_string = dlsym(h, "hwaccel_free_string");
    *(void **)&detect = dlsym(h, "hwaccel_detect_json");
    CHECK(hook != NULL && free_string != NULL && detect != NULL, "dlsym: %s", dlerror());
    if (check_failed) return check_summary();

    static const char *const kinds[] = {"panic", "index", "nil"};
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            char *s = hook(kinds[i]);
            CHECK(is_error_with(s, "internal"), "%s: %s", kinds[i], s);
            CHECK(contains(s, "panic in hwaccel_testhook_panic"), "%s: message names the export: %s", kinds[i], s);
            CHECK(is_envelope(s), "%s: envelope", kinds[i]);
            free_string(s);
        }
    }
    /* The library still works after recovered panics. */
    char *s = detect("{");
    CHECK(is_error_with(s, "invalid_json"), "after panics: %s", s);
    free_string(s);
    return check_summary();
}
