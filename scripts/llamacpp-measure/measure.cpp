// measure: load a GGUF with llama.cpp's public API (include/llama.h), create
// a context with the given settings, and print one JSON object with the
// buffers llama.cpp reports in its log (model, KV, SWA KV, output, compute),
// the process peak RSS and, optionally, prefill/decode tokens per second.
//
// It links only libllama (no common/, no tools/) so that a CPU build on a
// small machine compiles as little as possible. The context settings mirror
// what llama-cli and llama-server use by default (common/common.h of the
// commit measured): n_batch 2048, n_ubatch 512, one sequence, swa_full off.
//
//   measure load  MODEL CTX FA(0|1) CTK CTV THREADS [PP TG REPS]
//   measure quant IN OUT TYPE(q8_0|q4_k_m|q6_k|iq4_xs) THREADS
#include "llama.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

static std::string g_log;

static void capture_log(ggml_log_level, const char * text, void *) {
    g_log += text;
    fputs(text, stderr);
}

static ggml_type kv_type(const char * s) {
    if (!strcmp(s, "f16")) return GGML_TYPE_F16;
    if (!strcmp(s, "q8_0")) return GGML_TYPE_Q8_0;
    if (!strcmp(s, "q4_0")) return GGML_TYPE_Q4_0;
    if (!strcmp(s, "f32")) return GGML_TYPE_F32;
    fprintf(stderr, "unknown KV type %s\n", s);
    exit(2);
}

// mib_sum adds every "<what> = N MiB" line of the log matching re (one
// capture: the MiB figure) and returns bytes.
static long long mib_sum(const std::string & log, const std::regex & re) {
    double total = 0;
    for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) {
        total += atof((*it)[1].str().c_str());
    }
    return (long long) (total * 1024 * 1024 + 0.5);
}

// kv_buffers splits the KV buffer lines into the full-attention cache and the
// SWA cache: llama_kv_cache_iswa logs "creating non-SWA KV cache" and then
// "creating     SWA KV cache" before each cache's buffer line.
static void kv_buffers(const std::string & log, long long & kv, long long & kv_swa, std::string & cells) {
    std::regex line_re(R"([^\n]*\n)");
    bool in_swa = false;
    double full = 0, swa = 0;
    std::smatch m;
    std::regex buf_re(R"(KV buffer size =\s*([0-9.]+) MiB)");
    std::regex cells_re(R"(llama_kv_cache: size = [^(]*\(\s*([0-9]+) cells,\s*([0-9]+) layers)");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), line_re); it != std::sregex_iterator(); ++it) {
        std::string l = it->str();
        if (l.find("creating non-SWA KV cache") != std::string::npos) in_swa = false;
        if (l.find("creating     SWA KV cache") != std::string::npos) in_swa = true;
        if (std::regex_search(l, m, buf_re)) (in_swa ? swa : full) += atof(m[1].str().c_str());
        if (std::regex_search(l, m, cells_re)) {
            if (!cells.empty()) cells += ",";
            cells += "{\"cells\":" + m[1].str() + ",\"layers\":" + m[2].str() + ",\"swa\":" + (in_swa ? "true" : "false") + "}";
        }
    }
    kv = (long long) (full * 1024 * 1024 + 0.5);
    kv_swa = (long long) (swa * 1024 * 1024 + 0.5);
}

static double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// bench runs llama-bench's two tests: a prompt of pp tokens in one batch, and
// tg tokens decoded one at a time, each on an empty cache, reps times.
static void bench(llama_context * ctx, int n_vocab, int pp, int tg, int reps, double & pp_ts, double & tg_ts) {
    std::vector<llama_token> toks(pp > tg ? pp : tg);
    for (size_t i = 0; i < toks.size(); i++) toks[i] = (llama_token) (1000 + (i * 7919) % (n_vocab - 1000));
    llama_memory_t mem = llama_get_memory(ctx);
    // warm-up, as llama-bench does
    llama_memory_clear(mem, true);
    llama_decode(ctx, llama_batch_get_one(toks.data(), 1));
    llama_synchronize(ctx);
    double pp_time = 0, tg_time = 0;
    for (int r = 0; r < reps; r++) {
        llama_memory_clear(mem, true);
        double t0 = now_s();
        if (llama_decode(ctx, llama_batch_get_one(toks.data(), pp))) { fprintf(stderr, "prefill failed\n"); exit(1); }
        llama_synchronize(ctx);
        pp_time += now_s() - t0;
        llama_memory_clear(mem, true);
        t0 = now_s();
        for (int i = 0; i < tg; i++) {
            if (llama_decode(ctx, llama_batch_get_one(&toks[i], 1))) { fprintf(stderr, "decode failed\n"); exit(1); }
        }
        llama_synchronize(ctx);
        tg_time += now_s() - t0;
    }
    pp_ts = pp * reps / pp_time;
    tg_ts = tg * reps / tg_time;
}

