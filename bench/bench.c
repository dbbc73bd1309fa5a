/* bench.c: the C benchmark harness of libai_hwaccel (docs/performance.md).
 *
 * It dlopen()s build/libai_hwaccel.so.<major> the way a host does and times
 * the exports with clock_gettime(CLOCK_MONOTONIC): every figure is the
 * median, p10 and p90 of many calls after a warm-up that is not counted, and
 * every call's answer is freed inside the timed region (a host pays for it).
 *
 *   bench ROOT            run everything, print the table
 *   bench ROOT load OPTS  (internal) one fresh process: time dlopen up to the
 *                         first return of hwaccel_version(), then the first
 *                         hwaccel_detect_json(OPTS); print the figures
 *
 * ROOT is the source tree (fixture machines under testdata/machines, the
 * library under build/, the planning requests under build/bench/ written by
 * bench/genreg). Environment knobs: BENCH_LOAD_RUNS (default 31),
 * BENCH_RSS_CALLS (default 1000000), BENCH_SECONDS (time per row, default 1).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ai_hwaccel.h"

extern char **environ;

typedef const char *(*version_fn)(void);
typedef char *(*json_fn)(const char *);
typedef void (*free_fn)(char *);

static struct {
    version_fn version;
    json_fn detect, suggest, plan;
    free_fn free_string;
} lib;

static const char *root;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *fmt, const char *arg) {
    fprintf(stderr, "bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(1);
}

static long rss_kb(void) {
    long pages = 0, resident = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void lib_path(char *buf, size_t n) {
    snprintf(buf, n, "%s/build/libai_hwaccel.so.%d", root, HWACCEL_VERSION_MAJOR);
}

static void *must_sym(void *h, const char *name) {
    void *p = dlsym(h, name);
    if (p == NULL) die("missing export %s", name);
    return p;
}

static void bind(void *h) {
    lib.version = (version_fn)must_sym(h, "hwaccel_version");
    lib.detect = (json_fn)must_sym(h, "hwaccel_detect_json");
    lib.suggest = (json_fn)must_sym(h, "hwaccel_suggest_quant");
    lib.plan = (json_fn)must_sym(h, "hwaccel_plan_sharding");
    lib.free_string = (free_fn)must_sym(h, "hwaccel_free_string");
}

/* fixture writes the detection options of a fixture machine. */
static const char *fixture(char *buf, size_t n, const char *machine, const char *extra) {
    snprintf(buf, n, "{\"sysroot\":\"%s/testdata/machines/%s/root\",\"path\":\"%s/testdata/machines/%s/bin\"%s}",
             root, machine, root, machine, extra);
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */

struct stats {
    double p10, median, p90;
    long n;
};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, long n, double q) {
    long i = (long)(q * (n - 1) + 0.5);
    return sorted[i];
}

static struct stats summarize(double *v, long n) {
    qsort(v, n, sizeof *v, cmp_double);
    struct stats s = {quantile(v, n, 0.10), quantile(v, n, 0.50), quantile(v, n, 0.90), n};
    return s;
}

static void row(const char *what, struct stats s, const char *unit, const char *target) {
    printf("| %-56s | %10.3f | %10.3f | %10.3f | %-3s | %6ld | %-22s |\n", what, s.median, s.p10, s.p90, unit,
           s.n, target);
    fflush(stdout);
}

static void header(const char *title) {
    printf("\n%s\n\n", title);
    printf("| %-56s | %10s | %10s | %10s | %-3s | %6s | %-22s |\n", "what", "median", "p10", "p90", "in",
           "runs", "target");
    printf("|%s|%s|%s|%s|%s|%s|%s|\n", "----------------------------------------------------------",
           "------------", "------------", "------------", "-----", "--------", "------------------------");
}

/* ------------------------------------------------------------------------ */
/* Timed calls                                                               */

static double bench_seconds(void) {
    const char *e = getenv("BENCH_SECONDS");
    return e ? atof(e) : 1.0;
}

static int is_error(const char *s) { return s == NULL || strncmp(s, "{\"error\"", 8) == 0; }

/* time_json calls f(in) (and frees the answer) warmup times uncounted, then
 * at least min_runs times and until BENCH_SECONDS have passed (at most
 * max_runs); returns the per-call times in µs. */
