/* crate_compare.c: steady-state detection of libai_hwaccel against the Rust
 * crate ai-hwaccel (https://github.com/MacCracken/ai-hwaccel), both loaded
 * into this one process with dlopen() (docs/performance.md, "Against the
 * crate, measured"; issue 28).  bench/crate-compare.sh builds the crate and
 * runs this; it is not part of `make test` or `make bench`.
 *
 *   crate_compare OURS.so CRATE.so [both|ours|crate|show]
 *
 * PATH is set to "" before either library is loaded, so neither runs a
 * vendor tool: ours runs none for an empty PATH (include/ai_hwaccel.h,
 * "path"); the crate's tool lookup (src/detect/command.rs `which`) then
 * tries each tool name relative to the current directory and finds none.
 * Ours detects with NULL options: sysroot "/", no cache; CMP_OURS_OPTIONS,
 * when set, is passed instead (e.g. {"inline_kernel_reads":true}).
 *
 * One call of a side is one whole detection answered as JSON and freed:
 *   ours:  hwaccel_detect_json(NULL), hwaccel_free_string()
 *   crate: ai_hwaccel_detect(), ai_hwaccel_json(), ai_hwaccel_free_string(),
 *          ai_hwaccel_free()            (the crate's src/ffi.rs)
 *
 * Each side first makes CMP_WARMUP calls that are not counted.  Then
 * CMP_ROUNDS rounds; in each, each side makes a block of CMP_BLOCK calls,
 * the order of the sides swapped every round.  Per call: wall time
 * (CLOCK_MONOTONIC) and the calling thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID).  Per block: the process's CPU time (user +
 * system, getrusage(RUSAGE_SELF)) divided by the calls.  Ours runs its
 * backends on goroutines of other threads and the crate on a thread per
 * backend, so the calling thread's CPU undercounts both; the block's process
 * CPU is the figure to compare.
 *
 *   both   (default) the comparison above
 *   ours   only ours, the same blocks (for strace -f -c of one side)
 *   crate  only the crate
 *   show   print one answer of each and exit
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef char *(*detect_json_fn)(const char *);
typedef void (*free_string_fn)(char *);
typedef void *(*crate_detect_fn)(void);
typedef char *(*crate_json_fn)(const void *);
typedef void (*crate_free_fn)(void *);

static struct {
    detect_json_fn detect_json;
    free_string_fn free_string;
} ours;

static struct {
    crate_detect_fn detect;
    crate_json_fn json;
    free_string_fn free_string;
    crate_free_fn free;
} crate;

enum side { OURS, CRATE, SIDES };
static const char *side_name[SIDES] = {"ours", "crate"};

static void die(const char *what, const char *detail) {
    fprintf(stderr, "crate_compare: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void *must_sym(void *h, const char *name) {
    void *p = dlsym(h, name);
    if (p == NULL) die("missing export", name);
    return p;
}

static void *must_open(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) die("dlopen", dlerror());
    return h;
}

static long env_long(const char *name, long def) {
    const char *e = getenv(name);
    return e && *e ? atol(e) : def;
}

static double clock_us(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double process_cpu_us(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static void print_loadavg(const char *when) {
    char buf[128] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fgets(buf, sizeof buf, f) == NULL) strcpy(buf, "?\n");
        fclose(f);
    }
    printf("load average %s: %s", when, buf);
}

/* detect_once makes one whole detection of side s, its answer freed; it
 * returns the answer's length, or -1 for an error answer. */
static const char *ours_options; /* CMP_OURS_OPTIONS, NULL when unset */

static long detect_once(enum side s, int print) {
    long n;
    if (s == OURS) {
        char *j = ours.detect_json(ours_options);
        n = (j == NULL || strncmp(j, "{\"error\"", 8) == 0) ? -1 : (long)strlen(j);
        if (print) printf("%s\n", j ? j : "NULL");
        ours.free_string(j);
    } else {
        void *reg = crate.detect();
        char *j = crate.json(reg);
        n = j == NULL ? -1 : (long)strlen(j);
        if (print) printf("%s\n", j ? j : "NULL");
        crate.free_string(j);
        crate.free(reg);
    }
    return n;
}

/* samples holds one side's figures: per call and per block, in µs. */
struct samples {
    double *wall, *thread_cpu, *block_cpu;
    long calls, blocks;
};

