/* test_threads.c: 64 host threads call every export concurrently for
 * HWACCEL_STRESS_SECONDS (default 10) and every answer must equal the answer
 * the same request got single-threaded (the registry's "timing" member, the
 * only part that varies, is removed before comparing). Detection runs with
 * no cache, so the threads really detect concurrently.
 *
 * Two of the requests are detections that run the fixture's nvidia-smi, so
 * tool output must also come through whole while 64 threads starve the
 * runner's pipe readers of CPU (on 2 cores, os/exec's 100 ms WaitDelay used
 * to drop it). HWACCEL_STRESS_TOOLS=0 leaves them out. */
#include <pthread.h>
#include <time.h>

#include "check.h"
#include "plan_probe.h"

#define N_THREADS 64

typedef char *(*export_fn)(const char *);

struct request {
    const char *name;
    export_fn fn;
    char input[1024];
    char *want; /* single-threaded answer, timing stripped */
};

static struct request requests[24];
static int n_requests;
static double deadline;
static volatile int mismatches;
static volatile long calls;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void add(const char *name, export_fn fn, const char *input) {
    struct request *r = &requests[n_requests++];
    r->name = name;
    r->fn = fn;
    snprintf(r->input, sizeof r->input, "%s", input);
    r->want = strip_timing(fn(r->input));
    CHECK(is_envelope(r->want), "%s(%s): %.200s", name, input, r->want);
}

static void *worker(void *arg) {
    long id = (long)arg;
    long mine = 0;
    for (int i = (int)id; now() < deadline; i++) {
        struct request *r = &requests[i % n_requests];
        char *got = strip_timing(r->fn(r->input));
        mine++;
        if (got == NULL || strcmp(got, r->want) != 0) {
            pthread_mutex_lock(&mu);
            if (mismatches++ < 5) {
                /* Show both answers around the first difference. */
                size_t at = 0;
                while (got != NULL && got[at] != '\0' && got[at] == r->want[at]) at++;
                size_t from = at > 120 ? at - 120 : 0;
                fprintf(stderr, "thread %ld: %s(%.80s) differs at byte %zu:\n got ...%.400s\nwant ...%.400s\n", id,
                        r->name, r->input, at, got ? got + from : "(null)", r->want + from);
                const char *w = got ? strstr(got, "\"warnings\":") : NULL;
                if (w != NULL) fprintf(stderr, " got %.600s\n", w);
            }
            pthread_mutex_unlock(&mu);
        }
        hwaccel_free_string(got);
    }
    pthread_mutex_lock(&mu);
    calls += mine;
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(void) {
    check_loaded_library();
    const char *env = getenv("HWACCEL_STRESS_SECONDS");
    double seconds = env ? atof(env) : 10;
    if (seconds <= 0) seconds = 10;
    const char *tools = getenv("HWACCEL_STRESS_TOOLS");
    int with_tools = tools == NULL || strcmp(tools, "0") != 0;
    char opts[1024];

    add("detect", hwaccel_detect_json, fixture_options(opts, sizeof opts, "dgx-h100", ",\"no_exec\":true"));
    add("detect", hwaccel_detect_json, fixture_options(opts, sizeof opts, "cpu-only", ",\"no_exec\":true"));
    add("detect", hwaccel_detect_json,
        fixture_options(opts, sizeof opts, "dgx-h100", ",\"no_exec\":true,\"env\":{\"CUDA_VISIBLE_DEVICES\":\"3,1\"}"));
    int first_tool = n_requests; /* index of the first detection that runs tools */
    if (with_tools) {
        /* Detections that run the fixture's nvidia-smi. A generous timeout:
         * a slow tool run on an oversubscribed machine must not become a
         * (correctly reported) timeout. */
        add("detect", hwaccel_detect_json, fixture_options(opts, sizeof opts, "dgx-h100", ",\"timeout_ms\":120000"));
        add("detect", hwaccel_detect_json,
            fixture_options(opts, sizeof opts, "dgx-h100",
                            ",\"timeout_ms\":120000,\"env\":{\"CUDA_VISIBLE_DEVICES\":\"3,1\"}"));
    }
    add("detect", hwaccel_detect_json, "{");
    const char *plan_req = "{\"model\":{\"params_b\":7},\"registry\":" PROBE_REGISTRY "}";
    add("suggest_quant", hwaccel_suggest_quant, plan_req);
    add("plan_sharding", hwaccel_plan_sharding, plan_req);
    add("estimate_training", hwaccel_estimate_training, plan_req);
    add("plan_sharding", hwaccel_plan_sharding, "[]");
    add("suggest_quant", hwaccel_suggest_quant, "");
    add("estimate_training", hwaccel_estimate_training, "{\"model\":");
    /* The 0.2.0 exports: the catalog, what fits a given registry (one model,
     * so a call stays in the tens of ms), and rent on one provider (rent
     * never detects). A rent answer may warn how many days ago a price was
     * seen: a run across midnight UTC could differ there, once. */
    add("models_json", hwaccel_models_json, "{\"filter\":\"qwen\",\"quant\":\"fp8\"}");
    add("fit_json", hwaccel_fit_json, "{\"filter\":\"llama-3.1-8b\",\"registry\":" PROBE_REGISTRY "}");
    add("rent_json", hwaccel_rent_json, "{\"model\":\"8b\",\"rent\":{\"providers\":[\"aws\"]}}");
    add("models_json", hwaccel_models_json, "{\"filtr\":\"x\"}");
    CHECK(count_of(requests[0].want, "\"kind\":\"cuda_gpu\"") == 8, "reference dgx-h100 detection");
    for (int i = 0; i < n_requests; i++) {
        /* The 0.2.0 references must be answers (or the one error asked for),
         * not errors that would compare equal trivially. */
        if (strcmp(requests[i].name, "models_json") == 0 && contains(requests[i].input, "filtr\""))
            CHECK(is_error_with(requests[i].want, "invalid_argument"), "models_json typo: %.200s", requests[i].want);
        else if (strstr(requests[i].name, "_json") != NULL)
            CHECK(contains(requests[i].want, "\"model") && !contains(requests[i].want, "{\"error\""),
                  "%s reference: %.200s", requests[i].name, requests[i].want);
    }
    if (with_tools) CHECK(contains(requests[first_tool].want, "\"memory_free_bytes\""), "tool data in the reference");

    deadline = now() + seconds;
    pthread_t t[N_THREADS];
    for (long i = 0; i < N_THREADS; i++) CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0, "create %ld", i);
    for (int i = 0; i < N_THREADS; i++) pthread_join(t[i], NULL);

    printf("%d threads, %.0f s, %ld calls%s\n", N_THREADS, seconds, calls, with_tools ? ", with tool runs" : "");
    CHECK(calls >= N_THREADS, "every thread made a call (%ld calls)", calls);
    CHECK(mismatches == 0, "%d answers differ from single-threaded ones", mismatches);
    for (int i = 0; i < n_requests; i++) hwaccel_free_string(requests[i].want);
    return check_summary();
}
