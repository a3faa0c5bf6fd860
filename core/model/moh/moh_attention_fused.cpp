// MoH attention's fused inference form (Eq. 4 computing only the heads each token selected): without
// autograd on float32 CPU. With the learned router (it reads x alone) the router runs first, so:
//   1. on each thread's rows, one packed product for K, V and the shared heads' queries, then each routed
//      head's queries for only the rows that selected it (the others zero);
//   2. the fused attention kernel over the selected (position, head) pairs, each output multiplied by its
//      gate (kernels/fused/attention.h);
//   3. on each thread's rows, W_O over the shared heads' columns, then each routed head's columns added
//      into only the rows that selected it (Eq. 4's weighted sum in the output projection).
// With the query-norm router (it reads every head's query) or a tap recorder (taps record whole tensors) step 1
// computes every query. Active multiply-adds per token and layer: (shared + K routed) / h of W_Q, W_O and
// the scores and value mixes, all of W_K and W_V.
#include "core/model/moh/moh_attention.h"

#include "kernels/fused/packed_matmul.h"
#include "kernels/runtime/row_parallel.h"

namespace moxlab {

torch::Tensor MohAttention::forward_fused(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx, const BlockTapNames& taps) {
  const std::int64_t B = x.size(0), T = x.size(1), M = B * T, d = x.size(2);
  const std::int64_t H = n_heads_, Hkv = n_kv_heads_, hd = head_dim_, s = o_.shared, kv = Hkv * hd;
  torch::Tensor q, k, v;
  HeadRouting r;
  if (o_.router != "learned" || ctx.tap_recorder != nullptr) {
    ctx.tap(taps.attn_in, x);
    std::tie(q, k, v) = project_qkv(x);
    q = q.view({B, T, H, hd});
    k = k.view({B, T, Hkv, hd});
    v = v.view({B, T, Hkv, hd});
    ctx.tap(taps.attn_q, q);
    ctx.tap(taps.attn_k, k);
    ctx.tap(taps.attn_v, v);
    r = head_router->forward(x, q);
  } else {
    r = head_router->forward(x, {});
  }
  report(r, ctx, taps);
  const auto gates = r.gates.reshape({M, H}).contiguous();
  const float* g = gates.data_ptr<float>();
  // Rows [a, z) that selected head h (its gate non-zero there), into `rows`.
  auto selecting = [&](std::int64_t h, std::int64_t a, std::int64_t z, std::vector<std::int64_t>& rows) {
    rows.clear();
    for (std::int64_t t = a; t < z; ++t)
      if (g[t * H + h] != 0.0f) rows.push_back(t);
  };
  const auto x2 = x.reshape({M, d}).contiguous();
  if (!q.defined()) {
    // [K | V | Q of every head] per row: K, V and the shared heads' queries as one product, then the routed heads.
    auto qkv = torch::empty({M, 2 * kv + H * hd}, x2.options());
    const auto first = packed_weight(derived_.get({wq->weight, wk->weight, wv->weight}, [&] {
      return pack_weight(torch::cat({wk->weight, wv->weight, wq->weight.narrow(0, 0, s * hd)}));
    }), 2 * kv + s * hd);
    // Each routed head's W_Q rows packed on their own ([ceil(hd / 16), d, 16] each, stacked).
    const auto routed = derived_.get({wq->weight}, [&] {
      std::vector<torch::Tensor> heads;
      for (std::int64_t h = s; h < H; ++h) heads.push_back(pack_weight(wq->weight.narrow(0, h * hd, hd)));
      return heads.empty() ? torch::Tensor() : torch::cat(heads);
    });
    torch::Tensor first_bias;
    if (wq->bias.defined()) first_bias = torch::cat({wk->bias, wv->bias, wq->bias.narrow(0, 0, s * hd)}).contiguous();
    const float* q_bias = wq->bias.defined() ? wq->bias.data_ptr<float>() : nullptr;
    const std::int64_t head_panels = (hd + 15) / 16;
    ProductOptions opt;
    if (first_bias.defined()) opt.bias = first_bias.data_ptr<float>();
    // Routed head h's queries for the rows in [a, z) that selected it, zeros in the others.
    auto routed_queries = [&](std::int64_t h, std::int64_t a, std::int64_t z, std::vector<std::int64_t>& rows) {
      for (std::int64_t t = a; t < z; ++t)
        if (g[t * H + h] == 0.0f) std::fill_n(qkv.data_ptr<float>() + t * qkv.size(1) + 2 * kv + h * hd, hd, 0.0f);
      selecting(h, a, z, rows);
      if (rows.empty()) return;
      ProductOptions head_opt;
      if (q_bias) head_opt.bias = q_bias + h * hd;
      packed_matmul({x2.data_ptr<float>(), d, rows.data()}, static_cast<std::int64_t>(rows.size()),
                    packed_weight(routed.narrow(0, (h - s) * head_panels, head_panels), hd),
                    {qkv.data_ptr<float>() + 2 * kv + h * hd, qkv.size(1), rows.data()}, head_opt);
    };
    if (M <= kRowGrain) {  // a decode step: the first product split by its panels, then the routed heads by head
      parallel_packed_matmul(row_map(x2), M, first, row_map(qkv), opt);
      parallel_row_ranges(H - s, 1, [&](std::int64_t h0, std::int64_t h1) {
        std::vector<std::int64_t> rows;
        for (std::int64_t h = s + h0; h < s + h1; ++h) routed_queries(h, 0, M, rows);
      });
    } else {
      parallel_row_ranges(M, kRowGrain, [&](std::int64_t a, std::int64_t z) {
        packed_matmul(row_map(x2.narrow(0, a, z - a)), z - a, first, row_map(qkv.narrow(0, a, z - a)), opt);
        std::vector<std::int64_t> rows;
        for (std::int64_t h = s; h < H; ++h) routed_queries(h, a, z, rows);
      });
    }
    k = qkv.narrow(1, 0, kv).view({B, T, Hkv, hd});
    v = qkv.narrow(1, kv, kv).view({B, T, Hkv, hd});
    q = qkv.narrow(1, 2 * kv, H * hd).view({B, T, H, hd});
  }
  // Only the selected heads, weighted: [B, T, H, hd], zero where a head's gate is 0.
  const auto heads = attend(q, k, v, rope, ctx, {}, gates.view({B, T, H})).reshape({M, H * hd}).contiguous();
  ctx.tap(taps.attn_ctx, heads.view({B, T, H * hd}));
  const auto wo_packed = packed_weight(derived_.get({wo->weight}, [&] { return pack_weight(wo->weight); }), wo->weight.size(0));
  auto y = torch::empty({M, wo->weight.size(0)}, x2.options());
  // Rows [a, z) through W_O's columns in `w` (all, or a thread's panels), into y's columns from `column`: the
  // shared heads' columns, then each routed head's accumulated into only the rows that selected it.
  auto project = [&](const PackedWeight& w, std::int64_t column, std::int64_t a, std::int64_t z) {
    const RowMap out{y.data_ptr<float>() + a * y.size(1) + column, y.size(1)};
    if (s > 0) {
      ProductOptions shared_opt;
      shared_opt.ranges = {{0, s * hd}};
      packed_matmul(row_map(heads.narrow(0, a, z - a)), z - a, w, out, shared_opt);
    } else {
      for (std::int64_t t = 0; t < z - a; ++t) std::fill_n(out.row(t), w.n, 0.0f);
    }
    std::vector<std::int64_t> rows;
    ProductOptions head_opt;
    head_opt.accumulate = true;
    for (std::int64_t h = s; h < H; ++h) {
      selecting(h, a, z, rows);
      if (rows.empty()) continue;
      head_opt.ranges = {{h * hd, hd}};
      packed_matmul({heads.data_ptr<float>(), H * hd, rows.data()}, static_cast<std::int64_t>(rows.size()), w,
                    {y.data_ptr<float>() + column, y.size(1), rows.data()}, head_opt);
    }
  };
  if (M <= kRowGrain) {  // a decode step: split by W_O's panels
    parallel_panel_parts(wo_packed, [&](const PackedWeight& part, std::int64_t column) { project(part, column, 0, M); });
  } else {
    parallel_row_ranges(M, kRowGrain, [&](std::int64_t a, std::int64_t z) { project(wo_packed, 0, a, z); });
  }
  auto result = y.view({B, T, y.size(1)});
  ctx.tap(taps.attn_out, result);
  return result;
}

}  // namespace moxlab