/* run_block makes block calls of side s and adds their figures to out. */
static void run_block(enum side s, long block, struct samples *out) {
    double cpu0 = process_cpu_us();
    for (long i = 0; i < block; i++) {
        double w0 = clock_us(CLOCK_MONOTONIC), t0 = clock_us(CLOCK_THREAD_CPUTIME_ID);
        detect_once(s, 0);
        out->thread_cpu[out->calls] = clock_us(CLOCK_THREAD_CPUTIME_ID) - t0;
        out->wall[out->calls++] = clock_us(CLOCK_MONOTONIC) - w0;
    }
    out->block_cpu[out->blocks++] = (process_cpu_us() - cpu0) / block;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct stats {
    double p10, median, p90;
};

static struct stats summarize(double *v, long n) {
    qsort(v, n, sizeof *v, cmp_double);
    struct stats st = {v[(long)(0.1 * (n - 1) + 0.5)], v[(long)(0.5 * (n - 1) + 0.5)], v[(long)(0.9 * (n - 1) + 0.5)]};
    return st;
}

static void row(const char *side, const char *what, struct stats st, long n) {
    printf("| %-5s | %-42s | %9.1f | %9.1f | %9.1f | %6ld |\n", side, what, st.median, st.p10, st.p90, n);
}

static void bind(int want[SIDES], const char *ours_path, const char *crate_path) {
    if (want[OURS]) {
        void *h = must_open(ours_path);
        ours.detect_json = (detect_json_fn)must_sym(h, "hwaccel_detect_json");
        ours.free_string = (free_string_fn)must_sym(h, "hwaccel_free_string");
    }
    if (want[CRATE]) {
        void *h = must_open(crate_path);
        crate.detect = (crate_detect_fn)must_sym(h, "ai_hwaccel_detect");
        crate.json = (crate_json_fn)must_sym(h, "ai_hwaccel_json");
        crate.free_string = (free_string_fn)must_sym(h, "ai_hwaccel_free_string");
        crate.free = (crate_free_fn)must_sym(h, "ai_hwaccel_free");
    }
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: crate_compare OURS.so CRATE.so [both|ours|crate|show]\n");
        return 2;
    }
    const char *mode = argc == 4 ? argv[3] : "both";
    int want[SIDES] = {1, 1};
    if (strcmp(mode, "ours") == 0) want[CRATE] = 0;
    else if (strcmp(mode, "crate") == 0) want[OURS] = 0;
    else if (strcmp(mode, "both") != 0 && strcmp(mode, "show") != 0) die("unknown mode", mode);

    /* Before loading: neither library may see a PATH with tools on it. */
    if (setenv("PATH", "", 1) != 0) die("setenv PATH", NULL);
    bind(want, argv[1], argv[2]);
    ours_options = getenv("CMP_OURS_OPTIONS");
    if (ours_options != NULL && *ours_options == '\0') ours_options = NULL;

    if (strcmp(mode, "show") == 0) {
        for (int s = 0; s < SIDES; s++) {
            printf("%s:\n", side_name[s]);
            if (detect_once((enum side)s, 1) < 0) die("an error answer from", side_name[s]);
        }
        return 0;
    }

    long rounds = env_long("CMP_ROUNDS", 20), block = env_long("CMP_BLOCK", 200);
    long warmup = env_long("CMP_WARMUP", 20);
    if (rounds < 1 || block < 1 || warmup < 1) die("CMP_ROUNDS, CMP_BLOCK and CMP_WARMUP must be positive", NULL);

    struct samples smp[SIDES] = {{0}};
    for (int s = 0; s < SIDES; s++) {
        if (!want[s]) continue;
        smp[s].wall = malloc(sizeof(double) * rounds * block);
        smp[s].thread_cpu = malloc(sizeof(double) * rounds * block);
        smp[s].block_cpu = malloc(sizeof(double) * rounds);
        if (!smp[s].wall || !smp[s].thread_cpu || !smp[s].block_cpu) die("out of memory", NULL);
        for (long i = 0; i < warmup; i++)
            if (detect_once((enum side)s, 0) < 0) die("an error answer from", side_name[s]);
    }

    /* Per round, CPU of ours over CPU of the crate: the two blocks ran
     * minutes apart at most, so the ratio is paired against load drift. */
    double *paired = malloc(sizeof(double) * rounds);
    print_loadavg("before");
    for (long r = 0; r < rounds; r++) {
        for (int k = 0; k < SIDES; k++) {
            int s = (r % 2 == 0) ? k : SIDES - 1 - k;
            if (want[s]) run_block((enum side)s, block, &smp[s]);
        }
        if (want[OURS] && want[CRATE]) paired[r] = smp[OURS].block_cpu[r] / smp[CRATE].block_cpu[r];
    }
    print_loadavg("after");

    printf("\n%ld rounds x %ld calls per side, µs per detection\n\n", rounds, block);
    printf("| %-5s | %-42s | %9s | %9s | %9s | %6s |\n", "side", "figure", "median", "p10", "p90", "n");
    printf("|-------|--------------------------------------------|-----------|-----------|-----------|--------|\n");
    struct stats wall[SIDES], cpu[SIDES];
    for (int s = 0; s < SIDES; s++) {
        if (!want[s]) continue;
        wall[s] = summarize(smp[s].wall, smp[s].calls);
        cpu[s] = summarize(smp[s].block_cpu, smp[s].blocks);
        row(side_name[s], "wall per call", wall[s], smp[s].calls);
        row(side_name[s], "process CPU per call (per block)", cpu[s], smp[s].blocks);
        row(side_name[s], "calling thread's CPU per call", summarize(smp[s].thread_cpu, smp[s].calls),
            smp[s].calls);
    }
    if (want[OURS] && want[CRATE]) {
        struct stats pr = summarize(paired, rounds);
        printf("\nours / crate: wall (medians) %.3f, process CPU (medians) %.3f, "
               "process CPU paired per round: median %.3f (p10 %.3f, p90 %.3f)\n",
               wall[OURS].median / wall[CRATE].median, cpu[OURS].median / cpu[CRATE].median, pr.median, pr.p10,
               pr.p90);
    }
    return 0;
}
