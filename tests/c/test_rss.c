/* test_rss.c: no memory grows with use. After a warm-up, 100 000 calls may
 * grow the resident set by less than 5 MB: half planning requests on a given
 * registry, half detections on a fixture machine, of which one in 50 is a
 * full uncached detection and the others are answered from the detection
 * cache (options decoding, cache lookup and registry encoding; a full
 * detection costs about 1 ms, too slow for 50 000 of them in `make test`).
 * Every result is freed. Options: HWACCEL_RSS_CALLS (default 100000). */
#include <unistd.h>

#include "check.h"
#include "plan_probe.h"

static long rss_bytes(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static void run(long calls, const char *opts, const char *cached, const char *plan_req) {
    for (long i = 0; i < calls; i++) {
        char *s = (i & 1) ? hwaccel_plan_sharding(plan_req) : hwaccel_detect_json(i % 100 == 0 ? opts : cached);
        if (s == NULL) abort();
        hwaccel_free_string(s);
    }
}

int main(void) {
    const char *e = getenv("HWACCEL_RSS_CALLS");
    long calls = e ? atol(e) : 100000;
    char opts[1024], cached[1024];
    fixture_options(opts, sizeof opts, "cpu-only", ",\"no_exec\":true");
    fixture_options(cached, sizeof cached, "cpu-only", ",\"no_exec\":true,\"cache_ttl_ms\":600000");
    const char *plan_req = "{\"model\":{\"params_b\":70},\"registry\":" PROBE_REGISTRY "}";

    run(5000, opts, cached, plan_req); /* warm-up: runtime arenas, caches */
    long before = rss_bytes();
    run(calls, opts, cached, plan_req);
    long after = rss_bytes();
    printf("%ld calls: RSS %ld kB -> %ld kB (%+ld kB)\n", calls, before / 1024, after / 1024,
           (after - before) / 1024);
    CHECK(before > 0 && after > 0, "read /proc/self/statm");
    CHECK(after - before < 5L * 1000 * 1000, "RSS grew by %ld bytes", after - before);
    return check_summary();
}
