// `moxlab bench matmul`: the packed-weight products (kernels/fused/packed_matmul.h; the best kernel the CPU
// has, and the AVX2 one beside it where that is AVX-512) against torch::mm at a model's product shapes, on one thread (the row-local inference passes run every product single-threaded
// on a thread's own rows), interleaved within each repeat in one process. Shapes: Q/K/V stacked, W_O,
// W_O with each row keeping a random half of the head dims (ToMoE's v/o mask; packed:
// head_dim_masked_matmul, kernels/fused/head_dim_masked_matmul.h, multiplying the kept dims only; torch:
// the masked input whole), SwiGLU's gate and up (torch: one product of the stacked matrix, then the fused
// activation; packed: one product straight to the activation) and W_down, each at several row counts (a
// thread's share of a prefill, an expert's or a routed group's rows, one decode token). GFLOP/s count
// 2 x rows x in x out per matrix (for the masked W_O the whole product's, so its rate is the dense-equivalent).
#pragma once
#include <string>
#include <vector>

#include "core/model/model_options.h"

namespace moxlab {

struct MatmulBenchOptions {
  std::vector<int> rows{1, 64, 128, 512};
  int repeats = 7;
  double min_seconds = 0.1;
};

struct MatmulTiming {
  std::string what;  // "W_O 384 -> 384"
  int rows = 0;
  double flops = 0;                    // per call
  double packed_ms = 0, torch_ms = 0;  // medians; packed: the best kernel the CPU has
  double avx2_ms = 0;                  // the AVX2 kernel, where the best is AVX-512 (else 0)
};

std::vector<MatmulTiming> run_matmul_bench(const ModelOptions& m, const MatmulBenchOptions& o);
std::string format_matmul_bench(const std::vector<MatmulTiming>& rows);

}  // namespace moxlab