static int cmd_load(int argc, char ** argv) {
    if (argc != 8 && argc != 11) { fprintf(stderr, "usage: measure load MODEL CTX FA CTK CTV THREADS [PP TG REPS]\n"); return 2; }
    const char * path = argv[2];
    int n_ctx = atoi(argv[3]), fa = atoi(argv[4]), threads = atoi(argv[7]);
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(path, mp);
    if (!model) { fprintf(stderr, "load failed\n"); return 1; }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_batch = 2048;
    cp.n_ubatch = 512;
    cp.n_seq_max = 1;
    cp.swa_full = false; // llama-cli/llama-server default (common/common.h)
    cp.n_threads = cp.n_threads_batch = threads;
    cp.flash_attn_type = fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.type_k = kv_type(argv[5]);
    cp.type_v = kv_type(argv[6]);
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "context failed\n"); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    int n_vocab = llama_vocab_n_tokens(vocab);
    // one prompt token and one generated token, as `-p hi -n 1` would
    llama_token t = 1000;
    if (llama_decode(ctx, llama_batch_get_one(&t, 1))) { fprintf(stderr, "decode failed\n"); return 1; }
    llama_synchronize(ctx);
    double pp_ts = 0, tg_ts = 0;
    int pp = 0, tg = 0, reps = 0;
    if (argc == 11) {
        pp = atoi(argv[8]); tg = atoi(argv[9]); reps = atoi(argv[10]);
        bench(ctx, n_vocab, pp, tg, reps, pp_ts, tg_ts);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long long kv, kv_swa;
    std::string cells;
    kv_buffers(g_log, kv, kv_swa, cells);
    printf("{\"model_bytes\":%lld,\"model_tensor_bytes\":%llu,\"model_buffers\":\"%s\","
           "\"kv_bytes\":%lld,\"kv_swa_bytes\":%lld,\"kv_caches\":[%s],"
           "\"output_bytes\":%lld,\"compute_bytes\":%lld,\"n_ctx\":%u,\"n_batch\":2048,\"n_ubatch\":512,"
           "\"peak_rss_bytes\":%lld,\"prefill_tokens\":%d,\"decode_tokens\":%d,\"reps\":%d,"
           "\"prefill_tokens_per_s\":%.3f,\"decode_tokens_per_s\":%.3f}\n",
           mib_sum(g_log, std::regex(R"(model buffer size =\s*([0-9.]+) MiB)")),
           (unsigned long long) llama_model_size(model),
           [&] {
               static std::string s;
               std::regex re(R"((\S+) model buffer size =\s*([0-9.]+) MiB)");
               for (auto it = std::sregex_iterator(g_log.begin(), g_log.end(), re); it != std::sregex_iterator(); ++it) {
                   if (!s.empty()) s += " ";
                   s += (*it)[1].str() + "=" + (*it)[2].str() + "MiB";
               }
               return s.c_str();
           }(),
           kv, kv_swa, cells.c_str(),
           mib_sum(g_log, std::regex(R"(output buffer size =\s*([0-9.]+) MiB)")),
           mib_sum(g_log, std::regex(R"(compute buffer size =\s*([0-9.]+) MiB)")),
           llama_n_ctx(ctx), (long long) ru.ru_maxrss * 1024, pp, tg, reps, pp_ts, tg_ts);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

static int cmd_quant(int argc, char ** argv) {
    if (argc != 6) { fprintf(stderr, "usage: measure quant IN OUT TYPE THREADS\n"); return 2; }
    llama_model_quantize_params qp = llama_model_quantize_default_params();
    const char * t = argv[4];
    if (!strcmp(t, "q8_0")) qp.ftype = LLAMA_FTYPE_MOSTLY_Q8_0;
    else if (!strcmp(t, "q4_k_m")) qp.ftype = LLAMA_FTYPE_MOSTLY_Q4_K_M;
    else if (!strcmp(t, "q6_k")) qp.ftype = LLAMA_FTYPE_MOSTLY_Q6_K;
    else if (!strcmp(t, "iq4_xs")) qp.ftype = LLAMA_FTYPE_MOSTLY_IQ4_XS;
    else { fprintf(stderr, "unknown type %s\n", t); return 2; }
    qp.nthread = atoi(argv[5]);
    return llama_model_quantize(argv[2], argv[3], &qp) == 0 ? 0 : 1;
}

int main(int argc, char ** argv) {
    llama_log_set(capture_log, nullptr);
    llama_backend_init();
    int rc = 2;
    if (argc > 1 && !strcmp(argv[1], "load")) rc = cmd_load(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "quant")) rc = cmd_quant(argc, argv);
    else fprintf(stderr, "usage: measure load|quant ...\n");
    llama_backend_free();
    return rc;
}
