/* SPDX-License-Identifier: MIT
 * Copyright (c) 2026 The ai-hwaccel authors. See LICENSE.
 *
 * ai_hwaccel.h: the whole public API of libai_hwaccel. Anything not declared
 * in this file is not a published interface, whatever `nm` may show.
 */
#ifndef AI_HWACCEL_H_7F3A21
#define AI_HWACCEL_H_7F3A21

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* HWACCEL_API marks every exported function. It is empty on Linux (the
 * library's version script decides what is exported); a host may predefine
 * it, e.g. to add attributes. */
#ifndef HWACCEL_API
#define HWACCEL_API
#endif

/* ===========================================================================
 * Introduction
 * ===========================================================================
 *
 * libai_hwaccel finds the AI accelerators of a Linux machine (NVIDIA, AMD and
 * Intel GPUs, TPUs, NPUs, Gaudi, Inferentia/Trainium and other AI ASICs) and
 * plans how to run a model on them: which precision fits, how to spread the
 * model over devices, and how much memory training needs.
 *
 * JSON in, JSON out.  Every request is a NUL-terminated UTF-8 JSON string and
 * every answer is one too.  The request and answer shapes are documented in
 * docs/ and validated by the JSON Schema files in schema/; this header gives
 * the short form.  Answers may gain fields in later releases (check
 * "schema_version"); hosts must ignore fields they do not know.
 *
 * The one ownership rule.  A function that returns `char *` returns an owned,
 * NUL-terminated UTF-8 JSON string allocated with C malloc().  Free it exactly
 * once with hwaccel_free_string() (free() also works).  Such a function never
 * returns NULL except when malloc() itself fails.  Functions that return
 * `const char *` return static storage that must not be freed.
 *
 * Errors.  A failure is an answer, not a crash: every `char *` function
 * returns either its answer or an error object
 *
 *     {"error":{"code":"invalid_json","message":"options: ..."}}
 *
 * whose "code" is one of the stable codes below and whose "message" is for
 * humans (its wording is not API).  NULL, empty, malformed, oversized or
 * hostile input never aborts, exits or crashes the host; an internal panic
 * is recovered into the code "internal".  A model that does not fit is not an
 * error: the answer says "fits": false and why, in "refusal": a stable
 * "code" (no_device, unsupported, insufficient_memory, too_few_devices,
 * tensor_parallel, too_large; schema/plan.schema.json) and its "text", and
 * carries no "quant" or "strategy".  When no device's memory is known
 * (code no_device) "fits" is null: unknown, not no; so is each "levels"
 * row's "fits" then.  So too where devices of unknown memory were left out
 * that, counted, might lift the refusal (insufficient_memory, or
 * too_few_devices where they make up the number, or unsupported where they
 * would run a level no device of known memory runs; a CPU of unknown RAM
 * under "include_cpu" or "cpu_offload"): the refusal's text names them
 * (docs/requests.md).
 *
 * Threads.  All functions may be called concurrently from any number of
 * threads.  There is no per-thread or per-handle state; the only shared state
 * is an internal detection cache (see "cache_ttl_ms").  Any thread may call,
 * whatever its signal mask (every signal blocked works) and its stack size:
 * Go code runs on its own stacks, and a call used less than 2 KiB of the
 * caller's stack (measured on a 2 KiB makecontext stack), so threads of
 * PTHREAD_STACK_MIN (16 KiB) are well above the floor.
 *
 * Blocking.  Detection blocks the calling thread while it reads sysfs/procfs
 * and runs vendor tools; each call is bounded by its "timeout_ms" option
 * (default 5000 ms, at most 600000 ms), except the reads that
 * "inline_kernel_reads" asks for.  Planning with no "registry" in the
 * request detects this machine first (through the cache) and may block as
 * long.  Planning on a given registry does not touch the machine.  A call
 * cannot be interrupted; signals are handled when it returns.
 *
 * NVML.  Detecting this machine itself ("sysroot" "/", no "snapshot" nor
 * "snapshot_out", "no_exec" false) with an NVIDIA GPU in sysfs, or the
 * driver's nodes /dev/nvidiactl and /dev/nvidiaN, loads libnvidia-ml.so.1
 * with dlopen() on first use and calls nvmlInit() once per process (never
 * nvmlShutdown()); nvidia-smi is run instead when the library
 * is absent, fails to initialise or lacks an entry point (a "fallback"
 * warning says which).  NVML calls run on one dedicated thread, helped by
 * at most seven more while several GPUs are read at once (NVML is
 * thread-safe); a call that never returns (a hung driver) keeps its thread,
 * costs that one detection its "timeout_ms", and NVML is not used again in
 * the process, so a hung driver keeps at most eight threads.  A child
 * forked after NVML was loaded follows the fork() rule below.
 *
 * AMD SMI.  Likewise, detecting this machine itself with an amdgpu card in
 * sysfs (or /dev/kfd, in a container without /sys) loads libamd_smi.so with
 * dlopen() on first use and calls amdsmi_init() once per process (never
 * amdsmi_shut_down(), except right after amdsmi_init() for a library whose
 * version this build does not read); rocm-smi is run instead when the
 * library is absent, of another version, fails to initialise, lacks an
 * entry point or lists no GPU (a "fallback" warning says which).  Its calls run on one dedicated thread; a
 * call that never returns keeps that thread, costs that one detection its
 * "timeout_ms", and AMD SMI is not used again in the process.
 *
 * fork().  The library runs a Go runtime, which does not survive fork() in
 * the child.  In a child forked after the library was loaded, every `char *`
 * function returns the error "forked_child" at once (it never hangs); load the
 * library in the child instead (spawn/forkserver workers, or import lazily
 * after fork).  fork() followed by exec() is unaffected.
 *
 * Signals.  When loaded, the library installs handlers for SIGSEGV, SIGBUS,
 * SIGFPE, SIGPIPE and SIGURG (it chains to the host's previous handlers for
 * faults outside its own code), and adds SA_ONSTACK to the host's existing
 * handlers of other signals.  Handlers that the host installs after loading
 * must use SA_ONSTACK and chain to the previous handler; crash reporters
 * should be installed before the library is loaded.  JVM hosts: preload
 * libjsig.so.  The library never installs handlers for SIGINT, SIGTERM or
 * SIGCHLD.  It learns how a vendor tool ended by waiting for it, never from
 * SIGCHLD.  A host that ignores SIGCHLD (SIG_IGN, SA_NOCLDWAIT), or reaps
 * children it did not start (waitpid(-1), wait()), would take the tool's exit
 * status; the library then runs tools under a shell that waits for them
 * (/usr/bin/env --default-signal=CHLD /bin/sh; GNU coreutils 8.31 or later),
 * which passes the status back on a pipe, so answers are those of a plain
 * host.  A reaping host is noticed when a status is first lost; that tool
 * run is repeated.  Without GNU env a lost status gives the warning
 * "tool_status_lost" (output used) or "tool_failed" (no output).
 *
 * Environment.  A call sees the environment of the moment it is made,
 * unless its options name a value ("path", "env"): PATH and the visibility
 * variables (CUDA_VISIBLE_DEVICES and friends) are read with getenv() at
 * each call, so setenv() after loading, or between two calls, is honoured;
 * calling setenv() concurrently with a call is the host's data race, as with
 * any getenv() user.  Go runtime knobs (GOMAXPROCS, GODEBUG, ...) are read
 * only from the environment the process was started with.
 *
 * Host process state.  The host's RLIMIT_NOFILE soft limit is as the host
 * set it once loading has finished (the Go runtime raises it at start-up;
 * the library puts it back, and tools inherit the host's limit).  If the
 * host closed descriptors 0, 1 or 2 before loading, the library opens
 * /dev/null on them while loading, so none of its own descriptors ever
 * lands there; open ones are never touched.  If the host closes them after
 * loading, each call fills the closed ones with close-on-exec /dev/null
 * while it runs and closes them again when the last call returns, so after
 * a call they are as the host left them and no library descriptor is there;
 * tools always get /dev/null as stdin.  Close them before loading or after
 * the first call has returned: until then the Go runtime may still be
 * starting on its own thread and open its files there.  Between calls the
 * library keeps a few descriptors of its own open, all close-on-exec: for
 * each sysroot it has detected (16 at most), up to 11 directories (O_PATH:
 * the sysroot, its sys/ and proc/, and the cgroup directories read) and up
 * to 32 sysfs, procfs and cgroup files that every detection reads again
 * (docs/detection.md, "Descriptors kept across detections").  Those it
 * stops holding (a sysroot beyond the 16 most recently detected, one
 * re-created at its path, a file whose read failed) are closed when the Go
 * garbage collector next runs, so between calls a few more may be open for a
 * while (tests/c/test_held_fds.c: 27 to 135 in all after 572 detections of
 * 143 sysroots, by when the collector last ran).  A host must not close descriptors it did not open.  One
 * that does anyway (closefrom(3), a loop over /proc/self/fd): each detection
 * checks, with one fstat, that the held sysroot descriptor still names the
 * sysroot; when it does not (closed, or its number now another file), every
 * descriptor held for that sysroot is forgotten and opened afresh, and the
 * library never closes those numbers, which may be the host's own files by
 * then (those the host left open stay open: at most 43, once).  A held file whose number alone was closed fails its read (EBADF)
 * and is opened afresh, its number likewise left alone.  Not noticed: a held
 * file or sys/, proc/ or cgroup directory whose number alone the host
 * closed and then opened a file of its own on, while the sysroot's number
 * is still the library's: detections of that sysroot then read the host's
 * file in place of the kernel's, or find the kernel's files missing below a
 * host directory (a wrong answer, not an error), until the sysroot is
 * dropped from the library's memo.
 *
 * Loading.  glibc Linux only (not musl).  dlclose() is a no-op: the library
 * stays loaded until the process exits.  Load costs a few ms, a few MB of RSS
 * and about 1.6 GB of virtual address space, plus one thread stack
 * (RLIMIT_STACK, usually 8 MiB) per runtime thread (about GOMAXPROCS + 4).
 * RLIMIT_AS must allow the host's own mappings + 2 GiB: below that the Go
 * runtime may abort the process while loading ("out of memory allocating heap
 * arena map", every time at 1200-1300 MiB) or on a later thread start
 * ("pthread_create failed", 6 of 10 loads at 1500 MiB); the library cannot
 * catch either.  Likewise RLIMIT_NPROC must leave room for those threads and
 * for one process per vendor tool run at a time.
 * A second Go c-shared library (or a second copy of this one) in the same
 * process is not supported by Go (golang/go#18976): each brings its own
 * runtime.  Measured on linux/amd64 both libraries keep answering, and the
 * library does not refuse it, but nothing guarantees it.  A host finds out
 * before loading by looking for a loaded object that carries the Go build-id
 * note: dl_iterate_phdr(), a PT_NOTE segment holding a note named "Go" of
 * type 4 (every Go binary and library has one, stripped or not).
 */

/* ===========================================================================
 * Version
 * ===========================================================================
 * HWACCEL_VERSION_* describe this header; hwaccel_version() the library that
 * is loaded.  HWACCEL_ABI_VERSION bumps on any incompatible change of the C
 * functions or the JSON; hosts should check at start-up that
 * hwaccel_abi_version() == HWACCEL_ABI_VERSION.  Added functions are a
 * compatible change: they bump HWACCEL_VERSION_MINOR, not the ABI, and each
 * says "Since <version>".  A host that calls a function added after 0.1.0
 * and may meet an older library checks hwaccel_version() first, or looks
 * the symbol up with dlsym().
 *
 *   0.1.0  ABI 1: version, ABI, free, detect, suggest, plan, train.
 *   0.2.0  ABI 1: hwaccel_models_json, hwaccel_fit_json and
 *          hwaccel_rent_json added; "model" may be one string or what a
 *          host fetched from a model repository; error messages name JSON
 *          types and paths; "fits" (and each "levels" row's) is null
 *          when no device's memory is known.
 */
#define HWACCEL_VERSION_MAJOR 0
#define HWACCEL_VERSION_MINOR 2
#define HWACCEL_VERSION_PATCH 0
#define HWACCEL_VERSION_NUMBER \
    (HWACCEL_VERSION_MAJOR * 10000 + HWACCEL_VERSION_MINOR * 100 + HWACCEL_VERSION_PATCH)
#define HWACCEL_VERSION_STRING "0.2.0"
#define HWACCEL_ABI_VERSION 1

/* ===========================================================================
 * Error codes
 * ===========================================================================
 * The value of "code" in an error object.  Every code listed here is STABLE:
 * it is never renamed or reused.  New codes may be added; treat an unknown
 * code like "internal".
 *
 *   "invalid_json"       stable  The input is not JSON (syntax error,
 *                                truncated, invalid UTF-8 outside strings,
 *                                nested deeper than 128 levels), has data
 *                                after the value, or names a key twice in
 *                                one object.  Every function checks these
 *                                first: input that also has an unknown key
 *                                or a wrong value is "invalid_json".
 *   "invalid_argument"   stable  Well-formed JSON with a wrong shape or value:
 *                                NULL or empty request to a planning function,
 *                                unknown key, wrong type, unknown backend or
 *                                quantization, out-of-range number.
 *   "unknown_model"      stable  "model":{"name":...} names no known model.
 *   "model_file"         stable  "model":{"path":...} is not a model file: missing,
 *                                unreadable, not a regular file (a device such
 *                                as /dev/zero, a FIFO, a directory where a file
 *                                is expected), or a header that cannot be parsed.
 *   "too_large"          stable  The input is longer than 16 MiB (the library
 *                                stops reading at 16 MiB + 1 byte).
 *   "detection_failed"   stable  The machine view cannot be built (e.g. the
 *                                "sysroot" option is not a directory).  Failing
 *                                tools are warnings in the registry, not this.
 *   "forked_child"       stable  Called in a child forked after the library
 *                                was loaded (see Introduction).
 *   "internal"           stable  A bug: an internal panic was recovered; the
 *                                message says in which function.
 */

/* ===========================================================================
 * Version functions
 * =========================================================================== */

/*! hwaccel_version() :
 *  The version of the loaded library, e.g. "0.2.0" (semantic versioning).
 * @return : static storage; never NULL; do not free.
 *  Thread-safe, never blocks, works in a forked child.  Since ABI 1. */
HWACCEL_API const char *hwaccel_version(void);

/*! hwaccel_abi_version() :
 * @return : the ABI version of the loaded library (HWACCEL_ABI_VERSION of the
 *  header it was built with).  Compare it with HWACCEL_ABI_VERSION at start-up.
 *  Thread-safe, never blocks, works in a forked child.  Since ABI 1. */
HWACCEL_API int hwaccel_abi_version(void);

/* ===========================================================================
 * Memory
 * =========================================================================== */

/*! hwaccel_free_string() :
 *  Frees a string returned by any `char *` function of this library.
 *  s == NULL is a harmless no-op.  Passing any other pointer (a static
 *  string from hwaccel_version(), a pointer freed before, memory from another
 *  allocator) is undefined behaviour: heap corruption or a crash.
 *  Equivalent to free(s).  Thread-safe, never blocks.  Since ABI 1. */
HWACCEL_API void hwaccel_free_string(char *s);

/* ===========================================================================
 * Detection
 * =========================================================================== */

/*! hwaccel_detect_json() :
 *  Detects the accelerators of this machine (or of the machine under
 *  "sysroot") and returns the registry.
 *
 *  options_json : NULL, "" (or only whitespace), "null" or "{}" mean
 *  defaults.  Otherwise an object with any of (unknown keys are rejected
 *  with "invalid_argument"):
 *      "sysroot"      string  prefix for every /sys, /proc, /dev path read
 *                             (containers, test fixtures); default "/".
 *                             Vendor tools still run from "path": for a
 *                             fixture or another machine's files, give
 *                             "path" or "no_exec" too, or this host's
 *                             tools add this host's GPUs.
 *      "path"         string  PATH searched for vendor tools; default: the
 *                             process PATH at call time; "" runs no tool;
 *                             a relative entry is "invalid_argument".
 *      "backends"     [str]   run only these backends (e.g. "cuda","rocm").
 *      "exclude"      [str]   never run these backends.
 *      "no_exec"      bool    never run a program; sysfs/procfs only.
 *      "inline_kernel_reads" bool  read the files the kernel's core writes
 *                             (meminfo, cpuinfo, CPU/NUMA lists, cgroup
 *                             limits, PCI and block attributes, DMI) on the
 *                             calling thread; a backend that needs a tool,
 *                             a vendor library or a driver's file still
 *                             runs on a worker.  About a third less time
 *                             per detection without tools; those inline
 *                             reads are not bounded by "timeout_ms".
 *                             Default false.
 *      "timeout_ms"   number  per tool run and for the whole detection;
 *                             default 5000, range (0, 600000]; fractions
 *                             are honoured (rounded up to 1 ns).
 *      "cache_ttl_ms" number  reuse a registry detected with the same options
 *                             no older than this; default 0 (always detect),
 *                             range [0, 86400000].
 *      "env"          object  overrides for visibility variables such as
 *                             CUDA_VISIBLE_DEVICES; otherwise getenv() now.
 *      "snapshot"     string  absolute path of a snapshot archive (below) to
 *                             detect from instead of this machine: files,
 *                             tool output and environment come from it, no
 *                             program runs, a tool run it lacks is a tool
 *                             absent; "env" still overrides.  Excludes
 *                             "sysroot", "path" and "snapshot_out".  An
 *                             archive that is missing, not a regular file
 *                             (a FIFO, a device), malformed or crafted
 *                             (".." names, absolute links, members over
 *                             8 MiB, over 64 MiB unpacked, over 100 000
 *                             members) is "invalid_argument", at once.
 *      "snapshot_out" string  absolute path: detect this machine (never from
 *                             the cache) and write what the detection read
 *                             to this file (mode 0600), a gzip-compressed
 *                             tar: the /sys, /proc, /dev entries read, each
 *                             tool run (argv, output, exit status), the
 *                             environment variables consulted.  MAC and IP
 *                             addresses are replaced; so are serial numbers
 *                             and UUIDs unless "snapshot_keep_ids".  A file
 *                             that cannot be written, or that exists and is
 *                             not a regular file (a FIFO, a device), is
 *                             "invalid_argument", at once.
 *      "snapshot_keep_ids" bool  keep serial numbers and UUIDs in the
 *                             "snapshot_out" archive (default false).
 *                             docs/snapshots.md describes the archive.
 *
 * @return : an owned string (free with hwaccel_free_string()), either
 *      the registry:
 *          {"schema_version":1,
 *           "devices":[{"id":"cuda:0","kind":"cuda_gpu","family":"gpu",
 *                       "name":"NVIDIA H100 80GB HBM3","memory_bytes":85520809984,
 *                       "pci_bus_id":"0000:18:00.0","numa_node":0, ...}, ...],
 *           "system_io":{"interconnects":[...],"numa_nodes":[...]},
 *           "warnings":[{"backend":"rocm","code":"tool_failed","message":"..."}],
 *           "timing":{"total_ms":12.3,"backends":{...}}}
 *        "cpu:0" is always the host; on Linux its "cpu_features" lists
 *        the instruction-set extensions /proc/cpuinfo shows, of a fixed
 *        vocabulary ("avx2", "avx512f", "amx_int8", "asimddp", "sve", ...;
 *        docs/detection.md), absent when unknown.  Unknown values are
 *        omitted, never guessed.  Read through NVML, an NVIDIA GPU also has
 *        "memory_reserved_bytes", "processes" ([{"pid":..,"memory_bytes":..}];
 *        absent when no process holds memory, "sources" then still names
 *        "nvml" for it) and "health" (ECC, remapped rows, clocks event
 *        reasons, maximum clocks, NVLinks); see schema/registry.schema.json.  A tool that fails or times out is a
 *        warning, not an error;
 *        a tool that exited while a process it left behind still holds its
 *        output pipe has its output used, with a "tool_left_process" warning.
 *        Strings read from the machine (names, warning messages, paths) never
 *        carry C0 or C1 control characters (tab, newline and ESC included),
 *        DEL, invalid UTF-8 or the bidirectional formatting characters
 *        U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: each is
 *        replaced by U+FFFD, so hosts may print and log them as they are.
 *        A vendor tool is looked up on PATH like a shell does: a file this
 *        process may not execute is skipped and the search goes on.
 *      or an error object with code "invalid_json", "invalid_argument",
 *        "too_large", "detection_failed", "forked_child" or "internal";
 *      or NULL when malloc() fails.
 *  Thread-safe.  Blocks up to "timeout_ms" plus 0.5 s: a backend still
 *  running then is dropped with a "backend_timeout" warning (plus process
 *  clean-up, and the reads "inline_kernel_reads" asks for); leaves no child
 *  process behind.  Since ABI 1. */
HWACCEL_API char *hwaccel_detect_json(const char *options_json);

/* ===========================================================================
 * Planning
 * ===========================================================================
 * The three planning functions take the same request object:
 *
 *   {"model": {"params": 70000000000} | {"params_b": 70} | {"name": "llama-3-70b"}
 *             | {"path": "/models/x.gguf"} | {"config": {...HF config.json...}}
 *             | {"config": {...}, "safetensors_index": {...}}
 *             | {"config": {...}, "safetensors_header_base64": "..."}
 *             | {"gguf_header_base64": "..."}
 *             | "llama-3-70b" | "meta-llama/Llama-3.1-8B" | "70b" | "/models/x.gguf",
 *    "quant": "auto" | "fp32" | "fp16" | "bf16" | "fp8" | "int8" | "int4"
 *             | a GGUF type or mix such as "q4_k_m", "q8_0",
 *    "context_length": 4096 | "auto", "batch_size": 1,
 *    "kv_cache_dtype": "auto" | "fp16" | "bf16" | "fp8" | "int8" | "q8_0" | ...,
 *    "registry": {...an answer of hwaccel_detect_json()...},
 *    "cluster": [{...registry of node 0...}, {...node 1...}],
 *    "detect": {...detection options, used when "registry" is absent...},
 *    "devices": ["cuda:0", "cuda:1"],
 *    "engine": "vllm" | "llama.cpp" | "sglang" | "none",
 *    "cpu_offload": false, "include_cpu": false, "flash_attention": true,
 *    "replicas": 4 | "max",
 *    "tensor_parallel_size": 4, "memory_fraction": 0.9,
 *    "placement": "serving" | "fewest",
 *    "engine_version": "0.21.0" (vllm),
 *    "draft_model": {...model...},
 *    "mmproj": {"path": "/m/mmproj.gguf"} | {"size_bytes": 900000000},
 *              plus "offload": false to keep it in host memory,
 *    "training": {"method": "full" | "lora" | "qlora" | "prefix" | "dpo"
 *                           | "rlhf" | "ppo" | "distillation",
 *                 "optimizer": "adamw" | "adamw_8bit" | "sgd" | "adafactor",
 *                 "precision": "bf16" | "fp16" | "fp32",
 *                 "seq_len": 4096, "micro_batch": 1,
 *                 "gradient_checkpointing": true (lora, qlora) | false,
 *                 "flash_attention": true,
 *                 "zero_stage": 0..3, "fsdp": false,
 *                 "num_devices": 8, "tensor_parallel": 1,
 *                 "lora_rank": 16, "lora_targets": ["q", "v"],
 *                 "base_quant": "nf4" | "int8" | "q4_k_m" | ... (qlora),
 *                 "teacher" | "reference" | "reward" | "critic": {...model...}}}
 *
 * "model" is required; as a string it is read like the CLI's --model: a
 * size with a unit ("70b") is params, an existing path is path, anything
 * else a catalog name or Hugging Face id, falling back to a file of that
 * name (docs/requests.md, "model"; since 0.2.0).  Every other member is
 * optional and unknown members
 * are "invalid_argument" (schema/request.schema.json is the full contract,
 * schema/detect-options.schema.json that of "detect").  Without "registry"
 * or "cluster" the function detects this machine first, reusing a detection
 * up to 30 s old unless "detect" says otherwise, and blocks like
 * hwaccel_detect_json().  "registry" is a registry as hwaccel_detect_json()
 * answers it; one written by hand must give each device's "kind" and
 * "available" ("id" and "family" follow from "kind" and "index"): a device
 * without "available" is "invalid_argument", not read as unavailable.
 * "cluster" plans over several machines (device ids
 * become "node<i>/<id>"; it excludes "registry").  "devices" restricts the
 * plan to a subset.  "context_length" is planned as asked; "auto", and
 * its absence in a llama.cpp, vLLM or SGLang plan, chooses it: the model's
 * trained context reduced to the longest multiple of 256 that fits, at
 * least 4096 (vLLM and SGLang: one full-length sequence in the KV pool),
 * emitted as -c / --max-model-len / --context-length and said in the
 * explanation, with the speed stated at a KV depth of 4096; absent
 * elsewhere (engine "none", suggest, training) it is 4096
 * (docs/requests.md).  "kv_cache_dtype" sets the KV-cache storage (fp8 and
 * int8: one byte per element, run and sized as q8_0 under llama.cpp;
 * default the model's 16-bit type); llama.cpp's
 * own cache types (q8_0, q4_0, ...) are passed on as --cache-type-k/-v, are
 * llama.cpp's only (with "engine" vllm or sglang: invalid_argument) and,
 * with no engine named, choose llama.cpp.
 * "flash_attention": false sizes the working buffer for attention without
 * flash attention (llama.cpp -fa off: fp32 scores of a micro-batch); with a
 * quantized cache type under llama.cpp it is invalid_argument (llama.cpp
 * refuses a quantized V cache without flash attention).
 * "cpu_offload" allows layers in host memory when the accelerators are too
 * small; "include_cpu" considers the CPU beside the accelerators.
 * "training" is read by hwaccel_estimate_training only (defaults: full,
 * adamw, bf16, seq_len = context_length, micro_batch = batch_size).
 * hwaccel_estimate_training checks but does not read the inference members
 * "quant", "engine", "engine_version", "kv_cache_dtype", "flash_attention"
 * (training.flash_attention is its own), "cpu_offload", "include_cpu",
 * "placement", "draft_model" and "mmproj", so that one request serves all
 * three functions; "replicas" and "tensor_parallel_size" are
 * "invalid_argument" there (training.tensor_parallel).  "replicas" (optional; plan and suggest only) asks for data
 * parallelism: that many copies of the model on disjoint identical devices,
 * each serving ceil(batch_size / replicas) sequences ("max": as many as one
 * group of identical devices holds); absent, no plan uses it.
 * "tensor_parallel_size" (plan and suggest) forces the tensor-parallel
 * degree (it must divide the model's attention heads; llama.cpp takes 1
 * only).  "placement" (plan only) says how a plan with no "devices",
 * "tensor_parallel_size" or "replicas" uses the devices: "serving" (the
 * default) spreads a vLLM or SGLang plan over the identical devices of the
 * fewest plan, tensor parallel inside the NVLink/xGMI domain and
 * data-parallel replicas beyond it, the layout the speed model finds
 * fastest at "batch_size" (the explanation's "placement:" line says why);
 * "fewest" plans the fewest devices that hold the model.  llama.cpp plans,
 * suggest and training always take the fewest.  "memory_fraction" (0 < f <= 1) is the share of each accelerator's
 * total memory the engine may use, overriding its default (vLLM's
 * --gpu-memory-utilization 0.9); the answer's "budget" says which engine and
 * budget the plan was made for (without "engine": vLLM on data-center
 * accelerators, llama.cpp on NVIDIA GPUs below vLLM's compute capability
 * 7.0, Metal, Vulkan, shared-memory GPUs and the CPU, and for a GGUF
 * model, quant or cache type: a .gguf file, a GGUF header, a catalog GGUF
 * repository named as the model such as ggml-org/gemma-3-27b-it-GGUF).
 * "engine_version" (vLLM only) is the vLLM release the plan's
 * "engine_expect.vllm" figures follow (what vLLM prints at start-up: its
 * batch defaults, profile and, from 0.21.0, CUDA graphs inside
 * --gpu-memory-utilization); default 0.21.0, echoed there.
 * "draft_model" (a model, as "model") and "mmproj" (a multimodal
 * projector file or its size) are loaded beside the model: counted on the
 * plan's first device (the projector in host memory with "offload": false)
 * and given to llama.cpp as -md/-ngld and --mmproj (--no-mmproj-offload).
 * request_json NULL or "" is "invalid_argument".
 * Each returns an owned string (free with hwaccel_free_string()): the answer,
 * or an error object with code "invalid_json", "invalid_argument",
 * "unknown_model", "model_file", "too_large", "detection_failed",
 * "forked_child" or "internal"; NULL only when malloc() fails.
 * All are thread-safe.  Since ABI 1.
 */

/* Model files ("model":{"path":...}).  Only regular files are read: a FIFO,
 * device (/dev/zero), socket or directory where a .gguf, .safetensors or
 * config.json file is expected is "model_file" at once (the file is opened
 * O_NONBLOCK and checked with fstat), like every other path that is not a
 * readable model file.  Each file is read only up to the size it had when
 * opened, and only its header: GGUF headers up to 1 GiB, safetensors headers
 * up to 100 000 000 bytes (the reference implementation's limit), config.json
 * up to 16 MiB.  A GGUF header costs the memory of what planning keeps from
 * it: keys longer than 256 bytes (the GGUF limit is 65535) and strings
 * inside arrays are read past, not kept (a 64 MiB header of 64 KiB keys
 * allocates under 2 MiB).  Time and memory are linear in the header bytes read: at most
 * 3 bytes allocated per header byte plus 1 MiB (a 100 MB safetensors header:
 * under 300 MB), and reading one request's model files gives up after 30 s
 * with "model_file".
 *
 * Model repositories.  The library never opens a socket: a host that fetched
 * a Hugging Face repository's files passes them.  "safetensors_index" is
 * model.safetensors.index.json as published (its metadata.total_size is the
 * weights' size for a 16- or 32-bit checkpoint; the answer's model "source"
 * says so); "safetensors_header_base64" the first 8 + N bytes of a single
 * model.safetensors; both go with "config".  "gguf_header_base64" is the
 * start of a .gguf file holding its whole header (at most 64 MiB), alone.
 * The CLI (ai-hwaccel plan --model org/name) and the Python package
 * (fetch_model) do the fetching; docs/requests.md. */

/*! hwaccel_suggest_quant() :
 *  The best precision for the model on the devices: the highest-quality
 *  quantization whose memory fits, with the memory breakdown and the
 *  reasoning ("explanation").  See docs/ for the answer shape. */
HWACCEL_API char *hwaccel_suggest_quant(const char *request_json);

/*! hwaccel_plan_sharding() :
 *  How to spread the model over the devices:
 *      {"fits":true,"strategy":"tensor_parallel","quant":"bf16",
 *       "memory":{"weights_bytes":...,"kv_cache_bytes":...,"total_bytes":...},
 *       "shards":[{"device_id":"cuda:0","layer_start":0,"layer_end":40,
 *                  "memory_bytes":...,"memory_available_bytes":...}],
 *       "throughput":{"decode_tokens_per_s":...,"bound":"memory_bandwidth",
 *                     "validated_on":"not validated: ..."},
 *       "engine_args":{"vllm":[...]},"explanation":[...],"warnings":[]}
 *  Strategies: none, tensor_parallel, pipeline_parallel, data_parallel,
 *  cpu_offload.  No shard is given more memory than its device has free (or
 *  total, when free is unknown); "fits" is false when no plan fits, null
 *  when no device's memory is known or devices of unknown memory left out
 *  might lift the refusal (see above).
 *  throughput.validated_on names the measured set and device class behind
 *  the decode figures, or begins with "not validated" and says why; show a
 *  speed as a headline only when it does not.  throughput.prefill_validated_on
 *  does the same for prefill_tokens_per_s (absent without one): the held-out
 *  prompt rows that vouch for it within 20 % at the median, or why none do. */
HWACCEL_API char *hwaccel_plan_sharding(const char *request_json);

/*! hwaccel_estimate_training() :
 *  Memory needed to fine-tune or train the model, per device (weights,
 *  gradients, optimizer state, activations), and whether it fits.  See docs/
 *  for the request's training fields and the answer shape. */
HWACCEL_API char *hwaccel_estimate_training(const char *request_json);

/* ===========================================================================
 * Model catalog (since 0.2.0)
 * ===========================================================================
 * The models the engine knows by name (any of their names works as a
 * planning request's "model") and which of them run on a machine: what the
 * command's `ai-hwaccel models` and `ai-hwaccel fit` print.  Same ownership,
 * error and thread rules as the planning functions.
 */

/*! hwaccel_models_json() :
 *  The catalog.  request_json: NULL, "" (or only whitespace), "null" or
 *  "{}" list every model;
 *  otherwise an object with any of (schema/models-request.schema.json;
 *  unknown keys are "invalid_argument", naming the closest known key):
 *      "filter"  string  only models whose name, Hugging Face id or alias
 *                        contains it (case-insensitive).
 *      "quant"   string  only models with a published checkpoint at this
 *                        precision ("fp8", "mxfp4", "q4_k_m", ...).
 * @return : an owned string (free with hwaccel_free_string()):
 *      {"models":[{"name":"Llama-3.1-8B","hf_id":"meta-llama/Llama-3.1-8B",
 *                  "params":8030261248,"layers":32,"max_context":131072,
 *                  "source":"https://...","checkpoints":[{"quant":"bf16",
 *                  "repo":"meta-llama/Llama-3.1-8B","source":"..."}]}, ...]}
 *      (schema/models.schema.json; an empty list when nothing matches), or an
 *      error object with code "invalid_json", "invalid_argument",
 *      "too_large", "forked_child" or "internal"; NULL only when malloc()
 *      fails.  Thread-safe; never blocks (no detection, no file read).
 *  Since 0.2.0. */
HWACCEL_API char *hwaccel_models_json(const char *request_json);

/*! hwaccel_fit_json() :
 *  Which catalog models run on a machine: each model the filter keeps is
 *  planned as hwaccel_plan_sharding() plans it (quant "auto" unless given),
 *  on the request's registry or, without one, on this machine, detected
 *  once for all models (through the cache, reusing a detection up to 30 s
 *  old, like planning).  request_json: NULL, "" (or only whitespace),
 *  "null" or "{}" plan every model on this machine; otherwise an object
 *  with any of (schema/fit-request.schema.json; unknown keys are
 *  "invalid_argument"):
 *      "filter"          string  as for hwaccel_models_json().
 *      "quant"           string  plan every model at this precision.
 *      "engine"          string  "vllm", "llama.cpp", "sglang" or "none".
 *      "context_length"  number  tokens (default: as a planning request
 *                                without it: fits judged at 4096); a model whose own
 *                                maximum is shorter is planned at it.
 *      "registry"        object  an answer of hwaccel_detect_json().
 *      "detect"          object  detection options, used without "registry".
 * @return : an owned string (free with hwaccel_free_string()):
 *      {"models":[..., {"model":"Llama-3.1-70B","params":70553706496,
 *                  "fits":true,"quant":"bf16","strategy":"tensor_parallel",
 *                  "devices":2,"max_context_length":7328,...}, ...,
 *                 {"model":"Kimi-K2.5","params":1026408209408,"fits":false,
 *                  "refusal":"insufficient_memory",...}, ...]}
 *      (rows of the answer on eight H100 80GB, the dgx-h100 fixture of
 *      testdata/machines)
 *      (schema/fit.schema.json): models that fit first, larger first, then
 *      faster; "max_context_length" is capped at the model's own maximum.
 *      "fits" is null, as the plan's is, when no available device's
 *      memory is known (refusal "no_device"): unknown, not no.
 *      Or an error object with code "invalid_json", "invalid_argument",
 *      "too_large", "detection_failed", "forked_child" or "internal"; NULL
 *      only when malloc() fails.
 *  Thread-safe.  Without "registry" it blocks like hwaccel_detect_json();
 *  planning the whole catalog takes milliseconds more.  Since 0.2.0. */
HWACCEL_API char *hwaccel_fit_json(const char *request_json);

/* --- rent (since 0.2.0) ------------------------------------------------ */

/*! hwaccel_rent_json() :
 *  Which machine to rent for a model: every type of the built-in catalog
 *  (AWS, Azure, GCP, Lambda, OCI, RunPod; each price with the date it was
 *  seen and the page it came from) is planned like hwaccel_plan_sharding()
 *  would plan it, and the types where the plan fits are ranked by cost per
 *  million output tokens (price per hour / (decode tokens/s x 3600) x 1e6):
 *      {"model":{"name":"Llama-3.1-70B"}, "context_length":8192,
 *       "engine":"vllm",
 *       "rent":{"providers":["aws","gcp"], "max_price_per_hour":50,
 *               "target_tokens_per_s":100, "max_nodes":2,
 *               "sort":"cost" | "price" | "speed",
 *               "prices":{"schema":1,"machines":[{"provider":"aws",
 *                 "type":"p5.48xlarge","price":{"usd_per_hour":40,
 *                 "seen":"2026-11-20"}}]}}}
 *  answers
 *      {"model":"...","sort":"cost",
 *       "choices":[{"provider":"runpod","type":"...","accelerator":"...",
 *                   "count":1,"nodes":1,"price_per_hour":1.09,
 *                   "price_seen":"2026-09-25","price_source":"https://...",
 *                   "price_from":"catalog","strategy":"none","quant":"int4",
 *                   "decode_tokens_per_s":17,
 *                   "cost_per_million_output_tokens":17.4,
 *                   "engine":"vllm","engine_args":[...]}],
 *       "not_fit":[{"provider":"...","type":"...","reason":"..."}],
 *       "warnings":["... price ... seen 2025-10-22, 402 days ago ..."]}
 *  The request is a planning request without "registry", "cluster",
 *  "detect" or "devices" (those are "invalid_argument": the machines are
 *  the catalog's), plus the optional "rent" object; unknown members are
 *  "invalid_argument" (schema/rent-request.schema.json; the answer:
 *  schema/rent.schema.json).  "prices" replaces built-in prices type by
 *  type.  A choice whose speed is unknown has no cost per token and sorts
 *  last.  It never detects this machine and uses no network; the only
 *  files it reads are the model files a "model":{"path":...} names, as
 *  planning reads them (see "Model files" above); otherwise it returns in
 *  milliseconds.  Ownership, NULL input, errors and panics as
 *  for the functions above: the caller frees the answer with
 *  hwaccel_free_string(); failures are an {"error":{...}} object. */
HWACCEL_API char *hwaccel_rent_json(const char *request);

#ifdef __cplusplus
}
#endif

#endif /* AI_HWACCEL_H_7F3A21 */
