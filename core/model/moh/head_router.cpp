#include "core/model/moh/head_router.h"

#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "kernels/fused/packed_matmul.h"
#include "kernels/runtime/row_parallel.h"
#include "kernels/sparse/top_k_mask.h"

namespace moxlab {

namespace {

torch::nn::Linear bias_free(int in, int out) { return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)); }

// 0/1 mask of the k largest scores along the last dimension: on float32 CPU the kernel's (ties to the lower
// index, as forward_rows), elsewhere torch's topk.
torch::Tensor top_k_selection(const torch::Tensor& scores, int k) {
  if (scores.is_cpu() && scores.scalar_type() == torch::kFloat) return top_k_mask(scores.detach(), k);
  auto mask = torch::zeros_like(scores);
  if (k <= 0) return mask;
  return mask.scatter(-1, std::get<1>(scores.detach().topk(k, -1)), 1.0);
}

// softmax(x[0 .. n)) in place, times `times`.
void softmax_in_place(float* x, int n, float times) {
  if (n == 0) return;
  const float m = *std::max_element(x, x + n);
  float sum = 0;
  for (int i = 0; i < n; ++i) sum += x[i] = std::exp(x[i] - m);
  for (int i = 0; i < n; ++i) x[i] *= times / sum;
}

}  // namespace

torch::Tensor head_balance_loss(const torch::Tensor& routed_probs, const torch::Tensor& routed_selected,
                                const std::string& gate_form) {
  const std::int64_t r = routed_probs.size(-1);
  if (r == 0) return torch::zeros({}, routed_probs.options());
  auto p = routed_probs.reshape({-1, r}).mean(0);                       // P_i
  auto f = routed_selected.detach().reshape({-1, r}).to(p.dtype()).mean(0);  // f_i
  auto loss = (f * p).sum();                                             // Eq. 7
  return gate_form == "code" ? loss * static_cast<double>(r) : loss;
}

HeadRouterImpl::HeadRouterImpl(int dim, int n_heads, int active, const MohOptions& o)
    : n_(n_heads), shared_(o.shared), active_(active), o_(o) {
  require(shared_ >= 0 && shared_ <= active_ && active_ <= n_, "moh: need 0 <= moh.shared <= active heads <= model.n_heads");
  if (o_.router == "learned") {
    if (routed_heads() > 0) w_routed = register_module("w_routed", bias_free(dim, routed_heads()));
    if (shared_ > 0) w_shared = register_module("w_shared", bias_free(dim, shared_));
    if (o_.two_stage && shared_ > 0 && routed_heads() > 0) w_stage = register_module("w_stage", bias_free(dim, 2));
  } else {
    require(o_.router == "query_norm", "moh.router must be learned or query_norm, got '" + o_.router + "'");
  }
}

HeadRouting HeadRouterImpl::forward(const torch::Tensor& x, const torch::Tensor& q) {
  if (packed_applies(x) && (o_.router == "learned" || (q.defined() && packed_applies(q)))) return forward_rows(x, q);
  const int r = routed_heads(), k = top_k();
  auto lead = x.sizes().vec();
  lead.pop_back();
  auto shape = [&](int last) {
    auto s = lead;
    s.push_back(last);
    return s;
  };
  HeadRouting out;
  const bool code = o_.gate_form == "code";
  // Routed scores (Eq. 5, or the query-norm scores of section 4.4) and the top-K selection.
  torch::Tensor routed_gates;
  if (r > 0) {
    torch::Tensor logits;
    if (o_.router == "learned") {
      logits = w_routed(x);
    } else {
      logits = q.narrow(-2, shared_, r).norm(2, -1);  // ||q_i|| per routed head
      if (r > 1) logits = logits / (logits.std(-1, true, true) + 1e-6);  // normalised across heads
    }
    out.routed_probs = torch::softmax(logits, -1);
    auto sel = top_k_selection(out.routed_probs, k);
    routed_gates = out.routed_probs * sel;
    if (code && k > 0) routed_gates = routed_gates / routed_gates.sum(-1, true) * static_cast<double>(k);
    out.selected = sel;
  } else {
    out.routed_probs = torch::zeros(shape(0), x.options());
    routed_gates = out.routed_probs;
    out.selected = out.routed_probs;
  }
  // Shared heads: always active.
  torch::Tensor shared_gates;
  if (o_.router == "learned" && shared_ > 0) {
    shared_gates = torch::softmax(w_shared(x), -1);
    if (code) shared_gates = shared_gates * static_cast<double>(shared_);
  } else {
    shared_gates = torch::ones(shape(shared_), x.options());
  }
  // Two-stage weights (Eq. 6).
  torch::Tensor routed_real = out.routed_probs;  // unmasked: the real-valued score g_i of Eq. 10
  if (w_stage) {
    auto alpha = torch::softmax(w_stage(x), -1);
    if (code) alpha = alpha * 2.0;
    shared_gates = shared_gates * alpha.narrow(-1, 0, 1);
    routed_gates = routed_gates * alpha.narrow(-1, 1, 1);
    routed_real = routed_real * alpha.narrow(-1, 1, 1);
  }
  out.selected = torch::cat({torch::ones(shape(shared_), x.options()), out.selected}, -1);
  if (o_.quantised || o_.router == "query_norm") {
    // Binary gates g^q = 1(head selected) (Eq. 9) with dL/dg = dL/dg^q (Eq. 10): an unselected head's
    // score also receives the gradient its output would have had, so the router can learn to pick it.
    out.gates = straight_through(torch::cat({shared_gates, routed_real}, -1), out.selected);
  } else {
    out.gates = torch::cat({shared_gates, routed_gates}, -1);
  }
  return out;
}

HeadRouting HeadRouterImpl::forward_rows(const torch::Tensor& x, const torch::Tensor& q) {
  const int r = routed_heads(), k = top_k(), s = shared_;
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

}  // namespace moxlab
