// test_hpp.cpp: tests of include/ai_hwaccel.hpp against the built library.
// Built by `make test-cpp` with -std=c++17 -Wall -Wextra -Werror and
// -fsanitize=address,undefined (a leaked or double-freed answer fails it).
// HWACCEL_SOURCE_DIR locates testdata/machines.
#include <ai_hwaccel.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

int passed, failed;

void check(bool ok, const std::string &what) {
    if (ok) {
        passed++;
    } else {
        failed++;
        std::fprintf(stderr, "FAIL: %s\n", what.c_str());
    }
}

bool contains(const std::string &s, const std::string &needle) { return s.find(needle) != std::string::npos; }

std::string fixture_options(const std::string &machine) {
    const char *dir = std::getenv("HWACCEL_SOURCE_DIR");
    std::string root = std::string(dir ? dir : ".") + "/testdata/machines/" + machine + "/root";
    return "{\"sysroot\":\"" + root + "\",\"no_exec\":true}";
}

// expect_error runs fn and checks that it throws hwaccel::error with code.
void expect_error(const std::string &name, const std::string &code, const std::function<void()> &fn) {
    try {
        fn();
        check(false, name + ": no exception, want " + code);
    } catch (const hwaccel::error &e) {
        check(e.code() == code, name + ": code " + e.code() + ", want " + code + " (" + e.what() + ")");
        check(std::string(e.what()).size() > 0, name + ": empty message");
    }
}

static_assert(sizeof(hwaccel::owned_string) == sizeof(char *), "owned_string is one pointer");
static_assert(std::is_nothrow_move_constructible_v<hwaccel::owned_string>, "owned_string moves");
static_assert(!std::is_copy_constructible_v<hwaccel::owned_string>, "owned_string is not copyable");
static_assert(std::is_base_of_v<std::runtime_error, hwaccel::error>, "error is a runtime_error");

void test_versions() {
    check(hwaccel::version() == hwaccel::header_version(),
          "version " + std::string(hwaccel::version()) + " != header " + std::string(hwaccel::header_version()));
    check(hwaccel::abi_version() == HWACCEL_ABI_VERSION, "abi version");
    check(hwaccel::abi_compatible(), "abi_compatible");
    hwaccel::require_compatible_abi();  // must not throw
}

void test_detect_fixture() {
    std::string reg = hwaccel::detect(fixture_options("cpu-only"));
    check(reg.rfind("{\"schema_version\":1", 0) == 0, "registry starts with schema_version: " + reg.substr(0, 80));
    check(contains(reg, "\"id\":\"cpu:0\""), "cpu:0 present");
    // MemTotal 65921280 kB in the fixture's /proc/meminfo.
    check(contains(reg, "\"memory_bytes\":67503390720"), "cpu:0 memory");
    check(!contains(reg, "\"id\":\"cuda:"), "no GPU on cpu-only");
}

void test_errors() {
    expect_error("unknown option", "invalid_argument", [] { hwaccel::detect("{\"bogus\":1}"); });
    expect_error("bad json", "invalid_json", [] { hwaccel::plan_sharding("{\"model\":"); });
    expect_error("empty request", "invalid_argument", [] { hwaccel::suggest_quant(""); });
    expect_error("unknown model", "unknown_model",
                 [] { hwaccel::estimate_training("{\"model\":{\"name\":\"no-such-model-xyz\"}}"); });
}

void test_planning_on_registry() {
    std::string reg = hwaccel::detect(fixture_options("cpu-only"));
    // llama.cpp: vLLM refuses this fixture's Xeon L5640 (no AVX2 or AVX-512).
    std::string req = "{\"model\":{\"params_b\":8},\"registry\":" + reg + ",\"engine\":\"llama.cpp\"}";
    std::string plan = hwaccel::plan_sharding(req);
    check(contains(plan, "\"fits\":true"), "8B fits in 377 GiB of host RAM: " + plan.substr(0, 200));
    check(contains(plan, "\"device_id\":\"cpu:0\""), "plan uses cpu:0");
    std::string quant = hwaccel::suggest_quant(req);
    check(contains(quant, "\"quant\":"), "suggest_quant answers a quant: " + quant.substr(0, 200));
    std::string train = hwaccel::estimate_training(req);
    check(!hwaccel::parse_error(train).has_value(), "estimate_training answers: " + train.substr(0, 200));
}

void test_catalog() {
    std::string models = hwaccel::models("{\"filter\":\"llama-3.1-8b\"}");
    check(contains(models, "\"name\":\"Llama-3.1-8B\""), "models filters the catalog: " + models.substr(0, 200));
    check(contains(hwaccel::models(), "\"models\":["), "models() lists the catalog");
    std::string reg = hwaccel::detect(fixture_options("cpu-only"));
    std::string fit = hwaccel::fit("{\"filter\":\"Llama-3.1\",\"registry\":" + reg + "}");
    check(contains(fit, "\"model\":\"Llama-3.1-8B\"") && contains(fit, "\"fits\":true"),
          "fit plans the catalog on the registry: " + fit.substr(0, 200));
    expect_error("fit misspelt key", "invalid_argument", [] { hwaccel::fit("{\"filtr\":\"x\"}"); });
    std::string plan = hwaccel::plan_sharding("{\"model\":\"Llama-3.1-8B\",\"registry\":" + reg + "}");
    check(contains(plan, "\"fits\":true"), "a model given as one string: " + plan.substr(0, 200));
}

