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
//   measure quant IN OUT TYPE THREADS [pure]   (TYPE: quant_types below)
//
// Two settings of `load` come from the environment so that the argument list
// stays that of the recorded runs:
//   MEASURE_N_CPU_MOE=N  what llama-cli's --n-cpu-moe N sets (common/arg.cpp):
//                        a tensor_buft_override keeping the expert tensors of
//                        layers 0..N-1 (common/common.h LLM_FFN_EXPS_REGEX)
//                        in the CPU buffer type.
//   MEASURE_OT=P=B[,P=B] what llama-cli's -ot / --override-tensor P=B sets: tensors
//                        whose name matches regex P go to the buffer type named
//                        B (a device's buffer type, e.g. CPU). After the
//                        --n-cpu-moe overrides when both are set.
//   MEASURE_DECODE=0     skip the one-token decode (the buffers are all
//                        allocated when the context is created), for GGUFs
//                        written sparse whose weights need not be read.
#include "llama.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
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

static std::string json_escape(const std::string & in) {
    std::string out;
    for (char c : in) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// rs_buffers sums the recurrent-state buffers (llama_memory_recurrent logs
// "RS buffer size" per buffer, then the R (convolution) and S (SSM) parts).
static void rs_buffers(const std::string & log, long long & rs, std::string & parts) {
    rs = mib_sum(log, std::regex(R"(RS buffer size =\s*([0-9.]+) MiB)"));
    std::regex re(R"(llama_memory_recurrent: size = [^(]*\(\s*([0-9]+) cells,[^)]*\), R \((\w+)\):\s*([0-9.]+) MiB, S \((\w+)\):\s*([0-9.]+) MiB)");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) {
        if (!parts.empty()) parts += ",";
        parts += "{\"cells\":" + (*it)[1].str() + ",\"r_type\":\"" + (*it)[2].str() + "\",\"r_mib\":" + (*it)[3].str() +
                 ",\"s_type\":\"" + (*it)[4].str() + "\",\"s_mib\":" + (*it)[5].str() + "}";
    }
}

// cpu_moe_overrides is what --n-cpu-moe n adds to the model parameters
// (common/arg.cpp, common/common.h llm_ffn_exps_block_regex), ending with the
// null pattern llama.cpp stops at. The CPU buffer type is taken from the CPU
// device, the same ggml_backend_cpu_buffer_type() common uses.
static std::vector<llama_model_tensor_buft_override> cpu_moe_overrides(int n) {
    static std::vector<std::string> patterns;
    std::vector<llama_model_tensor_buft_override> o;
    ggml_backend_buffer_type_t cpu = ggml_backend_dev_buffer_type(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU));
    patterns.reserve(n);
    for (int i = 0; i < n; i++) {
        patterns.push_back("blk\\." + std::to_string(i) + "\\.ffn_(up|down|gate|gate_up)_(ch|)exps");
        o.push_back({patterns.back().c_str(), cpu});
    }
    o.push_back({nullptr, nullptr});
    return o;
}

