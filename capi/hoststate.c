/* hoststate.c: what the library does to the host's process state before the
 * Go runtime starts (issue 14 items 11 and 12).
 *
 * A constructor of priority 101 is placed in .init_array.00101, which the
 * linker sorts before the unprioritised .init_array entry that starts the Go
 * runtime of a c-shared library (_rt0_amd64_lib in Go's src/runtime/asm_amd64.s,
 * https://github.com/golang/go), so it runs while the process is still exactly as the host left it. */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shim.h"

struct rlimit aihw_host_nofile;
int aihw_host_nofile_known;

/* aihw_record_host_state records the host's RLIMIT_NOFILE (the Go runtime
 * raises the soft limit to the hard one at start-up, src/syscall/rlimit.go;
 * hoststate.go puts the host's value back) and keeps descriptors 0-2 off
 * the library's own files: if the host closed any of them, the Go runtime's
 * first open()s would land there (measured: its cgroup files for the
 * GOMAXPROCS updater and its epoll descriptor took 0, 1 and 2), and the
 * host's next write to "stdout" would reach them. A closed 0-2 is opened on
 * /dev/null, the state a daemon gives them; open descriptors are untouched. */
__attribute__((constructor(101))) static void aihw_record_host_state(void) {
    aihw_host_nofile_known = getrlimit(RLIMIT_NOFILE, &aihw_host_nofile) == 0;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1) continue;
        int null = open("/dev/null", O_RDWR); /* the lowest free: fd itself */
        if (null < 0) return;
        if (null != fd) {
            dup2(null, fd);
            close(null);
        }
    }
}
