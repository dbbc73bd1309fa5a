/* leak_canary.c: deliberately leaks one result string. Run under valgrind by
 * ctest (c_memcheck_canary), it must be reported as "definitely lost": proof
 * that tests/go-runtime.supp hides only Go-runtime noise, not real leaks. */
#include <stdio.h>

#include "ai_hwaccel.h"

int main(void) {
    char *leaked = hwaccel_detect_json("{");
    printf("leaked %p\n", (void *)leaked);
    leaked = NULL;
    return 0;
}
