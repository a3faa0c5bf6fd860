// ToMoE's gated attention and FFN (core/model/tomoe/tomoe_modules.h) as the engine runs them: the masks
// from the model's routing modules (with their Gumbel draws in the model's order), the dense products on
// the engine's plans; with every gate off, the dense plans themselves (the self-distillation teacher).
#include "core/engine/dense_plan.h"
#include "core/engine/plan_kinds.h"
#include "core/model/tomoe/tomoe_modules.h"

namespace moxlab::engine {

namespace {

class TomoeAttentionPlan : public AttentionPlan {
 public:
  explicit TomoeAttentionPlan(TomoeAttention& a) : a_(a), dense_(a) {}
  torch::Tensor forward(const torch::Tensor& x, Step& step) override {
    if (step.io.gates_off) return dense_.forward(x, step);
    const HeadDimMasks m = a_.masks(x, step.io);
    const auto heads = dense_.head_outputs(x, step, nullptr, m.qk);  // [B, T, H, hd], q and k masked by S_0
    return dense_.project(heads * m.vo.unsqueeze(-2), step);         // S_t on every head of token t (Eq. 4)
  }

 private:
  TomoeAttention& a_;
  DenseAttentionPlan dense_;
};

class TomoeFeedForwardPlan : public FeedForwardPlan {
 public:
  explicit TomoeFeedForwardPlan(TomoeFeedForward& f) : f_(f), dense_(f) {}
  torch::Tensor forward(const torch::Tensor& x, Step& step) override {
    if (step.io.gates_off) return dense_.forward(x, step);
    return f_.forward(x, step.an, step.taps, step.io);  // the expert's channel mask inside SwiGLU (Eq. 2-3)
  }

 private:
  TomoeFeedForward& f_;
  SwiGluPlan dense_;
};

}  // namespace

PlanKind tomoe_plan_kind() {
  PlanKind k;
  k.name = "tomoe";
  k.attention = [](Attention& a) { return std::make_unique<TomoeAttentionPlan>(dynamic_cast<TomoeAttention&>(a)); };
  k.ffn = [](FeedForward& f) { return std::make_unique<TomoeFeedForwardPlan>(dynamic_cast<TomoeFeedForward&>(f)); };
  return k;
}

}  // namespace moxlab::engine
