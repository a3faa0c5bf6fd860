#!/usr/bin/python3
"""Training throughput of the same LLaMA-style model in Python PyTorch (Debian python3-torch), the
baseline `moxlab bench train --python /usr/bin/python3` compares against: same shapes (dim, layers,
heads, kv heads, FFN hidden, tied embeddings, interleaved RoPE, RMSNorm, SwiGLU), same step (AdamW with
decay on matrices, gradient clipping), random token batches, same timing protocol (3 warm-up steps,
then `repeats` x `steps` timed steps, median tokens/s). Prints one line: "tokens/s median X min Y max Z".
It tests the project's speed; it is not part of moxlab's runtime.
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, max_len, theta):
    inv = theta ** (-2.0 * torch.arange(head_dim // 2, dtype=torch.float64) / head_dim)
    ang = (torch.arange(max_len, dtype=torch.float64)[:, None] * inv[None]).float()
    return ang.cos(), ang.sin()


def rope(x, cos, sin):  # x [B, T, H, hd], interleaved pairs (llama2.c / moxlab convention)
    T = x.shape[1]
    c, s = cos[:T].view(1, T, 1, -1), sin[:T].view(1, T, 1, -1)
    xp = x.view(*x.shape[:-1], -1, 2)
    x0, x1 = xp[..., 0], xp[..., 1]
    return torch.stack([x0 * c - x1 * s, x0 * s + x1 * c], -1).flatten(-2)


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.h, self.hkv, self.hd = a.heads, a.kv_heads, a.dim // a.heads
        self.attn_norm, self.ffn_norm = RMSNorm(a.dim, 1e-5), RMSNorm(a.dim, 1e-5)
        self.wq = nn.Linear(a.dim, self.h * self.hd, bias=False)
        self.wk = nn.Linear(a.dim, self.hkv * self.hd, bias=False)
        self.wv = nn.Linear(a.dim, self.hkv * self.hd, bias=False)
        self.wo = nn.Linear(self.h * self.hd, a.dim, bias=False)
        self.w1 = nn.Linear(a.dim, a.ffn, bias=False)
        self.w2 = nn.Linear(a.ffn, a.dim, bias=False)
        self.w3 = nn.Linear(a.dim, a.ffn, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, _ = x.shape
        h = self.attn_norm(x)
        q = rope(self.wq(h).view(B, T, self.h, self.hd), cos, sin)
        k = rope(self.wk(h).view(B, T, self.hkv, self.hd), cos, sin)
        v = self.wv(h).view(B, T, self.hkv, self.hd)
        g = self.h // self.hkv
        if g > 1:
            k, v = k.repeat_interleave(g, 2), v.repeat_interleave(g, 2)
        s = q.transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1) / math.sqrt(self.hd)
        s = s.masked_fill(mask[:T, :T], float("-inf"))
        o = (torch.softmax(s, -1) @ v.transpose(1, 2)).transpose(1, 2).reshape(B, T, -1)
        x = x + self.wo(o)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.dim)
        self.blocks = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = RMSNorm(a.dim, 1e-5)
        cos, sin = rope_tables(a.dim // a.heads, a.seq, 10000.0)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        self.register_buffer("mask", torch.ones(a.seq, a.seq, dtype=torch.bool).triu(1))
        for n, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02 / (math.sqrt(2 * a.layers) if n.endswith(("wo.weight", "w2.weight")) else 1.0))

    def forward(self, tokens):
        x = self.emb(tokens)
        for b in self.blocks:
            x = b(x, self.cos, self.sin, self.mask)
        return self.norm(x) @ self.emb.weight.t()  # tied output head


def main():
    p = argparse.ArgumentParser()
    for name, default in [("dim", 384), ("layers", 6), ("heads", 6), ("kv-heads", 2), ("ffn", 1024), ("vocab", 8192),
                          ("batch", 16), ("seq", 256), ("steps", 10), ("repeats", 3), ("threads", 2)]:
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--lr", type=float, default=2e-3)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = Model(a)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}], lr=a.lr)
    x = torch.randint(a.vocab, (a.batch, a.seq))
    y = torch.randint(a.vocab, (a.batch, a.seq))

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x).view(-1, a.vocab), y.view(-1)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(3):
        step()
    rates = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        for _ in range(a.steps):
            step()
        rates.append(a.batch * a.seq * a.steps / (time.perf_counter() - t0))
    print(f"tokens/s median {statistics.median(rates):.1f} min {min(rates):.1f} max {max(rates):.1f}")


if __name__ == "__main__":
    main()
