#include "experiments/bench/matmul_peak.h"

#include <algorithm>
#include <fstream>
#include <vector>

#include <torch/torch.h>

#include "experiments/bench/timing.h"
#include "kernels/fused/packed_matmul.h"

#include <dlfcn.h>

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

MatmulPeak measure_packed_matmul_peak(int size, int repeats, double min_seconds_per_repeat) {
  torch::NoGradGuard ng;
  const auto a = torch::randn({size, size});
  const auto packed = pack_weight(torch::randn({size, size}));
  const PackedWeight w = packed_weight(packed, size);
  auto c = torch::empty({size, size});
  const auto run = [&] { parallel_packed_matmul(row_map(a), size, w, row_map(c)); };
  run();
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
