#include "viewer/model/ticks.h"

#include <cmath>
#include <cstdio>

namespace moxlab::viewer {

namespace {

double nice_step(double range, int max_ticks) {
  const double raw = range / std::max(1, max_ticks - 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double nice = norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10;
  return nice * mag;
}

}  // namespace

std::string tick_label(double value, double step) {
  char buf[64];
  const double mag = std::fabs(value);
  if (value == 0) return "0";
  if (mag >= 1e6 || mag < 1e-4) {
    std::snprintf(buf, sizeof buf, "%.3g", value);
    return buf;
  }
  int decimals = 0;
  if (step > 0 && step < 1) decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  if (decimals > 6) decimals = 6;
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::vector<Tick> linear_ticks(double lo, double hi, int max_ticks) {
  std::vector<Tick> ticks;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    ticks.push_back({lo, tick_label(lo, std::fabs(lo) > 0 ? std::fabs(lo) / 10 : 1)});
    return ticks;
  }
  const double step = nice_step(hi - lo, std::max(2, max_ticks));
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (int i = 0;; ++i) {
    double v = first + i * step;
    if (v > hi + step * 1e-9) break;
    if (std::fabs(v) < step * 1e-9) v = 0;  // avoid "-0.000"
    ticks.push_back({v, tick_label(v, step)});
  }
  return ticks;
}

std::vector<Tick> log_ticks(double lo, double hi, int max_ticks) {
  std::vector<Tick> ticks;
  if (!(lo > 0) || !(hi > 0) || !std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  if (hi < lo) std::swap(lo, hi);
  const int k_lo = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int k_hi = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const int decades = std::max(1, k_hi - k_lo);
  const int every = std::max(1, (decades + max_ticks - 1) / std::max(1, max_ticks));
  const bool minor = decades * 3 <= max_ticks;
  for (int k = k_lo; k <= k_hi; ++k) {
    const double base = std::pow(10.0, k);
    const double mults[3] = {1, 2, 5};
    for (int m = 0; m < (minor ? 3 : 1); ++m) {
      if (m == 0 && (k - k_lo) % every != 0) continue;
      const double v = base * mults[m];
      if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9)) continue;
      ticks.push_back({v, tick_label(v, v)});
    }
  }
  return ticks;
}

}  // namespace moxlab::viewer
