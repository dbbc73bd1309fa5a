/* test_fork.c: fork() after load (docs/abi.md; Go cannot run in a
 * child forked from a multi-threaded process, https://github.com/golang/go/issues/15538).
 *
 *  - a child forked after the library ran gets {"error":{"code":"forked_child"}}
 *    from every JSON export at once (alarm(5) in the child is the hang
 *    detector: a child killed by SIGALRM hung), and the static functions
 *    still work there;
 *  - the same while another parent thread is inside the library (the case
 *    where even simple calls into Go hang in the child);
 *  - the parent keeps working after its children;
 *  - a child that execs a fresh program which loads the library works
 *    normally (fork + exec is unaffected). */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "json_exports.h"

/* The child calls every JSON export of the header (json_exports.h), the
 * 0.2.0 ones included: the header says "every `char *` function returns the
 * error forked_child" in such a child. For models and fit "{}" means defaults
 * (fit would detect this machine), so an export without the fork check would
 * do real work here, not fail fast. */

/* child_body runs in the forked child; returns the child's exit status. */
static int child_body(void) {
    alarm(5);
    int bad = 0;
    for (size_t i = 0; i < sizeof exports / sizeof exports[0]; i++) {
        char *s = exports[i].fn("{}");
        if (!is_error_with(s, "forked_child") || !contains(s, exports[i].name)) {
            fprintf(stderr, "child: %s answered %.200s\n", exports[i].name, s ? s : "(null)");
            bad = 1;
        }
        hwaccel_free_string(s);
    }
    if (hwaccel_abi_version() != HWACCEL_ABI_VERSION || strcmp(hwaccel_version(), HWACCEL_VERSION_STRING) != 0)
        bad = 1;
    hwaccel_free_string(NULL);
    fflush(stderr);
    return bad;
}

/* fork_and_check forks a child running child_body and checks how it ended. */
static void fork_and_check(const char *label) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) _exit(child_body());
    CHECK(pid > 0, "%s: fork failed", label);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "%s: waitpid", label);
    CHECK(!(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM), "%s: child hung (killed by its alarm)", label);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child status %#x", label, status);
}

static volatile int busy_stop;
static char busy_options[1024];

static void *busy(void *arg) {
    (void)arg;
    while (!busy_stop) {
        char *s = hwaccel_detect_json(busy_options);
        hwaccel_free_string(s);
        s = hwaccel_plan_sharding("{");
        hwaccel_free_string(s);
    }
    return NULL;
}

/* exec_child is main() of the program exec'ed by a forked child. */
static int exec_child(void) {
    char opts[1024];
    char *reg = hwaccel_detect_json(fixture_options(opts, sizeof opts, "cpu-only", ""));
    int ok = contains(reg, "{\"id\":\"cpu:0\"") && !contains(reg, "\"error\"");
    if (!ok) fprintf(stderr, "exec child: %.300s\n", reg);
    hwaccel_free_string(reg);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    check_loaded_library();
    if (argc > 1 && strcmp(argv[1], "--exec-child") == 0) return exec_child();
    char opts[1024];
    fixture_options(opts, sizeof opts, "cpu-only", "");

    /* 1. Idle parent that has used the library. */
    char *s = hwaccel_detect_json(opts);
    CHECK(contains(s, "{\"id\":\"cpu:0\""), "parent before fork: %.200s", s);
    hwaccel_free_string(s);
    for (int i = 0; i < 3; i++) fork_and_check("idle parent");

    /* 2. Parent with a thread inside the library while it forks. */
    fixture_options(busy_options, sizeof busy_options, "dgx-h100", "");
    pthread_t t;
    CHECK(pthread_create(&t, NULL, busy, NULL) == 0, "pthread_create");
    for (int i = 0; i < 5; i++) {
        usleep(20000);
        fork_and_check("busy parent");
    }
    busy_stop = 1;
    pthread_join(t, NULL);

    /* 3. The parent is unaffected. */
    s = hwaccel_detect_json(opts);
    CHECK(contains(s, "{\"id\":\"cpu:0\"") && !contains(s, "forked_child"), "parent after forks: %.200s", s);
    hwaccel_free_string(s);

    /* 4. fork + exec: the new program loads the library afresh. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        execl("/proc/self/exe", argv[0], "--exec-child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid exec child");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork+exec child status %#x", status);
    return check_summary();
}
