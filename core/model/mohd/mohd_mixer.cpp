#include "core/model/mohd/mohd_mixer.h"

#include <ATen/Parallel.h>

#include "core/common/error.h"
#include "core/model/mohd/balance_loss.h"
#include "kernels/fused/packed_matmul.h"
#include "kernels/sparse/monarch_mix.h"

namespace moxlab {

torch::Tensor expand_to_dims(const torch::Tensor& per_sub_dim, int block) {
  return per_sub_dim.repeat_interleave(block, -1);
}

MohdMixerImpl::MohdMixerImpl(int dim, const MohdOptions& o) : dim_(dim), block_(o.sub_dims > 0 ? dim / o.sub_dims : 0), o_(o) {
  require(o.sub_dims >= 1 && dim % o.sub_dims == 0,
          "MoHD: model.dim " + std::to_string(dim) + " is not divisible by sub_dims " + std::to_string(o.sub_dims));
  router = register_module("router", SubDimRouter(dim, o));
  if (o.fusion_groups > 0) monarch = register_module("monarch", Monarch(dim, o.fusion_groups));
}

SubDimRouting MohdMixerImpl::route(const torch::Tensor& x, ForwardContext& ctx, const std::string& name,
                                  const std::string& probs_tap, const std::string& topk_tap) {
  SubDimRouting r = router(x);
  ctx.tap(probs_tap, r.probs);
  if (ctx.tap_recorder) ctx.tap(topk_tap, r.active.to(torch::kFloat));  // the conversion only where taps record
  if (o_.balance_beta > 0 && ctx.aux_losses_wanted) ctx.aux_losses.emplace_back(name, sub_dim_balance_loss(r.probs, o_.shared, o_.balance_beta));
  return r;
}

torch::Tensor MohdMixerImpl::mask_input(const torch::Tensor& x, const SubDimRouting& r) const {
  return x * expand_to_dims(r.active.to(x.dtype()), block_);  // Eq. 8
}

MohdMixerImpl::Sparse MohdMixerImpl::sparse(const SubDimRouting& r) const {
  Sparse s;
  // Inference: each thread's share of the tokens grouped on its own, so the rows a thread's products,
  // RoPE, attention and output pass handle are its own tokens (whole batches when B is a multiple of the
  // threads) and no row moves between the cores (kernels/fused/attention.cpp). Training keeps one sort:
  // its torch ops split rows their own way.
  // The grouped layout's products on packed weights also win with many sets of routed blocks (MoHD 75%,
  // 6 of 9 routed: 84 sets; short runs take the union-tile and per-block paths of the packed kernels), at
  // every prompt length measured (docs/decisions/2026-11-26-mohd-short-runs.md). The torch ops of training
  // keep the automatic rule.
  const bool training = torch::GradMode::is_enabled();
  const bool packed = !training && r.weights.is_cpu() && r.weights.scalar_type() == torch::kFloat;
  const std::int64_t parts = training ? 1 : at::get_num_threads();
  s.selection = BlockSelection::from_mask(r.active.reshape({-1, o_.sub_dims}), o_.shared, packed ? "grouped" : "auto", parts);
  s.scale = s.selection.to_rows(r.weights.reshape({-1, o_.sub_dims}));
  return s;
}

std::optional<MohdMixerImpl::Sparse> MohdMixerImpl::sparse_if_wins(const SubDimRouting& r, const ForwardContext& ctx) const {
  if (!ctx.sparse_kernels(true, true)) return std::nullopt;  // reference forced, or taps recorded
  Sparse s = sparse(r);
  // Inference and training alike (docs/decisions/2026-11-25-sparse-forms-and-model-kernels.md).
  const bool wins = s.selection.grouped;
  if (!ctx.sparse_kernels(wins, wins)) return std::nullopt;
  return s;
}

torch::Tensor MohdMixerImpl::folded(const torch::Tensor& w) {
  return folds_.get({w, monarch->b1}, [&] { return monarch->fold_first_factor(w); });
}

torch::Tensor MohdMixerImpl::sparse_output(const torch::Tensor& h, const torch::Tensor& w, const Sparse& s) {
  const auto& sel = s.selection;
  // B1 (w h) block by block = (B1 w) h; inactive blocks stay 0.
  const bool fold = monarch && monarch->can_fold(o_.sub_dims);
  const auto wf = fold ? folded(w) : w;
  if (sel.grouped && packed_applies(h) && (!monarch || fold)) {
    const auto sources = fold ? std::vector<torch::Tensor>{w, monarch->b1} : std::vector<torch::Tensor>{w};
    const auto packed = packed_.get(sources, [&] { return pack_weight_blocks(wf, wf.size(0) / o_.sub_dims); });
    const auto mix = fold ? mix_.get({monarch->b2}, [&] { return monarch_mix_weights(monarch->b2); }) : torch::Tensor();
    return block_sparse_output_to_tokens(h, packed, wf.size(0), sel, s.scale, mix);
  }
  const auto y = block_sparse_output_linear(h, wf, sel, s.scale);
  return sel.from_rows(!monarch ? y : fold ? monarch->second_factor(y) : monarch(y));
}

torch::Tensor MohdMixerImpl::combine(const torch::Tensor& y, const SubDimRouting& r) {
  // ||_i g_i Dim_i(x_s) (Eq. 8) times alpha = N * sum of the active gates (Sec. 4.2, SubDimRouting::weights).
  auto weighted = y * expand_to_dims(r.weights, block_);
  return monarch ? monarch(weighted) : weighted;  // Eq. 9-10
}

ParamCount MohdMixerImpl::wrap(const ParamCount& inner) const {
  ParamCount c;
  std::int64_t own = 0;
  for (const auto& p : parameters()) own += p.numel();
  c.total = inner.total + own;
  c.active = inner.total * o_.active / o_.sub_dims + own;
  return c;
}

}  // namespace moxlab
