/* test_detect.c: detection through the C ABI on the fixture machines
 * testdata/machines/{dgx-h100,cpu-only} (see their README.md for where every
 * value comes from), and visibility variables set with setenv() after the
 * library was loaded (Go reads the environment once, at start-up:
 * https://github.com/golang/go/issues/27693). */
#include <stdlib.h>

#include "check.h"

struct gpu {
    const char *id, *bus_id, *numa;
};

/* dgx-h100: 8x H100 80GB HBM3, nvidia-smi memory.total 81559 MiB
 * = 85520809984 bytes, bus ids and NUMA nodes from the fixture's sysfs. */
static const struct gpu dgx_gpus[] = {
    {"cuda:0", "0000:18:00.0", "0"}, {"cuda:1", "0000:2a:00.0", "0"},
    {"cuda:2", "0000:3a:00.0", "0"}, {"cuda:3", "0000:5d:00.0", "0"},
    {"cuda:4", "0000:9a:00.0", "1"}, {"cuda:5", "0000:ab:00.0", "1"},
    {"cuda:6", "0000:ba:00.0", "1"}, {"cuda:7", "0000:db:00.0", "1"},
};

/* has_field checks an exact "key":value pair followed by , or }. */
static int has_field(const char *obj, const char *pair) {
    char a[160], b[160];
    snprintf(a, sizeof a, "%s,", pair);
    snprintf(b, sizeof b, "%s}", pair);
    return contains(obj, a) || contains(obj, b);
}

static char *detect_fixture(const char *machine, const char *extra) {
    char opts[1024];
    char *reg = hwaccel_detect_json(fixture_options(opts, sizeof opts, machine, extra));
    CHECK(is_envelope(reg) && strncmp(reg, "{\"error\"", 8) != 0, "%s: %.300s", machine, reg);
    return reg;
}

static void test_dgx_h100(void) {
    char *reg = detect_fixture("dgx-h100", "");
    CHECK(contains(reg, "\"schema_version\":1"), "schema_version");
    CHECK(device_count(reg) == 9, "dgx-h100: want 9 devices (cpu:0 + 8 GPUs), got %d", device_count(reg));
    CHECK(count_of(reg, "\"kind\":\"cuda_gpu\"") == 8, "want 8 cuda_gpu");
    for (size_t i = 0; i < sizeof dgx_gpus / sizeof dgx_gpus[0]; i++) {
        const struct gpu *g = &dgx_gpus[i];
        char *d = device_object(reg, g->id);
        char pair[96];
        CHECK(d[0] != '\0', "%s missing", g->id);
        CHECK(has_field(d, "\"name\":\"NVIDIA H100 80GB HBM3\""), "%s name: %.200s", g->id, d);
        CHECK(has_field(d, "\"memory_bytes\":85520809984"), "%s memory: %.300s", g->id, d);
        snprintf(pair, sizeof pair, "\"pci_bus_id\":\"%s\"", g->bus_id);
        CHECK(has_field(d, pair), "%s bus id: %.400s", g->id, d);
        snprintf(pair, sizeof pair, "\"numa_node\":%s", g->numa);
        CHECK(has_field(d, pair), "%s numa: %.400s", g->id, d);
        free(d);
    }
    char *cpu = device_object(reg, "cpu:0");
    /* /proc/meminfo MemTotal 2113429932 kB */
    CHECK(has_field(cpu, "\"memory_bytes\":2164152250368"), "cpu:0 memory: %.300s", cpu);
    free(cpu);
    CHECK(count_of(reg, "\"kind\":\"nvswitch\"") == 1, "one nvswitch interconnect");
    hwaccel_free_string(reg);
}

