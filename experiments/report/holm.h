// Holm's step-down adjustment of p-values for a family of m tests (Holm 1979, "A simple sequentially
// rejective multiple test procedure"): with the p-values sorted ascending, p_(1) <= ... <= p_(m),
//   adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j)).
// Rejecting where the adjusted p is below alpha keeps the chance of any false rejection in the family
// at most alpha, whatever the dependence between the tests. The scorecard adjusts its rows' paired
// t-tests over every row with a result.
#pragma once
#include <vector>

namespace moxlab {

// The adjusted p-values, in the order of `p`; an Error for a value outside [0, 1] (or NaN).
std::vector<double> holm_adjusted(const std::vector<double>& p);

}  // namespace moxlab
