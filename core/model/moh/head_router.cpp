#include "core/model/moh/head_router.h"

#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "core/model/batch_statistics.h"

namespace moxlab {

namespace {

torch::nn::Linear bias_free(int in, int out) { return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)); }

}  // namespace

torch::Tensor top_k_selection(const torch::Tensor& scores, int k) {
  auto mask = torch::zeros_like(scores);
  if (k <= 0) return mask;
  const auto order = std::get<1>(scores.detach().sort(/*stable=*/true, -1, /*descending=*/true));
  return mask.scatter(-1, order.narrow(-1, 0, k), 1.0);
}

torch::Tensor head_balance_loss(const torch::Tensor& routed_probs, const torch::Tensor& routed_selected,
                                const std::string& gate_form) {
  const std::int64_t r = routed_probs.size(-1);
  if (r == 0) return torch::zeros({}, routed_probs.options());
  auto p = batch_mean(routed_probs.reshape({-1, r}).mean(0));           // P_i (over the whole batch)
  auto f = batch_mean(routed_selected.detach().reshape({-1, r}).to(p.dtype()).mean(0));  // f_i
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

}  // namespace moxlab
