// Hidden-dimension sparsity, MoHD Eq. 2 and Fig. 3 (middle):
//   Sparsity(x) = (1/d) sum_i 1(x_i^2 < eps)
// the fraction of a token's dimensions whose magnitude x_i^2 (Eq. 1; the paper's Eq. 2 applies the
// threshold to "the squared activation value") is below eps, averaged over the N tokens. Every
// token has the same d, so the average equals (number of elements with x^2 < eps) / (N d).
//
// The paper does not give eps. Default 0.01, i.e. |x| < 0.1: the paper reports input medians of x^2
// above 1 and output medians below 0.5, and reads sparsity as differing between attention and FFN
// outputs, so eps must sit well below the input level (RMSNorm outputs have mean x^2 ~ gain^2 ~ 1,
// where 0.01 is 1% of a typical magnitude: "near zero") while still inside the range of output
// magnitudes. Because the choice is arbitrary, the curve over a log-spaced eps grid is stored too.
#pragma once
#include <vector>

#include "core/observe/activation_matrix.h"

namespace moxlab {

constexpr double kDefaultSparsityEps = 0.01;

// Eq. 2 averaged over tokens, for one threshold.
double sparsity(const ActivationMatrix& x, double eps);

// Eq. 2 averaged over tokens for every threshold of eps_grid (ascending), in one pass over x:
// out[j] = fraction of elements with x^2 < eps_grid[j].
std::vector<double> sparsity_curve(const ActivationMatrix& x, const std::vector<double>& eps_grid);

// n thresholds log-spaced from lo to hi inclusive: lo * (hi/lo)^(j/(n-1)). Default 1e-6..1e2, 33
// points (4 per decade).
std::vector<double> log_eps_grid(double lo = 1e-6, double hi = 1e2, int n = 33);

}  // namespace moxlab
