#include "core/model/transformer.h"

#include <cmath>

#include "core/model/kind_modules.h"
#include "core/model/model_kind.h"
#include "core/model/post_init.h"

namespace moxlab {

BlockImpl::BlockImpl(const ModelOptions& o, int layer) : taps(layer) {
  attn_norm = register_module("attn_norm", RMSNorm(o.dim, o.norm_eps));
  ffn_norm = register_module("ffn_norm", RMSNorm(o.dim, o.norm_eps));
  attn = register_module("attn", make_attention(o, layer));
  ffn = register_module("ffn", make_ffn(o, layer));
  if (o.branch_scale == "fixed") {
    attn_scale = register_buffer("attn_scale", torch::full({1}, o.attn_branch_scale));
    ffn_scale = register_buffer("ffn_scale", torch::full({1}, o.ffn_branch_scale));
  } else if (o.branch_scale == "learned") {
    attn_scale = register_parameter("attn_scale", torch::full({1}, o.attn_branch_scale));
    ffn_scale = register_parameter("ffn_scale", torch::full({1}, o.ffn_branch_scale));
  }
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, const Rope& rope, Analysis& an, LayerIO& io, const LayerForms* forms) {
  const auto x_normed = attn_norm(x);
  const auto h = x + scale_attention(forms && forms->attention ? forms->attention(x_normed, rope, an, taps, io)
                                                               : attn->forward(x_normed, rope, an, taps, io));
  an.tap(taps.resid_mid, h);
  const auto h_normed = ffn_norm(h);
  const auto y = h + scale_ffn(forms && forms->ffn ? forms->ffn(h_normed, an, taps, io) : ffn->forward(h_normed, an, taps, io));
  an.tap(taps.resid_out, y);
  return y;
}

ParamCount BlockImpl::param_count() const {
  ParamCount c = attn->param_count();
  c += ffn->param_count();
  // Norm weights and learned branch scales: parameters every token uses.
  const std::int64_t norms = attn_norm->weight.numel() + ffn_norm->weight.numel() +
                             (attn_scale.defined() && attn_scale.requires_grad() ? attn_scale.numel() + ffn_scale.numel() : 0);
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
  if (o.is_tomoe()) {
    ExpertHypernetworkOptions h;
    h.layers = o.n_layers;
    h.experts = o.tomoe.experts;
    h.input_size = o.tomoe.hypernet_input;
    h.hidden_size = o.tomoe.hypernet_hidden;
    h.seed = 0x70e;  // z is a saved buffer; a fixed draw keeps it independent of the training seed
    hypernet = register_module("hypernet", ExpertHypernetwork(h));
  }
}

torch::Tensor Transformer::output_weight() const {
  return output ? output->weight : tok_embeddings->weight;
}

torch::Tensor Transformer::forward(const torch::Tensor& tokens, Analysis& an, const PassOptions& pass) {
  const OpFormsScope ops(pass.ops);
  auto layers = begin_layers(pass);
  auto x = tok_embeddings(tokens);
  const auto* forms = pass.forms;
  for (std::size_t l = 0; l < blocks->size(); ++l)
    x = blocks->ptr<BlockImpl>(l)->forward(x, rope_, an, layers[l], forms && l < forms->size() ? &(*forms)[l] : nullptr);
  x = norm(x);
  end_layers(layers, an);
  return moxlab::linear(x, output_weight());  // qualified: at::linear is found by argument lookup too
}

torch::Tensor Transformer::forward(const torch::Tensor& tokens) {
  Analysis an;
  an.aux_losses_wanted = false;  // the analysis is discarded
  return forward(tokens, an);
}

std::vector<LayerIO> Transformer::begin_layers(const PassOptions& pass) {
  std::vector<LayerIO> layers(blocks->size());
  const torch::Tensor experts = hypernet && !pass.gates_off ? hypernet->forward() : torch::Tensor();  // [L, N, d_e]
  for (std::size_t l = 0; l < layers.size(); ++l) {
    layers[l].gates_off = pass.gates_off;
    layers[l].layer = static_cast<int>(l);
    layers[l].tomoe_embeddings = experts;
  }
  return layers;
}

void Transformer::end_layers(std::vector<LayerIO>& layers, Analysis& an) {
  if (!hypernet || layers.empty() || layers[0].gates_off) return;
  TomoeTrace& trace = an.tomoe;
  trace.reset(opts_.n_layers);
  trace.experts = layers[0].tomoe_embeddings;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    trace.attention[l] = std::move(layers[l].tomoe_attention);
    trace.mlp[l] = std::move(layers[l].tomoe_mlp);
  }
  // Eq. 10's regularisers, weighted: alpha R_P + beta R_U + gamma R_L
  const TomoeRegularisers r = tomoe_regularisers(trace, opts_);
  const auto& t = opts_.tomoe;
  if (t.alpha > 0) an.aux_losses.emplace_back("tomoe.param", t.alpha * r.param);
  if (t.beta > 0 && r.union_term.defined()) an.aux_losses.emplace_back("tomoe.union", t.beta * r.union_term);
  if (t.gamma > 0 && r.load.defined()) an.aux_losses.emplace_back("tomoe.load", t.gamma * r.load);
  an.stats.emplace_back("tomoe/active_ratio", r.active_ratio);
}

