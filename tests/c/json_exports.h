/* json_exports.h: every JSON export of include/ai_hwaccel.h in one table, in
 * the header's order, for the tests that call each of them (test_basic,
 * test_fork, test_fuzz). A new export is added here once; `make
 * check-symbols` proves the header and the .so agree. */
#ifndef HWACCEL_TESTS_JSON_EXPORTS_H
#define HWACCEL_TESTS_JSON_EXPORTS_H

#include "ai_hwaccel.h"

typedef char *(*export_fn)(const char *);

struct export_entry {
    const char *name;
    export_fn fn;
    int is_detect; /* NULL and "" mean defaults (detection and the catalog functions) */
};

/* The planning functions are exports[1..N_PLANNING]; the catalog functions
 * (since 0.2.0) come after them, rent (issue 26) last. */
static const struct export_entry exports[] = {
    {"hwaccel_detect_json", hwaccel_detect_json, 1},
    {"hwaccel_suggest_quant", hwaccel_suggest_quant, 0},
    {"hwaccel_plan_sharding", hwaccel_plan_sharding, 0},
    {"hwaccel_estimate_training", hwaccel_estimate_training, 0},
    {"hwaccel_models_json", hwaccel_models_json, 1},
    {"hwaccel_fit_json", hwaccel_fit_json, 1},
    {"hwaccel_rent_json", hwaccel_rent_json, 0},
};
#define N_EXPORTS (sizeof exports / sizeof exports[0])
#define N_PLANNING 3

#endif
