// cpuspeed: llama-bench's two tests (a prompt of PP tokens in one batch,
// TG tokens decoded one at a time, each on an empty cache, REPS times,
// after one warm-up token) on the CPU backend, timed both by the wall
// clock and by the CPU time the process got (CLOCK_PROCESS_CPUTIME_ID).
// Run with one thread on a shared machine, the CPU time is the time one
// core spends on the work however often the scheduler takes it away, so
// tokens per CPU-second is one core's rate (README.md, "CPU speed").
//
//   cpuspeed MODEL.gguf THREADS PP TG REPS
//
// Built like measure.cpp, against libllama only (include/llama.h).
#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <chrono>
#include <vector>

static double wall_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void quiet(ggml_log_level, const char *, void *) {}

int main(int argc, char ** argv) {
    if (argc != 6) { fprintf(stderr, "usage: cpuspeed MODEL THREADS PP TG REPS\n"); return 2; }
    int threads = atoi(argv[2]), pp = atoi(argv[3]), tg = atoi(argv[4]), reps = atoi(argv[5]);
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(argv[1], mp);
    if (!model) { fprintf(stderr, "load failed\n"); return 1; }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 4096;
    cp.n_batch = 2048;
    cp.n_ubatch = 512;
    cp.n_seq_max = 1;
    cp.n_threads = cp.n_threads_batch = threads;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "context failed\n"); return 1; }
    int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    std::vector<llama_token> toks(pp > tg ? pp : tg);
    for (size_t i = 0; i < toks.size(); i++) toks[i] = (llama_token) (1000 + (i * 7919) % (n_vocab - 1000));
    llama_memory_t mem = llama_get_memory(ctx);
    llama_memory_clear(mem, true);
    llama_decode(ctx, llama_batch_get_one(toks.data(), 1)); // warm-up, as llama-bench does
    llama_synchronize(ctx);
    double pp_wall = 0, pp_cpu = 0, tg_wall = 0, tg_cpu = 0;
    for (int r = 0; r < reps; r++) {
        llama_memory_clear(mem, true);
        double w = wall_s(), c = cpu_s();
        if (llama_decode(ctx, llama_batch_get_one(toks.data(), pp))) { fprintf(stderr, "prefill failed\n"); return 1; }
        llama_synchronize(ctx);
        pp_wall += wall_s() - w;
        pp_cpu += cpu_s() - c;
        llama_memory_clear(mem, true);
        w = wall_s(), c = cpu_s();
        for (int i = 0; i < tg; i++) {
            if (llama_decode(ctx, llama_batch_get_one(&toks[i], 1))) { fprintf(stderr, "decode failed\n"); return 1; }
        }
        llama_synchronize(ctx);
        tg_wall += wall_s() - w;
        tg_cpu += cpu_s() - c;
    }
    printf("{\"threads\":%d,\"prefill_tokens\":%d,\"decode_tokens\":%d,\"reps\":%d,"
           "\"prefill_wall_s\":%.4f,\"prefill_cpu_s\":%.4f,\"decode_wall_s\":%.4f,\"decode_cpu_s\":%.4f,"
           "\"model_tensor_bytes\":%llu,\"model_params\":%llu}\n",
           threads, pp, tg, reps, pp_wall, pp_cpu, tg_wall, tg_cpu,
           (unsigned long long) llama_model_size(model), (unsigned long long) llama_model_n_params(model));
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
