#include "core/model/transformer.h"

#include <cmath>

namespace moxlab {

BlockImpl::BlockImpl(const ModelOptions& o, int layer) : taps(layer) {
  attn_norm = register_module("attn_norm", RMSNorm(o.dim, o.norm_eps));
  ffn_norm = register_module("ffn_norm", RMSNorm(o.dim, o.norm_eps));
  attn = register_module("attn", make_attention(o, layer));
  ffn = register_module("ffn", make_ffn(o, layer));
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx) {
  auto h = x + attn->forward(attn_norm(x), rope, ctx, taps);
  ctx.tap(taps.resid_mid, h);
  auto y = h + ffn->forward(ffn_norm(h), ctx, taps);
  ctx.tap(taps.resid_out, y);
  return y;
}

ParamCount BlockImpl::param_count() const {
  ParamCount c = attn->param_count();
  c += ffn->param_count();
  const std::int64_t norms = attn_norm->weight.numel() + ffn_norm->weight.numel();
  c.total += norms;
  c.active += norms;
  return c;
}

Transformer::Transformer(const ModelOptions& o) : opts_(o), rope_(o.head_dim(), o.max_seq_len, o.rope_theta) {
  TORCH_CHECK(o.vocab_size > 0, "model.vocab_size must be set before building the model");
  tok_embeddings = register_module("tok_embeddings", torch::nn::Embedding(o.vocab_size, o.dim));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int l = 0; l < o.n_layers; ++l) blocks->push_back(Block(o, l));
  norm = register_module("norm", RMSNorm(o.dim, o.norm_eps));
  if (!o.tie_embeddings)
    output = register_module("output", torch::nn::Linear(torch::nn::LinearOptions(o.dim, o.vocab_size).bias(false)));
}

torch::Tensor Transformer::output_weight() const {
  return output ? output->weight : tok_embeddings->weight;
}

torch::Tensor Transformer::forward(const torch::Tensor& tokens, ForwardContext& ctx) {
  auto x = tok_embeddings(tokens);
  for (std::size_t l = 0; l < blocks->size(); ++l) x = blocks->ptr<BlockImpl>(l)->forward(x, rope_, ctx);
  x = norm(x);
  return torch::nn::functional::linear(x, output_weight());
}

torch::Tensor Transformer::forward(const torch::Tensor& tokens) {
  ForwardContext ctx;
  return forward(tokens, ctx);
}

torch::Tensor Transformer::lm_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32), targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
}

void Transformer::init_weights(std::uint64_t seed) { init_parameters(*this, opts_, seed); }

void init_parameters(torch::nn::Module& model, const ModelOptions& o, std::uint64_t seed) {
  torch::manual_seed(seed);
  torch::NoGradGuard ng;
  const double std = o.init_std;
  const double resid_std = std / std::sqrt(2.0 * o.n_layers);
  for (auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    auto& p = item.value();
    if (name.find("norm") != std::string::npos) p.fill_(1.0);
    else if (name.find(".monarch.") != std::string::npos || name.find(".head_router.") != std::string::npos) {
      // Default linear initialisation U(+-1/sqrt(fan_in)) (NOTES.md): MoHD group fusion blocks
      // [blocks, out, in] like a linear layer of the block's fan-in; MoH routers as in the official code.
      const double bound = 1.0 / std::sqrt(static_cast<double>(p.size(-1)));
      p.uniform_(-bound, bound);
    }
    else if (name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0) p.zero_();
    else if (name.find(".wo.") != std::string::npos || name.find(".w2.") != std::string::npos) p.normal_(0, resid_std);
    else p.normal_(0, std);
  }
}

ParamCount count_parameters(const Transformer& model) {
  ParamCount c;
  for (std::size_t l = 0; l < model.blocks->size(); ++l) c += model.blocks->ptr<BlockImpl>(l)->param_count();
  c.total += model.norm->weight.numel();
  c.active += model.norm->weight.numel();
  return c;  // token embedding and output head excluded, as in the papers
}

}  // namespace moxlab
