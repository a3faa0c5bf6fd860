// A paired comparison over seeds, the evidence standard of docs/reproduction: a method and its reference
// trained with the same seeds (the same data order and initial draw), the per-seed differences
// d_i = method_i - reference_i, their mean, sample standard deviation (n - 1) and the 95% t-interval
// mean +- t(0.975, n - 1) sd / sqrt(n); the verdict reads the interval against the direction the paper
// claims: wholly on its side "reproduces", wholly on the other "opposite", across zero "inconclusive".
#pragma once
#include <string>
#include <vector>

namespace moxlab {

struct PairedDifference {
  int n = 0;
  double mean = 0, sd = 0, low = 0, high = 0;  // low / high: the 95% interval of the mean difference
};

// method[i] and reference[i] are seed i's; an Error unless both have the same size, at least 2.
PairedDifference paired_difference(const std::vector<double>& method, const std::vector<double>& reference);

// The paired t-test's two-sided p-value for a mean difference of 0: 2 (1 - F(|t|)) with t = mean / (sd /
// sqrt(n)) and n - 1 degrees of freedom, so p < 0.05 exactly when the 95% interval excludes 0. With sd 0,
// p is 0 for a nonzero mean and 1 for a zero one.
double two_sided_p(const PairedDifference& d);

// The 0.975 quantile of Student's t with `dof` >= 1 degrees of freedom (bisection on the CDF, which is the
// regularised incomplete beta function: F(t) = 1 - I_{dof / (dof + t^2)}(dof / 2, 1 / 2) / 2 for t > 0).
double t_quantile_975(int dof);

enum class Verdict { reproduces, opposite, inconclusive };
// direction: -1 when the paper says the method lowers the metric (a loss), +1 when it raises it.
Verdict verdict(const PairedDifference& d, int direction);
std::string verdict_name(Verdict v);

}  // namespace moxlab