torch::Tensor Transformer::lm_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32), targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
}

void Transformer::init_weights(std::uint64_t seed) { init_parameters(*this, opts_, seed); }

namespace {
bool ends_with(const std::string& name, const std::string& tail) {
  return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

// The modules of every kind that the rule applies to (model_kind.h).
std::vector<std::string> init_modules(std::vector<std::string> ModelKind::*rule) {
  std::vector<std::string> parts;
  for (const auto& k : model_kinds()) parts.insert(parts.end(), (k.*rule).begin(), (k.*rule).end());
  return parts;
}

// A routing module as PyTorch initialises its layers (the official code keeps those defaults).
void init_torch_default(const std::string& name, torch::Tensor& p) {
  const bool bias = ends_with(name, ".bias");
  if (name.find("_norm.") != std::string::npos) {
    if (bias) p.zero_();
    else p.fill_(1.0);
  } else if (name.find(".gru.") != std::string::npos) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(p.size(0) / 3));  // [3 * hidden, ...]: U(+-1/sqrt(hidden))
    p.uniform_(-bound, bound);
  } else if (bias) {
    p.zero_();  // PyTorch draws U(+-1/sqrt(in)); 0 leaves every first mask decision to the offset b
  } else {
    const double bound = 1.0 / std::sqrt(static_cast<double>(p.size(-1)));  // Linear [out, in]: U(+-1/sqrt(in))
    p.uniform_(-bound, bound);
  }
}
}  // namespace

void init_parameters(torch::nn::Module& model, const ModelOptions& o, std::uint64_t seed) {
  torch::manual_seed(seed);
  torch::NoGradGuard ng;
  const double std = o.init_std;
  const double resid_std = std / std::sqrt(2.0 * o.n_layers);
  const auto torch_default = init_modules(&ModelKind::torch_default_init_modules);
  const auto fan_in = init_modules(&ModelKind::fan_in_init_modules);
  for (auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    auto& p = item.value();
    if (ends_with(name, ".attn_scale")) p.fill_(o.attn_branch_scale);  // model.branch_scale = learned
    else if (ends_with(name, ".ffn_scale")) p.fill_(o.ffn_branch_scale);
    else if (names_module(name, torch_default)) init_torch_default(name, p);
    else if (name.find("norm") != std::string::npos) p.fill_(1.0);
    else if (names_module(name, fan_in)) {
      // Default linear initialisation U(+-1/sqrt(fan_in)) (NOTES.md).
      const double bound = 1.0 / std::sqrt(static_cast<double>(p.size(-1)));
      p.uniform_(-bound, bound);
    }
    else if (ends_with(name, ".bias")) p.zero_();
    else if (name.find(".wo.") != std::string::npos || name.find(".w2.") != std::string::npos) p.normal_(0, resid_std);
    else p.normal_(0, std);
  }
  for (const auto& module : model.modules(/*include_self=*/false))
    if (auto* fixed = dynamic_cast<PostInit*>(module.get())) fixed->post_init();
}

ParamCount count_parameters(const Transformer& model) {
  ParamCount c;
  for (std::size_t l = 0; l < model.blocks->size(); ++l) c += model.blocks->ptr<BlockImpl>(l)->param_count();
  c.total += model.norm->weight.numel();
  c.active += model.norm->weight.numel();
  return c;  // token embedding and output head excluded, as in the papers
}

}  // namespace moxlab
