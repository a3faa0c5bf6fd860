#include "core/model/tomoe/tomoe_trace.h"

#include "core/common/error.h"
#include "core/model/batch_statistics.h"

namespace moxlab {

namespace {
// Over the batch's tokens (every rank's, in a data-parallel run: batch_statistics.h): the widest token
// of masks [tokens, width] (Eq. 8's d_l) and the union of Eq. 6.
torch::Tensor widest_token(const torch::Tensor& masks) { return batch_max_over_rows(masks.sum(-1)); }
torch::Tensor union_over_tokens(const torch::Tensor& masks) { return 1.0 - batch_product((1.0 - masks).prod(-2)); }
}  // namespace

TomoeShape tomoe_shape(const ModelOptions& o) {
  return TomoeShape{o.dim, o.n_heads, o.n_kv_heads, o.head_dim(), o.resolved_ffn_hidden()};
}

std::vector<LayerWidths> tomoe_widths(const TomoeTrace& trace, const ModelOptions& o) {
  require(static_cast<int>(trace.attention.size()) == o.n_layers && static_cast<int>(trace.mlp.size()) == o.n_layers,
          "ToMoE trace: one entry per layer expected");
  auto full = [](int w) { return torch::scalar_tensor(static_cast<double>(w), torch::kFloat); };
  std::vector<LayerWidths> out;
  for (int l = 0; l < o.n_layers; ++l) {
    const auto& a = trace.attention[l];
    const auto& m = trace.mlp[l];
    LayerWidths w;
    // q/k: the static mask's kept dims, or with per-token noise the widest token's (as the official code).
    w.qk = !a.qk.defined() ? full(o.head_dim())
           : a.qk.dim() > 1 ? widest_token(a.qk.to(torch::kFloat).reshape({-1, a.qk.size(-1)}))
                            : a.qk.to(torch::kFloat).sum();
    w.vo = a.vo.defined() ? widest_token(a.vo.to(torch::kFloat).reshape({-1, a.vo.size(-1)})) : full(o.head_dim());
    w.mlp = m.expert_masks.defined() ? max_width(m.expert_masks.to(torch::kFloat)) : full(o.resolved_ffn_hidden());
    out.push_back(w);
  }
  return out;
}

TomoeRegularisers tomoe_regularisers(const TomoeTrace& trace, const ModelOptions& o) {
  TomoeRegularisers r;
  const TomoeShape shape = tomoe_shape(o);
  const double total = total_parameters(shape, o.n_layers);
  const torch::Tensor active = active_parameters(shape, tomoe_widths(trace, o));
  r.param = parameter_regulariser(active, total, o.tomoe.active);
  r.active_ratio = active.item<double>() / total;
  // Eq. 7 averages over layers; "layers" are the MHA and the MLP layers alike (section 3.4 states Eq. 6 for
  // MHA and says MLP layers are computed "similarly"), so each ToMoE module contributes one union.
  std::vector<torch::Tensor> unions;
  torch::Tensor load;
  int load_layers = 0;
  for (int l = 0; l < o.n_layers; ++l) {
    if (const auto& a = trace.attention[l]; a.vo.defined())
      unions.push_back(union_over_tokens(a.vo.to(torch::kFloat).reshape({-1, a.vo.size(-1)})));  // Eq. 6
    if (const auto& m = trace.mlp[l]; m.expert_masks.defined()) {
      unions.push_back(union_of_masks(m.expert_masks.to(torch::kFloat)));  // Eq. 16 over experts
      auto term = o.tomoe.load_balance == "paper" ? switch_load_balance(m.route, m.probs) : routed_load_balance(m.route);
      load = load.defined() ? load + term : term;
      ++load_layers;
    }
  }
  if (!unions.empty()) r.union_term = union_regulariser(unions);
  if (load_layers > 0) r.load = load / static_cast<double>(load_layers);
  return r;
}

}  // namespace moxlab
