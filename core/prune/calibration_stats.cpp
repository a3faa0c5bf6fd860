#include "core/prune/calibration_stats.h"

#include "core/common/error.h"
#include "core/engine/inference_plan.h"

namespace moxlab {

CalibrationStats calibrate(Transformer& model, const std::vector<torch::Tensor>& batches) {
  require(!batches.empty(), "pruning: no calibration batches");
  const int L = model.options().n_layers;
  model.eval();
  torch::NoGradGuard no_grad;
  std::vector<std::array<torch::Tensor, 4>> sq(L);  // sums of squares per input channel
  std::vector<double> cos_sum(L, 0.0);
  std::int64_t tokens = 0;
  InferencePlan plan(model);
  for (const auto& batch : batches) {
    TapRecorder rec("blocks.*.attn.in,blocks.*.attn.ctx,blocks.*.attn.out,blocks.*.resid.mid,blocks.*.ffn.in,"
                      "blocks.*.ffn.act,blocks.*.resid.out");
    Analysis an;
    an.tap_recorder = &rec;
    const auto inputs = batch.narrow(1, 0, batch.size(1) - 1);
    plan.forward(inputs, {}, &an);
    auto taps = rec.take();
    for (int l = 0; l < L; ++l) {
      const BlockTapNames n(l);
      const std::array<const std::string*, 4> names{&n.attn_in, &n.attn_ctx, &n.ffn_in, &n.ffn_act};
      for (int i = 0; i < 4; ++i) {
        const auto& t = taps.at(*names[i]);
        auto s = t.reshape({-1, t.size(-1)}).to(torch::kDouble).pow(2).sum(0);
        sq[l][i] = sq[l][i].defined() ? sq[l][i] + s : s;
      }
      // The block's input x = h - Attn(x), h = resid.mid; its output is resid.out.
      auto in = (taps.at(n.resid_mid) - taps.at(n.attn_out)).reshape({-1, model.options().dim});
      auto out = taps.at(n.resid_out).reshape({-1, model.options().dim});
      cos_sum[l] += torch::cosine_similarity(in.to(torch::kDouble), out.to(torch::kDouble), 1).sum().item<double>();
    }
    tokens += inputs.numel();
  }
  CalibrationStats s;
  for (int l = 0; l < L; ++l) {
    auto norm = [&](int i) { return sq[l][i].sqrt().to(torch::kFloat); };
    s.norms.push_back({norm(0), norm(1), norm(2), norm(3)});
    s.block_influence.push_back(1.0 - cos_sum[l] / static_cast<double>(tokens));
  }
  return s;
}

}  // namespace moxlab
