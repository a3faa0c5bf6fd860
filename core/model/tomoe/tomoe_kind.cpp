#include "core/model/model_kind.h"

namespace moxlab {

ModelKind tomoe_kind() {
  ModelKind k;
  k.name = "tomoe";
  k.attention_help = "ToMoE head-dim masks";
  k.ffn_help = "ToMoE top-1 MLP experts";
  k.ffn_routes = "experts";
  k.routing_modules = k.torch_default_init_modules = {".hypernet.", ".masker.", ".expert_router."};
  // The dense shape converted into the MoE (random weights: speed depends on the shapes only).
  const auto dense = [](const ModelOptions& o) { return o; };
  k.bench_variants = {{"tomoe_50", dense, 0.5}, {"tomoe_40", dense, 0.4}};
  return k;
}

}  // namespace moxlab
