// plan_model.cpp: detect this machine with the C++ wrapper and plan a model.
//
//   plan_model [--sysroot DIR] [--params-b N | --model NAME] [--engine vllm|llama.cpp]
//
// Prints the devices found (one line each, to stderr) and the sharding plan
// (JSON, to stdout).  --sysroot DIR reads the machine under DIR (a fixture,
// a container's view of the host) with "no_exec": vendor tools are looked up
// on this process's PATH, and they would report this host's GPUs.
// Build against an installed library:
//   c++ -std=c++17 plan_model.cpp $(pkg-config --cflags --libs ai_hwaccel)
// or with CMake: examples/cpp/CMakeLists.txt (find_package(ai_hwaccel)).
#include <ai_hwaccel.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

// json_quote makes s a JSON string literal (enough for paths and names).
std::string json_quote(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) continue;
        out += c;
    }
    return out + "\"";
}

// print_device_ids lists the "id" values of a registry without a JSON
// library: every device object starts with {"id":"...".
void print_device_ids(const std::string &registry) {
    const std::string key = "{\"id\":\"";
    for (std::size_t at = registry.find(key); at != std::string::npos; at = registry.find(key, at + 1)) {
        std::size_t start = at + key.size();
        std::cerr << "device " << registry.substr(start, registry.find('"', start) - start) << "\n";
    }
}

// json_number makes text a JSON number, or returns "" when it is not a
// finite number (strtod also reads "nan", "inf" and hex, which JSON does not).
// The library checks the value itself (a negative size is invalid_argument).
std::string json_number(const std::string &text) {
    const char *start = text.c_str();
    char *end = nullptr;
    double v = std::strtod(start, &end);
    if (text.empty() || end != start + text.size() || !std::isfinite(v)) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

int usage(const std::string &why) {
    std::cerr << "plan_model: " << why
              << "\nusage: plan_model [--sysroot DIR] [--params-b N | --model NAME] [--engine vllm|llama.cpp]\n";
    return 2;
}

}  // namespace

int main(int argc, char **argv) {
    std::string sysroot, model = "{\"params_b\":70}", engine = "vllm";
    for (int i = 1; i < argc; i += 2) {
        std::string flag = argv[i];
        if (flag != "--sysroot" && flag != "--params-b" && flag != "--model" && flag != "--engine")
            return usage("unknown flag " + flag);
        if (i + 1 == argc) return usage(flag + " needs a value");
        std::string value = argv[i + 1];
        if (flag == "--sysroot") {
            sysroot = value;
        } else if (flag == "--params-b") {
            std::string n = json_number(value);
            if (n.empty()) return usage("--params-b " + value + ": not a number");
            model = "{\"params_b\":" + n + "}";
        } else if (flag == "--model") {
            model = "{\"name\":" + json_quote(value) + "}";
        } else {
            engine = value;
        }
    }
    try {
        hwaccel::require_compatible_abi();
        std::string options =
            sysroot.empty() ? "{}" : "{\"sysroot\":" + json_quote(sysroot) + ",\"no_exec\":true}";
        std::string registry = hwaccel::detect(options);
        print_device_ids(registry);
        std::string request = "{\"model\":" + model + ",\"engine\":" + json_quote(engine) +
                              ",\"registry\":" + registry + "}";
        std::cout << hwaccel::plan_sharding(request) << "\n";
        return 0;
    } catch (const hwaccel::error &e) {
        std::cerr << "plan_model: " << e.code() << ": " << e.what() << "\n";
        return 1;
    }
}
