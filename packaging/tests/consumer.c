/* consumer.c: a host built against an INSTALLED libai_hwaccel (found by
 * pkg-config or CMake find_package), run by packaging/test-install.sh.
 *
 *   consumer SYSROOT [EXPECTED_LIB_DIR]
 *
 * Checks that the loaded library is the one of the installed tree (dladdr),
 * that its version and ABI equal the installed header's, and that detection
 * on the cpu-only fixture machine (testdata/machines/cpu-only: a two-socket
 * Xeon L5640, MemTotal 65921280 kB) answers exactly the host device. */
#define _GNU_SOURCE
#include <ai_hwaccel.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond, ...)                                   \
    do {                                                    \
        if (!(cond)) {                                      \
            fprintf(stderr, "consumer: FAIL: " __VA_ARGS__); \
            fputc('\n', stderr);                            \
            failures++;                                     \
        }                                                   \
    } while (0)

static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = strstr(s, needle); p != NULL; p = strstr(p + 1, needle)) n++;
    return n;
}

/* loaded_from checks that hwaccel_version comes from a file in dir. */
static void loaded_from(const char *dir) {
    Dl_info info;
    char want[PATH_MAX], got[PATH_MAX];
    EXPECT(dladdr((void *)hwaccel_version, &info) != 0 && info.dli_fname != NULL, "dladdr");
    EXPECT(realpath(dir, want) != NULL, "realpath %s", dir);
    EXPECT(realpath(info.dli_fname, got) != NULL, "realpath %s", info.dli_fname);
    EXPECT(strncmp(got, want, strlen(want)) == 0 && got[strlen(want)] == '/',
           "library loaded from %s, want a file in %s", got, want);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: consumer SYSROOT [EXPECTED_LIB_DIR]\n");
        return 2;
    }
    if (argc > 2) loaded_from(argv[2]);

    EXPECT(strcmp(hwaccel_version(), HWACCEL_VERSION_STRING) == 0, "version %s, header %s",
           hwaccel_version(), HWACCEL_VERSION_STRING);
    EXPECT(hwaccel_abi_version() == HWACCEL_ABI_VERSION, "abi %d, header %d", hwaccel_abi_version(),
           HWACCEL_ABI_VERSION);

    char opts[PATH_MAX + 64];
    snprintf(opts, sizeof opts, "{\"sysroot\":\"%s\",\"no_exec\":true}", argv[1]);
    char *reg = hwaccel_detect_json(opts);
    EXPECT(reg != NULL, "detect returned NULL");
    if (reg != NULL) {
        EXPECT(strncmp(reg, "{\"schema_version\":", 18) == 0, "not a registry: %.300s", reg);
        EXPECT(count(reg, "{\"id\":\"") == 1, "want exactly one device: %.300s", reg);
        EXPECT(strstr(reg, "\"id\":\"cpu:0\",\"kind\":\"cpu\"") != NULL, "cpu:0 missing: %.300s", reg);
        /* /proc/meminfo MemTotal 65921280 kB of the fixture */
        EXPECT(strstr(reg, "\"memory_bytes\":67503390720") != NULL, "cpu:0 memory: %.300s", reg);
        hwaccel_free_string(reg);
    }

    char *err = hwaccel_detect_json("{\"no_such_option\":1}");
    EXPECT(err != NULL && strstr(err, "{\"error\":{\"code\":\"invalid_argument\"") == err,
           "unknown option: %s", err ? err : "(null)");
    hwaccel_free_string(err);

    if (failures == 0) printf("consumer: ok (libai_hwaccel %s, ABI %d)\n", hwaccel_version(), hwaccel_abi_version());
    return failures == 0 ? 0 : 1;
}
