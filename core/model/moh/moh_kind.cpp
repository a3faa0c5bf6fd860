#include <cstdlib>

#include "core/common/error.h"
#include "core/config/schema.h"
#include "core/model/model_kind.h"

namespace moxlab {

namespace {
// MoH attention with a quarter of the heads shared and `active(n_heads)` per token.
BenchVariant variant(const std::string& name, int (*active)(int heads)) {
  return {name, [=](const ModelOptions& dense) {
            require(dense.n_heads % 4 == 0, "bench infer: " + name + " needs model.n_heads divisible by 4");
            ModelOptions o = dense;
            o.attention = "moh";
            o.moh.shared = o.n_heads / 4;
            o.moh.active = active(o.n_heads);
            return o;
          }};
}
void bind(Schema& s, ModelOptions& m) {
  auto& h = m.moh;
  s.add("moh.shared", h.shared, 0, 1024, "MoH: always-active shared heads h_s (0: w/o shared heads)");
  s.add("moh.active", h.active, 1, 1024, "MoH: heads per token, shared included (top-K = active - shared routed heads)");
  s.add("moh.layer_active", h.layer_active, "MoH: per-layer head budgets, one integer per layer (empty: moh.active)");
  s.add("moh.two_stage", h.two_stage, "MoH: two-stage routing weights alpha (Eq. 6); false: alpha1 = alpha2 = 1");
  s.add("moh.router", h.router, {"learned", "query_norm"},
        "MoH: learned router (Eq. 5-6) or the parameter-free query L2-norm router for continue-tuning (Sec. 4.4)");
  s.add("moh.quantised", h.quantised, "MoH: binary gates with a straight-through estimator (Eq. 9-10; always for query_norm)");
  s.add("moh.gate_form", h.gate_form, {"paper", "code"}, "MoH: gate and loss scaling as in the paper or the official code");
  s.add("moh.balance_beta", h.balance_beta, 0, 1e3, "MoH: weight beta of the head load-balance loss (Eq. 8)");
}

void validate(const ModelOptions& m) {
  const auto& h = m.moh;
  require(h.shared <= m.n_heads, "moh.shared (" + std::to_string(h.shared) + ") exceeds model.n_heads");
  require(h.layer_active.empty() || static_cast<int>(h.layer_active.size()) == m.n_layers,
          "moh.layer_active needs one entry per layer (" + std::to_string(m.n_layers) + "), got " +
              std::to_string(h.layer_active.size()));
  std::vector<std::string> budgets = h.layer_active;
  if (budgets.empty()) budgets.push_back(std::to_string(h.active));
  for (const auto& b : budgets) {
    char* end = nullptr;
    const long v = std::strtol(b.c_str(), &end, 10);
    require(!b.empty() && *end == 0, "moh.layer_active entries must be integers, got '" + b + "'");
    require(v >= h.shared && v <= m.n_heads && v >= 1, "MoH head budget " + b + " must be between moh.shared (" +
                                                           std::to_string(h.shared) + ") and model.n_heads (" +
                                                           std::to_string(m.n_heads) + ")");
  }
}
}  // namespace

ModelKind moh_kind() {
  ModelKind k;
  k.name = "moh";
  k.attention_help = "MoH heads as experts";
  k.attention_routes = "heads";
  k.routing_modules = {".head_router."};
  k.fan_in_init_modules = {".head_router."};  // as in the official code
  k.bind_options = bind;
  k.validate = validate;
  k.sparse_form = true;
  k.active_heads = [](const ModelOptions& o, int layer) { return o.moh.active_heads(layer); };
  k.bench_variants = {variant("moh_75", [](int h) { return h * 3 / 4; }), variant("moh_50", [](int h) { return h / 2; })};
  return k;
}

}  // namespace moxlab
