#include "experiments/bench/fma_peak.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "kernels/fused/float_vectors.h"

namespace moxlab {

namespace {

constexpr int kChains = 12;  // enough independent multiply-adds to cover the latency of two FMA pipes
constexpr long kRounds = 1 << 20;

// kRounds x kChains multiply-adds of vectors F (8 or 16 floats); the result is returned so the work cannot
// be dropped. a * c + b contracts to one FMA instruction (GCC's default -ffp-contract=fast).
template <class F>
MOXLAB_INLINE float fma_rounds() {
  F c[kChains];
  for (int i = 0; i < kChains; ++i) c[i] = simd::splatv<F>(static_cast<float>(i));
  const F a = simd::splatv<F>(1.0000001f), b = simd::splatv<F>(1e-7f);
  for (long k = 0; k < kRounds; ++k)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) c[i] = a * c[i] + b;
  F s = c[0];
  for (int i = 1; i < kChains; ++i) s += c[i];
  return s[0];
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) float fma_rounds_avx2() { return fma_rounds<simd::f8>(); }
__attribute__((target("avx512f"))) float fma_rounds_avx512() { return fma_rounds<simd::f16>(); }
#endif

// GFLOP/s of `threads` threads each repeating `rounds` (flops per call) for `seconds`.
double all_threads_gflops(float (*rounds)(), double flops_per_call, int threads, double seconds) {
  std::vector<double> rate(static_cast<std::size_t>(threads));
  std::vector<float> sink(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const auto t0 = std::chrono::steady_clock::now();
      double elapsed = 0;
      long calls = 0;
      do {
        sink[static_cast<std::size_t>(t)] += rounds();
        ++calls;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } while (elapsed < seconds);
      rate[static_cast<std::size_t>(t)] = calls * flops_per_call / elapsed / 1e9;
    });
  for (auto& th : pool) th.join();
  double total = 0;
  for (double r : rate) total += r;
  return total;
}

}  // namespace

FmaPeak measure_fma_peak(int threads, double seconds) {
  FmaPeak p;
  p.threads = std::max(1, threads);
#if defined(__x86_64__)
  __builtin_cpu_init();
  const double flops = 2.0 * kRounds * kChains;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    p.avx2_gflops = all_threads_gflops(fma_rounds_avx2, flops * 8, p.threads, seconds);
  if (__builtin_cpu_supports("avx512f")) p.avx512_gflops = all_threads_gflops(fma_rounds_avx512, flops * 16, p.threads, seconds);
#else
  (void)seconds;
#endif
  return p;
}

}  // namespace moxlab
