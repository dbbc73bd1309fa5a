/* test_fuzz.c: a seeded random-input loop over every JSON export (all seven).
 *
 * Inputs are mutations of a corpus of valid and invalid requests: byte
 * flips, random bytes (invalid UTF-8 included), truncation, duplication,
 * deep nesting. Every answer must be an envelope: valid UTF-8, a JSON object,
 * either an answer or an error object with a stable code, never NULL, never a
 * crash. Options:
 *   HWACCEL_FUZZ_SEED (default 1), HWACCEL_FUZZ_ITERATIONS (default 20000).
 * A failure prints the seed and iteration, so it can be replayed. */
#include <stdint.h>

#include "check.h"
#include "json_exports.h"
#include "plan_probe.h"

enum { DETECT = 0, MODELS = 4, FIT = 5 };

static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

#define MAX_INPUT 8192

static void mutate(char *buf, size_t *len) {
    int ops = 1 + (int)(rnd() % 4);
    for (int k = 0; k < ops; k++) {
        size_t n = *len;
        switch (rnd() % 7) {
        case 0: /* flip a byte */
            if (n) buf[rnd() % n] = (char)(rnd() % 255 + 1);
            break;
        case 1: /* truncate */
            if (n) *len = rnd() % n;
            break;
        case 2: /* insert random bytes (never NUL) */
            for (int i = 0, m = 1 + (int)(rnd() % 8); i < m && *len < MAX_INPUT - 1; i++) {
                size_t at = *len ? rnd() % (*len + 1) : 0;
                memmove(buf + at + 1, buf + at, *len - at);
                buf[at] = (char)(rnd() % 255 + 1);
                (*len)++;
            }
            break;
        case 3: { /* duplicate a slice */
            if (!n) break;
            size_t a = rnd() % n, l = 1 + rnd() % (n - a);
            if (*len + l >= MAX_INPUT) break;
            memmove(buf + a + l, buf + a, n - a);
            (*len) += l;
            break;
        }
        case 4: { /* wrap in nesting */
            size_t d = 1 + rnd() % 200;
            if (*len + 2 * d >= MAX_INPUT) break;
            memmove(buf + d, buf, *len);
            memset(buf, '[', d);
            memset(buf + d + *len, ']', d);
            *len += 2 * d;
            break;
        }
        case 5: { /* replace a digit run with a huge number */
            static const char *const nums[] = {"1e999", "-1e999", "99999999999999999999999999",
                                               "-0", "1.5e-400", "NaN", "0x10"};
            const char *num = nums[rnd() % 7];
            size_t l = strlen(num);
            for (size_t i = 0; i < n; i++) {
                if (buf[i] >= '0' && buf[i] <= '9' && *len + l < MAX_INPUT) {
                    memmove(buf + i + l, buf + i + 1, n - i - 1);
                    memcpy(buf + i, num, l);
                    *len = n - 1 + l;
                    break;
                }
            }
            break;
        }
        default: /* invalid UTF-8 sequence */
            if (*len + 2 < MAX_INPUT) {
                static const char *const bad[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf8\x88"};
                const char *b = bad[rnd() % 4];
                size_t l = strlen(b), at = *len ? rnd() % (*len + 1) : 0;
                memmove(buf + at + l, buf + at, *len - at);
                memcpy(buf + at, b, l);
                *len += l;
            }
        }
    }
    buf[*len] = '\0';
}

int main(void) {
    check_loaded_library();
    const char *e;
    uint64_t seed = (e = getenv("HWACCEL_FUZZ_SEED")) ? strtoull(e, NULL, 10) : 1;
    long iterations = (e = getenv("HWACCEL_FUZZ_ITERATIONS")) ? atol(e) : 20000;
    rng_state = seed ? seed : 1;

    char fixture[1024], fixture_tools[1024];
    fixture_options(fixture, sizeof fixture, "cpu-only", ",\"no_exec\":true,\"timeout_ms\":2000");
    fixture_options(fixture_tools, sizeof fixture_tools, "dgx-h100", ",\"backends\":[\"cuda\"],\"timeout_ms\":2000");
    const char *corpus[] = {
        fixture, fixture_tools, "{}", "", "{", "[]", "null", "{\"timeout_ms\":5}",
        "{\"env\":{\"CUDA_VISIBLE_DEVICES\":\"0,1\"},\"no_exec\":true,\"sysroot\":\"/nonexistent\"}",
        "{\"model\":{\"params_b\":70},\"quant\":\"auto\",\"registry\":" PROBE_REGISTRY "}",
        "{\"model\":{\"name\":\"llama-3-70b\"},\"context_length\":4096,\"batch_size\":1,\"registry\":" PROBE_REGISTRY "}",
        "{\"model\":{\"config\":{\"num_hidden_layers\":80,\"hidden_size\":8192}},\"devices\":[\"cpu:0\"],"
        "\"registry\":" PROBE_REGISTRY "}",
        "{\"model\":{\"params\":7000000000},\"quant\":\"int4\",\"engine\":\"vllm\",\"registry\":" PROBE_REGISTRY "}",
        "{\"model\":{\"path\":\"/nonexistent/x.gguf\"},\"registry\":" PROBE_REGISTRY "}",
        /* models, fit (one model: the whole catalog takes ~0.8 s) and rent */
        "{\"filter\":\"qwen\",\"quant\":\"fp8\"}",
        "{\"filter\":\"llama-3.1-8b\",\"engine\":\"llama.cpp\",\"registry\":" PROBE_REGISTRY "}",
        "{\"model\":\"8b\",\"context_length\":8192,\"rent\":{\"providers\":[\"aws\"],\"sort\":\"price\"}}",
    };
    size_t n_corpus = sizeof corpus / sizeof corpus[0];
    static char buf[MAX_INPUT + 16];
    long answers = 0, errors = 0;
    for (long it = 0; it < iterations; it++) {
        const char *base = corpus[rnd() % n_corpus];
        size_t len = strlen(base);
        memcpy(buf, base, len + 1);
        mutate(buf, &len);
        size_t which = rnd() % (sizeof exports / sizeof exports[0]);
        /* Detection only on fixture-shaped inputs keeps the loop off the host's tools. */
        if (which == DETECT && strstr(buf, "testdata/machines") == NULL && strstr(buf, "sysroot") == NULL) which = 1;
        /* fit without a registry detects this machine, tools and all: likewise. */
        if (which == FIT && strstr(buf, "registry") == NULL) which = MODELS;
        char *s = exports[which].fn(buf);
        if (!is_envelope(s)) {
            CHECK(0, "seed %llu iteration %ld: %s(%.200s) -> %.300s", (unsigned long long)seed, it,
                  exports[which].name, buf, s ? s : "(null)");
        } else {
            check_passed++;
            if (strncmp(s, "{\"error\":", 9) == 0) errors++;
            else answers++;
        }
        hwaccel_free_string(s);
    }
    printf("seed %llu: %ld inputs, %ld answers, %ld error objects\n", (unsigned long long)seed, iterations,
           answers, errors);
    return check_summary();
}
