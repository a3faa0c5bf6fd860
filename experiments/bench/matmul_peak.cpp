#include "experiments/bench/matmul_peak.h"

#include <dlfcn.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <vector>

#include <torch/torch.h>

#include "experiments/bench/timing.h"
#include "kernels/fused/packed_matmul.h"

namespace moxlab {

namespace {

// The best and median GFLOP/s of `repeats` timed runs of an n^3 product.
MatmulPeak peak_of(const std::function<void()>& run, int size, int repeats, double min_seconds_per_repeat) {
  run();  // warm-up: thread pool and caches
  const double flop = 2.0 * size * size * static_cast<double>(size);
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) rates.push_back(flop / seconds_per_call(run, min_seconds_per_repeat) / 1e9);
  MatmulPeak p;
  p.gflops = *std::max_element(rates.begin(), rates.end());
  p.median_gflops = median(rates);
  p.size = size;
  p.repeats = repeats;
  return p;
}

}  // namespace

MatmulPeak measure_matmul_peak(int size, int repeats, double min_seconds_per_repeat) {
  torch::NoGradGuard ng;
  const auto a = torch::randn({size, size}), b = torch::randn({size, size});
  auto c = torch::empty({size, size});
  return peak_of([&] { torch::mm_out(c, a, b); }, size, repeats, min_seconds_per_repeat);
}

MatmulPeak measure_packed_matmul_peak(int size, int repeats, double min_seconds_per_repeat) {
  torch::NoGradGuard ng;
  const auto a = torch::randn({size, size});
  const auto packed = pack_weight(torch::randn({size, size}));
  const PackedWeight w = packed_weight(packed, size);
  auto c = torch::empty({size, size});
  return peak_of([&] { parallel_packed_matmul(row_map(a), size, w, row_map(c)); }, size, repeats, min_seconds_per_repeat);
}

std::string blas_core_name() {
  using CoreName = char* (*)();
  const auto f = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = f ? f() : nullptr;
  return name ? name : "unknown";
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto at = line.find(':');
      if (at != std::string::npos) return line.substr(line.find_first_not_of(' ', at + 1));
    }
  return "unknown";
}

}  // namespace moxlab
