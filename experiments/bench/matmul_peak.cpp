#include "experiments/bench/matmul_peak.h"

#include <algorithm>
#include <vector>

#include <torch/torch.h>

#include "experiments/bench/timing.h"

namespace moxlab {

MatmulPeak measure_matmul_peak(int size, int repeats, double min_seconds_per_repeat) {
  torch::NoGradGuard ng;
  auto a = torch::randn({size, size});
  auto b = torch::randn({size, size});
  auto c = torch::mm(a, b);  // warm-up: BLAS thread pool and caches
  const double flop = 2.0 * size * size * static_cast<double>(size);
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r)
    rates.push_back(flop / seconds_per_call([&] { torch::mm_out(c, a, b); }, min_seconds_per_repeat) / 1e9);
  MatmulPeak p;
  p.gflops = *std::max_element(rates.begin(), rates.end());
  p.median_gflops = median(rates);
  p.size = size;
  p.repeats = repeats;
  return p;
}

}  // namespace moxlab