static struct stats time_json(const char *what, json_fn f, const char *in, int warmup, long min_runs,
                              long max_runs) {
    for (int i = 0; i < warmup; i++) {
        char *s = f(in);
        if (is_error(s)) {
            fprintf(stderr, "bench: %s answered an error: %.400s\n", what, s ? s : "NULL");
            exit(1);
        }
        lib.free_string(s);
    }
    double *v = malloc(sizeof(double) * max_runs);
    double stop = now_us() + bench_seconds() * 1e6;
    long n = 0;
    while (n < max_runs && (n < min_runs || now_us() < stop)) {
        double t0 = now_us();
        char *s = f(in);
        lib.free_string(s);
        v[n++] = now_us() - t0;
    }
    struct stats st = summarize(v, n);
    free(v);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Load: one fresh process per sample                                        */

/* load_child is the whole life of one sample process: the library is not
 * loaded before dlopen below (the harness is not linked to it). */
static int load_child(const char *opts) {
    char path[4096];
    lib_path(path, sizeof path);
    long rss0 = rss_kb();
    double t0 = now_us();
    void *h = dlopen(path, RTLD_NOW);
    if (h == NULL) die("dlopen: %s", dlerror());
    bind(h);
    const char *v = lib.version();
    double t1 = now_us();
    long rss1 = rss_kb();
    char *reg = lib.detect(opts);
    double t2 = now_us();
    long rss2 = rss_kb();
    if (v == NULL || is_error(reg)) die("first detection failed: %.400s", reg ? reg : "NULL");
    lib.free_string(reg);
    printf("%.3f %.3f %ld %ld %ld\n", (t1 - t0) / 1000, (t2 - t1) / 1000, rss0, rss1, rss2); /* ms, kB */
    return 0;
}

/* spawn_capture runs argv, returns its first stdout line in buf; -1 on failure. */
static int spawn_capture(char *const argv[], char *buf, size_t n) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        return -1;
    }
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = read(fd[0], buf + got, n - 1 - got)) > 0) got += r;
    buf[got] = '\0';
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void bench_load(const char *label, const char *opts, int runs) {
    double *load = malloc(sizeof(double) * runs), *first = malloc(sizeof(double) * runs);
    double *rss_load = malloc(sizeof(double) * runs), *rss_first = malloc(sizeof(double) * runs);
    double *rss_host = malloc(sizeof(double) * runs);
    char exe[4096], out[512];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) die("%s", "readlink /proc/self/exe");
    exe[len] = '\0';
    for (int i = 0; i < runs; i++) {
        char *argv[] = {exe, (char *)root, "load", (char *)opts, NULL};
        long r0, r1, r2;
        if (spawn_capture(argv, out, sizeof out) != 0 ||
            sscanf(out, "%lf %lf %ld %ld %ld", &load[i], &first[i], &r0, &r1, &r2) != 5)
            die("load sample failed: %s", out);
        rss_host[i] = r0 / 1024.0;
        rss_load[i] = r1 / 1024.0;
        rss_first[i] = r2 / 1024.0;
    }
    char what[128];
    if (label == NULL) {
        row("load: dlopen .. first return of hwaccel_version", summarize(load, runs), "ms", "<= 2 ms");
        row("RSS of the C host before dlopen", summarize(rss_host, runs), "MB", "");
        row("RSS after load (dlopen + hwaccel_version)", summarize(rss_load, runs), "MB", "<= 8 MB");
    }
    snprintf(what, sizeof what, "first hwaccel_detect_json, %s", label ? label : "cpu-only");
    row(what, summarize(first, runs), "ms", label ? "" : "<= 3 ms");
    snprintf(what, sizeof what, "RSS after first detection, %s", label ? label : "cpu-only");
    row(what, summarize(rss_first, runs), "MB", "");
    free(load), free(first), free(rss_load), free(rss_first), free(rss_host);
}

/* ------------------------------------------------------------------------ */
/* One tool run: the baseline of the slow-tools machine                      */

static struct stats bench_one_tool_run(int runs) {
    char script[4096];
    snprintf(script, sizeof script, "%s/testdata/machines/slow-tools/baseline/one-tool-run", root);
    double *v = malloc(sizeof(double) * runs);
    for (int i = 0; i < runs; i++) {
        char *argv[] = {script, NULL};
        char out[16];
        double t0 = now_us();
        if (spawn_capture(argv, out, sizeof out) != 0) die("%s failed", script);
        v[i] = (now_us() - t0) / 1000.0;
    }
    struct stats s = summarize(v, runs);
    free(v);
    return s;
}

