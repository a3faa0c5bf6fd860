#include "experiments/bench/matmul_bench.h"

#include "kernels/runtime/cpu_features.h"

#include <cstdio>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "core/engine/ops.h"
#include "kernels/fused/head_dim_masked_matmul.h"
#include "kernels/fused/packed_matmul.h"
#include "experiments/bench/timing.h"

namespace moxlab {

namespace {

struct Shape {
  std::string name;
  std::int64_t in = 0, out = 0;
  bool swiglu = false;  // out: the hidden width; two matrices
  // > 0: ToMoE's W_O over this many heads, each row keeping a random half of the head dims
  // (head_dim_masked_matmul; torch::mm multiplies the masked input whole).
  std::int64_t masked_heads = 0;
};

MatmulTiming time_case(const Shape& s, int rows, const MatmulBenchOptions& o) {
  torch::NoGradGuard no_grad;
  auto x = torch::randn({rows, s.in});
  const std::int64_t n = s.swiglu ? 2 * s.out : s.out;
  const auto w = torch::randn({n, s.in}) / std::sqrt(static_cast<double>(s.in));
  const auto packed = s.swiglu         ? packed_weight(pack_swiglu_weight(w.narrow(0, 0, s.out), w.narrow(0, s.out, s.out)), s.out, true)
                      : s.masked_heads ? packed_weight(pack_head_dim_major(w, s.masked_heads), n)
                                       : packed_weight(pack_weight(w), n);
  torch::Tensor mask;
  if (s.masked_heads) {
    const std::int64_t hd = s.in / s.masked_heads;
    mask = torch::zeros({rows, hd}).scatter_(1, std::get<1>(torch::rand({rows, hd}).topk(hd / 2, 1)), 1.0);
    x = (x.view({rows, s.masked_heads, hd}) * mask.view({rows, 1, hd})).view({rows, s.in});
  }
  auto y_torch = torch::empty({rows, n}), y_packed = torch::empty({rows, s.out});
  const auto with_torch = [&] {
    torch::mm_out(y_torch, x, w.t());
    if (s.swiglu) engine::swiglu_activation(y_torch.narrow(1, 0, s.out), y_torch.narrow(1, s.out, s.out));
  };
  const auto with_packed = [&] {
    if (s.masked_heads) head_dim_masked_matmul(row_map(x), rows, packed, s.masked_heads, mask.data_ptr<float>(), mask.size(1), row_map(y_packed));
    else packed_matmul(row_map(x), rows, packed, row_map(y_packed));
  };
  with_torch();
  with_packed();
  const auto expect = s.swiglu ? y_torch.narrow(1, 0, s.out) : y_torch;
  TORCH_CHECK(torch::allclose(y_packed, expect, 1e-3, 1e-3), "bench matmul: the packed product differs from torch::mm for ", s.name);
  const bool avx2_too = active_isa() == Isa::avx512;
  std::vector<double> p, t, p2;
  for (int i = 0; i < o.repeats; ++i) {
    p.push_back(1e3 * seconds_per_call(with_packed, o.min_seconds));
    t.push_back(1e3 * seconds_per_call(with_torch, o.min_seconds));
    if (!avx2_too) continue;
    const ScopedIsa avx2(Isa::avx2);
    p2.push_back(1e3 * seconds_per_call(with_packed, o.min_seconds));
  }
  MatmulTiming r;
  r.what = s.name + " " + std::to_string(s.in) + " -> " + std::to_string(n);
  r.rows = rows;
  r.flops = 2.0 * rows * s.in * n;
  r.packed_ms = median(p);
  r.torch_ms = median(t);
  r.avx2_ms = median(p2);
  return r;
}

}  // namespace

std::vector<MatmulTiming> run_matmul_bench(const ModelOptions& m, const MatmulBenchOptions& o) {
  const int threads = at::get_num_threads();
  at::set_num_threads(1);  // as inside the row-local passes
  const std::int64_t d = m.dim, kv = static_cast<std::int64_t>(m.n_kv_heads) * m.head_dim(), ffn = m.resolved_ffn_hidden();
  const std::vector<Shape> shapes{{"Q/K/V", d, d + 2 * kv},
                                  {"W_O", d, d},
                                  {"W_O, half the head dims kept", d, d, false, m.n_heads},
                                  {"SwiGLU gate/up", d, ffn, true},
                                  {"W_down", ffn, d}};
  std::vector<MatmulTiming> out;
  for (const auto& s : shapes)
    for (int rows : o.rows) out.push_back(time_case(s, rows, o));
  at::set_num_threads(threads);
  return out;
}

std::string format_matmul_bench(const std::vector<MatmulTiming>& rows) {
  std::string s = "| product | rows | packed ms | packed GFLOP/s | packed AVX2 GFLOP/s | torch::mm ms | torch::mm GFLOP/s | speedup |\n"
                  "|---|---|---|---|---|---|---|---|\n";
  char line[256];
  for (const auto& r : rows) {
    char avx2[32] = "-";
    if (r.avx2_ms > 0) std::snprintf(avx2, sizeof avx2, "%.1f", r.flops / (r.avx2_ms * 1e6));
    std::snprintf(line, sizeof line, "| %s | %d | %.4f | %.1f | %s | %.4f | %.1f | %.2fx |\n", r.what.c_str(), r.rows, r.packed_ms,
                  r.flops / (r.packed_ms * 1e6), avx2, r.torch_ms, r.flops / (r.torch_ms * 1e6), r.torch_ms / r.packed_ms);
    s += line;
  }
  return s;
}

}  // namespace moxlab
