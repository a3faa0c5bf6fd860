#include "core/prune/semi_structured.h"

#include "core/common/error.h"
#include "core/prune/dense_layers.h"

namespace moxlab {

torch::Tensor n_m_mask(const torch::Tensor& score, int n, int m) {
  require(score.dim() == 2 && m > 0 && n >= 0 && n < m, "n:m pruning: bad pattern or score shape");
  require(score.size(1) % m == 0, "n:m pruning: input width " + std::to_string(score.size(1)) + " is not a multiple of " +
                                      std::to_string(m));
  auto groups = score.reshape({score.size(0), -1, m});
  auto drop = std::get<1>(groups.topk(n, -1, /*largest=*/false));
  return torch::ones_like(groups).scatter(-1, drop, 0.0).reshape(score.sizes());
}

void prune_n_m(Transformer& model, const CalibrationStats& stats, int n, int m) {
  torch::NoGradGuard no_grad;
  for (int l = 0; l < model.options().n_layers; ++l) {
    auto* a = &dense_attention(model, l);
    auto* f = &dense_swiglu(model, l);
    const auto& x = stats.norms.at(l);
    for (auto [lin, norm] : {std::pair<torch::nn::Linear*, const torch::Tensor*>{&a->wq, &x.attn_in}, {&a->wk, &x.attn_in},
                             {&a->wv, &x.attn_in}, {&a->wo, &x.attn_ctx}, {&f->w1, &x.ffn_in}, {&f->w3, &x.ffn_in},
                             {&f->w2, &x.ffn_act}}) {
      auto& w = (*lin)->weight;
      w.mul_(n_m_mask(w.abs() * norm->unsqueeze(0), n, m).to(w.dtype()));
    }
  }
}

}  // namespace moxlab