/* ------------------------------------------------------------------------ */

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) die("cannot read %s (run bench/genreg first: make bench does)", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(n + 1);
    if (fread(buf, 1, n, f) != (size_t)n) die("short read of %s", path);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void to_ms(struct stats *s) { s->p10 /= 1000, s->median /= 1000, s->p90 /= 1000; }

static void machine_info(void) {
    char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) snprintf(model, sizeof model, "%s", p + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (f) fclose(f);
    printf("machine: %ld online CPUs, %s\n", sysconf(_SC_NPROCESSORS_ONLN), model);
}

static void so_size(void) {
    char path[4096], real[4096];
    lib_path(path, sizeof path);
    struct stat st;
    if (realpath(path, real) == NULL || stat(real, &st) != 0) die("stat %s", path);
    printf("library: %s, %lld bytes (%.2f MB)\n", real, (long long)st.st_size, st.st_size / 1e6);
}

static void bench_rss(long calls, const char *cached_opts, const char *plan_req) {
    printf("\nRSS over %ld calls (hwaccel_detect_json with cache_ttl_ms on dgx-h100; every 1000th call "
           "hwaccel_plan_sharding on 16 GPUs), after 10000 warm-up calls:\n\n",
           calls);
    printf("| calls | RSS (MB) |\n|------:|---------:|\n");
    for (long i = 0; i < 10000; i++) lib.free_string(lib.detect(cached_opts));
    long step = calls / 10 > 0 ? calls / 10 : 1;
    long first = rss_kb();
    printf("| 0 | %.2f |\n", first / 1024.0);
    long max = first;
    double t0 = now_us();
    for (long i = 1; i <= calls; i++) {
        char *s = (i % 1000 == 0) ? lib.plan(plan_req) : lib.detect(cached_opts);
        if (s == NULL) die("%s", "NULL answer");
        lib.free_string(s);
        if (i % step == 0) {
            long r = rss_kb();
            if (r > max) max = r;
            printf("| %ld | %.2f |\n", i, r / 1024.0);
            fflush(stdout);
        }
    }
    printf("\nRSS growth over %ld calls: %+.2f MB (max %.2f MB); %.1f s\n", calls, (rss_kb() - first) / 1024.0,
           max / 1024.0, (now_us() - t0) / 1e6);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench ROOT\n");
        return 2;
    }
    root = argv[1];
    if (argc == 4 && strcmp(argv[2], "load") == 0) return load_child(argv[3]);

    const char *e = getenv("BENCH_LOAD_RUNS");
    int load_runs = e ? atoi(e) : 31;
    e = getenv("BENCH_RSS_CALLS");
    long rss_calls = e ? atol(e) : 1000000;
    char o1[8192], o2[8192], o3[8192], o4[8192];

    machine_info();
    so_size();

    header("Load (one fresh process per run)");
    bench_load(NULL, fixture(o1, sizeof o1, "cpu-only", ""), load_runs);
    bench_load("dgx-h100, tools run", fixture(o1, sizeof o1, "dgx-h100", ""), load_runs);
    bench_load("dgx-h100, no_exec", fixture(o1, sizeof o1, "dgx-h100", ",\"no_exec\":true"), load_runs);

    char path[4096];
    lib_path(path, sizeof path);
    void *h = dlopen(path, RTLD_NOW);
    if (h == NULL) die("dlopen: %s", dlerror());
    bind(h);

    header("Detection, steady state (per call, answer freed)");
    struct stats s;
    s = time_json("detect", lib.detect, fixture(o1, sizeof o1, "dgx-h100", ""), 5, 20, 100000);
    row("hwaccel_detect_json dgx-h100 (nvidia-smi script runs)", s, "us", "");
    s = time_json("detect", lib.detect, fixture(o2, sizeof o2, "dgx-h100", ",\"no_exec\":true"), 5, 20, 100000);
    row("hwaccel_detect_json dgx-h100, no_exec (sysfs only)", s, "us", "(<= 320 us instant)");
    s = time_json("detect", lib.detect, fixture(o3, sizeof o3, "cpu-only", ""), 5, 20, 100000);
    row("hwaccel_detect_json cpu-only", s, "us", "");
    s = time_json("detect", lib.detect, fixture(o4, sizeof o4, "dgx-h100", ",\"cache_ttl_ms\":86400000"), 5, 100,
                  1000000);
    row("hwaccel_detect_json dgx-h100, cache_ttl_ms hit", s, "us", "<= 20 us");

    header("Slow tools: every tool run takes 50 ms");
    struct stats one = bench_one_tool_run(30);
    row("one tool run (sleep 0.05 script, spawn + reap)", one, "ms", "");
    s = time_json("detect", lib.detect, fixture(o1, sizeof o1, "slow-tools", ""), 2, 20, 30);
    to_ms(&s);
    row("hwaccel_detect_json slow-tools (dgx-h100)", s, "ms", "<= 1.3 x one tool run");
    printf("\nslow-tools detection / one tool run (medians): %.2f x\n", s.median / one.median);

    header("Planning through the C ABI (request JSON with the registry in, answer JSON out)");
    const int sizes[] = {16, 256, 4096};
    char *req16 = NULL;
    for (int i = 0; i < 3; i++) {
        char file[4096], what[128];
        snprintf(file, sizeof file, "%s/build/bench/request-%d.json", root, sizes[i]);
        char *req = read_file(file);
        snprintf(what, sizeof what, "hwaccel_plan_sharding, %d GPUs (%zu B request)", sizes[i], strlen(req));
        s = time_json("plan", lib.plan, req, 3, 10, 100000);
        row(what, s, "us", sizes[i] == 16 ? "<= 20 us" : "linear");
        snprintf(what, sizeof what, "hwaccel_suggest_quant, %d GPUs", sizes[i]);
        s = time_json("suggest", lib.suggest, req, 3, 10, 100000);
        row(what, s, "us", sizes[i] == 16 ? "<= 20 us" : "linear");
        if (sizes[i] == 16)
            req16 = req;
        else
            free(req);
    }

    if (rss_calls > 0) bench_rss(rss_calls, o4, req16);
    free(req16);
    return 0;
}