// ot_overrides parses -ot's "pattern=buffer type" list as common/arg.cpp
// does, looking the name up among the devices' buffer types.
static void ot_overrides(const char * spec, std::vector<llama_model_tensor_buft_override> & o) {
    static std::list<std::string> patterns;
    std::string rest = spec;
    while (!rest.empty()) {
        size_t comma = rest.find(',');
        std::string item = rest.substr(0, comma);
        rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
        size_t eq = item.find('=');
        if (eq == std::string::npos) { fprintf(stderr, "bad MEASURE_OT item %s\n", item.c_str()); exit(2); }
        std::string name = item.substr(eq + 1);
        ggml_backend_buffer_type_t buft = nullptr;
        for (size_t i = 0; i < ggml_backend_dev_count() && !buft; i++) {
            ggml_backend_buffer_type_t b = ggml_backend_dev_buffer_type(ggml_backend_dev_get(i));
            if (name == ggml_backend_buft_name(b)) buft = b;
        }
        if (!buft) { fprintf(stderr, "unknown buffer type %s\n", name.c_str()); exit(2); }
        patterns.push_back(item.substr(0, eq));
        o.insert(o.end() - 1, {patterns.back().c_str(), buft}); // before the null terminator
    }
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
    const char * ncm = getenv("MEASURE_N_CPU_MOE");
    int n_cpu_moe = ncm ? atoi(ncm) : -1;
    std::vector<llama_model_tensor_buft_override> overrides;
    const char * ot = getenv("MEASURE_OT");
    if (n_cpu_moe >= 0 || ot) {
        overrides = cpu_moe_overrides(n_cpu_moe >= 0 ? n_cpu_moe : 0);
        if (ot) ot_overrides(ot, overrides);
        mp.tensor_buft_overrides = overrides.data();
    }
    const char * dec = getenv("MEASURE_DECODE");
    bool decode = !(dec && !strcmp(dec, "0"));
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
    if (decode) {
        if (llama_decode(ctx, llama_batch_get_one(&t, 1))) { fprintf(stderr, "decode failed\n"); return 1; }
        llama_synchronize(ctx);
    }
    double pp_ts = 0, tg_ts = 0;
    int pp = 0, tg = 0, reps = 0;
    if (argc == 11) {
        pp = atoi(argv[8]); tg = atoi(argv[9]); reps = atoi(argv[10]);
        bench(ctx, n_vocab, pp, tg, reps, pp_ts, tg_ts);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long long kv, kv_swa, rs;
    std::string cells, rs_parts;
    kv_buffers(g_log, kv, kv_swa, cells);
    rs_buffers(g_log, rs, rs_parts);
    printf("{\"model_bytes\":%lld,\"model_tensor_bytes\":%llu,\"model_buffers\":\"%s\","
           "\"kv_bytes\":%lld,\"kv_swa_bytes\":%lld,\"kv_caches\":[%s],\"rs_bytes\":%lld,\"rs_caches\":[%s],"
           "\"n_cpu_moe\":%d,\"override_tensor\":\"%s\",\"decoded\":%s,"
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
           kv, kv_swa, cells.c_str(), rs, rs_parts.c_str(), n_cpu_moe, json_escape(ot ? ot : "").c_str(), decode ? "true" : "false",
           mib_sum(g_log, std::regex(R"(output buffer size =\s*([0-9.]+) MiB)")),
           mib_sum(g_log, std::regex(R"(compute buffer size =\s*([0-9.]+) MiB)")),
           llama_n_ctx(ctx), (long long) ru.ru_maxrss * 1024, pp, tg, reps, pp_ts, tg_ts);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

// quant_types are the file types `measure quant` accepts, named as
// llama-quantize names them (tools/quantize/quantize.cpp's QUANT_OPTIONS).
static const struct { const char * name; llama_ftype ftype; } quant_types[] = {
    {"f16", LLAMA_FTYPE_MOSTLY_F16},       {"bf16", LLAMA_FTYPE_MOSTLY_BF16},
    {"q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},     {"q6_k", LLAMA_FTYPE_MOSTLY_Q6_K},
    {"q5_k_m", LLAMA_FTYPE_MOSTLY_Q5_K_M}, {"q4_k_m", LLAMA_FTYPE_MOSTLY_Q4_K_M},
    {"q3_k_m", LLAMA_FTYPE_MOSTLY_Q3_K_M}, {"q2_k", LLAMA_FTYPE_MOSTLY_Q2_K},
    {"q5_0", LLAMA_FTYPE_MOSTLY_Q5_0},     {"q5_1", LLAMA_FTYPE_MOSTLY_Q5_1},
    {"q4_0", LLAMA_FTYPE_MOSTLY_Q4_0},     {"q4_1", LLAMA_FTYPE_MOSTLY_Q4_1},
    {"iq4_nl", LLAMA_FTYPE_MOSTLY_IQ4_NL}, {"iq4_xs", LLAMA_FTYPE_MOSTLY_IQ4_XS},
};

// cmd_quant is llama-quantize IN OUT TYPE THREADS; with a fifth argument
// "pure" it is llama-quantize --pure: every quantizable tensor (2-D and
// up, token embedding and output included) at the type's base type
// (q4_k_m: Q4_K, q5_k_m: Q5_K, q3_k_m: Q3_K), without the mix's per-tensor
// rules (llama_model_quantize_params.pure; tensor_type_fallback still
// applies to rows the type's block does not divide).
static int cmd_quant(int argc, char ** argv) {
    if (argc != 6 && !(argc == 7 && !strcmp(argv[6], "pure"))) {
        fprintf(stderr, "usage: measure quant IN OUT TYPE THREADS [pure]\n");
        return 2;
    }
    llama_model_quantize_params qp = llama_model_quantize_default_params();
    const char * t = argv[4];
    bool known = false;
    for (const auto & q : quant_types) {
        if (!strcmp(t, q.name)) { qp.ftype = q.ftype; known = true; }
    }
    if (!known) { fprintf(stderr, "unknown type %s\n", t); return 2; }
    qp.nthread = atoi(argv[5]);
    qp.pure = argc == 7;
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
