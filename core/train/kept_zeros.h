// train.keep_pruned: the exact zeros of a statically pruned start (core/prune zeroes every weight of a
// removed structure) are captured once and restored after each optimiser step, so tuning the pruned model
// keeps its structure (its active-parameter count) instead of regrowing what pruning removed. Needed for
// 2:4 (each zero has its own gradient) and ShortGPT (a removed block's zeroed W_O / W_2 get gradients);
// width pruning's zero rows and columns sit at an exact saddle (each one's gradient goes through the
// other's zeros) and would stay zero anyway.
// Header-only: the trainer is its one user (no extra torch translation unit).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace moxlab {

class KeptZeros {
 public:
  KeptZeros() = default;
  // The zero pattern of every matrix parameter (dim >= 2) of `module` that has exact zeros now.
  explicit KeptZeros(torch::nn::Module& module) {
    torch::NoGradGuard no_grad;
    for (auto& p : module.parameters()) {
      if (p.dim() < 2) continue;  // norms and biases are never pruned
      const auto zeros = p.eq(0);
      const std::int64_t n = zeros.sum().item<std::int64_t>();
      if (n == 0) continue;
      masks_.emplace_back(p, zeros.logical_not().to(p.dtype()));
      count_ += n;
    }
  }
  // Sets the captured positions back to zero (in place, no autograd).
  void apply() const {
    torch::NoGradGuard no_grad;
    for (const auto& [p, mask] : masks_) p.mul_(mask);
  }
  std::int64_t count() const { return count_; }  // weights held at zero

 private:
  std::vector<std::pair<torch::Tensor, torch::Tensor>> masks_;  // parameter, 1 where it may change
  std::int64_t count_ = 0;
};

}  // namespace moxlab
