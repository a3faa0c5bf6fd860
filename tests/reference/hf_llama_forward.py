#!/usr/bin/python3
"""Independent reference for HF-style LLaMA / Qwen2 checkpoints exported by moxlab.

Usage: hf_llama_forward.py DIR TOKENS   (TOKENS: comma-separated ids)
Prints the logits [T][vocab] of the token sequence as JSON.

Written from the Hugging Face conventions (transformers' modeling_llama / modeling_qwen2), not from
moxlab's code: RoPE is applied in the "rotate half" layout (element i of a head pairs with i + hd/2,
cos/sin tables built from cat(freqs, freqs)), so agreement with moxlab's logits checks that moxlab's
export permutes q_proj / k_proj correctly. model.safetensors is parsed with json + struct + numpy
(no safetensors package needed).
"""
import json
import struct
import sys

import numpy as np
import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    dtypes = {"F32": np.float32, "F16": np.float16}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        if e["dtype"] == "BF16":
            raw = np.frombuffer(data[b:end], dtype="<u2").astype(np.uint32) << 16
            arr = raw.view(np.float32)
        else:
            arr = np.frombuffer(data[b:end], dtype=np.dtype(dtypes[e["dtype"]]).newbyteorder("<"))
        out[name] = torch.from_numpy(arr.astype(np.float32).reshape(e["shape"]).copy())
    return out


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(d, tokens):
    cfg = json.load(open(d + "/config.json"))
    W = read_safetensors(d + "/model.safetensors")
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = cfg["hidden_size"]
    hd = D // H
    eps = cfg["rms_norm_eps"]
    T = len(tokens)

    inv_freq = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().float(), emb.sin().float()  # [T, hd]

    def lin(x, name, bias=False):
        y = x @ W[name + ".weight"].T
        return y + W[name + ".bias"] if bias else y

    qkv_bias = cfg["model_type"] == "qwen2"
    x = W["model.embed_tokens.weight"][torch.tensor(tokens)]
    mask = torch.full((T, T), float("-inf")).triu(1)
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = lin(h, p + "self_attn.q_proj", qkv_bias).view(T, H, hd).transpose(0, 1)
        k = lin(h, p + "self_attn.k_proj", qkv_bias).view(T, KV, hd).transpose(0, 1)
        v = lin(h, p + "self_attn.v_proj", qkv_bias).view(T, KV, hd).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // KV, dim=0)  # HF repeat_kv: query head h uses kv head h // (H/KV)
        v = v.repeat_interleave(H // KV, dim=0)
        att = torch.softmax(q @ k.transpose(1, 2) / hd ** 0.5 + mask, dim=-1)
        o = (att @ v).transpose(0, 1).reshape(T, D)
        x = x + lin(o, p + "self_attn.o_proj")
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        g = lin(h, p + "mlp.gate_proj")
        x = x + lin(torch.nn.functional.silu(g) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings", False) else W["lm_head.weight"]
    return x @ head.T


def main():
    d, toks = sys.argv[1], [int(t) for t in sys.argv[2].split(",")]
    with torch.no_grad():
        logits = forward(d, toks)
    print(json.dumps(logits.tolist()))


if __name__ == "__main__":
    main()