// rent (docs/c-cpp.md lists rent(req) beside the others): the catalog's
// machine types, ranked; a registry has no place in its request.
void test_rent() {
    std::string rent = hwaccel::rent("{\"model\":{\"params_b\":8},\"rent\":{\"providers\":[\"aws\"]}}");
    check(contains(rent, "\"provider\":\"aws\"") && contains(rent, "\"cost_per_million_output_tokens\":"),
          "rent ranks aws machine types: " + rent.substr(0, 200));
    expect_error("rent with a registry", "invalid_argument",
                 [] { hwaccel::rent("{\"model\":\"8b\",\"registry\":{\"devices\":[]}}"); });
    expect_error("rent without a model", "invalid_argument", [] { hwaccel::rent("{}"); });
    hwaccel::owned_string raw = hwaccel::raw::rent("{\"model\":");
    auto e = hwaccel::parse_error(raw.get());
    check(e && e->code == "invalid_json", "raw::rent answers the error object");
}

void test_raw_layer() {
    hwaccel::owned_string s = hwaccel::raw::detect("{\"bogus\":1}");
    check(s != nullptr, "raw answer not null");
    auto e = hwaccel::parse_error(s.get());
    check(e && e->code == "invalid_argument", "raw error parsed");
    hwaccel::owned_string moved = std::move(s);  // freed once, by `moved` (ASan checks)
    check(s == nullptr && moved != nullptr, "move transfers ownership");
    moved.reset();
    check(moved == nullptr, "reset frees");
}

void test_parse_error() {
    struct row {
        const char *in, *code, *message;  // code nullptr: not an error object
    };
    const row rows[] = {
        {R"({"error":{"code":"invalid_json","message":"at byte 3"}})", "invalid_json", "at byte 3"},
        {R"( { "error" : { "message" : "m" , "code" : "too_large" } } )", "too_large", "m"},
        {R"({"error":{"code":"internal","message":"quote \" slash \\ nl \n tab \t"}})", "internal",
         "quote \" slash \\ nl \n tab \t"},
        {R"({"error":{"code":"x","message":"\u00e9\u20ac\ud83d\ude00"}})", "x", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
        {R"({"error":{"code":"x","message":"lone \udc00"}})", "x", "lone \xEF\xBF\xBD"},
        {R"({"error":{"details":{"a":[1,{"b":"}"}]},"code":"model_file","message":"m"}})", "model_file", "m"},
        {R"({"error":{"message":"no code"}})", "internal", "no code"},
        {R"({"error":{"code":"trunc)", "internal", "malformed error object"},
        {R"({"schema_version":1,"devices":[],"error":{"code":"x"}})", nullptr, nullptr},
        {R"({"fits":false,"explanation":["{\"error\":"]})", nullptr, nullptr},
        {"", nullptr, nullptr},
        {"null", nullptr, nullptr},
    };
    for (const row &r : rows) {
        auto e = hwaccel::parse_error(r.in);
        if (r.code == nullptr) {
            check(!e.has_value(), std::string("not an error: ") + r.in);
            continue;
        }
        check(e.has_value(), std::string("error: ") + r.in);
        if (!e) continue;
        check(e->code == r.code, std::string("code of ") + r.in + ": " + e->code);
        check(e->message == r.message, std::string("message of ") + r.in + ": " + e->message);
    }
}

void test_threads() {
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    const std::string opts = fixture_options("cpu-only");
    for (int t = 0; t < 8; t++) {
        threads.emplace_back([&] {
            for (int i = 0; i < 20; i++) {
                try {
                    if (contains(hwaccel::detect(opts), "\"id\":\"cpu:0\"")) ok++;
                    hwaccel::detect("{\"timeout_ms\":-1}");
                } catch (const hwaccel::error &e) {
                    if (e.code() == "invalid_argument") ok++;
                }
            }
        });
    }
    for (auto &th : threads) th.join();
    check(ok.load() == 8 * 20 * 2, "8 threads x 20 calls: " + std::to_string(ok.load()) + " ok of 320");
}

// A std::string with an embedded NUL is refused: the C functions would read
// only "{}" and detect "/" instead of the sysroot after the NUL (issue 14
// item 15).
void test_embedded_nul_is_refused() {
    std::string opts = std::string("{}") + '\0' + fixture_options("cpu-only");
    check(opts.size() > 3 && opts[2] == '\0', "the request holds a NUL");
    expect_error("detect with NUL", "invalid_argument", [&] { hwaccel::detect(opts); });
    std::string req = std::string("{\"model\":{\"params_b\":7}}") + '\0' + "{}";
    expect_error("suggest_quant with NUL", "invalid_argument", [&] { hwaccel::suggest_quant(req); });
    expect_error("plan_sharding with NUL", "invalid_argument", [&] { hwaccel::plan_sharding(req); });
    expect_error("estimate_training with NUL", "invalid_argument", [&] { hwaccel::estimate_training(req); });
    std::string cat = std::string("{\"filter\":\"llama\"}") + '\0' + "x";
    expect_error("models with NUL", "invalid_argument", [&] { hwaccel::models(cat); });
    expect_error("fit with NUL", "invalid_argument", [&] { hwaccel::fit(cat); });
    expect_error("rent with NUL", "invalid_argument", [&] { hwaccel::rent(req); });
}

}  // namespace

int main() {
    test_versions();
    test_detect_fixture();
    test_errors();
    test_planning_on_registry();
    test_catalog();
    test_rent();
    test_raw_layer();
    test_parse_error();
    test_threads();
    test_embedded_nul_is_refused();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
