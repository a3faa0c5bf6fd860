#include "experiments/report/paired_difference.h"

#include <cmath>

#include "core/common/error.h"

namespace moxlab {

namespace {

// The continued fraction of the incomplete beta function (modified Lentz), converging for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < kTiny ? kTiny : d);
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    for (int half = 0; half < 2; ++half) {
      const double num = half == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                   : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + num * d;
      d = 1 / (std::abs(d) < kTiny ? kTiny : d);
      c = 1 + num / c;
      if (std::abs(c) < kTiny) c = kTiny;
      h *= d * c;
      if (half == 1 && std::abs(d * c - 1) < 1e-15) return h;
    }
  }
  return h;
}

// I_x(a, b), the regularised incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double t_cdf(double t, int dof) {
  const double tail = incomplete_beta(dof / 2.0, 0.5, dof / (dof + t * t)) / 2;
  return t >= 0 ? 1 - tail : tail;
}

}  // namespace

double t_quantile_975(int dof) {
  if (dof < 1) throw Error("t quantile: needs at least 1 degree of freedom, got " + std::to_string(dof));
  double lo = 0, hi = 1000;  // t(0.975, 1) = 12.7
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = (lo + hi) / 2;
    (t_cdf(mid, dof) < 0.975 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double two_sided_p(const PairedDifference& d) {
  if (d.n < 2) throw Error("two-sided p: needs at least 2 paired seeds, got " + std::to_string(d.n));
  if (d.sd == 0) return d.mean == 0 ? 1.0 : 0.0;
  const double t = std::abs(d.mean) / (d.sd / std::sqrt(static_cast<double>(d.n)));
  return 2 * (1 - t_cdf(t, d.n - 1));
}

PairedDifference paired_difference(const std::vector<double>& method, const std::vector<double>& reference) {
  if (method.size() != reference.size())
    throw Error("paired difference: " + std::to_string(method.size()) + " method seeds against " + std::to_string(reference.size()) +
                " reference seeds");
  if (method.size() < 2) throw Error("paired difference: needs at least 2 paired seeds, got " + std::to_string(method.size()));
  PairedDifference p;
  p.n = static_cast<int>(method.size());
  for (std::size_t i = 0; i < method.size(); ++i) p.mean += method[i] - reference[i];
  p.mean /= p.n;
  double ss = 0;
  for (std::size_t i = 0; i < method.size(); ++i) ss += std::pow(method[i] - reference[i] - p.mean, 2);
  p.sd = std::sqrt(ss / (p.n - 1));
  const double half = t_quantile_975(p.n - 1) * p.sd / std::sqrt(static_cast<double>(p.n));
  p.low = p.mean - half;
  p.high = p.mean + half;
  return p;
}

Verdict verdict(const PairedDifference& d, int direction) {
  if (direction != -1 && direction != 1) throw Error("verdict: the paper's direction is -1 (lowers) or +1 (raises)");
  if (direction * d.low > 0 && direction * d.high > 0) return Verdict::reproduces;
  if (direction * d.low < 0 && direction * d.high < 0) return Verdict::opposite;
  return Verdict::inconclusive;
}

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::reproduces: return "reproduces";
    case Verdict::opposite: return "opposite";
    case Verdict::inconclusive: return "inconclusive";
  }
  return "inconclusive";
}

}  // namespace moxlab
