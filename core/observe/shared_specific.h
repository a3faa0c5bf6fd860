// MoHD Fig. 5: shared versus token-specific high dimensions over 5 consecutive tokens ("about 400 of
// 4096 dimensions are high in all 5 tokens, about 200 per token are high only in that token").
// "High" = in the token's top-p% by x^2 (K = ceil(p/100 * d), ties to the lower index; default
// p = 20). For a run of L consecutive tokens (L = 5) each dimension has an L-bit pattern, bit j set
// when it is high in token j of the run. Over all runs (overlapping, one per start row):
//   pattern_counts[b] = mean number of dims with pattern b,
//   all_high          = pattern_counts[2^L - 1]             (high in every token),
//   one_high_total    = sum of pattern_counts[b], popcount(b) = 1   (high in exactly one token),
//   one_high_per_token = one_high_total / L.
// Chance baselines for independent tokens, q = K/d: all = d q^L, exactly one = L d q (1-q)^(L-1).
//
// The example heat map (one run, [L, d] matrix of x^2) orders the dimensions by clustering their
// patterns: groups of equal pattern, the high-in-all group first, then by number of tokens high
// (descending), then by pattern value (ascending; token 0 is bit 0); inside a group by the mean x^2
// over the L tokens, descending (then index).
#pragma once
#include <cstdint>
#include <vector>

#include "core/observe/activation_matrix.h"
#include "core/observe/dim_ranks.h"

namespace moxlab {

struct SharedSpecific {
  int run_len = 5;
  double top_percent = 20;
  std::int64_t high = 0;   // K
  std::int64_t dims = 0;   // d
  std::int64_t runs = 0;   // runs of run_len consecutive tokens
  std::vector<double> pattern_counts;  // [2^run_len]; NaN when runs = 0 (as are the four below)
  double all_high = 0, one_high_total = 0, one_high_per_token = 0;
  double chance_all = 0, chance_one_total = 0;

  // The example run; example_row = -1 and empty vectors when the tap has no run of run_len tokens.
  std::int64_t example_row = -1;
  std::vector<float> example_magnitude;  // [run_len, d] x^2, dimensions in their original order
  std::vector<std::int32_t> order;       // [d] dimension indices, clustered (the heat map's columns)
  std::vector<std::int32_t> pattern;     // [d] pattern of each dimension (original order)
};

// example_row: start row of the example run (-1: the first run); it must start a run of run_len.
SharedSpecific shared_specific(const ActivationMatrix& x, const DimRanks& ranks,
                               const std::vector<std::int32_t>& run_length, double top_percent = 20,
                               int run_len = 5, std::int64_t example_row = -1);

// The clustered order of dimensions given their patterns and mean magnitudes (rules above).
std::vector<std::int32_t> cluster_order(const std::vector<std::int32_t>& pattern,
                                        const std::vector<double>& mean_magnitude);

}  // namespace moxlab
