/* test_basic.c: version functions, ownership, and hostile input to every
 * export. Each JSON export must answer every input with an envelope (an
 * answer or an error object with the stable code the header promises), never
 * a crash, NULL or invalid UTF-8. */
#include "check.h"
#include "json_exports.h"
#include "plan_probe.h"

static void test_versions(void) {
    CHECK(hwaccel_abi_version() == HWACCEL_ABI_VERSION, "abi %d", hwaccel_abi_version());
    const char *v = hwaccel_version();
    CHECK(v != NULL && strcmp(v, HWACCEL_VERSION_STRING) == 0, "version %s", v ? v : "(null)");
    CHECK(hwaccel_version() == v, "hwaccel_version must return the same static storage");
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", HWACCEL_VERSION_MAJOR, HWACCEL_VERSION_MINOR,
             HWACCEL_VERSION_PATCH);
    CHECK(strcmp(HWACCEL_VERSION_STRING, want) == 0, "HWACCEL_VERSION_STRING %s != %s",
          HWACCEL_VERSION_STRING, want);
    CHECK(HWACCEL_VERSION_NUMBER ==
              HWACCEL_VERSION_MAJOR * 10000 + HWACCEL_VERSION_MINOR * 100 + HWACCEL_VERSION_PATCH,
          "HWACCEL_VERSION_NUMBER");
}

static void test_ownership(void) {
    hwaccel_free_string(NULL); /* documented no-op */
    char *s = hwaccel_detect_json("{");
    CHECK(is_error_with(s, "invalid_json"), "got %s", s);
    free(s); /* results come from malloc: plain free() is allowed too */
    s = hwaccel_plan_sharding(NULL);
    CHECK(s != NULL, "NULL result");
    hwaccel_free_string(s);
}

/* expect calls fn(input) and checks the answer has error code want, or is a
 * success answer when want is NULL. Planning checks are relaxed to "an error
 * envelope with a stable code" while planning is not implemented (plan_probe.h). */
static void expect(const struct export_entry *e, const char *label, const char *input,
                   const char *want) {
    char *s = e->fn(input);
    char code[64];
    error_code(s, code, sizeof code);
    CHECK(is_envelope(s), "%s(%s): not an envelope: %.200s", e->name, label, s ? s : "(null)");
    if (want == NULL) {
        CHECK(code[0] == '\0', "%s(%s): want an answer, got %.200s", e->name, label, s);
    } else if (!e->is_detect && planning_is_placeholder()) {
        CHECK(code[0] != '\0', "%s(%s): want an error object, got %.200s", e->name, label, s);
    } else {
        CHECK(strcmp(code, want) == 0, "%s(%s): want code %s, got %.200s", e->name, label, want, s);
    }
    hwaccel_free_string(s);
}

