/* test_reaper.c: hosts that take the library's children away from it. A host
 * that ignores SIGCHLD makes the kernel reap every child at exit; a host with
 * a thread calling waitpid(-1) reaps them itself. Either way the library
 * cannot read a tool's exit status by waiting, and runs the tools under a
 * status wrapper instead (issue 23 item 1): every answer must equal the
 * plain host's, for a failing nvidia-smi (exit 9, its driver message on
 * stdout: tool_failed with exit_code 9, not tool_status_lost) and for a good
 * one (the fixture DGX H100: the same registry, no warning). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static char dir[64], opts[512];

/* make_machine writes an empty sysroot and a bin/ whose nvidia-smi fails the
 * way it does without a driver: the message on stdout, exit status 9 (the
 * message is the one NVIDIA's tool prints, quoted in the NVIDIA developer
 * forums: https://forums.developer.nvidia.com/t/nvidia-smi-has-failed-because-it-couldnt-communicate-with-the-nvidia-driver/68012). */
static void make_machine(void) {
    strcpy(dir, "/tmp/hwaccel-reaper-XXXXXX");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char p[128];
    snprintf(p, sizeof p, "%s/root", dir);
    CHECK(mkdir(p, 0755) == 0, "mkdir root");
    snprintf(p, sizeof p, "%s/bin", dir);
    CHECK(mkdir(p, 0755) == 0, "mkdir bin");
    snprintf(p, sizeof p, "%s/bin/nvidia-smi", dir);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL, "create tool");
    fputs("#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
          "Make sure that the latest NVIDIA driver is installed and running.\"\nexit 9\n", f);
    fclose(f);
    chmod(p, 0755);
    snprintf(opts, sizeof opts,
             "{\"sysroot\":\"%s/root\",\"path\":\"%s/bin\",\"backends\":[\"cuda\"],\"timeout_ms\":5000}", dir, dir);
}

static void remove_machine(void) {
    char p[128];
    snprintf(p, sizeof p, "%s/bin/nvidia-smi", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/bin", dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/root", dir);
    rmdir(p);
    rmdir(dir);
}

/* detect_says_failed runs n detections and counts those whose answer
 * reports the tool as failed with its own exit status (tool_failed, exit
 * code 9) or with its status lost (tool_status_lost). */
static void detect_says_failed(const char *label, int n, int *failed, int *lost) {
    *failed = *lost = 0;
    for (int i = 0; i < n; i++) {
        char *s = hwaccel_detect_json(opts);
        CHECK(is_envelope(s) && !contains(s, "{\"error\":"), "%s: %.300s", label, s);
        int f = contains(s, "\"code\":\"tool_failed\"") && contains(s, "\"exit_code\":9");
        int l = contains(s, "\"code\":\"tool_status_lost\"") && contains(s, "NVIDIA-SMI has failed");
        CHECK(f || l, "%s, run %d: the failing tool passed for a success: %.600s", label, i, s);
        *failed += f;
        *lost += l;
        hwaccel_free_string(s);
    }
    printf("%s: %d tool_failed, %d tool_status_lost of %d\n", label, *failed, *lost, n);
}

static char good_opts[1024];
static char *good_answer;

/* detect_good_same runs n detections of the fixture DGX H100 (a good
 * nvidia-smi) and counts those equal to the plain host's answer. */
static int detect_good_same(const char *label, int n) {
    int same = 0;
    for (int i = 0; i < n; i++) {
        char *s = strip_timing(hwaccel_detect_json(good_opts));
        int eq = s != NULL && strcmp(s, good_answer) == 0;
        CHECK(eq, "%s, run %d: the answer differs from the plain host's: %.600s", label, i,
              s && strstr(s, "\"warnings\"") ? strstr(s, "\"warnings\"") : s);
        same += eq;
        hwaccel_free_string(s);
    }
    printf("%s: %d of %d answers equal the plain host's\n", label, same, n);
    return same;
}

static atomic_int stop_reaper;

/* reaper is a host thread that reaps every child of the process. */
static void *reaper(void *arg) {
    (void)arg;
    while (!atomic_load(&stop_reaper)) {
        if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD) usleep(100);
    }
    return NULL;
}

int main(void) {
    make_machine();
    int failed, lost;
    fixture_options(good_opts, sizeof good_opts, "dgx-h100", ",\"backends\":[\"cuda\"],\"timeout_ms\":20000");

    detect_says_failed("plain host", 3, &failed, &lost);
    CHECK(failed == 3, "plain host: the status is read every time (%d of 3)", failed);
    good_answer = strip_timing(hwaccel_detect_json(good_opts));
    CHECK(contains(good_answer, "\"cuda:7\"") && contains(good_answer, "\"warnings\":[]"),
          "plain host, good tool: %.300s", good_answer);

    /* SIGCHLD ignored first: the library sees the disposition before any
     * run loses a status. */
    signal(SIGCHLD, SIG_IGN);
    detect_says_failed("SIGCHLD ignored", 10, &failed, &lost);
    CHECK(failed == 10, "SIGCHLD ignored: the tool's own status every time (%d of 10)", failed);
    detect_good_same("SIGCHLD ignored, good tool", 10);
    signal(SIGCHLD, SIG_DFL);

    pthread_t th;
    CHECK(pthread_create(&th, NULL, reaper, NULL) == 0, "pthread_create");
    detect_says_failed("host thread in waitpid(-1)", 10, &failed, &lost);
    CHECK(failed == 10, "waitpid(-1): the tool's own status every time (%d of 10)", failed);
    detect_good_same("host thread in waitpid(-1), good tool", 10);
    atomic_store(&stop_reaper, 1);
    /* Wake the reaper if it sleeps in waitpid: a child that exits at once. */
    if (fork() == 0) _exit(0);
    pthread_join(th, NULL);
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }

    hwaccel_free_string(good_answer);
    remove_machine();
    return check_summary();
}
