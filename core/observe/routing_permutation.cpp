#include "core/observe/routing_permutation.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "core/common/error.h"

namespace moxlab {

double selection_spread(const std::vector<double>& fraction, std::size_t domains, int n) {
  double best = 0;
  for (int i = 0; i < n && domains > 0; ++i) {
    double lo = 1, hi = 0;
    for (std::size_t d = 0; d < domains; ++d) {
      lo = std::min(lo, fraction[d * n + i]);
      hi = std::max(hi, fraction[d * n + i]);
    }
    best = std::max(best, hi - lo);
  }
  return best;
}

namespace {

// Spread of windows labelled `label`: selected [W, n] and tokens [W] are per-window counts.
double labelled_spread(const std::vector<double>& selected, const std::vector<double>& tokens,
                       const std::vector<int>& label, int domains, int n) {
  std::vector<double> sel(static_cast<std::size_t>(domains) * n, 0), tok(domains, 0);
  for (std::size_t w = 0; w < label.size(); ++w) {
    tok[label[w]] += tokens[w];
    for (int i = 0; i < n; ++i) sel[label[w] * n + i] += selected[w * n + i];
  }
  for (int d = 0; d < domains; ++d)
    for (int i = 0; i < n; ++i) sel[d * n + i] /= tok[d];
  return selection_spread(sel, static_cast<std::size_t>(domains), n);
}

}  // namespace

SpreadNull spread_permutation_null(const std::vector<float>& active, std::int64_t rows, int n,
                                   const std::vector<std::int32_t>& domain, const std::vector<std::int32_t>& window,
                                   int permutations, std::uint64_t seed) {
  require(n >= 1 && rows >= 0 && active.size() == static_cast<std::size_t>(rows * n) &&
              domain.size() == static_cast<std::size_t>(rows) && window.size() == domain.size(),
          "routing permutation null: router taps, /domain and /window disagree in size");
  require(permutations >= 1, "routing permutation null: needs at least one permutation");
  // Windows in first-seen order, each with its domain, token count and selection counts.
  std::map<std::int32_t, std::size_t> index;
  std::vector<double> selected, tokens;
  std::vector<int> label;
  std::map<std::int32_t, int> domain_index;
  for (std::int64_t t = 0; t < rows; ++t) {
    const auto [it, fresh] = index.emplace(window[t], label.size());
    const int d = domain_index.emplace(domain[t], static_cast<int>(domain_index.size())).first->second;
    if (fresh) {
      label.push_back(d);
      tokens.push_back(0);
      selected.resize(selected.size() + n, 0);
    }
    require(label[it->second] == d, "routing permutation null: window " + std::to_string(window[t]) +
                                        " holds tokens of two domains");
    tokens[it->second] += 1;
    for (int i = 0; i < n; ++i) selected[it->second * n + i] += active[t * n + i] > 0.5f ? 1.0 : 0.0;
  }
  const int domains = static_cast<int>(domain_index.size());
  SpreadNull out;
  out.windows = static_cast<std::int64_t>(label.size());
  out.permutations = permutations;
  if (domains < 2) return out;  // one domain: nothing to tell apart, spread 0, p 1
  out.observed = labelled_spread(selected, tokens, label, domains, n);
  std::mt19937_64 rng(seed);
  std::vector<double> draws(permutations);
  std::vector<int> shuffled = label;
  int at_least = 0;
  for (int k = 0; k < permutations; ++k) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    draws[k] = labelled_spread(selected, tokens, shuffled, domains, n);
    // A relabelling that reproduces the observed partition must count, whatever the rounding.
    if (draws[k] >= out.observed - 1e-12) ++at_least;
  }
  std::sort(draws.begin(), draws.end());
  out.q95 = draws[std::min<std::size_t>(draws.size() - 1, static_cast<std::size_t>(0.95 * permutations))];
  out.p = (1.0 + at_least) / (1.0 + permutations);
  return out;
}

}  // namespace moxlab
