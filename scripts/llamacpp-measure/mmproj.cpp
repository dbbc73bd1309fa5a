// mmproj: load a multimodal projector (an mmproj GGUF) with llama.cpp's mtmd
// library the way llama-mtmd-cli and llama-server do (tools/mtmd/mtmd.h
// mtmd_init_from_file, with the warm-up that reserves the image encoder's
// compute buffer), on the CPU backend, and print one JSON object with the
// sizes clip.cpp logs: the projector's tensors ("model size"), its compute
// buffer per buffer type ("compute buffer size"), the warm-up image and
// whether flash attention was used, plus the process peak RSS. The log lines
// the figures come from are kept verbatim in "log".
//
//   mmproj MMPROJ.gguf FA(auto|on|off) THREADS
//
// No text model is passed (mtmd_init_from_file accepts nullptr and then skips
// the check of the text model's width), so libllama needs no architecture.
#include "mtmd.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>

static std::string g_log;

static void capture_log(ggml_log_level, const char * text, void *) {
    g_log += text;
    fputs(text, stderr);
}

static std::string json_escape(const std::string & in) {
    std::string out;
    for (char c : in) {
        if (c == '"' || c == '\\') { out += '\\'; out += c; }
        else if (c == '\n') out += "\\n";
        else if ((unsigned char) c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); out += b; }
        else out += c;
    }
    return out;
}

// last_mib returns the MiB figure of the last log line matching re, in bytes
// (-1 when none). The last one counts: with flash attention "auto" clip.cpp
// reserves the graph once with it on and, when the backend lacks it, again
// with it off (clip_model_loader::warmup).
static long long last_mib(const std::regex & re) {
    double mib = -1;
    for (auto it = std::sregex_iterator(g_log.begin(), g_log.end(), re); it != std::sregex_iterator(); ++it) {
        mib = atof((*it)[1].str().c_str());
    }
    return mib < 0 ? -1 : (long long) (mib * 1024 * 1024 + 0.5);
}

// kept_lines is every log line that carries a figure or a setting the record
// reads, verbatim.
static std::string kept_lines() {
    static const char * keys[] = {"model size:", "metadata size:", "compute buffer size", "warmup with image size",
                                  "flash attention is", "graph splits", "projector:", "n_embd:", "n_ff:", "n_layer:",
                                  "n_head:", "projection_dim:", "image_size:", "patch_size:", "n_merge:", "CLIP using",
                                  "has vision encoder", "load_tensors: loaded"};
    std::string out;
    size_t pos = 0;
    while (pos < g_log.size()) {
        size_t end = g_log.find('\n', pos);
        if (end == std::string::npos) end = g_log.size();
        std::string l = g_log.substr(pos, end - pos);
        for (const char * k : keys) {
            if (l.find(k) != std::string::npos) {
                out += (out.empty() ? "\"" : ",\"") + json_escape(l) + "\"";
                break;
            }
        }
        pos = end + 1;
    }
    return out;
}

int main(int argc, char ** argv) {
    if (argc != 4) { fprintf(stderr, "usage: mmproj MMPROJ.gguf FA(auto|on|off) THREADS\n"); return 2; }
    const char * path = argv[1];
    mtmd_log_set(capture_log, nullptr);

    mtmd_context_params p = mtmd_context_params_default();
    p.use_gpu = false;
    p.print_timings = false;
    p.n_threads = atoi(argv[3]);
    p.warmup = true;
    if (!strcmp(argv[2], "on")) p.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
    else if (!strcmp(argv[2], "off")) p.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    else p.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;

    mtmd_context * ctx = mtmd_init_from_file(path, nullptr, p);
    if (!ctx) { fprintf(stderr, "mtmd_init_from_file failed\n"); return 1; }

    struct stat st {};
    stat(path, &st);
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);

    std::smatch m;
    int warm_w = 0, warm_h = 0;
    if (std::regex_search(g_log, m, std::regex(R"(warmup with image size = (\d+) x (\d+))"))) {
        warm_w = atoi(m[1].str().c_str());
        warm_h = atoi(m[2].str().c_str());
    }
    std::string fa = "unknown";
    const std::regex fa_re(R"(flash attention is (enabled|disabled))");
    for (auto it = std::sregex_iterator(g_log.begin(), g_log.end(), fa_re);
         it != std::sregex_iterator(); ++it) {
        fa = (*it)[1].str();
    }
    std::string bufts;
    const std::regex buft_re(R"((\S+) compute buffer size)");
    for (auto it = std::sregex_iterator(g_log.begin(), g_log.end(), buft_re);
         it != std::sregex_iterator(); ++it) {
        if (bufts.find((*it)[1].str()) == std::string::npos) bufts += (bufts.empty() ? "" : ",") + (*it)[1].str();
    }

    printf("{\"file_bytes\":%lld,\"model_size_bytes\":%lld,\"compute_buffer_bytes\":%lld,\"compute_buffer_types\":\"%s\","
           "\"flash_attn_requested\":\"%s\",\"flash_attn\":\"%s\",\"warmup_image\":[%d,%d],\"vision\":%s,"
           "\"threads\":%d,\"peak_rss_bytes\":%lld,\"log\":[%s]}\n",
           (long long) st.st_size, last_mib(std::regex(R"(model size:\s*([0-9.]+) MiB)")),
           last_mib(std::regex(R"(compute buffer size =\s*([0-9.]+) MiB)")), bufts.c_str(), argv[2], fa.c_str(), warm_w,
           warm_h, mtmd_support_vision(ctx) ? "true" : "false", p.n_threads, (long long) ru.ru_maxrss * 1024,
           kept_lines().c_str());
    mtmd_free(ctx);
    return 0;
}
