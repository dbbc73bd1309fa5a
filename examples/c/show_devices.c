/* show_devices: detect the accelerators of this machine, print them, and ask
 * for a plan to run a 70B-parameter model on them.
 *
 *   show_devices [OPTIONS_JSON]
 *
 * OPTIONS_JSON are detection options (see include/ai_hwaccel.h), e.g. from the
 * repository root (path entries must be absolute: a relative one is
 * invalid_argument):
 *   show_devices "{\"sysroot\":\"$PWD/testdata/machines/dgx-h100/root\",\"path\":\"$PWD/testdata/machines/dgx-h100/bin\"}"
 *
 * The example pulls a few fields out of the registry with strstr to stay
 * dependency-free; a real program would use a JSON library (cJSON, jansson,
 * yyjson). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ai_hwaccel.h"

/* field copies the value of "key" inside obj[0, end) into buf: the text of a
 * string (without quotes) or of a number/bool. Returns buf, "-" when absent. */
static const char *field(const char *obj, const char *end, const char *key, char *buf, size_t size) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(obj, pat);
    if (p == NULL || p >= end) return "-";
    p += strlen(pat);
    int quoted = *p == '"';
    if (quoted) p++;
    size_t n = 0;
    while (p[n] != '\0' && (quoted ? p[n] != '"' : (p[n] != ',' && p[n] != '}')) && n + 1 < size) n++;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

/* gib writes a byte count in GiB into buf; "-" where the registry leaves the
 * value out, which means unknown (README: never guessed), not 0. */
static const char *gib(const char *bytes, char *buf, size_t size) {
    if (strcmp(bytes, "-") == 0) return "-";
    snprintf(buf, size, "%.1f", atof(bytes) / (1u << 30));
    return buf;
}

/* print_devices prints one line per device object of the registry. */
static void print_devices(const char *registry) {
    const char *p = strstr(registry, "\"devices\":[");
    const char *stop = strstr(registry, "],\"system_io\"");
    if (stop == NULL) stop = registry + strlen(registry);
    printf("%-8s %-36s %10s %10s %9s %-14s %4s\n", "id", "name", "mem GiB", "free GiB", "GB/s",
           "bus id", "numa");
    while (p != NULL && (p = strstr(p, "{\"id\":\"")) != NULL && p < stop) {
        const char *next = strstr(p + 1, "{\"id\":\"");
        const char *end = (next != NULL && next < stop) ? next : stop;
        char id[64], name[128], mem[32], fre[32], bw[32], bus[32], numa[16], memg[32], freg[32];
        /* field's return value, not the buffer: a key the device leaves
         * out (a CPU without a model name) returns "-" and fills nothing. */
        const char *i = field(p, end, "id", id, sizeof id);
        const char *n = field(p, end, "name", name, sizeof name);
        const char *m = field(p, end, "memory_bytes", mem, sizeof mem);
        const char *f = field(p, end, "memory_free_bytes", fre, sizeof fre);
        printf("%-8s %-36.36s %10s %10s %9s %-14s %4s\n", i, n, gib(m, memg, sizeof memg), gib(f, freg, sizeof freg),
               field(p, end, "memory_bandwidth_gb_s", bw, sizeof bw),
               field(p, end, "pci_bus_id", bus, sizeof bus), field(p, end, "numa_node", numa, sizeof numa));
        p = end;
    }
}

int main(int argc, char **argv) {
    /* The header and the loaded library must agree (sqlite/zstd practice). */
    if (hwaccel_abi_version() != HWACCEL_ABI_VERSION) {
        fprintf(stderr, "libai_hwaccel ABI %d, header ABI %d\n", hwaccel_abi_version(), HWACCEL_ABI_VERSION);
        return 2;
    }
    printf("libai_hwaccel %s (ABI %d)\n", hwaccel_version(), hwaccel_abi_version());

    char *registry = hwaccel_detect_json(argc > 1 ? argv[1] : NULL);
    if (registry == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    if (strncmp(registry, "{\"error\":", 9) == 0) {
        fprintf(stderr, "detection failed: %s\n", registry);
        hwaccel_free_string(registry);
        return 1;
    }
    print_devices(registry);

    /* Plan a 70B model on the registry just detected. */
    static const char head[] = "{\"model\":{\"params_b\":70},\"registry\":";
    size_t len = strlen(head) + strlen(registry) + 2;
    char *request = malloc(len);
    if (request == NULL) {
        hwaccel_free_string(registry);
        return 1;
    }
    snprintf(request, len, "%s%s}", head, registry);
    hwaccel_free_string(registry);

    char *plan = hwaccel_plan_sharding(request);
    free(request);
    if (plan == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    int failed = strncmp(plan, "{\"error\":", 9) == 0;
    /* "fits", "strategy" and "quant" come before "model" in the answer; a
     * plan that does not fit has no strategy or quant, and the search must
     * not run on into levels[], whose entries each have a "quant". */
    const char *end = strstr(plan, ",\"model\":");
    if (end == NULL) end = plan + strlen(plan);
    char fits[16], strategy[32], quant[16];
    if (failed) {
        printf("\nno plan for a 70B model: %s\n", plan);
    } else {
        printf("\nplan for a 70B model: fits=%s strategy=%s quant=%s\n%s\n", field(plan, end, "fits", fits, sizeof fits),
               field(plan, end, "strategy", strategy, sizeof strategy), field(plan, end, "quant", quant, sizeof quant),
               plan);
    }
    hwaccel_free_string(plan);
    /* A plan that does not fit is an answer, not a failure. */
    return failed ? 3 : 0;
}
