#include "core/engine/training_forms.h"
#include "core/prune/width_pruning.h"

#include <cmath>

#include "core/common/error.h"
#include "core/model/tomoe/head_dim_masks.h"
#include "core/model/tomoe/tomoe_trace.h"
#include "core/prune/dense_layers.h"

namespace moxlab {

namespace {
// Rows of a [heads * hd, in] matrix grouped by head dimension: [hd] sums over heads and inputs.
torch::Tensor per_head_dim_rows(const torch::Tensor& imp, int hd) { return imp.reshape({-1, hd, imp.size(1)}).sum(std::vector<std::int64_t>{0, 2}); }
// Columns of a [out, heads * hd] matrix grouped by head dimension.
torch::Tensor per_head_dim_cols(const torch::Tensor& imp, int hd) { return imp.reshape({imp.size(0), -1, hd}).sum(std::vector<std::int64_t>{0, 1}); }
}  // namespace

std::vector<LayerImportance> magnitude_importance(Transformer& model) {
  std::vector<LayerImportance> out;
  for (int l = 0; l < model.options().n_layers; ++l) {
    auto& a = dense_attention(model, l);
    auto& f = dense_swiglu(model, l);
    auto sq = [](const torch::nn::Linear& lin) { return lin->weight.detach().to(torch::kDouble).pow(2); };
    out.push_back({sq(a.wq), sq(a.wk), sq(a.wv), sq(a.wo), sq(f.w1), sq(f.w2), sq(f.w3)});
  }
  return out;
}

std::vector<LayerImportance> wanda_importance(Transformer& model, const CalibrationStats& stats) {
  require(static_cast<int>(stats.norms.size()) == model.options().n_layers, "pruning: calibration has the wrong layer count");
  std::vector<LayerImportance> out;
  for (int l = 0; l < model.options().n_layers; ++l) {
    auto& a = dense_attention(model, l);
    auto& f = dense_swiglu(model, l);
    const auto& n = stats.norms[l];
    auto score = [](const torch::nn::Linear& lin, const torch::Tensor& x_norm) {  // |W_ij| ||X_j||
      return lin->weight.detach().to(torch::kDouble).abs() * x_norm.to(torch::kDouble).unsqueeze(0);
    };
    out.push_back({score(a.wq, n.attn_in), score(a.wk, n.attn_in), score(a.wv, n.attn_in), score(a.wo, n.attn_ctx),
                   score(f.w1, n.ffn_in), score(f.w2, n.ffn_act), score(f.w3, n.ffn_in)});
  }
  return out;
}

std::vector<LayerImportance> taylor_importance(Transformer& model, const std::vector<torch::Tensor>& batches) {
  require(!batches.empty(), "pruning: no calibration batches");
  model.eval();
  model.zero_grad();
  const TrainingForms forms = training_forms(model.blocks, model.options(), Form::automatic);
  for (const auto& b : batches) {  // dL/dW summed over batches (next-token loss of each batch)
    auto x = b.narrow(1, 0, b.size(1) - 1), y = b.narrow(1, 1, b.size(1) - 1);
    Analysis an;
    an.aux_losses_wanted = false;
    forms.lm_loss(model.forward(x, an, forms.pass()), y).backward();
  }
  std::vector<LayerImportance> out;
  for (int l = 0; l < model.options().n_layers; ++l) {
    auto& a = dense_attention(model, l);
    auto& f = dense_swiglu(model, l);
    auto score = [](const torch::nn::Linear& lin) {
      return (lin->weight.detach().to(torch::kDouble) * lin->weight.grad().to(torch::kDouble)).abs();
    };
    out.push_back({score(a.wq), score(a.wk), score(a.wv), score(a.wo), score(f.w1), score(f.w2), score(f.w3)});
  }
  model.zero_grad();
  return out;
}

std::vector<LayerScores> structure_scores(const std::vector<LayerImportance>& importance, const ModelOptions& o) {
  const int hd = o.head_dim();
  std::vector<LayerScores> out;
  for (const auto& i : importance) {
    LayerScores s;
    auto qk = per_head_dim_rows(i.wq, hd) + per_head_dim_rows(i.wk, hd);
    s.qk_pairs = qk.reshape({hd / 2, 2}).sum(1);  // interleaved RoPE pairs (2i, 2i+1)
    s.vo_dims = per_head_dim_rows(i.wv, hd) + per_head_dim_cols(i.wo, hd);
    s.channels = i.w1.sum(1) + i.w3.sum(1) + i.w2.sum(0);
    out.push_back(s);
  }
  return out;
}

std::vector<LayerKeep> keep_best(const std::vector<LayerScores>& scores, double ratio) {
  require(ratio > 0 && ratio <= 1, "pruning: active ratio must be in (0, 1], got " + std::to_string(ratio));
  auto keep = [ratio](const torch::Tensor& s) {
    const int k = std::max<int>(1, static_cast<int>(std::lround(ratio * s.size(0))));
    return top_k_mask(s.to(torch::kFloat), k);
  };
  std::vector<LayerKeep> out;
  for (const auto& s : scores) out.push_back({rope_pair_mask(keep(s.qk_pairs)), keep(s.vo_dims), keep(s.channels)});
  return out;
}

void apply_width_pruning(Transformer& model, const std::vector<LayerKeep>& keep) {
  const ModelOptions& o = model.options();
  require(static_cast<int>(keep.size()) == o.n_layers, "pruning: one keep mask per layer expected");
  torch::NoGradGuard no_grad;
  for (int l = 0; l < o.n_layers; ++l) {
    auto& a = dense_attention(model, l);
    auto& f = dense_swiglu(model, l);
    const auto& k = keep[l];
    auto rows = [](torch::nn::Linear& lin, const torch::Tensor& m) {  // m over head dims, repeated per head
      lin->weight.mul_(m.repeat(lin->weight.size(0) / m.size(0)).unsqueeze(1));
      if (lin->bias.defined()) lin->bias.mul_(m.repeat(lin->bias.size(0) / m.size(0)));
    };
    rows(a.wq, k.qk);
    rows(a.wk, k.qk);
    rows(a.wv, k.vo);
    a.wo->weight.mul_(k.vo.repeat(a.wo->weight.size(1) / k.vo.size(0)).unsqueeze(0));
    f.w1->weight.mul_(k.mlp.unsqueeze(1));
    f.w3->weight.mul_(k.mlp.unsqueeze(1));
    f.w2->weight.mul_(k.mlp.unsqueeze(0));
  }
}

double width_active_ratio(const ModelOptions& o, const std::vector<LayerKeep>& keep) {
  std::vector<LayerWidths> widths;
  for (const auto& k : keep) widths.push_back({k.qk.sum(), k.vo.sum(), k.mlp.sum()});
  const TomoeShape shape = tomoe_shape(o);
  return active_parameters(shape, widths).item<double>() / total_parameters(shape, o.n_layers);
}

}  // namespace moxlab