static char *repeat(char c, size_t n) {
    char *s = malloc(n + 1);
    if (s == NULL) abort();
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_hostile_inputs(void) {
    /* 20 MB of '[': too_large, and the library stops reading at 16 MiB + 1. */
    char *huge = repeat('[', 20u << 20);
    /* 100000-deep nesting, balanced: short enough to be read, too deep to parse. */
    char *deep = malloc(200001);
    memset(deep, '[', 100000);
    memset(deep + 100000, ']', 100000);
    deep[200000] = '\0';
    /* Exactly 16 MiB (the limit) is accepted; one byte more is too_large. */
    char *at_limit = repeat(' ', 16u << 20);
    memcpy(at_limit + (16u << 20) - 16, "{\"no_exec\":true}", 16);
    char *over_limit = repeat(' ', (16u << 20) + 1);
    memcpy(over_limit + (16u << 20) + 1 - 16, "{\"no_exec\":true}", 16);

    for (size_t i = 0; i < N_EXPORTS; i++) {
        const struct export_entry *e = &exports[i];
        /* NULL and "" mean defaults for detection, and are invalid requests for planning. */
        expect(e, "NULL", NULL, e->is_detect ? NULL : "invalid_argument");
        expect(e, "\"\"", "", e->is_detect ? NULL : "invalid_argument");
        expect(e, "whitespace", " \n\t ", e->is_detect ? NULL : "invalid_argument");
        expect(e, "{", "{", "invalid_json");
        expect(e, "unterminated string", "{\"model\":\"ab", "invalid_json");
        expect(e, "trailing garbage", "{} x", "invalid_json");
        expect(e, "[]", "[]", "invalid_argument");
        expect(e, "number", "42", "invalid_argument");
        expect(e, "20 MB of [", huge, "too_large");
        expect(e, "16 MiB + 1", over_limit, "too_large");
        expect(e, "invalid UTF-8", "\xff\xfe\xfd", "invalid_json");
        expect(e, "100000-deep", deep, "invalid_json");
    }
    const struct export_entry *det = &exports[0];
    expect(det, "exactly 16 MiB", at_limit, NULL);
    expect(det, "{}", "{}", NULL);
    expect(det, "null", "null", NULL);
    expect(det, "unknown key", "{\"sysroot_typo\":\"/\"}", "invalid_argument");
    expect(det, "unknown backend", "{\"backends\":[\"no-such-backend\"]}", "invalid_argument");
    expect(det, "timeout 1e999", "{\"timeout_ms\":1e999}", "invalid_argument");
    expect(det, "timeout 1e30", "{\"timeout_ms\":1000000000000000000000000000000}", "invalid_argument");
    expect(det, "timeout -1", "{\"timeout_ms\":-1}", "invalid_argument");
    expect(det, "timeout 0", "{\"timeout_ms\":0}", "invalid_argument");
    expect(det, "cache_ttl -5", "{\"cache_ttl_ms\":-5}", "invalid_argument");
    expect(det, "sysroot wrong type", "{\"sysroot\":17}", "invalid_argument");
    expect(det, "missing sysroot", "{\"sysroot\":\"/nonexistent/hwaccel-test\"}", "detection_failed");
    /* Invalid UTF-8 inside a string: the error message must still be valid UTF-8. */
    expect(det, "invalid UTF-8 in sysroot", "{\"sysroot\":\"/\xff\xfe\"}", "detection_failed");
    for (size_t i = 1; i <= N_PLANNING; i++) {
        expect(&exports[i], "huge params", "{\"model\":{\"params\":1e999}}", "invalid_argument");
        expect(&exports[i], "negative params", "{\"model\":{\"params_b\":-70}}", "invalid_argument");
        expect(&exports[i], "invalid UTF-8 in name", "{\"model\":{\"name\":\"\xff\xfe\"}}",
               "unknown_model");
        expect(&exports[i], "negative memory in registry",
               "{\"model\":{\"params_b\":7},\"registry\":{\"schema_version\":1,\"devices\":[{\"id\":\"cpu:0\","
               "\"kind\":\"cpu\",\"family\":\"cpu\",\"index\":0,\"available\":true,\"memory_bytes\":-1}]}}",
               "invalid_argument");
        expect(&exports[i], "unknown device kind in registry",
               "{\"model\":{\"params_b\":7},\"registry\":{\"schema_version\":1,\"devices\":[{\"id\":\"x:0\","
               "\"kind\":\"warp_drive\",\"index\":0,\"available\":true}]}}",
               "invalid_argument");
        /* A hand-written registry must say "available" (include/ai_hwaccel.h). */
        expect(&exports[i], "registry device without available",
               "{\"model\":{\"params_b\":7},\"registry\":{\"schema_version\":1,\"devices\":[{\"id\":\"cuda:0\","
               "\"kind\":\"cuda_gpu\",\"index\":0,\"memory_bytes\":85899345920}]}}",
               "invalid_argument");
    }
    free(huge);
    free(deep);
    free(at_limit);
    free(over_limit);
}

/* A small machine for the catalog functions: one 24 GiB GPU and the host. */
#define SMALL_REGISTRY                                                                              \
    "{\"schema_version\":1,\"devices\":[{\"id\":\"cpu:0\",\"kind\":\"cpu\",\"index\":0,"        \
    "\"available\":true,\"memory_bytes\":68719476736},{\"id\":\"cuda:0\",\"kind\":\"cuda_gpu\","     \
    "\"index\":0,\"available\":true,\"memory_bytes\":25769803776,\"memory_bandwidth_gb_s\":1008,"     \
    "\"compute_capability\":\"8.9\"}],\"system_io\":{\"interconnects\":[],\"numa_nodes\":[]},"        \
    "\"warnings\":[]}"

/* test_catalog: hwaccel_models_json and hwaccel_fit_json answer what the
 * header says (since 0.2.0), and a planning request takes the model as one
 * string. */
static void test_catalog(void) {
    char *s = hwaccel_models_json("{\"filter\":\"llama-3.1-8b\"}");
    CHECK(contains(s, "\"name\":\"Llama-3.1-8B\"") && contains(s, "\"hf_id\":\"meta-llama/Llama-3.1-8B\""),
          "models: %.300s", s);
    hwaccel_free_string(s);
    s = hwaccel_models_json("{\"filter\":\"no-such-family\"}");
    CHECK(s != NULL && strcmp(s, "{\"models\":[]}") == 0, "models, no match: %.300s", s);
    hwaccel_free_string(s);
    s = hwaccel_models_json("{\"filtr\":\"x\"}");
    CHECK(is_error_with(s, "invalid_argument") && contains(s, "did you mean \\\"filter\\\"?"),
          "models, misspelt key: %.300s", s);
    hwaccel_free_string(s);

    s = hwaccel_fit_json("{\"filter\":\"Llama-3.1\",\"registry\":" SMALL_REGISTRY "}");
    CHECK(contains(s, "{\"models\":[{\"model\":\"Llama-3.1-8B\"") && contains(s, "\"fits\":true") &&
              contains(s, "\"decode_tokens_per_s\":"),
          "fit: %.400s", s);
    CHECK(contains(s, "\"refusal\":\"insufficient_memory\""), "fit, 405B refused: %.400s", s);
    hwaccel_free_string(s);
    s = hwaccel_fit_json("{\"context_length\":0}");
    CHECK(is_error_with(s, "invalid_argument"), "fit, context 0: %.300s", s);
    hwaccel_free_string(s);

    s = hwaccel_plan_sharding("{\"model\":\"Llama-3.1-8B\",\"registry\":" SMALL_REGISTRY "}");
    CHECK(contains(s, "\"fits\":true"), "plan with a string model: %.300s", s);
    hwaccel_free_string(s);
    s = hwaccel_plan_sharding("{\"model\":{\"name\":5}}");
    CHECK(is_error_with(s, "invalid_argument") && !contains(s, "Go ") && !contains(s, "json:"),
          "wrong type in the contract's words: %.300s", s);
    hwaccel_free_string(s);
}

/* hwaccel_rent_json ranks catalog machines: an answer with choices that
 * carry a price, its date and source, and a cost per million tokens; a
 * registry in the request is refused (the machines are the catalog's). */
static void test_rent(void) {
    char *s = hwaccel_rent_json("{\"model\":{\"name\":\"Llama-3.1-8B\"},"
                                "\"rent\":{\"providers\":[\"aws\"],\"sort\":\"price\"}}");
    char code[64];
    error_code(s, code, sizeof code);
    CHECK(code[0] == '\0', "rent: want an answer, got %.300s", s ? s : "(null)");
    CHECK(s != NULL && strstr(s, "\"choices\":[{") != NULL, "rent: no choice in %.300s", s ? s : "(null)");
    CHECK(s != NULL && strstr(s, "\"provider\":\"aws\"") != NULL, "rent: no aws choice");
    CHECK(s != NULL && strstr(s, "\"cost_per_million_output_tokens\":") != NULL, "rent: no cost");
    CHECK(s != NULL && strstr(s, "\"price_seen\":\"20") != NULL, "rent: no price date");
    CHECK(s != NULL && strstr(s, "\"provider\":\"lambda\"") == NULL, "rent: provider filter ignored");
    hwaccel_free_string(s);
    expect(&exports[N_EXPORTS - 1], "registry in a rent request",
           "{\"model\":{\"name\":\"Llama-3.1-8B\"},\"registry\":{}}", "invalid_argument");
    expect(&exports[N_EXPORTS - 1], "unknown rent key",
           "{\"model\":{\"name\":\"Llama-3.1-8B\"},\"rent\":{\"cheapest\":true}}", "invalid_argument");
}

int main(void) {
    check_loaded_library();
    test_versions();
    test_ownership();
    test_hostile_inputs();
    test_catalog();
    test_rent();
    if (planning_is_placeholder())
        printf("NOTE: planning answers 'not implemented yet'; planning error codes checked as envelopes only\n");
    return check_summary();
}
