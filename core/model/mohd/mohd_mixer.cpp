#include "core/model/mohd/mohd_mixer.h"

#include "core/common/error.h"
#include "core/model/mohd/balance_loss.h"

namespace moxlab {

torch::Tensor expand_to_dims(const torch::Tensor& per_sub_dim, int block) {
  return per_sub_dim.repeat_interleave(block, -1);
}

MohdMixerImpl::MohdMixerImpl(int dim, const MohdOptions& o) : dim_(dim), block_(o.sub_dims > 0 ? dim / o.sub_dims : 0), o_(o) {
  require(o.sub_dims >= 1 && dim % o.sub_dims == 0,
          "MoHD: model.dim " + std::to_string(dim) + " is not divisible by sub_dims " + std::to_string(o.sub_dims));
  router = register_module("router", SubDimRouter(dim, o));
  if (o.fusion_groups > 0) monarch = register_module("monarch", Monarch(dim, o.fusion_groups, o.fusion_init == "identity"));
}

SubDimRouting MohdMixerImpl::route(const torch::Tensor& x, Analysis& an, const std::string& name,
                                  const std::string& probs_tap, const std::string& topk_tap) {
  SubDimRouting r = router(x);
  record(r, an, name, probs_tap, topk_tap);
  return r;
}

void MohdMixerImpl::record(const SubDimRouting& r, Analysis& an, const std::string& name, const std::string& probs_tap,
                           const std::string& topk_tap) const {
  an.tap(probs_tap, r.probs);
  if (an.tap_recorder) an.tap(topk_tap, r.active.to(torch::kFloat));  // the conversion only where taps record
  if (o_.balance_beta > 0 && an.aux_losses_wanted) an.aux_losses.emplace_back(name, sub_dim_balance_loss(r.probs, o_.shared, o_.balance_beta));
}

torch::Tensor MohdMixerImpl::mask_input(const torch::Tensor& x, const SubDimRouting& r) const {
  return x * expand_to_dims(r.active.to(x.dtype()), block_);  // Eq. 8
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
