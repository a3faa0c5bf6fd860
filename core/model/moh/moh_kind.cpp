#include "core/common/error.h"
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
}  // namespace

ModelKind moh_kind() {
  ModelKind k;
  k.name = "moh";
  k.attention_help = "MoH heads as experts";
  k.attention_routes = "heads";
  k.routing_modules = {".head_router."};
  k.fan_in_init_modules = {".head_router."};  // as in the official code
  k.sparse_form = true;
  k.active_heads = [](const ModelOptions& o, int layer) { return o.moh.active_heads(layer); };
  k.bench_variants = {variant("moh_75", [](int h) { return h * 3 / 4; }), variant("moh_50", [](int h) { return h / 2; })};
  return k;
}

}  // namespace moxlab
