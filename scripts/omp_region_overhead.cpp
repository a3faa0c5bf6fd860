// Which phase is this machine in? Times an empty OpenMP parallel region and a small parallel loop with two
// threads. docs/decisions/2026-11-26-paired-timing.md explains the phases; run it next to model timings:
//   g++ -O2 -fopenmp scripts/omp_region_overhead.cpp -o /tmp/omp_region_overhead && /tmp/omp_region_overhead
// Not part of the build: a diagnostic for benchmark runs.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <vector>

int main() {
  omp_set_num_threads(2);
  std::vector<float> a(1 << 16, 1.0f);
  using clock = std::chrono::steady_clock;
  for (int rep = 0; rep < 3; ++rep) {
    constexpr int kRegions = 20000, kLoops = 2000;
    auto t0 = clock::now();
    for (int i = 0; i < kRegions; ++i) {
#pragma omp parallel
      { a[omp_get_thread_num()] += 1; }
    }
    const double region_us = std::chrono::duration<double>(clock::now() - t0).count() / kRegions * 1e6;
    t0 = clock::now();
    for (int i = 0; i < kLoops; ++i) {
#pragma omp parallel for
      for (int j = 0; j < (1 << 16); ++j) a[j] = a[j] * 0.999f + 0.001f;
    }
    const double loop_us = std::chrono::duration<double>(clock::now() - t0).count() / kLoops * 1e6;
    std::printf("empty region %.2f us, 64k-element loop %.2f us\n", region_us, loop_us);
  }
}
