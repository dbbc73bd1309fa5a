#!/usr/bin/env python3
"""Write a random-weight F16 GGUF of a real architecture for llama.cpp.

The hyper-parameters come from the model's Hugging Face config.json as kept in
internal/model/catalog.json (each entry names its source); the weights are
random, the vocabulary is synthetic (SentencePiece-style, the real n_vocab
tokens). Only llama.cpp's gguf-py is used (PYTHONPATH=<llama.cpp>/gguf-py),
nothing is downloaded.

Usage: make_gguf.py CATALOG_NAME OUT.gguf [--catalog internal/model/catalog.json]

Tensor names and shapes follow the loaders of llama.cpp (src/models/<arch>.cpp
of the commit measured); keys a config does not carry but the loader requires
(rope base, norm epsilon) are the published values of that model and change
no buffer size.
"""
import argparse
import json
import sys

import numpy as np

import gguf

# Values the loader requires that the catalog's abbreviated config.json lacks.
# They come from each model's config.json on Hugging Face (rope_theta,
# rms_norm_eps) and do not change any buffer size.
EXTRA = {
    "Qwen2.5-0.5B": {"rope_theta": 1000000.0, "rms_norm_eps": 1e-6},
    "Qwen3-0.6B": {"rope_theta": 1000000.0, "rms_norm_eps": 1e-6},
    "Llama-3.2-1B": {"rope_theta": 500000.0, "rms_norm_eps": 1e-5},
    "TinyLlama-1.1B-Chat-v1.0": {"rope_theta": 10000.0, "rms_norm_eps": 1e-5},
    "Gemma-2-2B": {"rope_theta": 10000.0, "rms_norm_eps": 1e-6,
                   "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0},
    "Gemma-3-1B": {"rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "rope_local_base_freq": 10000.0},
    "Phi-3-mini-4k-instruct": {"rope_theta": 10000.0, "rms_norm_eps": 1e-5},
}

ARCH = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "gemma2": "gemma2",
        "gemma3_text": "gemma3", "phi3": "phi3"}

POOL = np.random.default_rng(0).standard_normal(1 << 24, dtype=np.float32).astype(np.float16) * np.float16(0.02)


def random_f16(shape):
    """Random F16 values; a fixed pool is repeated so a 2.6 B-value model is written in seconds."""
    n = int(np.prod(shape))
    return np.resize(POOL, n).reshape(shape)


def tensors_of(arch, cfg):
    """(name, numpy shape, is_norm) in llama.cpp's names; numpy shape is ggml's ne reversed."""
    e = cfg["hidden_size"]
    ff = cfg["intermediate_size"]
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    hd = cfg.get("head_dim", e // nh)
    v = cfg["vocab_size"]
    tied = cfg.get("tie_word_embeddings", arch in ("gemma2", "gemma3"))
    out = [("token_embd.weight", (v, e), False), ("output_norm.weight", (e,), True)]
    if not tied:
        out.append(("output.weight", (v, e), False))
    for i in range(cfg["num_hidden_layers"]):
        b = f"blk.{i}."
        out.append((b + "attn_norm.weight", (e,), True))
        if arch == "phi3":
            out.append((b + "attn_qkv.weight", (nh * hd + 2 * nkv * hd, e), False))
        else:
            out += [(b + "attn_q.weight", (nh * hd, e), False),
                    (b + "attn_k.weight", (nkv * hd, e), False),
                    (b + "attn_v.weight", (nkv * hd, e), False)]
        if arch == "qwen2":
            out += [(b + "attn_q.bias", (nh * hd,), True),
                    (b + "attn_k.bias", (nkv * hd,), True),
                    (b + "attn_v.bias", (nkv * hd,), True)]
        out.append((b + "attn_output.weight", (e, nh * hd), False))
        if arch in ("qwen3", "gemma3"):
            out += [(b + "attn_q_norm.weight", (hd,), True), (b + "attn_k_norm.weight", (hd,), True)]
        if arch in ("gemma2", "gemma3"):
            out.append((b + "post_attention_norm.weight", (e,), True))
        out.append((b + "ffn_norm.weight", (e,), True))
        if arch == "phi3":
            out.append((b + "ffn_up.weight", (2 * ff, e), False))
        else:
            out += [(b + "ffn_gate.weight", (ff, e), False), (b + "ffn_up.weight", (ff, e), False)]
        out.append((b + "ffn_down.weight", (e, ff), False))
        if arch in ("gemma2", "gemma3"):
            out.append((b + "post_ffw_norm.weight", (e,), True))
    return out


def add_hparams(w, arch, cfg, extra):
    nh = cfg["num_attention_heads"]
    hd = cfg.get("head_dim", cfg["hidden_size"] // nh)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(nh)
    w.add_head_count_kv(cfg.get("num_key_value_heads", nh))
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(hd)
    w.add_rope_freq_base(extra["rope_theta"])
    w.add_layer_norm_rms_eps(extra["rms_norm_eps"])
    w.add_vocab_size(cfg["vocab_size"])
    if "sliding_window" in cfg and cfg["sliding_window"]:
        w.add_sliding_window(cfg["sliding_window"])
    if "sliding_window_pattern" in cfg:
        w.add_sliding_window_pattern(cfg["sliding_window_pattern"])
    if "rope_local_base_freq" in extra:
        w.add_rope_freq_base_swa(extra["rope_local_base_freq"])
    if "attn_logit_softcapping" in extra:
        w.add_attn_logit_softcapping(extra["attn_logit_softcapping"])
    if "final_logit_softcapping" in extra:
        w.add_final_logit_softcapping(extra["final_logit_softcapping"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)


def add_synthetic_vocab(w, n_vocab):
    """A SentencePiece-style vocabulary of n_vocab tokens: <unk> <s> </s>, the 256 byte tokens, then fillers."""
    tokens, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [
        gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        scores.append(0.0)
        types.append(gguf.TokenType.BYTE)
    for i in range(n_vocab - len(tokens)):
        tokens.append(f"\u2581t{i}")
        scores.append(-float(i))
        types.append(gguf.TokenType.NORMAL)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name")
    ap.add_argument("out")
    ap.add_argument("--catalog", default="internal/model/catalog.json")
    a = ap.parse_args()
    entry = next((m for m in json.load(open(a.catalog))["models"] if m["name"] == a.name), None)
    if entry is None or a.name not in EXTRA:
        sys.exit(f"no catalog entry or no loader extras for {a.name!r} (known: {', '.join(EXTRA)})")
    cfg = entry["config"]
    arch = ARCH[cfg["model_type"]]
    w = gguf.GGUFWriter(a.out, arch)
    # "-" -> "_": llama.cpp's vocabulary loader applies Phi-3's special-token
    # rules to a model whose general.name contains "phi-3", and those need a
    # "<|endoftext|>" token the synthetic vocabulary does not have.
    w.add_name(a.name.replace("-", "_") + " (random weights)")
    w.add_source_url(entry["source"].split()[0])
    add_hparams(w, arch, cfg, EXTRA[a.name])
    add_synthetic_vocab(w, cfg["vocab_size"])
    plan = tensors_of(arch, cfg)
    for name, shape, norm in plan:
        dt = np.float32 if norm else np.float16
        w.add_tensor_info(name, shape, np.dtype(dt), int(np.prod(shape)) * np.dtype(dt).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for name, shape, norm in plan:
        w.write_tensor_data(np.ones(shape, dtype=np.float32) if norm else random_f16(shape))
    w.close()
    print(f"{a.out}: {arch}, {len(plan)} tensors, {sum(int(np.prod(s)) for _, s, _ in plan)} parameters")


if __name__ == "__main__":
    main()
