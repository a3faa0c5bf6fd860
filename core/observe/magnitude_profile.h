// Fig. 3 (left) of the MoHD paper: the long tail of hidden-dimension magnitudes m_i = x_i^2 (Eq. 1),
// sorted in descending order, with the cumulative share of the total magnitude held by the largest
// dimensions ("the top 1000 of 4096 dimensions hold 71.96% of the magnitude" in LLaMA2-7B layer 16).
//
// The paper does not say whether dimensions are sorted once for all tokens or per token, so both
// curves are kept:
//   pooled:    M_i = (1/N) sum_t x_{t,i}^2 (per-dimension mean over tokens), sorted descending;
//              pooled_cumshare[j] = (M_(1) + ... + M_(j+1)) / sum_i M_i.
//   per-token: each token's own x_t^2 sorted descending, its cumulative share
//              c_t[j] = (m_t,(1) + ... + m_t,(j+1)) / sum_i m_t,i, averaged over tokens.
// The pooled curve measures which dimensions are large on average (outlier channels); the per-token
// curve measures how concentrated a single token's magnitude is (what a per-token top-k router sees),
// and is always >= the pooled curve at the same k.
#pragma once
#include <cstdint>
#include <vector>

#include "core/observe/activation_matrix.h"

namespace moxlab {

struct MagnitudeProfile {
  std::vector<double> pooled_sorted;    // [d] per-dimension mean of x^2 over tokens, descending
  std::vector<double> pooled_cumshare;  // [d] cumulative share of pooled_sorted (last = 1)
  std::vector<double> token_sorted;     // [d] mean over tokens of each token's x^2 sorted descending
  std::vector<double> token_cumshare;   // [d] mean over tokens of each token's cumulative share
  std::int64_t zero_tokens = 0;         // tokens whose x^2 sums to 0: no share, left out of token_cumshare
};

// One pass over the tokens; O(N d log d). Shares are NaN when every magnitude is zero.
MagnitudeProfile magnitude_profile(const ActivationMatrix& x);

// Share of the total held by the k largest dimensions: cumshare[min(k, d) - 1]; 0 for k <= 0.
double top_k_share(const std::vector<double>& cumshare, std::int64_t k);

// The top half of the dimensions: ceil(d / 2).
std::int64_t top_half(std::int64_t d);

// Default k list for top-k shares: round(d/8), round(d/4) and the paper's "top 1000 of 4096"
// scaled to d, round(1000 d / 4096); clamped to [1, d], ascending, without repeats.
std::vector<std::int64_t> default_top_k(std::int64_t d);

// The reference a per-token share must beat: the share of sum_i x_i^2 held by the largest `fraction`
// of the coordinates of an i.i.d. Gaussian vector, in the large-d limit. With P(|x| > t) = fraction,
// E[x^2; |x| > t] = 2 (t phi(t) + (1 - Phi(t))), so the share is 2 t phi(t) + fraction
// (0.9287 for the top half, 0.7236 for the top quarter): a concentration statistic near these values
// says nothing about learned structure.
double gaussian_top_share(double fraction);

}  // namespace moxlab
