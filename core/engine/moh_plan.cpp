// MoH attention's engine forms (core/engine/moh_plan.h).
#include "core/engine/moh_plan.h"
#include "core/engine/plan_kinds.h"

#include <algorithm>
#include <cmath>

#include "kernels/fused/packed_matmul.h"
#include "kernels/runtime/row_parallel.h"
#include "kernels/sparse/head_gathered_attention.h"
#include "kernels/sparse/top_k_mask.h"

namespace moxlab::engine {

namespace {
// softmax(x[0 .. n)) in place, times `times`.
void softmax_in_place(float* x, int n, float times) {
  if (n == 0) return;
  const float m = *std::max_element(x, x + n);
  float sum = 0;
  for (int i = 0; i < n; ++i) sum += x[i] = std::exp(x[i] - m);
  for (int i = 0; i < n; ++i) x[i] *= times / sum;
}
}  // namespace

HeadRouting HeadRouterPlan::forward(const torch::Tensor& x, const torch::Tensor& q) {
  const auto& o_ = r_.options();
  if (!packed_applies(x) || (o_.router != "learned" && (!q.defined() || !packed_applies(q)))) return r_.forward(x, q);
  const int r = r_.routed_heads(), k = r_.top_k(), s = o_.shared, n_ = r_.n_heads();
  const auto &w_routed = r_.w_routed, &w_shared = r_.w_shared, &w_stage = r_.w_stage;
  const bool code = o_.gate_form == "code", learned = o_.router == "learned", binary = o_.quantised || !learned;
  const std::int64_t d = x.size(-1), M = x.numel() / d;
  const auto x2 = x.reshape({M, d}).contiguous();
  // The learned router's projections stacked, [W_r; W_s; W_h] (those it has), as one packed product.
  std::vector<torch::Tensor> parts;
  for (const auto& m : {w_routed, w_shared, w_stage})
    if (m) parts.push_back(m->weight);
  const std::int64_t n_logits = learned ? (r > 0 ? r : 0) + (w_shared ? s : 0) + (w_stage ? 2 : 0) : 0;
  torch::Tensor logits = torch::empty({M, std::max<std::int64_t>(n_logits, 1)}, x2.options());
  PackedWeight w;
  if (n_logits > 0) w = packed_weight(stacked_.get(parts, [&] { return pack_weight(torch::cat(parts)); }), n_logits);
  torch::Tensor q2;  // the query-norm router's queries [M, n, hd]
  if (!learned) q2 = q.reshape({M, n_, -1}).contiguous();
  auto gates = torch::empty({M, n_}, x2.options()), probs = torch::empty({M, r}, x2.options()),
       selected = torch::empty({M, n_}, x2.options());
  parallel_row_ranges(M, kRowGrain, [&](std::int64_t a, std::int64_t z) {
    if (n_logits > 0) packed_matmul(row_map(x2.narrow(0, a, z - a)), z - a, w, row_map(logits.narrow(0, a, z - a)));
    for (std::int64_t t = a; t < z; ++t) {
      float* l = logits.data_ptr<float>() + t * logits.size(1);
      float *g = gates.data_ptr<float>() + t * n_, *p = probs.data_ptr<float>() + t * r, *sel = selected.data_ptr<float>() + t * n_;
      // Routed scores (Eq. 5, or section 4.4's normalised query norms), their softmax P and the top-K.
      if (learned) {
        std::copy(l, l + r, p);
      } else {
        const std::int64_t hd = q2.size(2);
        const float* qt = q2.data_ptr<float>() + t * n_ * hd;
        for (int i = 0; i < r; ++i) {
          float sq = 0;
          for (std::int64_t j = 0; j < hd; ++j) sq += qt[(s + i) * hd + j] * qt[(s + i) * hd + j];
          p[i] = std::sqrt(sq);
        }
        if (r > 1) {  // over the scores' unbiased std across routed heads
          float mean = 0, var = 0;
          for (int i = 0; i < r; ++i) mean += p[i];
          mean /= static_cast<float>(r);
          for (int i = 0; i < r; ++i) var += (p[i] - mean) * (p[i] - mean);
          const float sd = std::sqrt(var / static_cast<float>(r - 1)) + 1e-6f;
          for (int i = 0; i < r; ++i) p[i] /= sd;
        }
      }
      softmax_in_place(p, r, 1.0f);
      std::fill(sel, sel + s, 1.0f);
      if (r > 0) top_k_mask_rows(p, 1, r, k, sel + s, r);
      // Gates (Eq. 5-6): shared alpha1 Softmax(W_s x) (ones without W_s), routed alpha2 P on the top-K;
      // binary routers (Eq. 9) give the selection itself.
      if (binary) {
        std::copy(sel, sel + n_, g);
        continue;
      }
      float* l_shared = l + r;
      float* alpha = l_shared + (w_shared ? s : 0);
      if (w_shared) {
        softmax_in_place(l_shared, s, code ? static_cast<float>(s) : 1.0f);
        std::copy(l_shared, l_shared + s, g);
      } else {
        std::fill(g, g + s, 1.0f);
      }
      float kept = 0;
      for (int i = 0; i < r; ++i) kept += g[s + i] = p[i] * sel[s + i];
      if (code && k > 0)
        for (int i = 0; i < r; ++i) g[s + i] = g[s + i] / kept * static_cast<float>(k);
      if (w_stage) {
        softmax_in_place(alpha, 2, code ? 2.0f : 1.0f);
        for (int i = 0; i < s; ++i) g[i] *= alpha[0];
        for (int i = 0; i < r; ++i) g[s + i] *= alpha[1];
      }
    }
  });
  auto lead = x.sizes().vec();
  lead.pop_back();
  auto shaped = [&](const torch::Tensor& t) {
    auto shape = lead;
    shape.push_back(t.size(1));
    return t.view(shape);
  };
  return {shaped(gates), shaped(probs), shaped(selected)};
}

torch::Tensor MohAttentionPlan::forward(const torch::Tensor& x, Step& step) {
  // The fused form where it applies (automatic and sparse; recorded taps in automatic mode take the
  // reference form), else the head-gathered form when forced without a cache, else the reference.
  if (step.sparse(true) && packed_applies(x)) return forward_fused(x, step);
  if (!step.cache && step.form == Form::sparse) return moh_head_gathered(m_, x, step.rope, step.an, step.taps, router_);
  torch::Tensor q;
  const auto heads = dense_.head_outputs(x, step, &q);  // [B, T, h, hd]
  const HeadRouting r = router_.forward(x, q);
  m_.report(r, step.an, step.taps);
  return dense_.project(heads * r.gates.unsqueeze(-1), step);  // Eq. 4
}

torch::Tensor MohAttentionPlan::forward_fused(const torch::Tensor& x, Step& step) {
  auto& an = step.an;
  const auto& taps = step.taps;
  const auto& o_ = m_.options();
  const auto &wq = m_.wq, &wk = m_.wk, &wv = m_.wv, &wo = m_.wo;
  const std::int64_t B = x.size(0), T = x.size(1), M = B * T, d = x.size(2);
  const std::int64_t H = m_.n_heads(), Hkv = m_.n_kv_heads(), hd = m_.head_dim(), s = o_.shared, kv = Hkv * hd;
  torch::Tensor q, k, v;
  HeadRouting r;
  if (o_.router != "learned" || an.tap_recorder != nullptr) {
    an.tap(taps.attn_in, x);
    std::tie(q, k, v) = dense_.project_qkv(x);
    q = q.view({B, T, H, hd});
    k = k.view({B, T, Hkv, hd});
    v = v.view({B, T, Hkv, hd});
    an.tap(taps.attn_q, q);
    an.tap(taps.attn_k, k);
    an.tap(taps.attn_v, v);
    r = router_.forward(x, q);
  } else {
    r = router_.forward(x, {});
  }
  m_.report(r, an, taps);
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
  const auto heads = dense_.attend(q, k, v, step, {}, gates.view({B, T, H})).reshape({M, H * hd}).contiguous();
  an.tap(taps.attn_ctx, heads.view({B, T, H * hd}));
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
  an.tap(taps.attn_out, result);
  return result;
}


torch::Tensor moh_head_gathered(MohAttention& m, const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps,
                                HeadRouterPlan& router) {
  const auto B = x.size(0), T = x.size(1);
  const auto H = m.n_heads(), Hkv = m.n_kv_heads(), hd = m.head_dim();
  torch::Tensor q;
  if (m.options().router == "query_norm") q = m.wq(x).view({B, T, H, hd});  // the router reads every query
  const HeadRouting r = router.forward(x, q);
  m.report(r, an, taps);
  HeadGatheredAttention a;
  a.x = x;
  a.k = rope.apply(m.wk(x).view({B, T, Hkv, hd}));
  a.v = m.wv(x).view({B, T, Hkv, hd});
  a.wq = m.wq->weight;
  a.bq = m.wq->bias;
  a.q = q;
  a.wo = m.wo->weight;
  a.gates = r.gates;
  a.rotate = [&rope](const torch::Tensor& qh, const torch::Tensor& pos) { return rope.apply_at(qh, pos); };
  a.causal = m.causal();
  return head_gathered_attention(a);
}

}  // namespace moxlab::engine

namespace moxlab::engine {

PlanKind moh_plan_kind() {
  PlanKind k;
  k.name = "moh";
  k.attention = [](Attention& a) { return std::make_unique<MohAttentionPlan>(dynamic_cast<MohAttention&>(a)); };
  // Training: the head-gathered form only when forced (automatic and reference keep the module's forward).
  k.training_attention = [](Attention& a, Form form) -> decltype(LayerForms::attention) {
    if (form != Form::sparse) return {};
    auto& m = dynamic_cast<MohAttention&>(a);
    auto router = std::make_shared<HeadRouterPlan>(*m.head_router);
    return [&m, router](const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps, LayerIO&) {
      return moh_head_gathered(m, x, rope, an, taps, *router);
    };
  };
  return k;
}

}  // namespace moxlab::engine
