// The machine's practical matmul peak, measured in-process: the denominator of model FLOP
// utilisation (MFU). Square float32 GEMMs through LibTorch's BLAS on the configured threads;
// the best of several timed repeats is the peak (the least disturbed by other load).
#pragma once
#include <string>

namespace moxlab {

struct MatmulPeak {
  double gflops = 0.0;   // best repeat
  double median_gflops = 0.0;
  int size = 0;          // n of the n x n x n GEMM
  int repeats = 0;
};

MatmulPeak measure_matmul_peak(int size = 1024, int repeats = 7, double min_seconds_per_repeat = 0.2);
// The same square product on the project's packed kernels (kernels/fused/packed_matmul.h, the ISA active
// now), the weight packed once: the peak the packed training products run against.
MatmulPeak measure_packed_matmul_peak(int size = 1024, int repeats = 7, double min_seconds_per_repeat = 0.2);

// OpenBLAS's kernel core for this CPU ("Haswell", "SkylakeX", "Prescott": OPENBLAS_CORETYPE, else its
// detection), or "unknown" where LibTorch's BLAS is not OpenBLAS.
std::string blas_core_name();
// The CPU's model name (/proc/cpuinfo), or "unknown".
std::string cpu_model_name();

}  // namespace moxlab
