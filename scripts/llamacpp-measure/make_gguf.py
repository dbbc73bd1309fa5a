#!/usr/bin/env python3
"""Write a random-weight F16 GGUF of a real architecture for llama.cpp.

The hyper-parameters come from the model's Hugging Face config.json as kept in
internal/model/catalog.json (each entry names its source); the weights are
random (with --sparse, zeros left as holes of a sparse file but for the
token embedding and the MoE routers), the vocabulary is synthetic
(SentencePiece-style, the real n_vocab tokens). Only llama.cpp's gguf-py is
used (PYTHONPATH=<llama.cpp>/gguf-py), nothing is downloaded.

Usage: make_gguf.py CATALOG_NAME OUT.gguf [--catalog internal/model/catalog.json] [--sparse] [--layers N]

Tensor names and shapes follow the loaders of llama.cpp (src/models/<arch>.cpp
of the commit measured); keys a config does not carry but the loader requires
(rope base, norm epsilon) are the published values of that model and change
no buffer size.
"""
import argparse
import json
import os
import sys

import numpy as np

import gguf
import gguf.quants

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
    # The hybrid and MoE configs below carry these keys themselves (rope_theta,
    # norm_eps / rms_norm_eps / layer_norm_epsilon); the values repeat them.
    "LFM2-1.2B": {"rope_theta": 1000000.0, "rms_norm_eps": 1e-5},
    "NVIDIA-Nemotron-3-Nano-30B-A3B": {"rope_theta": 10000.0, "rms_norm_eps": 1e-5},
    "Qwen3-Next-80B-A3B-Instruct": {"rope_theta": 10000000.0, "rms_norm_eps": 1e-6},
    "Qwen1.5-MoE-A2.7B": {"rope_theta": 1000000.0, "rms_norm_eps": 1e-6},
    # https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json
    "Qwen3-30B-A3B": {"rope_theta": 1000000.0, "rms_norm_eps": 1e-6},
}

ARCH = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "gemma2": "gemma2",
        "gemma3_text": "gemma3", "phi3": "phi3", "lfm2": "lfm2", "qwen3_next": "qwen3next",
        "qwen2_moe": "qwen2moe", "qwen3_moe": "qwen3moe"}


def arch_of(cfg):
    """llama.cpp's architecture name: Nemotron-H with routed experts is nemotron_h_moe
    (convert_hf_to_gguf.py NemotronHModel picks it when n_routed_experts is set)."""
    if cfg["model_type"] == "nemotron_h":
        return "nemotron_h_moe" if cfg.get("n_routed_experts") else "nemotron_h"
    return ARCH[cfg["model_type"]]

POOL = np.random.default_rng(0).standard_normal(1 << 24, dtype=np.float32).astype(np.float16) * np.float16(0.02)


def random_f16(shape):
    """Random F16 values; a fixed pool is repeated so a 2.6 B-value model is written in seconds."""
    n = int(np.prod(shape))
    return np.resize(POOL, n).reshape(shape)


def tensors_of(arch, cfg):
    """(name, numpy shape, is_norm) in llama.cpp's names; numpy shape is ggml's ne reversed.
    is_norm marks the tensors kept in F32 (norms, biases, the SSM and convolution
    parameters llama.cpp's converter keeps in F32)."""
    if arch in HYBRID_TENSORS:
        return HYBRID_TENSORS[arch](cfg)
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


