#include "kernels/matmul_peak.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include <torch/torch.h>

namespace moxlab {

MatmulPeak measure_matmul_peak(int size, int repeats, double min_seconds_per_repeat) {
  torch::NoGradGuard ng;
  auto a = torch::randn({size, size});
  auto b = torch::randn({size, size});
  auto c = torch::mm(a, b);  // warm-up: BLAS thread pool and caches
  const double flop = 2.0 * size * size * static_cast<double>(size);
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    int iters = 0;
    auto t0 = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
      torch::mm_out(c, a, b);
      ++iters;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (elapsed < min_seconds_per_repeat);
    rates.push_back(flop * iters / elapsed / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  MatmulPeak p;
  p.gflops = rates.back();
  p.median_gflops = rates[rates.size() / 2];
  p.size = size;
  p.repeats = repeats;
  return p;
}

}  // namespace moxlab
