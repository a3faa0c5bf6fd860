// Is a router's per-domain difference (RouterDomainStats::spread, core/observe/router_domains.h) more
// than chance gives? Tokens of one capture window share their context, so their routing is correlated:
// a binomial noise floor per token would be far too optimistic. The null keeps every window whole and
// permutes the domain labels across windows (each domain keeps its number of windows); the spread of
// each relabelling is one draw from the spread a domain-blind router would show on this capture.
#pragma once
#include <cstdint>
#include <vector>

namespace moxlab {

struct SpreadNull {
  double observed = 0;       // spread of the capture as labelled
  double q95 = 0;            // 95th percentile of the spread under permuted labels
  double p = 1;              // (1 + #{permuted spread >= observed}) / (1 + permutations)
  int permutations = 0;
  std::int64_t windows = 0;  // windows with tokens
};

// Largest max - min across domains of one sub-dimension's selection fraction; fraction: [domains, n]
// row-major. 0 without domains. RouterDomainStats::spread and the null's draws both use it.
double selection_spread(const std::vector<double>& fraction, std::size_t domains, int n);

// active: [rows, n] row-major (> 0.5 = selected); domain and window: [rows]. Every window must lie in
// one domain. Deterministic for a given seed.
SpreadNull spread_permutation_null(const std::vector<float>& active, std::int64_t rows, int n,
                                   const std::vector<std::int32_t>& domain, const std::vector<std::int32_t>& window,
                                   int permutations, std::uint64_t seed = 1);

}  // namespace moxlab