def lfm2_ff(cfg):
    """LFM2's feed-forward width as convert_hf_to_gguf.py LFM2Model computes it
    (block_auto_adjust_ff_dim: 2/3 of block_ff_dim, times the multiplier,
    rounded up to block_multiple_of)."""
    ff = cfg["block_ff_dim"]
    if cfg.get("block_auto_adjust_ff_dim"):
        ff = int(2 * ff / 3)
        ff = int(cfg.get("block_ffn_dim_multiplier", 1.0) * ff)
        m = cfg["block_multiple_of"]
        ff = m * ((ff + m - 1) // m)
    return ff


def lfm2_tensors(cfg):
    """src/models/lfm2.cpp load_arch_tensors: token_embd_norm is the output norm,
    the output matrix is tied; attention layers (full_attn_idxs) carry q/k norms,
    the others a gated short convolution."""
    e, v, ff = cfg["hidden_size"], cfg["vocab_size"], lfm2_ff(cfg)
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd, L = e // nh, cfg["conv_L_cache"]
    out = [("token_embd.weight", (v, e), False), ("token_embd_norm.weight", (e,), True)]
    for i in range(cfg["num_hidden_layers"]):
        b = f"blk.{i}."
        out += [(b + "ffn_norm.weight", (e,), True), (b + "ffn_gate.weight", (ff, e), False),
                (b + "ffn_down.weight", (e, ff), False), (b + "ffn_up.weight", (ff, e), False),
                (b + "attn_norm.weight", (e,), True)]
        if i in cfg["full_attn_idxs"]:
            out += [(b + "attn_q_norm.weight", (hd,), True), (b + "attn_k_norm.weight", (hd,), True),
                    (b + "attn_q.weight", (e, e), False), (b + "attn_k.weight", (nkv * hd, e), False),
                    (b + "attn_v.weight", (nkv * hd, e), False), (b + "attn_output.weight", (e, e), False)]
        else:
            out += [(b + "shortconv.conv.weight", (e, L), True),
                    (b + "shortconv.in_proj.weight", (3 * e, e), False),
                    (b + "shortconv.out_proj.weight", (e, e), False)]
    return out


def nemotron_h_dims(cfg):
    """Mamba2 mixer sizes as convert_hf_to_gguf.py NemotronHModel writes them."""
    d_inner = cfg["mamba_num_heads"] * cfg["mamba_head_dim"]
    return d_inner, cfg["ssm_state_size"], cfg["mamba_num_heads"], cfg["n_groups"], cfg["conv_kernel"]


def nemotron_h_tensors(cfg):
    """src/models/nemotron-h.cpp load_arch_tensors: one of Mamba2 (M), attention (*),
    MLP (-) or MoE (E) per block, as hybrid_override_pattern says."""
    e, v = cfg["hidden_size"], cfg["vocab_size"]
    d_inner, d_state, n_head, n_group, d_conv = nemotron_h_dims(cfg)
    nh, nkv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg.get("head_dim") or cfg["attention_head_dim"]
    conv = d_inner + 2 * n_group * d_state
    out = [("token_embd.weight", (v, e), False), ("output_norm.weight", (e,), True)]
    if not cfg.get("tie_word_embeddings"):
        out.append(("output.weight", (v, e), False))
    for i, kind in enumerate(cfg["hybrid_override_pattern"]):
        b = f"blk.{i}."
        out.append((b + "attn_norm.weight", (e,), True))
        if kind == "M":
            out += [(b + "ssm_in.weight", (2 * d_inner + 2 * n_group * d_state + n_head, e), False),
                    (b + "ssm_conv1d.weight", (conv, d_conv), True), (b + "ssm_conv1d.bias", (conv,), True),
                    (b + "ssm_dt.bias", (n_head,), True), (b + "ssm_a", (n_head, 1), True),
                    (b + "ssm_d", (n_head, 1), True), (b + "ssm_norm.weight", (n_group, d_inner // n_group), True),
                    (b + "ssm_out.weight", (e, d_inner), False)]
        elif kind == "*":
            out += [(b + "attn_q.weight", (nh * hd, e), False), (b + "attn_k.weight", (nkv * hd, e), False),
                    (b + "attn_v.weight", (nkv * hd, e), False), (b + "attn_output.weight", (e, nh * hd), False)]
        elif kind == "E":
            ne, fe, fs = cfg["n_routed_experts"], cfg["moe_intermediate_size"], cfg["moe_shared_expert_intermediate_size"]
            out += [(b + "ffn_gate_inp.weight", (ne, e), False), (b + "exp_probs_b.bias", (ne,), True),
                    (b + "ffn_down_exps.weight", (ne, e, fe), False), (b + "ffn_up_exps.weight", (ne, fe, e), False),
                    (b + "ffn_down_shexp.weight", (e, fs), False), (b + "ffn_up_shexp.weight", (fs, e), False)]
        else:
            ff = cfg["intermediate_size"]
            out += [(b + "ffn_down.weight", (e, ff), False), (b + "ffn_up.weight", (ff, e), False)]
    return out


def qwen3next_tensors(cfg):
    """src/models/qwen3next.cpp load_arch_tensors: every full_attention_interval-th
    layer is gated attention (q projection twice the heads: query and gate), the
    others a gated DeltaNet (attn_qkv, attn_gate, ssm_*); every layer a MoE with
    one gated shared expert."""
    e, v = cfg["hidden_size"], cfg["vocab_size"]
    nh, nkv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    kh, kd = cfg["linear_num_key_heads"], cfg["linear_key_head_dim"]
    vh, vd = cfg["linear_num_value_heads"], cfg["linear_value_head_dim"]
    key_dim, value_dim = kh * kd, vh * vd
    ne, fe, fs = cfg["num_experts"], cfg["moe_intermediate_size"], cfg["shared_expert_intermediate_size"]
    every = cfg["full_attention_interval"]
    out = [("token_embd.weight", (v, e), False), ("output_norm.weight", (e,), True)]
    if not cfg.get("tie_word_embeddings"):
        out.append(("output.weight", (v, e), False))
    for i in range(cfg["num_hidden_layers"]):
        b = f"blk.{i}."
        out += [(b + "attn_norm.weight", (e,), True), (b + "post_attention_norm.weight", (e,), True)]
        if (i + 1) % every == 0:
            out += [(b + "attn_q.weight", (2 * nh * hd, e), False), (b + "attn_k.weight", (nkv * hd, e), False),
                    (b + "attn_v.weight", (nkv * hd, e), False), (b + "attn_output.weight", (e, nh * hd), False),
                    (b + "attn_q_norm.weight", (hd,), True), (b + "attn_k_norm.weight", (hd,), True)]
        else:
            out += [(b + "attn_qkv.weight", (2 * key_dim + value_dim, e), False),
                    (b + "attn_gate.weight", (value_dim, e), False),
                    (b + "ssm_conv1d.weight", (2 * key_dim + value_dim, cfg["linear_conv_kernel_dim"]), True),
                    (b + "ssm_dt.bias", (vh,), True), (b + "ssm_a", (vh,), True),
                    (b + "ssm_ba.weight", (2 * vh, e), False), (b + "ssm_norm.weight", (vd,), True),
                    (b + "ssm_out.weight", (e, value_dim), False)]
        out += [(b + "ffn_gate_inp.weight", (ne, e), False), (b + "ffn_down_exps.weight", (ne, e, fe), False),
                (b + "ffn_gate_exps.weight", (ne, fe, e), False), (b + "ffn_up_exps.weight", (ne, fe, e), False),
                (b + "ffn_gate_inp_shexp.weight", (e,), True), (b + "ffn_gate_shexp.weight", (fs, e), False),
                (b + "ffn_up_shexp.weight", (fs, e), False), (b + "ffn_down_shexp.weight", (e, fs), False)]
    return out


def qwen2moe_tensors(cfg):
    """src/models/qwen2moe.cpp load_arch_tensors: Qwen2 attention with q/k/v biases,
    num_experts routed experts and one gated shared expert per layer."""
    e, v = cfg["hidden_size"], cfg["vocab_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = e // nh
    ne, fe, fs = cfg["num_experts"], cfg["moe_intermediate_size"], cfg["shared_expert_intermediate_size"]
    out = [("token_embd.weight", (v, e), False), ("output_norm.weight", (e,), True),
           ("output.weight", (v, e), False)]
    for i in range(cfg["num_hidden_layers"]):
        b = f"blk.{i}."
        out += [(b + "attn_norm.weight", (e,), True),
                (b + "attn_q.weight", (nh * hd, e), False), (b + "attn_k.weight", (nkv * hd, e), False),
                (b + "attn_v.weight", (nkv * hd, e), False), (b + "attn_q.bias", (nh * hd,), True),
                (b + "attn_k.bias", (nkv * hd,), True), (b + "attn_v.bias", (nkv * hd,), True),
                (b + "attn_output.weight", (e, nh * hd), False), (b + "ffn_norm.weight", (e,), True),
                (b + "ffn_gate_inp.weight", (ne, e), False), (b + "ffn_gate_exps.weight", (ne, fe, e), False),
                (b + "ffn_down_exps.weight", (ne, e, fe), False), (b + "ffn_up_exps.weight", (ne, fe, e), False),
                (b + "ffn_gate_inp_shexp.weight", (e,), True), (b + "ffn_gate_shexp.weight", (fs, e), False),
                (b + "ffn_down_shexp.weight", (e, fs), False), (b + "ffn_up_shexp.weight", (fs, e), False)]
    return out


def qwen3moe_tensors(cfg):
    """src/models/qwen3moe.cpp load_arch_tensors: Qwen3 attention (q/k norms, no
    biases) and num_experts routed experts per layer, no shared expert."""
    e, v = cfg["hidden_size"], cfg["vocab_size"]
    nh, nkv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    ne, fe = cfg["num_experts"], cfg["moe_intermediate_size"]
    out = [("token_embd.weight", (v, e), False), ("output_norm.weight", (e,), True)]
    if not cfg.get("tie_word_embeddings"):
        out.append(("output.weight", (v, e), False))
    for i in range(cfg["num_hidden_layers"]):
        b = f"blk.{i}."
        out += [(b + "attn_norm.weight", (e,), True),
                (b + "attn_q.weight", (nh * hd, e), False), (b + "attn_k.weight", (nkv * hd, e), False),
                (b + "attn_v.weight", (nkv * hd, e), False), (b + "attn_output.weight", (e, nh * hd), False),
                (b + "attn_k_norm.weight", (hd,), True), (b + "attn_q_norm.weight", (hd,), True),
                (b + "ffn_norm.weight", (e,), True), (b + "ffn_gate_inp.weight", (ne, e), False),
                (b + "ffn_gate_exps.weight", (ne, fe, e), False), (b + "ffn_down_exps.weight", (ne, e, fe), False),
                (b + "ffn_up_exps.weight", (ne, fe, e), False)]
    return out


HYBRID_TENSORS = {"lfm2": lfm2_tensors, "nemotron_h": nemotron_h_tensors, "nemotron_h_moe": nemotron_h_tensors,
                  "qwen3next": qwen3next_tensors, "qwen2moe": qwen2moe_tensors,
                  "qwen3moe": qwen3moe_tensors}


def add_arch_hparams(w, arch, cfg):
    """The keys each loader's load_arch_hparams reads beyond the common ones, as
    convert_hf_to_gguf.py writes them from config.json."""
    if arch == "lfm2":
        w.add_shortconv_l_cache(cfg["conv_L_cache"])
    if arch in ("nemotron_h", "nemotron_h_moe"):
        d_inner, d_state, n_head, n_group, d_conv = nemotron_h_dims(cfg)
        w.add_ssm_conv_kernel(d_conv)
        w.add_ssm_inner_size(d_inner)
        w.add_ssm_state_size(d_state)
        w.add_ssm_time_step_rank(n_head)
        w.add_ssm_group_count(n_group)
        w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
    if arch == "nemotron_h_moe":
        w.add_expert_count(cfg["n_routed_experts"])
        w.add_expert_used_count(cfg["num_experts_per_tok"])
        w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        w.add_expert_shared_feed_forward_length(cfg["moe_shared_expert_intermediate_size"])
        w.add_expert_shared_count(cfg["n_shared_experts"])
        w.add_expert_weights_norm(cfg["norm_topk_prob"])
        w.add_expert_weights_scale(cfg["routed_scaling_factor"])
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    if arch == "qwen3next":
        w.add_ssm_conv_kernel(cfg["linear_conv_kernel_dim"])
        w.add_ssm_inner_size(cfg["linear_num_value_heads"] * cfg["linear_value_head_dim"])
        w.add_ssm_state_size(cfg["linear_key_head_dim"])
        w.add_ssm_time_step_rank(cfg["linear_num_value_heads"])
        w.add_ssm_group_count(cfg["linear_num_key_heads"])
        w.add_full_attention_interval(cfg["full_attention_interval"])
    if arch in ("qwen3next", "qwen2moe", "qwen3moe"):
        w.add_expert_count(cfg["num_experts"])
        w.add_expert_used_count(cfg["num_experts_per_tok"])
        w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    if arch in ("qwen3next", "qwen2moe"):
        w.add_expert_shared_feed_forward_length(cfg["shared_expert_intermediate_size"])


def per_layer(cfg, arch):
    """Per-layer head_count_kv and feed_forward_length where the loader reads
    arrays (0 marks a recurrent layer: LFM2 by head_count_kv, Nemotron-H by both)."""
    n = cfg["num_hidden_layers"]
    if arch == "lfm2":
        kv = [cfg["num_key_value_heads"] if i in cfg["full_attn_idxs"] else 0 for i in range(n)]
        return kv, lfm2_ff(cfg)
    if arch in ("nemotron_h", "nemotron_h_moe"):
        p = cfg["hybrid_override_pattern"]
        kv = [cfg["num_key_value_heads"] if k == "*" else 0 for k in p]
        ff = [cfg["intermediate_size"] if k in "-E" else 0 for k in p]
        return kv, ff
    return cfg.get("num_key_value_heads", cfg["num_attention_heads"]), cfg["intermediate_size"]


class Hole:
    """Tensor data left as a hole in a sparse file (reads as zeros): lets a
    model larger than the disk be written; llama.cpp maps the file, so the
    buffer sizes are the same as with random weights."""

    def __init__(self, nbytes):
        self.nbytes = nbytes

    def tofile(self, f):
        f.seek(self.nbytes, 1)


def add_hparams(w, arch, cfg, extra):
    nh = cfg["num_attention_heads"]
    hd = cfg.get("head_dim") or cfg.get("attention_head_dim") or cfg["hidden_size"] // nh
    kv, ff = per_layer(cfg, arch)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(ff)
    w.add_head_count(nh)
    w.add_head_count_kv(kv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(int(hd * cfg.get("partial_rotary_factor", 1.0)))
    w.add_rope_freq_base(extra["rope_theta"])
    w.add_layer_norm_rms_eps(extra["rms_norm_eps"])
    w.add_vocab_size(cfg["vocab_size"])
    if cfg.get("sliding_window") and cfg.get("use_sliding_window", True):
        w.add_sliding_window(cfg["sliding_window"])
    if "sliding_window_pattern" in cfg:
        w.add_sliding_window_pattern(cfg["sliding_window_pattern"])
    if "rope_local_base_freq" in extra:
        w.add_rope_freq_base_swa(extra["rope_local_base_freq"])
    if "attn_logit_softcapping" in extra:
        w.add_attn_logit_softcapping(extra["attn_logit_softcapping"])
    if "final_logit_softcapping" in extra:
        w.add_final_logit_softcapping(extra["final_logit_softcapping"])
    add_arch_hparams(w, arch, cfg)
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


# Multimodal projectors (mmproj GGUFs, loaded by tools/mtmd/clip.cpp). The
# vision tower's shape is the catalog entry's vision_config, the projector's
# output width its language model's hidden_size. Keys and tensor types follow
# convert_hf_to_gguf.py's mmproj writer of the commit measured
# (conversion/base.py MmprojModel, conversion/gemma.py Gemma3VisionModel).
MMPROJ = {
    # Gemma 3's SigLIP so400m tower at 896 px and its projector (avg-pool of
    # the 64x64 patches to 16x16, RMS norm, one matrix to the text width).
    "medgemma-27b-it": {"projector": "gemma3", "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
}


def gemma3_mmproj_tensors(v, n_text):
    """(name, numpy shape, type) of a Gemma 3 mmproj: clip.cpp load_tensors'
    names (clip-impl.h TN_*); types as Gemma3VisionModel.tensor_force_quant
    and ModelBase.prepare_tensors choose them: the embeddings (".embeddings."
    in the HF name) F32, the input projection F16, 1-D tensors F32, the other
    matrices at the file's type."""
    hv, iv, p = v["hidden_size"], v["intermediate_size"], v["patch_size"]
    n_pos = (v["image_size"] // p) ** 2
    f32, f16, mat = "F32", "F16", "MAT"
    out = [("v.patch_embd.weight", (hv, v.get("num_channels", 3), p, p), f32),
           ("v.patch_embd.bias", (hv,), f32),
           ("v.position_embd.weight", (n_pos, hv), f32)]
    for i in range(v["num_hidden_layers"]):
        b = f"v.blk.{i}."
        for t in ("attn_q", "attn_k", "attn_v", "attn_out"):
            out += [(b + t + ".weight", (hv, hv), mat), (b + t + ".bias", (hv,), f32)]
        out += [(b + "ln1.weight", (hv,), f32), (b + "ln1.bias", (hv,), f32),
                (b + "ffn_up.weight", (iv, hv), mat), (b + "ffn_up.bias", (iv,), f32),
                (b + "ffn_down.weight", (hv, iv), mat), (b + "ffn_down.bias", (hv,), f32),
                (b + "ln2.weight", (hv,), f32), (b + "ln2.bias", (hv,), f32)]
    out += [("v.post_ln.weight", (hv,), f32), ("v.post_ln.bias", (hv,), f32),
            # Gemma3MultiModalProjector.mm_input_projection_weight is
            # (vision hidden, text hidden), written untransposed:
            # clip_n_mmproj_embd reads the text width from its ne[0].
            ("mm.input_projection.weight", (hv, n_text), f16),
            ("mm.soft_emb_norm.weight", (hv,), f32)]
    return out


def write_mmproj(name, out, entry, qtype):
    """Write a random-weight mmproj GGUF of a catalog VLM at F16 or Q8_0."""
    cfg, v, extra = entry["config"], entry["config"]["vision_config"], MMPROJ[name]
    n_text = cfg["text_config"]["hidden_size"]
    w = gguf.GGUFWriter(out, "clip")
    w.add_name(name.replace("-", "_") + " mmproj (random weights)")
    w.add_source_url(entry["source"].split()[0])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if qtype == "q8_0" else gguf.LlamaFileType.MOSTLY_F16)
    w.add_clip_has_vision_encoder(True)
    w.add_vision_projection_dim(n_text)
    w.add_vision_image_size(v["image_size"])
    w.add_vision_patch_size(v["patch_size"])
    w.add_vision_embedding_length(v["hidden_size"])
    w.add_vision_feed_forward_length(v["intermediate_size"])
    w.add_vision_block_count(v["num_hidden_layers"])
    w.add_vision_head_count(v["num_attention_heads"])
    w.add_vision_image_mean(extra["image_mean"])
    w.add_vision_image_std(extra["image_std"])
    w.add_clip_projector_type(extra["projector"])
    w.add_vision_attention_layernorm_eps(v.get("layer_norm_eps", 1e-6))
    w.add_vision_use_gelu(True)
    plan = gemma3_mmproj_tensors(v, n_text)
    mat = gguf.GGMLQuantizationType.Q8_0 if qtype == "q8_0" else gguf.GGMLQuantizationType.F16
    for tname, shape, kind in plan:
        t = {"F32": gguf.GGMLQuantizationType.F32, "F16": gguf.GGMLQuantizationType.F16, "MAT": mat}[kind]
        data = np.ones(shape, np.float32) if t == gguf.GGMLQuantizationType.F32 else random_f16(shape)
        if t == gguf.GGMLQuantizationType.Q8_0:
            # A row that is not a whole number of Q8_0 blocks (SigLIP's
            # ffn_down: 4304 columns) stays F16, as the converter's
            # "falling back to F16" does (conversion/base.py prepare_tensors).
            try:
                w.add_tensor(tname, gguf.quants.quantize(data.astype(np.float32), t), raw_dtype=t)
            except gguf.QuantError:
                w.add_tensor(tname, data)
        else:
            w.add_tensor(tname, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"{out}: clip ({extra['projector']}), {len(plan)} tensors, "
          f"{sum(int(np.prod(s)) for _, s, _ in plan)} parameters")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name")
    ap.add_argument("out")
    ap.add_argument("--catalog", default="internal/model/catalog.json")
    ap.add_argument("--sparse", action="store_true",
                    help="leave the matrices as holes of a sparse file (zeros) instead of random values, "
                         "for models larger than the disk (or its write speed); the token embedding and the "
                         "MoE routers stay random so that routing still varies per token")
    ap.add_argument("--mmproj", choices=("f16", "q8_0"),
                    help="write the model's vision projector (an mmproj GGUF for llama.cpp's mtmd) at this type "
                         "instead of its language model")
    ap.add_argument("--vision", action="append", default=[], metavar="KEY=INT",
                    help="with --mmproj: replace a vision_config value (a shape variation to check how a "
                         "buffer scales; the record names it)")
    ap.add_argument("--layers", type=int,
                    help="keep only the first N layers (every layer's shapes stay the model's): a small "
                         "file of the architecture for a dry run of the harness, not a measurement of the model")
    a = ap.parse_args()
    entry = next((m for m in json.load(open(a.catalog))["models"] if m["name"] == a.name), None)
    if a.mmproj:
        if entry is None or a.name not in MMPROJ:
            sys.exit(f"no catalog entry or no projector layout for {a.name!r} (known: {', '.join(MMPROJ)})")
        for kv in a.vision:
            k, v = kv.split("=", 1)
            entry["config"]["vision_config"][k] = int(v)
        write_mmproj(a.name, a.out, entry, a.mmproj)
        return
    if entry is None or a.name not in EXTRA:
        sys.exit(f"no catalog entry or no loader extras for {a.name!r} (known: {', '.join(EXTRA)})")
    cfg = dict(entry["config"])
    if a.layers:
        cfg["num_hidden_layers"] = min(a.layers, cfg["num_hidden_layers"])
    arch = arch_of(cfg)
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
        if norm:
            w.write_tensor_data(np.ones(shape, dtype=np.float32))
        elif a.sparse and not (name == "token_embd.weight" or name.endswith("ffn_gate_inp.weight")):
            w.write_tensor_data(Hole(int(np.prod(shape)) * 2))
        else:
            w.write_tensor_data(random_f16(shape))
    end = w.fout[0].tell()
    w.close()
    if os.path.getsize(a.out) < end:  # the last tensors were holes: give the file its length
        os.truncate(a.out, end)
    print(f"{a.out}: {arch}, {len(plan)} tensors, {sum(int(np.prod(s)) for _, s, _ in plan)} parameters")


if __name__ == "__main__":
    main()
