// The machine's floating-point peak, measured: float32 multiply-adds with no memory traffic (twelve
// independent chains per thread, every thread at once), once with 8-wide AVX2 and once with 16-wide
// AVX-512 registers. Next to the GEMM peak (matmul_peak.h) it says what a matmul library leaves on the
// table: Debian's OpenBLAS 0.3.21 runs its AVX2 (Haswell) kernel on this Zen 5 CPU, whose AVX-512
// multiply-adds do twice the work per cycle (docs/decisions/2026-11-26-avx512-tiles-and-openblas-coretype.md).
// x86-64 only; 0 where an ISA is missing.
#pragma once

namespace moxlab {

struct FmaPeak {
  double avx2_gflops = 0, avx512_gflops = 0;  // all threads together
  int threads = 0;
};

FmaPeak measure_fma_peak(int threads, double seconds = 0.2);

}  // namespace moxlab
