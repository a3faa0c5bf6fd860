// MoHD's attention and FFN (core/model/mohd/mohd_components.h) as the engine runs them: routing in one
// pass, then the sparse form where it wins (core/engine/mohd_sparse.h) or the reference on the engine's
// dense plans; with autograd, the sparse form is the default training form.
#include "core/engine/mohd_sparse.h"
#include "core/engine/plan_kinds.h"

namespace moxlab::engine {

namespace {

class MohdAttentionPlan : public AttentionPlan {
 public:
  explicit MohdAttentionPlan(MohdAttention& m) : m_(m), route_(*m.mixer->router), sparse_(m) {}
  torch::Tensor forward(const torch::Tensor& x, Step& step) override {
    const auto& t = step.taps;
    const SubDimRouting r = route_.forward(x);
    m_.mixer->record(r, step.an, balance_loss_name(t.attn_router_probs), t.attn_router_probs, t.attn_router_topk);
    if (const auto s = mohd_sparse_if_wins(r, m_.mixer->options(), step)) return sparse_.forward(x, *s, step);
    return sparse_.output().combine(sparse_.dense().forward(m_.mixer->mask_input(x, r), step), r);  // Eq. 14
  }

 private:
  MohdAttention& m_;
  SubDimRoutePlan route_;
  MohdSparseAttention sparse_;
};

class MohdFeedForwardPlan : public FeedForwardPlan {
 public:
  explicit MohdFeedForwardPlan(MohdFeedForward& m) : m_(m), route_(*m.mixer->router), sparse_(m), dense_(*m.inner) {}
  torch::Tensor forward(const torch::Tensor& x, Step& step) override {
    const auto& t = step.taps;
    const SubDimRouting r = route_.forward(x);
    m_.mixer->record(r, step.an, balance_loss_name(t.ffn_router_probs), t.ffn_router_probs, t.ffn_router_topk);
    if (const auto s = mohd_sparse_if_wins(r, m_.mixer->options(), step)) return sparse_.forward(x, *s);
    return sparse_.output().combine(dense_.forward(m_.mixer->mask_input(x, r), step), r);  // Eq. 16
  }

 private:
  MohdFeedForward& m_;
  SubDimRoutePlan route_;
  MohdSparseFeedForward sparse_;
  SwiGluPlan dense_;
};

// The training forms: the model's routing (autograd reaches the router), then the sparse form where it
// wins, else the model's Eq. 14 / Eq. 16 on that routing.
decltype(LayerForms::attention) training_attention(Attention& a, Form form) {
  if (form == Form::reference) return {};
  auto& m = dynamic_cast<MohdAttention&>(a);
  auto sparse = std::make_shared<MohdSparseAttention>(m);
  return [&m, sparse, form](const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps, LayerIO& io) {
    Step step{rope, an, taps, io, nullptr, form};
    const SubDimRouting r = m.route(x, an, taps);
    if (const auto s = mohd_sparse_if_wins(r, m.mixer->options(), step)) return sparse->forward(x, *s, step);
    return m.forward_routed(x, r, rope, an, taps, io);
  };
}

decltype(LayerForms::ffn) training_ffn(FeedForward& f, Form form) {
  if (form == Form::reference) return {};
  auto& m = dynamic_cast<MohdFeedForward&>(f);
  auto sparse = std::make_shared<MohdSparseFeedForward>(m);
  return [&m, sparse, form](const torch::Tensor& x, Analysis& an, const BlockTapNames& taps, LayerIO& io) {
    const Rope none;
    Step step{none, an, taps, io, nullptr, form};
    const SubDimRouting r = m.route(x, an, taps);
    if (const auto s = mohd_sparse_if_wins(r, m.mixer->options(), step)) return sparse->forward(x, *s);
    return m.forward_routed(x, r, an, taps, io);
  };
}

}  // namespace

PlanKind mohd_plan_kind() {
  PlanKind k;
  k.name = "mohd";
  k.attention = [](Attention& a) { return std::make_unique<MohdAttentionPlan>(dynamic_cast<MohdAttention&>(a)); };
  k.ffn = [](FeedForward& f) { return std::make_unique<MohdFeedForwardPlan>(dynamic_cast<MohdFeedForward&>(f)); };
  k.training_attention = training_attention;
  k.training_ffn = training_ffn;
  return k;
}

}  // namespace moxlab::engine
