#include "core/io/hf_checkpoint.h"

#include <typeinfo>

#include <map>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/formats/hf_checkpoint_layout.h"
#include "core/io/safetensors.h"

namespace moxlab {

namespace {

std::string layer_prefix(int l) { return "model.layers." + std::to_string(l) + "."; }

struct Parts {
  BlockImpl* block;
  DenseAttention* attn;
  SwiGLU* ffn;
};

Parts layer_parts(const Transformer& model, int l, const std::string& what) {
  auto* b = model.blocks->ptr<BlockImpl>(l).get();
  // Exact types: MoH attention derives from DenseAttention but computes something else (gated heads).
  auto* attn = typeid(*b->attn) == typeid(DenseAttention) ? static_cast<DenseAttention*>(b->attn.get()) : nullptr;
  auto* ffn = typeid(*b->ffn) == typeid(SwiGLU) ? static_cast<SwiGLU*>(b->ffn.get()) : nullptr;
  require(attn && ffn, what + ": only dense attention and SwiGLU FFN map to the HF LLaMA layout");
  require(!b->attn_scale.defined(), what + ": model.branch_scale has no HF LLaMA equivalent");
  return {b, attn, ffn};
}

}  // namespace

// Meta row 2i+j of a head (pair i, member j) becomes HF row j*hd/2 + i: view the rows as
// [n, hd/2, 2] and swap the last two axes. The trailing -1 covers both weights and biases.
torch::Tensor rope_interleaved_to_half(const torch::Tensor& w, int n_heads, int head_dim) {
  return w.reshape({n_heads, head_dim / 2, 2, -1}).transpose(1, 2).reshape(w.sizes()).contiguous();
}

torch::Tensor rope_half_to_interleaved(const torch::Tensor& w, int n_heads, int head_dim) {
  return w.reshape({n_heads, 2, head_dim / 2, -1}).transpose(1, 2).reshape(w.sizes()).contiguous();
}

void export_hf(const Transformer& model, const std::string& dir, const std::string& arch) {
  const ModelOptions& o = model.options();
  require(arch == "llama" || arch == "qwen2", "unknown HF architecture '" + arch + "' (llama or qwen2)");
  if (arch == "qwen2")
    require(o.qkv_bias, "export as qwen2 needs a model with model.qkv_bias = true (Qwen2 has Q/K/V biases)");
  else
    require(!o.qkv_bias, "export as llama needs a model without Q/K/V bias (model.qkv_bias = true: use --arch qwen2)");
  const int hd = o.head_dim();
  require(hd * o.n_heads == o.dim, "export to HF needs n_heads * head_dim == dim (this model sets model.head_dim)");

  torch::NoGradGuard ng;
  std::map<std::string, torch::Tensor> t;
  t["model.embed_tokens.weight"] = model.tok_embeddings->weight;
  for (int l = 0; l < o.n_layers; ++l) {
    const Parts p = layer_parts(model, l, "export to " + dir);
    const std::string pre = layer_prefix(l);
    t[pre + "self_attn.q_proj.weight"] = rope_interleaved_to_half(p.attn->wq->weight, o.n_heads, hd);
    t[pre + "self_attn.k_proj.weight"] = rope_interleaved_to_half(p.attn->wk->weight, o.n_kv_heads, hd);
    t[pre + "self_attn.v_proj.weight"] = p.attn->wv->weight;
    t[pre + "self_attn.o_proj.weight"] = p.attn->wo->weight;
    if (o.qkv_bias) {
      t[pre + "self_attn.q_proj.bias"] = rope_interleaved_to_half(p.attn->wq->bias, o.n_heads, hd);
      t[pre + "self_attn.k_proj.bias"] = rope_interleaved_to_half(p.attn->wk->bias, o.n_kv_heads, hd);
      t[pre + "self_attn.v_proj.bias"] = p.attn->wv->bias;
    }
    t[pre + "mlp.gate_proj.weight"] = p.ffn->w1->weight;
    t[pre + "mlp.up_proj.weight"] = p.ffn->w3->weight;
    t[pre + "mlp.down_proj.weight"] = p.ffn->w2->weight;
    t[pre + "input_layernorm.weight"] = p.block->attn_norm->weight;
    t[pre + "post_attention_layernorm.weight"] = p.block->ffn_norm->weight;
  }
  t["model.norm.weight"] = model.norm->weight;
  if (!o.tie_embeddings) t["lm_head.weight"] = model.output->weight;

  const bool qwen = arch == "qwen2";
  nlohmann::json cfg = {
      {"architectures", {qwen ? "Qwen2ForCausalLM" : "LlamaForCausalLM"}},
      {"model_type", arch},
      {"hidden_size", o.dim},
      {"intermediate_size", o.resolved_ffn_hidden()},
      {"num_attention_heads", o.n_heads},
      {"num_key_value_heads", o.n_kv_heads},
      {"num_hidden_layers", o.n_layers},
      {"rms_norm_eps", o.norm_eps},
      {"rope_theta", o.rope_theta},
      {"vocab_size", o.vocab_size},
      {"max_position_embeddings", o.max_seq_len},
      {"tie_word_embeddings", o.tie_embeddings},
      {"hidden_act", "silu"},
      {"torch_dtype", "float32"},
  };
  // Say explicitly what transformers would otherwise default: no o_proj/MLP bias (llama), no
  // sliding window (qwen2).
  if (qwen) cfg["use_sliding_window"] = false;
  else {
    cfg["attention_bias"] = false;
    cfg["mlp_bias"] = false;
  }
  make_dirs(dir);
  write_safetensors(dir + "/model.safetensors", t, {{"format", "pt"}});
  write_text_atomically(dir + "/config.json", cfg.dump(2) + "\n");
}

ImportedModel import_hf(const std::string& dir, const std::string& tokenizer_spec) {
  const std::string cfg_path = dir + "/config.json", st_path = dir + "/model.safetensors";
  const HfConfig hf = parse_hf_config(read_file(cfg_path), cfg_path);
  const bool qwen = hf.qwen;
  Config cfg = hf.config;
  cfg.data.tokenizer = tokenizer_spec;
  const ModelOptions& m = cfg.model;

  const SafeTensors st = read_safetensors(st_path);
  TensorShapes present;
  for (const auto& [name, t] : st.tensors) present[name] = t.sizes().vec();
  require_hf_tensors(present, m, qwen, st_path);  // before the model is built: the file backs every size
  auto take = [&](const std::string& name) -> const torch::Tensor& { return st.tensors.at(name); };

  auto model = std::make_shared<Transformer>(m);
  const int hd = m.head_dim();
  torch::NoGradGuard ng;
  model->tok_embeddings->weight.copy_(take("model.embed_tokens.weight"));
  for (int l = 0; l < m.n_layers; ++l) {
    const Parts p = layer_parts(*model, l, "import of " + dir);
    const std::string pre = layer_prefix(l) + "self_attn.";
    p.attn->wq->weight.copy_(rope_half_to_interleaved(take(pre + "q_proj.weight"), m.n_heads, hd));
    p.attn->wk->weight.copy_(rope_half_to_interleaved(take(pre + "k_proj.weight"), m.n_kv_heads, hd));
    p.attn->wv->weight.copy_(take(pre + "v_proj.weight"));
    p.attn->wo->weight.copy_(take(pre + "o_proj.weight"));
    if (qwen) {
      p.attn->wq->bias.copy_(rope_half_to_interleaved(take(pre + "q_proj.bias"), m.n_heads, hd));
      p.attn->wk->bias.copy_(rope_half_to_interleaved(take(pre + "k_proj.bias"), m.n_kv_heads, hd));
      p.attn->wv->bias.copy_(take(pre + "v_proj.bias"));
    }
    const std::string mlp = layer_prefix(l) + "mlp.";
    p.ffn->w1->weight.copy_(take(mlp + "gate_proj.weight"));
    p.ffn->w3->weight.copy_(take(mlp + "up_proj.weight"));
    p.ffn->w2->weight.copy_(take(mlp + "down_proj.weight"));
    p.block->attn_norm->weight.copy_(take(layer_prefix(l) + "input_layernorm.weight"));
    p.block->ffn_norm->weight.copy_(take(layer_prefix(l) + "post_attention_layernorm.weight"));
  }
  model->norm->weight.copy_(take("model.norm.weight"));
  // When tied, transformers ignores any stored lm_head.weight, and so does this.
  if (!m.tie_embeddings) model->output->weight.copy_(take("lm_head.weight"));
  return {cfg, model};
}

}  // namespace moxlab
