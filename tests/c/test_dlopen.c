/* test_dlopen.c: a host that does not link the library but dlopen()s it by
 * absolute path, resolves every function of the header with dlsym(), calls
 * detection on a fixture machine, and checks that dlclose() is the documented
 * no-op (the library stays loaded; https://github.com/golang/go/issues/11100). */
#include <dlfcn.h>

#include "check.h"

struct api {
    const char *(*version)(void);
    int (*abi_version)(void);
    void (*free_string)(char *);
    char *(*detect_json)(const char *);
    char *(*suggest_quant)(const char *);
    char *(*plan_sharding)(const char *);
    char *(*estimate_training)(const char *);
};

static void *sym(void *h, const char *name) {
    void *p = dlsym(h, name);
    CHECK(p != NULL, "dlsym(%s): %s", name, dlerror());
    return p;
}

int main(void) {
    void *h = dlopen(HWACCEL_LIB_PATH, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL, "dlopen(%s): %s", HWACCEL_LIB_PATH, dlerror());
    if (h == NULL) return check_summary();

    struct api a;
    *(void **)&a.version = sym(h, "hwaccel_version");
    *(void **)&a.abi_version = sym(h, "hwaccel_abi_version");
    *(void **)&a.free_string = sym(h, "hwaccel_free_string");
    *(void **)&a.detect_json = sym(h, "hwaccel_detect_json");
    *(void **)&a.suggest_quant = sym(h, "hwaccel_suggest_quant");
    *(void **)&a.plan_sharding = sym(h, "hwaccel_plan_sharding");
    *(void **)&a.estimate_training = sym(h, "hwaccel_estimate_training");
    /* Internals are not reachable. */
    CHECK(dlsym(h, "aihw_internal_forked") == NULL, "internal fork flag exported");
    CHECK(dlsym(h, "aihw_go_detect_json") == NULL, "Go export exported");
    CHECK(dlsym(h, "crosscall2") == NULL, "cgo internals exported");
    if (check_failed) return check_summary();

    CHECK(a.abi_version() == HWACCEL_ABI_VERSION, "abi");
    CHECK(strcmp(a.version(), HWACCEL_VERSION_STRING) == 0, "version");

    char opts[1024];
    char *reg = a.detect_json(fixture_options(opts, sizeof opts, "dgx-h100", ""));
    CHECK(count_of(reg, "\"kind\":\"cuda_gpu\"") == 8, "dgx-h100 via dlopen: %.200s", reg);
    a.free_string(reg);
    char *s = a.plan_sharding(NULL);
    CHECK(is_error_with(s, "invalid_argument"), "plan(NULL): %s", s);
    a.free_string(s);
    s = a.suggest_quant("{");
    CHECK(is_error_with(s, "invalid_json"), "quant({): %s", s);
    a.free_string(s);
    s = a.estimate_training("");
    CHECK(is_error_with(s, "invalid_argument"), "training(\"\"): %s", s);
    a.free_string(s);

    /* dlclose succeeds but does not unload (NODELETE): calls keep working. */
    CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());
    void *again = dlopen(HWACCEL_LIB_PATH, RTLD_NOW | RTLD_NOLOAD);
    CHECK(again != NULL, "library unloaded by dlclose");
    s = a.detect_json("{");
    CHECK(is_error_with(s, "invalid_json"), "call after dlclose: %s", s);
    a.free_string(s);
    return check_summary();
}
