#include "kernels/sparse/head_gathered_attention.h"

#include <cmath>
#include <limits>

namespace moxlab {

torch::Tensor head_gathered_attention(const HeadGatheredAttention& a) {
  const std::int64_t B = a.x.size(0), T = a.x.size(1), d = a.x.size(2);
  const std::int64_t H = a.gates.size(2), Hkv = a.k.size(2), hd = a.k.size(3), group = H / Hkv;
  const double scale = a.scale > 0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(hd));
  const auto x = a.x.reshape({B * T, d});
  const auto used = (a.gates != 0);  // [B, T, H]
  auto y = torch::zeros({B * T, d}, a.x.options());
  const auto positions = torch::arange(T, torch::kLong);
  for (std::int64_t h = 0; h < H; ++h) {
    const auto mask = used.select(2, h);                       // [B, T]
    const auto rows = mask.reshape({-1}).nonzero().squeeze(1);  // token rows (b * T + t), ascending
    if (rows.numel() == 0) continue;
    const auto pos = rows.remainder(T);
    torch::Tensor q;
    if (a.q.defined()) {
      q = a.q.select(2, h).reshape({B * T, hd}).index_select(0, rows);
    } else {
      q = torch::matmul(x.index_select(0, rows), a.wq.narrow(0, h * hd, hd).t());
      if (a.bq.defined()) q = q + a.bq.narrow(0, h * hd, hd);
    }
    q = a.rotate(q, pos) * scale;
    // Rows are sorted, so each sequence's queries are one contiguous run.
    const auto counts = mask.sum(1).to(torch::kCPU);
    const auto* count = counts.data_ptr<std::int64_t>();
    std::vector<torch::Tensor> mixed;
    std::int64_t start = 0;
    for (std::int64_t b = 0; b < B; ++b) {
      const std::int64_t n = count[b];
      if (n == 0) continue;
      const auto qb = q.narrow(0, start, n);
      const auto pb = pos.narrow(0, start, n);
      // Keys up to the last query's position are all a causal pass reads.
      const std::int64_t keys = a.causal ? pb[n - 1].item<std::int64_t>() + 1 : T;
      const auto kb = a.k[b].select(1, h / group).narrow(0, 0, keys);  // [keys, hd]
      const auto vb = a.v[b].select(1, h / group).narrow(0, 0, keys);
      auto scores = torch::matmul(qb, kb.t());  // [n, keys]
      if (a.causal) scores = scores.masked_fill(positions.narrow(0, 0, keys).unsqueeze(0) > pb.unsqueeze(1),
                                                -std::numeric_limits<float>::infinity());
      mixed.push_back(torch::matmul(torch::softmax(scores, -1), vb));  // [n, hd]
      start += n;
    }
    auto heads = torch::cat(mixed, 0) * a.gates.select(2, h).reshape({-1}).index_select(0, rows).unsqueeze(1);
    y.index_add_(0, rows, torch::matmul(heads, a.wo.narrow(1, h * hd, hd).t()));  // g_i H^i W_O^i
  }
  return y.view({B, T, d});
}

}  // namespace moxlab
