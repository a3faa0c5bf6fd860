#include "core/engine/dense_plan.h"

#include "core/engine/ops.h"
#include "core/engine/plan_kinds.h"
#include "kernels/fused/packed_matmul.h"
#include "kernels/runtime/row_parallel.h"

namespace moxlab::engine {

torch::Tensor DenseAttentionPlan::forward(const torch::Tensor& x, Step& step) { return project(head_outputs(x, step), step); }

torch::Tensor DenseAttentionPlan::head_outputs(const torch::Tensor& x, Step& step, torch::Tensor* q_pre_rope, const torch::Tensor& qk_mask) {
  const auto B = x.size(0), T = x.size(1);
  const auto H = a_.n_heads(), Hkv = a_.n_kv_heads(), hd = a_.head_dim();
  step.an.tap(step.taps.attn_in, x);
  auto [q, k, v] = project_qkv(x);
  q = q.view({B, T, H, hd});
  k = k.view({B, T, Hkv, hd});
  v = v.view({B, T, Hkv, hd});
  step.an.tap(step.taps.attn_q, q);
  step.an.tap(step.taps.attn_k, k);
  step.an.tap(step.taps.attn_v, v);
  if (q_pre_rope) *q_pre_rope = q;
  return attend(q, k, v, step, qk_mask);
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> DenseAttentionPlan::project_qkv(const torch::Tensor& x) {
  auto &wq = a_.wq, &wk = a_.wk, &wv = a_.wv;
  if (!packed_applies(x)) return {wq(x), wk(x), wv(x)};
  // One product instead of three reads x once, on each thread's own rows against the weights packed
  // once; q, k and v are column slices of it.
  const std::int64_t nq = wq->weight.size(0), nkv = wk->weight.size(0);
  const auto w = stacked_.get({wq->weight, wk->weight, wv->weight}, [&] { return pack_weight(torch::cat({wq->weight, wk->weight, wv->weight})); });
  const auto b = wq->bias.defined() ? stacked_.get({wq->bias, wk->bias, wv->bias}, [&] { return torch::cat({wq->bias, wk->bias, wv->bias}); })
                                    : torch::Tensor();
  const auto qkv = packed_linear(x, packed_weight(w, nq + 2 * nkv), b);
  return {qkv.narrow(-1, 0, nq), qkv.narrow(-1, nq, nkv), qkv.narrow(-1, nq + nkv, nkv)};
}

torch::Tensor DenseAttentionPlan::attend(torch::Tensor q, torch::Tensor k, torch::Tensor v, Step& step, const torch::Tensor& qk_mask,
                                         const torch::Tensor& gates) {
  KvCache::Entry* past = step.cache ? &step.cache->at(&a_) : nullptr;
  const std::int64_t start = past ? past->length() : 0;
  q = rope_apply(step.rope, q, start);
  k = rope_apply(step.rope, k, start);
  if (qk_mask.defined()) {
    q = q * qk_mask;
    k = k * qk_mask;
  }
  if (past) std::tie(k, v) = append_kv(*past, k, v);
  auto out = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), a_.causal(), 0, gates);  // [B, H, T, hd]
  return out.transpose(1, 2);                                                                           // [B, T, H, hd]
}

torch::Tensor DenseAttentionPlan::project(const torch::Tensor& heads, Step& step) {
  auto& wo = a_.wo;
  auto mixed = heads.reshape({heads.size(0), heads.size(1), a_.n_heads() * a_.head_dim()});
  step.an.tap(step.taps.attn_ctx, mixed);
  auto y = packed_applies(mixed)
               ? packed_linear(mixed, packed_weight(stacked_.get({wo->weight}, [&] { return pack_weight(wo->weight); }), wo->weight.size(0)),
                               wo->bias)
               : wo(mixed);
  step.an.tap(step.taps.attn_out, y);
  return y;
}

torch::Tensor SwiGluPlan::forward(const torch::Tensor& x, Step& step) {
  // Recorded taps need the gate, up and activation tensors: the module's reference form.
  if (step.an.tap_recorder) return f_.forward(x, step.an, step.taps, step.io);
  auto &w1 = f_.w1, &w2 = f_.w2, &w3 = f_.w3;
  if (!packed_applies(x)) return w2(swiglu_activation(w1(x), w3(x)));
  // SiLU(x W_gate^T) * (x W_up^T) as one product against W_gate and W_up packed side by side (the
  // [rows, 2 hidden] gate/up product is never written), then W_down, on each thread's own rows.
  const auto hidden = w1->weight.size(0);
  const auto gate_up =
      packed_weight(stacked_.get({w1->weight, w3->weight}, [&] { return pack_swiglu_weight(w1->weight, w3->weight); }), hidden, true);
  const auto down = packed_weight(stacked_.get({w2->weight}, [&] { return pack_weight(w2->weight); }), w2->weight.size(0));
  const auto x2 = x.reshape({-1, x.size(-1)}).contiguous();
  auto y = torch::empty({x2.size(0), down.n}, x.options());
  if (x2.size(0) <= kRowGrain) {  // a decode step: each product split by the weight's panels instead
    auto act = torch::empty({x2.size(0), hidden}, x.options());
    parallel_packed_matmul(row_map(x2), x2.size(0), gate_up, row_map(act));
    parallel_packed_matmul(row_map(act), x2.size(0), down, row_map(y));
  } else {
    parallel_row_ranges(x2.size(0), kRowGrain, [&](std::int64_t a, std::int64_t e) {
      auto act = torch::empty({e - a, hidden}, x.options());
      packed_matmul(row_map(x2.narrow(0, a, e - a)), e - a, gate_up, row_map(act));
      packed_matmul(row_map(act), e - a, down, row_map(y.narrow(0, a, e - a)));
    });
  }
  auto shape = x.sizes().vec();
  shape.back() = down.n;
  return y.view(shape);
}

}  // namespace moxlab::engine

namespace moxlab::engine {

PlanKind dense_plan_kind() {
  PlanKind k;
  k.name = "dense";
  k.attention = [](Attention& a) { return std::make_unique<DenseAttentionPlan>(dynamic_cast<DenseAttention&>(a)); };
  k.ffn = [](FeedForward& f) { return std::make_unique<SwiGluPlan>(dynamic_cast<SwiGLU&>(f)); };
  return k;
}

}  // namespace moxlab::engine
