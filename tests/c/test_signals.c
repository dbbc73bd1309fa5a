/* test_signals.c: the host's own signal handlers keep working with the
 * library loaded (os/signal, "Non-Go programs that call Go code",
 * https://pkg.go.dev/os/signal).
 *
 * SIGINT and SIGCHLD handlers are installed before the library is loaded
 * (dlopen), SIGTERM and SIGUSR1 handlers after (with SA_ONSTACK, as the header
 * asks). While detections run on the dgx-h100 fixture (which spawns
 * nvidia-smi, so the library's children exit and raise SIGCHLD), the main
 * thread sends SIGINT/SIGTERM/SIGUSR1 to the process and forks short-lived
 * children of its own. Every handler must fire, the handlers must still be
 * the host's after load, the host must reap its own children, and every
 * detection must be complete. Finally detection must still work with SIGCHLD
 * ignored (the kernel then reaps every child by itself). */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static volatile sig_atomic_t n_int, n_term, n_usr1, n_chld;
static void on_int(int s) { (void)s; n_int++; }
static void on_term(int s) { (void)s; n_term++; }
static void on_usr1(int s) { (void)s; n_usr1++; }
static void on_chld(int s) { (void)s; n_chld++; }

static void install(int sig, void (*fn)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(sig, &sa, NULL) == 0, "sigaction %d", sig);
}

static int handler_is(int sig, void (*fn)(int)) {
    struct sigaction sa;
    return sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == fn;
}

static char *(*detect)(const char *);
static void (*free_string)(char *);
static char options[1024];
static volatile int stop;
static volatile int n_ok, n_bad;

static void *detector(void *arg) {
    (void)arg;
    while (!stop) {
        char *s = detect(options);
        if (count_of(s, "\"kind\":\"cuda_gpu\"") == 8 && !contains(s, "\"code\":\"tool_")) {
            n_ok++;
        } else {
            n_bad++;
            fprintf(stderr, "incomplete detection under signals: %.400s\n", s);
        }
        free_string(s);
    }
    return NULL;
}

int main(void) {
    /* Before load. */
    install(SIGINT, on_int, SA_RESTART);
    install(SIGCHLD, on_chld, SA_RESTART | SA_NOCLDSTOP);

    void *h = dlopen(HWACCEL_LIB_PATH, RTLD_NOW);
    CHECK(h != NULL, "dlopen: %s", dlerror());
    if (h == NULL) return check_summary();
    *(void **)&detect = dlsym(h, "hwaccel_detect_json");
    *(void **)&free_string = dlsym(h, "hwaccel_free_string");
    CHECK(detect != NULL && free_string != NULL, "dlsym");

    /* After load (the library has started its runtime by now). */
    char *s = detect("{");
    free_string(s);
    install(SIGTERM, on_term, SA_RESTART | SA_ONSTACK);
    install(SIGUSR1, on_usr1, SA_ONSTACK);
    CHECK(handler_is(SIGINT, on_int), "SIGINT handler replaced by the library");
    CHECK(handler_is(SIGCHLD, on_chld), "SIGCHLD handler replaced by the library");

    fixture_options(options, sizeof options, "dgx-h100", "");
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&threads[i], NULL, detector, NULL) == 0, "thread");
    /* The host reaps only its own children, by pid: waitpid(-1) would take
     * the library's tools too and lose their exit status (docs/abi.md, "What
     * the host may do with child processes"; c_reaper tests that case). */
    pid_t own[40];
    int own_children = 0, reaped = 0;
    for (int round = 0; round < 40; round++) {
        kill(getpid(), SIGINT);
        kill(getpid(), SIGTERM);
        kill(getpid(), SIGUSR1);
        pid_t pid = fork();
        if (pid == 0) _exit(0);
        if (pid > 0) own[own_children++] = pid;
        usleep(10000);
        while (reaped < own_children && waitpid(own[reaped], NULL, WNOHANG) > 0) reaped++;
    }
    stop = 1;
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    while (reaped < own_children && waitpid(own[reaped], NULL, 0) > 0) reaped++;

    CHECK(n_int >= 1 && n_term >= 1 && n_usr1 >= 1, "handlers fired: INT %d TERM %d USR1 %d",
          (int)n_int, (int)n_term, (int)n_usr1);
    CHECK(n_chld >= 1, "SIGCHLD handler fired %d times", (int)n_chld);
    CHECK(reaped == own_children, "reaped %d of %d own children", reaped, own_children);
    CHECK(n_ok > 0 && n_bad == 0, "detections under signals: %d ok, %d bad", n_ok, n_bad);
    CHECK(handler_is(SIGINT, on_int) && handler_is(SIGTERM, on_term) && handler_is(SIGCHLD, on_chld),
          "host handlers still installed");

    /* SIGCHLD ignored: children are reaped by the kernel; tool output must
     * still be used. */
    install(SIGCHLD, (void (*)(int))SIG_IGN, 0);
    s = detect(options);
    CHECK(count_of(s, "\"kind\":\"cuda_gpu\"") == 8, "SIGCHLD=SIG_IGN: %.400s", s);
    free_string(s);
    return check_summary();
}
