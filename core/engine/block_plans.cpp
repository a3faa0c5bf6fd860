#include "core/engine/block_plans.h"

#include "core/engine/ops.h"
#include "core/engine/plan_kinds.h"

namespace moxlab::engine {

BlockPlans::BlockPlans(torch::nn::ModuleList& blocks, const ModelOptions& o) : blocks_(blocks) {
  const auto& attention = find_plan_kind(o.attention);
  const auto& ffn = find_plan_kind(o.ffn);
  for (std::size_t l = 0; l < blocks->size(); ++l) {
    auto& block = *blocks->ptr<BlockImpl>(l);
    attention_.push_back(attention.attention(*block.attn));
    ffn_.push_back(ffn.ffn(*block.ffn));
  }
}

torch::Tensor BlockPlans::forward(torch::Tensor x, const Rope& rope, Analysis& an, std::vector<LayerIO>& layers, KvCache* cache,
                                  Form form) {
  if (blocks_->is_empty()) return x;
  const auto& first = *blocks_->ptr<BlockImpl>(0)->attn_norm;
  torch::Tensor x_normed = rms_norm(x, first.weight, first.eps());
  for (std::size_t l = 0; l < blocks_->size(); ++l) {
    auto& block = *blocks_->ptr<BlockImpl>(l);
    Step step{rope, an, block.taps, layers[l], cache, form};
    const auto [h, h_normed] =
        add_rms_norm(x, block.scale_attention(attention_[l]->forward(x_normed, step)), block.ffn_norm->weight, block.ffn_norm->eps());
    an.tap(block.taps.resid_mid, h);
    const auto f = block.scale_ffn(ffn_[l]->forward(h_normed, step));
    if (l + 1 < blocks_->size()) {
      const auto& next = *blocks_->ptr<BlockImpl>(l + 1)->attn_norm;
      std::tie(x, x_normed) = add_rms_norm(h, f, next.weight, next.eps());
    } else {
      x = h + f;
    }
    an.tap(block.taps.resid_out, x);
  }
  return x;
}

}  // namespace moxlab::engine
