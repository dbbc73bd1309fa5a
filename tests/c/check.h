/* check.h: the tiny test harness shared by the programs in tests/c.
 *
 * Every test program counts checks, prints "N passed, N failed" at the end
 * and exits non-zero when any check failed (ctest reads the exit status).
 * Only the public header is used to talk to the library; JSON answers are
 * checked by exact substrings, which is precise enough because the library
 * writes compact JSON with a fixed key order. */
#ifndef HWACCEL_TESTS_CHECK_H
#define HWACCEL_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ai_hwaccel.h"

static int check_passed, check_failed;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            check_passed++;                                                \
        } else {                                                           \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

/* check_summary prints the tally and returns the process exit status. */
static inline int check_summary(void) {
    printf("%d passed, %d failed\n", check_passed, check_failed);
    fflush(stdout);
    return check_failed == 0 ? 0 : 1;
}

/* contains reports whether s holds needle (s may be NULL). */
static inline int contains(const char *s, const char *needle) {
    return s != NULL && strstr(s, needle) != NULL;
}

/* count_of counts non-overlapping occurrences of needle in s. */
static inline int count_of(const char *s, const char *needle) {
    int n = 0;
    size_t len = strlen(needle);
    if (s == NULL || len == 0) return 0;
    for (const char *p = strstr(s, needle); p != NULL; p = strstr(p + len, needle)) n++;
    return n;
}

/* error_code copies the "code" of an error object into buf ("" when s is not
 * an error object) and returns buf. Error objects always start with
 * {"error":{"code":" (the library's encoder writes this key order). */
static inline const char *error_code(const char *s, char *buf, size_t size) {
    static const char prefix[] = "{\"error\":{\"code\":\"";
    buf[0] = '\0';
    if (s == NULL || strncmp(s, prefix, sizeof prefix - 1) != 0) return buf;
    const char *start = s + sizeof prefix - 1;
    const char *end = strchr(start, '"');
    if (end == NULL || (size_t)(end - start) >= size) return buf;
    memcpy(buf, start, (size_t)(end - start));
    buf[end - start] = '\0';
    return buf;
}

/* is_error_with reports whether s is an error object with the given code. */
static inline int is_error_with(const char *s, const char *code) {
    char buf[64];
    return strcmp(error_code(s, buf, sizeof buf), code) == 0;
}

/* is_stable_code reports whether code is one of the header's stable codes. */
static inline int is_stable_code(const char *code) {
    static const char *const codes[] = {"invalid_json", "invalid_argument", "unknown_model",
                                        "model_file",   "too_large",        "detection_failed",
                                        "forked_child", "internal"};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (strcmp(code, codes[i]) == 0) return 1;
    return 0;
}

/* valid_utf8 reports whether s is well-formed UTF-8 (no overlongs, no
 * surrogates, nothing above U+10FFFF). */
static inline int valid_utf8(const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        unsigned c = *s;
        int n;
        unsigned min;
        if (c < 0x80) { s++; continue; }
        else if ((c & 0xE0) == 0xC0) { n = 1; min = 0x80; c &= 0x1F; }
        else if ((c & 0xF0) == 0xE0) { n = 2; min = 0x800; c &= 0x0F; }
        else if ((c & 0xF8) == 0xF0) { n = 3; min = 0x10000; c &= 0x07; }
        else return 0;
        for (int i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80) return 0;
            c = (c << 6) | (s[i] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
        s += n + 1;
    }
    return 1;
}

/* is_envelope reports whether s looks like one complete answer: valid UTF-8,
 * a JSON object, and either an error object with a stable code or no
 * top-level "error" member. (Full JSON validation is done by the Go and
 * Python tests; here we check the C-visible guarantees.) */
static inline int is_envelope(const char *s) {
    if (s == NULL || !valid_utf8(s)) return 0;
    size_t n = strlen(s);
    if (n < 2 || s[0] != '{' || s[n - 1] != '}') return 0;
    char buf[64];
    if (strncmp(s, "{\"error\":", 9) == 0) return is_stable_code(error_code(s, buf, sizeof buf));
    return 1;
}

/* fixture_options writes detection options for a fixture machine under
 * testdata/machines into buf. extra ("" or ",\"key\":value") is appended. */
static inline const char *fixture_options(char *buf, size_t size, const char *machine, const char *extra) {
    snprintf(buf, size,
             "{\"sysroot\":\"%s/testdata/machines/%s/root\",\"path\":\"%s/testdata/machines/%s/bin\"%s}",
             HWACCEL_SOURCE_DIR, machine, HWACCEL_SOURCE_DIR, machine, extra);
    return buf;
}

/* strip_timing removes the "timing" member (the only part of a registry that
 * changes between identical detections) in place and returns s. */
static inline char *strip_timing(char *s) {
    char *t = s ? strstr(s, ",\"timing\":{") : NULL;
    if (t == NULL) return s;
    char *p = t + strlen(",\"timing\":{");
    int depth = 1;
    while (*p && depth > 0) {
        if (*p == '{') depth++;
        else if (*p == '}') depth--;
        p++;
    }
    memmove(t, p, strlen(p) + 1);
    return s;
}

/* device_object returns a malloc'ed copy of the device object with the given
 * id in a registry ("" when absent): from its {"id":"<id>" to the start of the
 * next device, or to the end of the devices array. */
static inline char *device_object(const char *registry, const char *id) {
    char pat[96];
    snprintf(pat, sizeof pat, "{\"id\":\"%s\"", id);
    const char *start = registry ? strstr(registry, pat) : NULL;
    const char *stop = registry ? strstr(registry, "],\"system_io\"") : NULL;
    size_t n = 0;
    if (start != NULL && (stop == NULL || start < stop)) {
        const char *next = strstr(start + 1, "{\"id\":\"");
        const char *end = (next != NULL && (stop == NULL || next < stop)) ? next : stop;
        n = end != NULL ? (size_t)(end - start) : strlen(start);
    }
    char *out = malloc(n + 1);
    if (out == NULL) abort();
    if (n > 0) memcpy(out, start, n);
    out[n] = '\0';
    return out;
}

/* device_count counts the device objects of a registry. */
static inline int device_count(const char *registry) {
    const char *start = registry ? strstr(registry, "\"devices\":[") : NULL;
    const char *stop = registry ? strstr(registry, "],\"system_io\"") : NULL;
    int n = 0;
    for (const char *p = start; p != NULL && (p = strstr(p, "{\"id\":\"")) != NULL && (stop == NULL || p < stop); p++) n++;
    return n;
}

/* check_loaded_library: when HWACCEL_EXPECT_LIB is set (the cgocheck2 run),
 * the library mapped into this process must be that file, so a test cannot
 * silently run against the wrong build. */
static inline void check_loaded_library(void) {
    const char *want = getenv("HWACCEL_EXPECT_LIB");
    if (want == NULL || *want == '\0') return;
    FILE *f = fopen("/proc/self/maps", "r");
    int found = 0;
    char line[4096];
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strstr(line, want) != NULL) found = 1;
    if (f != NULL) fclose(f);
    CHECK(found, "expected %s to be loaded", want);
}

#endif
