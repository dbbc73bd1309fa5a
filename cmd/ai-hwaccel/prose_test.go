package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proseFigure is a figure the prose of a doc quotes from one command's
// answer on a fixture machine, outside any generated block: the quote must
// be in the doc and in the command's output (text, or --json where args
// ask for it), both read with runs of white space as one space, since the
// doc wraps its lines.
type proseFigure struct {
	doc     string   // path from the repository root
	fixture string   // testdata/machines/<fixture>; "" for a command that reads no machine
	args    []string // the command, without the fixture's flags
	quote   string
	said    string // what the output holds where it words the figure otherwise than the doc; empty: quote
}

// proseFigures are the figures hand-written sentences quote (docs audit of
// session 12: before it, docs/cli.md quoted a 57671-token room and a
// 942 tokens/s batch rate that the answers no longer gave).
var proseFigures = []proseFigure{
	{"docs/cli.md", "macbook-m3-pro", []string{"plan", "--model", "Llama-3.1-8B"},
		"Room: context up to 115102 tokens (the command's -c 114944 is that rounded down to a multiple of 256, as llama.cpp's --fit rounds); up to 1 sequence at once", ""},
	{"docs/cli.md", "macbook-m3-pro", []string{"plan", "--model", "Llama-3.1-8B", "--batch", "4"},
		"the command's -c 114688 gives each of its 4 sequences 28672: that rounded down", ""},
	{"docs/cli.md", "h200-vm", []string{"plan", "--model", "qwen3:30b-a3b", "--batch", "64", "--context", "32k"},
		"decode 634 tokens/s over 22 sequences (28.8 per sequence)", ""},
	{"docs/cli.md", "slimbook-hero-rtx4060-igpu", []string{"suggest", "--model", "DeepSeek-V3"},
		"int4 needs 327.2 GiB on one device", ""},
	{"docs/cli.md", "slimbook-hero-rtx4060-igpu", []string{"suggest", "--model", "DeepSeek-V3"},
		"int4 327.2 GiB no", ""},
	{"docs/cli.md", "", []string{"models"}, "The catalog holds 162 models", " 162 models. Sources of every figure"},
	{"docs/requests.md", "h200-vm", []string{"plan", "--model", "ggml-org/gemma-3-27b-it-GGUF"},
		"ggml-org/gemma-3-27b-it-GGUF: Q8_0 on an H200, Q4_K_M on a 32 GB M2 Max", "llama-server -hf ggml-org/gemma-3-27b-it-GGUF:Q8_0"},
	{"docs/requests.md", "macbook-m2-max-32gb", []string{"plan", "--model", "ggml-org/gemma-3-27b-it-GGUF"},
		"ggml-org/gemma-3-27b-it-GGUF: Q8_0 on an H200, Q4_K_M on a 32 GB M2 Max", "llama-server -hf ggml-org/gemma-3-27b-it-GGUF:Q4_K_M"},
	{"docs/requests.md", "h200-vm", []string{"plan", "--model", "Llama-3.1-8B", "--engine", "llama.cpp", "--batch", "4"},
		"emitted as `-c 131072 -np 4`", "-c 131072 -np 4"},
	{"docs/requests.md", "slimbook-hero-rtx4060-igpu", []string{"plan", "--model", "Llama-3.1-8B"},
		"engine llama.cpp fits it: q5_k_m on cuda:0; plan it with", ""},
	{"docs/requests.md", "slimbook-hero-rtx4060-igpu", []string{"plan", "--model", "Qwen3-VL-8B-Instruct", "--engine", "llama.cpp"},
		"published: q5_k_m (6.6 GiB at a context of 4096 tokens) also fits but no published Q5_K_M GGUF of this model is known;", ""},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-70B"},
		"TP8 over nvswitch: 1.5x the decode speed per sequence of TP4, the fewest devices that hold the model", ""},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "70b", "--quant", "bf16", "--placement", "fewest"},
		"Memory (bf16, 2 devices): 139.8 GiB", ""},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "70b", "--quant", "bf16", "--placement", "fewest"},
		"bf16 134.5 GiB yes", ""},
	{"docs/requests.md", "h200-vm", []string{"plan", "--model", "Llama-3.1-8B", "--quant", "bf16", "--batch", "8", "--context", "32k"},
		"KV cache 32.0 GiB (8 sequences of 32768; vLLM's pool takes the rest of its budget: up to 27)", ""},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-70B", "--engine", "vllm", "--quant", "bf16", "--batch", "64"},
		"holds 10 sequences of 131072", "KV room about 1322k tokens (10 sequences of 131072)"},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-70B", "--engine", "vllm", "--quant", "bf16", "--batch", "64"},
		"decodes 64 sequences of 4096", "over 64 sequences"},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.3-70B", "--engine", "llama.cpp", "--quant", "q8_0"},
		"CUDA_VISIBLE_DEVICES=0,1", ""},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.3-70B", "--engine", "llama.cpp", "--quant", "q8_0"},
		"layer --tensor-split 40,41 -c 131072", ""},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.3-70B", "--engine", "llama.cpp", "--quant", "q8_0"},
		"devices of the 8 identical ones hold the model's 131072-token context per sequence, the fewest that do:", ""},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.3-70B", "--engine", "llama.cpp", "--quant", "q8_0"},
		"25.5 tokens/s", ""},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "DeepSeek-R1"},
		"no published checkpoint runs it under vLLM; engine llama.cpp runs unsloth/DeepSeek-R1-GGUF:Q6_K on cuda:0,", ""},
	{"docs/requests.md", "dgx-spark-gb10", []string{"plan", "--model", "Qwen3-235B-A22B-Thinking-2507"},
		"engine llama.cpp fits it at a lower level: q3_k_m on cuda:0 (mean KL divergence 0.0844", ""},
	{"docs/requests.md", "dgx-spark-gb10", []string{"plan", "--model", "Qwen3-235B-A22B"},
		"engine llama.cpp fits it at a lower level: q2_k on cuda:0 (mean KL divergence 0.332", ""},
	{"docs/requests.md", "h200-vm", []string{"plan", "--model", "DeepSeek-R1", "--engine", "llama.cpp", "--cpu-offload"},
		"published: iq1_s (125.5 GiB at a context of 4096 tokens) fits on the accelerators alone but no published IQ1_S GGUF of this model is known;", ""},
	{"docs/requests.md", "macbook-m2-max-32gb", []string{"plan", "--model", "Qwen3-30B-A3B", "--quant", "q8_0", "--cpu-offload"},
		"cpu_offload: no level tried fits metal:0 and the host RAM beside it together (10.7 GiB of cpu:0)", ""},
	{"docs/requests.md", "strix-halo-128gb", []string{"plan", "--model", "Qwen3-235B-A22B", "--engine", "llama.cpp"},
		"q2_k: iq2_m would be smaller and better but no published file runs it", ""},
	{"docs/requests.md", "h200-vm", []string{"train", "--model", "Llama-3.1-8B", "--method", "lora", "--seq-len", "262144"},
		"seq_len 262144 exceeds the model's trained context (131072 positions in its config): the model uses positions past it only with its RoPE scaling extended 2x", ""},
	{"docs/inference-servers.md", "cpu-only", []string{"plan", "--model", "Llama-3.1-8B"},
		"speed: int4: 3.3x the decode speed of bf16 on this CPU (4.7 against 1.4 tokens/s), so auto takes it over bf16, which fits", ""},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Qwen3-Next-80B-A3B-Instruct", "--quant", "fp8", "--engine", "vllm"},
		"plans `--tensor-parallel-size 4 --data-parallel-size 2`", "--tensor-parallel-size 4 --data-parallel-size 2"},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "DeepSeek-V3.2", "--context", "32k", "--json"},
		"24.40 GiB of pool per GPU over 78,324 bytes is 334,544 tokens", `"kv_cache_gib":24.4,"kv_cache_tokens":334544,"max_concurrency":10.21`},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-70B", "--quant", "bf16", "--tensor-parallel-size", "2", "--devices", "cuda:0-1", "--context", "16384"},
		"in bf16 at tensor parallel 2 on two H100s fits a 4k context but not 16k", "Llama-3.1-70B does not fit: tensor_parallel_size 2: bf16 needs"},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-70B", "--quant", "bf16", "--tensor-parallel-size", "2", "--devices", "cuda:0-1", "--context", "4096"},
		"in bf16 at tensor parallel 2 on two H100s fits a 4k context but not 16k", "Llama-3.1-70B fits 2x NVIDIA H100 80GB HBM3 (cuda:0-1): tensor parallel 2, bf16"},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "granite-4.0-h-small", "--json"},
		"granite-4.0-h-small on the dgx-h100 fixture at 218 sequences beside 225", `"max_batch_size":225,`},
	{"docs/inference-servers.md", "gaudi2-8", []string{"plan", "--model", "Gemma-3-27B", "--context", "131072", "--json"},
		"Gemma 3 27B on the gaudi2-8 fixture holds 9 sequences of 131072", `"max_batch_size":9,`},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "gpt-oss-120b", "--placement", "fewest"},
		"gpt-oss-120b is 60.7 GiB and runs on one H100", "gpt-oss-120b fits NVIDIA H100 80GB HBM3 (cuda:0): mxfp4"},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-8B", "--placement", "fewest", "--json"},
		"1.89 GiB for Llama-3.1-8B, 2.24 GiB for Qwen2.5-7B", `"peak_activation_gib":1.89,`},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Qwen2.5-7B", "--placement", "fewest", "--json"},
		"1.89 GiB for Llama-3.1-8B, 2.24 GiB for Qwen2.5-7B", `"peak_activation_gib":2.24,`},
	{"docs/inference-servers.md", "thinkpad-p16s-krackan", []string{"plan", "--model", "70b", "--engine", "vllm", "--context", "32768", "--json"},
		"74880 tokens, not 74898, for that 70B's 20 GiB", `"kv_cache_gib":20,"kv_cache_tokens":74880,`},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Mixtral-8x7B-v0.1", "--engine", "vllm", "--cpu-offload", "--devices", "cuda:0,cpu:0", "--quant", "bf16", "--context", "256", "--batch", "1"},
		"18.3 GiB offloaded: 85 ms a step for one sequence, 141 ms for the two its cache holds", "18.3 GiB of layer weights stay in pinned host memory and the GPU reads what its kernels touch of them (at 1 sequence a step, 25% of each offloaded layer's experts under uniform routing, as in GPU memory) across PCIe at 63 GB/s, the link's bandwidth, every step (85.1 ms)"},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Mixtral-8x7B-v0.1", "--engine", "vllm", "--cpu-offload", "--devices", "cuda:0,cpu:0", "--quant", "bf16", "--context", "256", "--batch", "8"},
		"18.3 GiB offloaded: 85 ms a step for one sequence, 141 ms for the two its cache holds", "(at 2 sequences a step, 44% of each offloaded layer's experts under uniform routing, as in GPU memory) across PCIe at 63 GB/s, the link's bandwidth, every step (140.7 ms)"},
	{"docs/cli.md", "dgx-h100", []string{"plan", "--model", "gpt-oss-20b", "--engine", "llama.cpp", "--replicas", "max"},
		"358 tokens/s per replica (8 x 358 = 2864 tokens/s when all 8 replicas are busy, 8 requests at once)", ""},
	{"docs/cli.md", "dgx-h100", []string{"plan", "--model", "gpt-oss-20b", "--engine", "llama.cpp", "--replicas", "max"},
		"the batch of 1 keeps 1 of the 8 replicas busy", ""},
	// The launcher's dry run prints the command the plan's load and
	// engine_args make; the CLI's headline is the same command.
	{"docs/inference-servers.md", "cpu-only", []string{"plan", "--model", "llama-3.1-8b", "--engine", "llama.cpp", "--context", "8192"},
		"llama-server -hf bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q5_K_M -ngl 0 -c 8192 -np 1", ""},
	{"docs/accuracy.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-8B", "--quant", "q4_k_m", "--engine", "llama.cpp", "--placement", "fewest"},
		"this model gives about 205 tokens/s at 4096 and 68 at 131072", "Throughput: decode 205 tokens/s per sequence"},
	{"docs/accuracy.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-8B", "--quant", "q4_k_m", "--engine", "llama.cpp", "--placement", "fewest"},
		"this model gives about 205 tokens/s at 4096 and 68 at 131072", "not at the chosen context of 131072: at that full depth decode is 68.0 tokens/s"},
	// docs audit of session 15: figures the prose quoted that no entry checked.
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.3-70B", "--engine", "llama.cpp", "--quant", "q8_0", "--placement", "fewest"},
		"Llama-3.3-70B decodes at the same 25.5 tokens/s on one H100 or two", "Throughput: decode 25.5 tokens/s per sequence"},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.3-70B", "--engine", "llama.cpp", "--quant", "q8_0", "--placement", "fewest"},
		"where the fewest devices were one H100 at `-c 28160`", "CUDA_VISIBLE_DEVICES=0 llama-server -hf bartowski/Llama-3.3-70B-Instruct-GGUF:Q8_0 -ngl 81 --split-mode none --main-gpu 0 -c 28160 -np 1"},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "Llama-3.3-70B", "--engine", "llama.cpp", "--quant", "q8_0"},
		`1 device holds 28160 tokens ("placement": "fewest" plans that)`, "1 device holds 28160 tokens (--placement fewest plans that)"},
	{"docs/cli.md", "dgx-h100", []string{"fit", "--engine", "llama.cpp", "--filter", "Llama-3.1-70B"},
		"Llama-3.1-70B under llama.cpp on a DGX H100 is one GPU at 27k in `fit --engine llama.cpp`", "Llama-3.1-70B 70.6B yes q8_0 1 one device 27k"},
	{"docs/cli.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-70B", "--engine", "llama.cpp"},
		"two at 131072 in `plan --engine llama.cpp`", "fits 2x NVIDIA H100 80GB HBM3 (cuda:0-1): pipeline parallel 2, q8_0, context 131072;"},
	{"docs/inference-servers.md", "thinkpad-p16s-krackan", []string{"plan", "--model", "Qwen2.5-32B", "--engine", "vllm", "--quant", "bf16", "--context", "102700"},
		"(Qwen2.5-32B in bf16 at 102700 tokens on that fixture: 25.1 GiB left, a 25 GiB pool, 25.1 GiB of KV cache;", "the 25.1 GiB left beside the weights and activations give 25 GiB, less than the KV cache's 25.1 GiB"},
	{"docs/inference-servers.md", "thinkpad-p16s-krackan", []string{"plan", "--model", "70b", "--engine", "vllm", "--quant", "int8", "--json"},
		"(`VLLM_CPU_KVCACHE_SPACE=20` for a 70B at int8 on the thinkpad-p16s-krackan fixture", `"VLLM_CPU_KVCACHE_SPACE":"20"`},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-70B", "--quant", "bf16", "--tensor-parallel-size", "2", "--devices", "cuda:0-1", "--context", "16384"},
		"vLLM 0.21.0's start-up charge 4.8 GiB (peak activation 1.9 GiB, non-torch memory 2.1 GiB, CUDA graphs 0.8 GiB)", ""},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-8B", "--placement", "fewest", "--json"},
		"0.25 GiB on one GPU, 2.09 GiB per GPU of a", `"non_torch_gib":0.25,`},
	{"docs/inference-servers.md", "dgx-h100", []string{"plan", "--model", "Llama-3.1-70B", "--quant", "bf16", "--tensor-parallel-size", "2", "--devices", "cuda:0-1", "--context", "4096", "--json"},
		"0.25 GiB on one GPU, 2.09 GiB per GPU of a", `"non_torch_gib":2.09,`},
	{"docs/inference-servers.md", "h200-vm", []string{"plan", "--model", "Qwen3-32B", "--engine", "llama.cpp", "--memory-fraction", "0.3"},
		"`--fit-target 100158` for Qwen3-32B at 0.3 of a 140 GiB H200", "--fit on --fit-target 100158"},
	{"docs/cli.md", "dgx-h100", []string{"--table"},
		"Total: 9 devices, 8 accelerators, 637.2 GiB accelerator memory, 2015.5 GiB host memory", ""},
	{"docs/cli.md", "strix-halo-128gb", []string{"--table"},
		"`96.0 GiB accelerator memory (96.0 GiB of it shared with the host)`", "96.0 GiB accelerator memory (96.0 GiB of it shared with the host)"},
	{"docs/kubernetes.md", "strix-halo-128gb", []string{"nfd"},
		"so the model number stays (`AMD-Strix-Halo-Radeon-Graphics-8050S-8060S`)", "ai-hwaccel.io/gpu.product=AMD-Strix-Halo-Radeon-Graphics-8050S-8060S"},
	{"docs/comparison.md", "", []string{"models"}, "a catalog name (162 models)", " 162 models. Sources of every figure"},
	{"docs/comparison.md", "", []string{"rent", "--model", "Llama-3.1-8B"}, "`ai-hwaccel rent`: 52 types of six providers", "(52 of 52 types fit)"},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "DeepSeek-R1", "--engine", "vllm", "--cpu-offload"},
		"on 8 H100s DeepSeek-R1 under vLLM stays at `int4` over all eight", "DeepSeek-R1 fits 8x NVIDIA H100 80GB HBM3 (cuda:0-7): tensor parallel 8, int4,"},
	{"docs/requests.md", "dgx-h100", []string{"plan", "--model", "DeepSeek-R1", "--engine", "vllm", "--cpu-offload", "--quant", "fp8"},
		"not its FP8 release on one GPU with 560 GiB in host RAM", "CUDA_VISIBLE_DEVICES=0 vllm serve deepseek-ai/DeepSeek-R1 --max-model-len 4096 --gpu-memory-utilization 0.9 --cpu-offload-gb 560.3"},
	{"docs/detection.md", "hgx-h100-nccl-topo-no-tools", nil,
		"(hgx-h100-nccl-topo-no-tools: GPU d9 and mlx5_5 PIX)", `"pci_bus_id":"0000:d9:00.0","pci_id":"10de:2330","pcie":{"current_speed_gt_s":32,"current_width":16},"nics":[{"name":"mlx5_5","path":"PIX"}]`},
	{"docs/detection.md", "gaudi2-8", nil,
		"ports × rate ÷ 8: 262.5 (Gaudi 2)", `"kind":"roce","name":"Intel Gaudi 2 scale-up","devices":["gaudi:0","gaudi:1","gaudi:2","gaudi:3","gaudi:4","gaudi:5","gaudi:6","gaudi:7"],"bandwidth_gb_s":262.5,"links":21,"link_bandwidth_gb_s":12.5,`},
	// README's abridged answer is the dgx-h100 fixture's registry.
	{"README.md", "dgx-h100", nil,
		`"memory_bytes": 85520809984, "memory_free_bytes": 85045805056`, `"memory_bytes":85520809984,"memory_free_bytes":85045805056`},
	{"README.md", "dgx-h100", nil,
		`"memory_bytes": 2164152250368, "cores": 112`, `"memory_bytes":2164152250368,"memory_free_bytes":2100000000000,"cores":112`},
	{"README.md", "dgx-h100", nil,
		`{"id": 0, "memory_bytes": 1082076125184, "cpus": "0-55,112-167"}`, `{"id":0,"memory_bytes":1082076125184,"cpus":"0-55,112-167"}`},
	{"docs/cli.md", "dgx-h100", []string{"plan", "--model", "Qwen2.5-7B"},
		"Qwen2.5-7B on the `dgx-h100` fixture is TP 4 x 2 replicas", "Qwen2.5-7B fits 8x NVIDIA H100 80GB HBM3 (cuda:0-7): 2 replicas, tensor parallel 4, bf16,"},
	// docs audit of session 16: docs/accuracy.md's figures no entry checked.
	{"docs/accuracy.md", "dgx-h100", []string{"plan", "--model", "Kimi-K2.5", "--quant", "int4"},
		"554.3 GiB of weights for Kimi-K2.5", "(weights 554.3 GiB,"},
	// The DSA table's llama.cpp row: one token of DeepSeek-V3.2 over its
	// 61 layers, here 131072 of them (85,888 x 131072 and 45,628 x 131072).
	{"docs/accuracy.md", "dgx-h100", []string{"plan", "--model", "DeepSeek-V3.2", "--engine", "llama.cpp", "--quant", "q4_k_m", "--context", "131072", "--batch", "1", "--json"},
		"| 85,888 / 45,628 B |", `"kv_cache_bytes":11257511936,`},
	{"docs/accuracy.md", "dgx-h100", []string{"plan", "--model", "DeepSeek-V3.2", "--engine", "llama.cpp", "--quant", "q4_k_m", "--context", "131072", "--batch", "1", "--kv-cache", "fp8", "--json"},
		"| 85,888 / 45,628 B |", `"kv_cache_bytes":5980553216,`},
	{"docs/accuracy.md", "mi300x-8", []string{"plan", "--model", "Llama-3.3-70B-Instruct", "--engine", "vllm"},
		"Llama-3.3-70B-Instruct plan (vLLM, TP 8) prefills 22,269 tokens/s", "prefill 22269 tokens/s"},
	// "Serving engines at concurrency above 1": rule 6's term on one H100.
	{"docs/accuracy.md", "dgx-h100", []string{"plan", "--model", "Qwen3-14B", "--batch", "1", "--context", "1k", "--engine", "vllm", "--devices", "cuda:0"},
		"gives 76.7 tokens/s at batch 1,", "decode 76.7 tokens/s per sequence"},
	{"docs/accuracy.md", "dgx-h100", []string{"plan", "--model", "Qwen3-14B", "--batch", "64", "--context", "1k", "--engine", "vllm", "--devices", "cuda:0"},
		"2,444 at batch 64", "decode 2444 tokens/s over 64 sequences"},
	{"docs/accuracy.md", "dgx-h100", []string{"plan", "--model", "Qwen3-14B", "--batch", "256", "--context", "1k", "--engine", "vllm", "--devices", "cuda:0"},
		"3,864 at batch 256", "decode 3864 tokens/s over 256 sequences"},
	// "Training": what the explanation offers when a setup does not fit.
	{"docs/accuracy.md", "dgx-h100", []string{"train", "--model", "Llama-3.1-70B", "--method", "full"},
		"would fit on 16 such devices (77.6 GiB each)", ""},
	{"docs/accuracy.md", "macbook-m2-max-32gb", []string{"train", "--model", "Llama-3.1-8B", "--method", "full"},
		`"method": "qlora" and gradient_checkpointing (12.7 GiB)`, "it fits with --method qlora and --gradient-checkpointing (12.7 GiB)"},
	// An SGLang plan's room is SGLang's own pool (engine_expect.sglang).
	{"docs/inference-servers.md", "h200-vm", []string{"plan", "--model", "Qwen3-32B", "--engine", "sglang", "--memory-fraction", "0.5"},
		"on the `h200-vm` fixture chooses 34304 tokens, its pool holding 34529", "Room: context up to 34529 tokens (the command's --context-length 34304 is"},
	{"docs/inference-servers.md", "h200-vm", []string{"plan", "--model", "Qwen3-32B", "--engine", "sglang", "--memory-fraction", "0.95"},
		"0.95 on one H200: 7.0 GiB against 13.6 GiB at SGLang's 0.903", "(0.903), which keeps 13.6 GiB of each GPU outside its pool for prefill activations, CUDA graphs and metadata (reserve_for_graph_mb in ServerArgs._handle_gpu_memory_settings, python/sglang/srt/server_args.py); 0.95 keeps 7.0 GiB"},
}

// oneSpace is s with every run of white space read as one space.
func oneSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestDocsProseFigures: every figure of proseFigures is what its command
// answers today and what its doc says, so a change of the answer fails
// here until the sentence is rewritten.
func TestDocsProseFigures(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	docs := map[string]string{}
	for _, f := range proseFigures {
		if _, ok := docs[f.doc]; !ok {
			b, err := os.ReadFile(filepath.Join(root, f.doc))
			require.NoError(t, err)
			docs[f.doc] = oneSpace(string(b))
		}
		assert.True(t, strings.Contains(docs[f.doc], f.quote), "%s no longer quotes %q", f.doc, f.quote)
		args := f.args
		if f.fixture != "" {
			args = withFixture(t, f.fixture, args...)
		}
		r := runCLI(t, args...)
		require.Equal(t, 0, r.code, "%s %v: %s", f.fixture, f.args, r.stderr)
		said := f.said
		if said == "" {
			said = f.quote
		}
		assert.True(t, strings.Contains(oneSpace(r.stdout), said), "%s %v no longer answers %q: rewrite the sentence of %s that quotes %q", f.fixture, f.args, said, f.doc, f.quote)
	}
}
