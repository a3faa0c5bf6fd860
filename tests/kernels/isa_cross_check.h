// The cross-check every kernel test runs on: each ISA variant this CPU has (AVX-512, AVX2 + FMA, portable)
// forced in turn against a reference computed with torch ops in float64, on shapes at the kernels' edges
// (one row, vector and register-tile widths and one past them, tails). The reference lives beside the op's
// test; the harness owns the loop, the tolerance check and the report of what failed where.
#pragma once
#include <cstdint>
#include <sstream>
#include <vector>

#include "kernels/runtime/cpu_features.h"
#include "tests/torch_catch.h"

namespace moxlab::test {

// Runs check() once per ISA this CPU runs, each forced (the variant it names is the one that runs).
template <class F>
void for_each_isa(F&& check) {
  for (const Isa isa : supported_isas()) {
    const ScopedIsa forced(isa);
    INFO("ISA " << isa_name(isa));
    check();
  }
}

inline torch::Tensor d64(const torch::Tensor& t) { return t.to(torch::kDouble); }

// Whether got equals want within |got - want| <= atol + rtol |want| everywhere (in float64); on failure the
// Catch message names the largest error, where it is, and both values.
inline bool close_to(const torch::Tensor& got, const torch::Tensor& want, double rtol, double atol) {
  INFO("shape " << got.sizes() << " vs " << want.sizes());
  if (got.sizes() != want.sizes()) return false;
  const auto g = d64(got).flatten(), w = d64(want).flatten();
  const auto excess = (g - w).abs() - (atol + rtol * w.abs());
  if (g.numel() == 0 || excess.max().item<double>() <= 0) return true;
  const auto at = excess.argmax().item<std::int64_t>();
  UNSCOPED_INFO("worst element " << at << ": got " << g[at].item<double>() << ", want " << w[at].item<double>()
                                 << " (rtol " << rtol << ", atol " << atol << ")");
  return false;
}

// Sizes around the kernels' vector widths (8, 16 floats) and register tiles (6 and 8 rows, 1-3 panels of 16
// columns): 1, each width, one less and one more, and a size of several whole tiles plus a tail.
inline std::vector<std::int64_t> edge_sizes() { return {1, 5, 7, 8, 9, 15, 16, 17, 31, 33, 48, 97}; }

}  // namespace moxlab::test