static void test_cpu_only(void) {
    char *reg = detect_fixture("cpu-only", "");
    CHECK(device_count(reg) == 1, "cpu-only: want 1 device, got %d: %.300s", device_count(reg), reg);
    char *cpu = device_object(reg, "cpu:0");
    CHECK(has_field(cpu, "\"kind\":\"cpu\""), "cpu:0 kind");
    CHECK(has_field(cpu, "\"memory_bytes\":67503390720"), "cpu:0 memory: %.300s", cpu);
    free(cpu);
    CHECK(contains(reg, "\"numa_nodes\":[{\"id\":0,"), "numa node 0: %.500s", reg);
    hwaccel_free_string(reg);
    /* no_exec must not change a machine without tools. */
    reg = detect_fixture("cpu-only", ",\"no_exec\":true");
    CHECK(device_count(reg) == 1, "cpu-only no_exec: %d devices", device_count(reg));
    hwaccel_free_string(reg);
}

/* The host changes CUDA_VISIBLE_DEVICES after load; the next detection must
 * see it (the library reads it with getenv at call time). */
static void test_setenv_after_load(void) {
    unsetenv("CUDA_VISIBLE_DEVICES");
    char *reg = detect_fixture("dgx-h100", "");
    CHECK(count_of(reg, "\"kind\":\"cuda_gpu\"") == 8, "unset: want 8 GPUs");
    hwaccel_free_string(reg);

    setenv("CUDA_VISIBLE_DEVICES", "0", 1);
    reg = detect_fixture("dgx-h100", "");
    CHECK(count_of(reg, "\"kind\":\"cuda_gpu\"") == 1, "CUDA_VISIBLE_DEVICES=0: want 1 GPU: %.300s", reg);
    char *d = device_object(reg, "cuda:0");
    CHECK(has_field(d, "\"pci_bus_id\":\"0000:18:00.0\""), "visible GPU is physical 0: %.300s", d);
    free(d);
    CHECK(contains(reg, "\"code\":\"hidden_by_env\""), "hidden_by_env warning");
    hwaccel_free_string(reg);

    setenv("CUDA_VISIBLE_DEVICES", "5,2", 1);
    reg = detect_fixture("dgx-h100", "");
    CHECK(count_of(reg, "\"kind\":\"cuda_gpu\"") == 2, "5,2: want 2 GPUs");
    d = device_object(reg, "cuda:0");
    CHECK(has_field(d, "\"pci_bus_id\":\"0000:ab:00.0\""), "cuda:0 is physical 5: %.300s", d);
    free(d);
    d = device_object(reg, "cuda:1");
    CHECK(has_field(d, "\"pci_bus_id\":\"0000:3a:00.0\""), "cuda:1 is physical 2: %.300s", d);
    free(d);
    hwaccel_free_string(reg);

    /* Set but empty hides every GPU, as the CUDA runtime does; only an
     * unset variable shows them all. */
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    reg = detect_fixture("dgx-h100", "");
    CHECK(count_of(reg, "\"kind\":\"cuda_gpu\"") == 0, "CUDA_VISIBLE_DEVICES=\"\": want 0 GPUs: %.300s", reg);
    CHECK(contains(reg, "\"code\":\"hidden_by_env\""), "hidden_by_env warning for the empty value");
    hwaccel_free_string(reg);

    /* The env option overrides the process environment. */
    reg = detect_fixture("dgx-h100", ",\"env\":{\"CUDA_VISIBLE_DEVICES\":\"0,1,2\"}");
    CHECK(count_of(reg, "\"kind\":\"cuda_gpu\"") == 3, "env option 0,1,2: want 3 GPUs");
    hwaccel_free_string(reg);

    unsetenv("CUDA_VISIBLE_DEVICES");
    reg = detect_fixture("dgx-h100", "");
    CHECK(count_of(reg, "\"kind\":\"cuda_gpu\"") == 8, "unset again: want 8 GPUs");
    hwaccel_free_string(reg);
}

int main(void) {
    check_loaded_library();
    test_dgx_h100();
    test_cpu_only();
    test_setenv_after_load();
    return check_summary();
}
