/* test_hostile.c: detection on testdata/machines/hostile, whose vendor tools
 * hang, ignore SIGTERM, crash, flood 50 MB, print truncated JSON, or leave a
 * grandchild holding their stdout (see its bin/). Each detection must return
 * an answer within timeout_ms + 1 s, and leave no process behind: this
 * process is made a child subreaper, so even a grandchild that outlives its
 * parent is re-parented to us and counted. */
#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* children lists (into pids) the live processes whose parent is us. */
static int children(pid_t *pids, int max) {
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        /* pid (comm) state ppid ...: comm may hold spaces, so parse after the last ')'. */
        char *rp = strrchr(buf, ')');
        char state;
        int ppid;
        if (rp == NULL || sscanf(rp + 1, " %c %d", &state, &ppid) != 2) continue;
        if (ppid == getpid() && state != 'Z' && n < max) pids[n++] = atoi(e->d_name);
    }
    if (d != NULL) closedir(d);
    return n;
}

/* reap collects zombies re-parented to us. */
static void reap(void) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

static void detect_within(const char *label, int timeout_ms, const char *extra) {
    char opts[1024], tail[256];
    snprintf(tail, sizeof tail, ",\"timeout_ms\":%d%s", timeout_ms, extra);
    fixture_options(opts, sizeof opts, "hostile", tail);
    double t0 = now();
    char *s = hwaccel_detect_json(opts);
    double took = now() - t0;
    printf("%s: %.0f ms (timeout_ms %d)\n", label, took * 1000, timeout_ms);
    CHECK(is_envelope(s) && !contains(s, "{\"error\":"), "%s: %.300s", label, s);
    if (extra[0] == '\0') CHECK(contains(s, "{\"id\":\"cpu:0\""), "%s: cpu:0 missing", label);
    CHECK(took < timeout_ms / 1000.0 + 1.0, "%s: took %.2f s, timeout_ms %d", label, took, timeout_ms);
    hwaccel_free_string(s);

    /* Give killed processes a moment to exit, then count what is left. */
    pid_t left[64];
    int n = 0;
    for (int i = 0; i < 20; i++) {
        reap();
        n = children(left, 64);
        if (n == 0) break;
        usleep(50000);
    }
    CHECK(n == 0, "%s: %d process(es) left behind, first pid %d", label, n, n ? (int)left[0] : 0);
    for (int i = 0; i < n; i++) kill(left[i], SIGKILL);
    reap();
}

int main(void) {
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "PR_SET_CHILD_SUBREAPER");
    /* The probe itself must see an orphaned grandchild. */
    pid_t mid = fork();
    if (mid == 0) {
        if (fork() == 0) {
            sleep(30);
            _exit(0);
        }
        _exit(0);
    }
    waitpid(mid, NULL, 0);
    pid_t seen[4];
    int n = children(seen, 4);
    CHECK(n == 1, "probe: want the orphaned grandchild, saw %d", n);
    for (int i = 0; i < n; i++) kill(seen[i], SIGKILL);
    usleep(10000);
    reap();
    detect_within("hostile, all backends", 1000, "");
    detect_within("hostile, 300 ms", 300, "");
    detect_within("hostile, rocm (ignores SIGTERM)", 500, ",\"backends\":[\"rocm\"]");
    detect_within("hostile, intel_gpu (grandchild holds stdout)", 500, ",\"backends\":[\"intel_gpu\"]");
    return check_summary();
}
