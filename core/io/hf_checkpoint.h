// Export and import of Hugging Face-style checkpoints (a directory holding model.safetensors and
// config.json) for the LLaMA family: "llama" (LlamaForCausalLM) and "qwen2" (Qwen2ForCausalLM, which
// is LLaMA plus a bias on the Q, K and V projections).
//
// Tensor names follow transformers' modeling_llama / modeling_qwen2: model.embed_tokens.weight,
// model.layers.{i}.self_attn.{q,k,v,o}_proj.weight (+ q/k/v bias for qwen2),
// model.layers.{i}.mlp.{gate,up,down}_proj.weight (moxlab w1, w3, w2),
// model.layers.{i}.{input,post_attention}_layernorm.weight, model.norm.weight, lm_head.weight (absent
// when tied). HF applies RoPE in the "rotate half" layout (element i of a head pairs with i + hd/2)
// while moxlab rotates interleaved pairs (2i, 2i+1), so the rows of q_proj and k_proj (and their
// biases) are permuted per head on the way out and back; everything else is copied as is.
// Only single-file checkpoints (no model.safetensors.index.json shards) are read.
#pragma once
#include <string>

#include <torch/torch.h>

#include "core/io/llama2c_import.h"  // ImportedModel
#include "core/model/transformer.h"

namespace moxlab {

// Writes dir/model.safetensors (F32) and dir/config.json. arch is "llama" (the model must have no QKV
// bias) or "qwen2" (the model must have one). Only dense attention and SwiGLU FFN can be exported.
void export_hf(const Transformer& model, const std::string& dir, const std::string& arch);

// Reads dir/config.json and dir/model.safetensors into a Config (run kind "import") and Transformer.
// Throws Error naming an unknown architecture, a missing tensor or a tensor of the wrong shape.
ImportedModel import_hf(const std::string& dir, const std::string& tokenizer_spec);

// Row permutations of a Q or K projection weight [n*hd, dim] or bias [n*hd] between moxlab's
// interleaved RoPE layout (Meta/llama2.c) and HF's rotate-half layout; each is the other's inverse.
torch::Tensor rope_interleaved_to_half(const torch::Tensor& w, int n_heads, int head_dim);
torch::Tensor rope_half_to_interleaved(const torch::Tensor& w, int n_heads, int head_dim);

}  // namespace moxlab
