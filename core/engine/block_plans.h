// The blocks of a decoder or a ViT as the engine runs them: one attention and one FFN plan per block (from
// the engine's kind registry, core/engine/plan_kinds.h), each residual add fused into the RMSNorm after
// it, the last block's left apart (what follows may read only the last position).
#pragma once
#include <memory>
#include <vector>

#include "core/engine/layer_plan.h"
#include "core/model/block.h"

namespace moxlab::engine {

class BlockPlans {
 public:
  BlockPlans(torch::nn::ModuleList& blocks, const ModelOptions& o);
  // x [B, T, dim] through every block; layers: one LayerIO per block.
  torch::Tensor forward(torch::Tensor x, const Rope& rope, Analysis& an, std::vector<LayerIO>& layers, KvCache* cache, Form form);
  AttentionPlan& attention(int layer) { return *attention_[layer]; }
  FeedForwardPlan& feed_forward(int layer) { return *ffn_[layer]; }

 private:
  torch::nn::ModuleList& blocks_;
  std::vector<std::unique_ptr<AttentionPlan>> attention_;
  std::vector<std::unique_ptr<FeedForwardPlan>> ffn_;
};

}  // namespace moxlab::engine
