#include "core/prune/layer_pruning.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/common/error.h"
#include "core/prune/dense_layers.h"

namespace moxlab {

std::vector<int> blocks_to_remove(const std::vector<double>& block_influence, double ratio) {
  require(ratio > 0 && ratio <= 1, "pruning: active ratio must be in (0, 1], got " + std::to_string(ratio));
  const int L = static_cast<int>(block_influence.size());
  const int n = static_cast<int>(std::lround((1.0 - ratio) * L));
  std::vector<int> order(L);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return block_influence[a] < block_influence[b]; });
  std::vector<int> out(order.begin(), order.begin() + std::min(n, L - 1));  // keep at least one block
  std::sort(out.begin(), out.end());
  return out;
}

void remove_blocks(Transformer& model, const std::vector<int>& blocks) {
  torch::NoGradGuard no_grad;
  for (int l : blocks) {
    require(l >= 0 && l < model.options().n_layers, "pruning: no block " + std::to_string(l));
    dense_attention(model, l).wo->weight.zero_();
    dense_swiglu(model, l).w2->weight.zero_();
  }
}

}  // namespace moxlab
