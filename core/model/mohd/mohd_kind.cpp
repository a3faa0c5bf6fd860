#include "core/common/error.h"
#include "core/model/model_kind.h"

namespace moxlab {

namespace {
// Both components MoHD with n sub-dimensions, `active` of them per token (`shared` always), fused in n groups.
BenchVariant variant(const std::string& name, int n, int active, int shared) {
  return {name, [=](const ModelOptions& dense) {
            require(dense.dim % n == 0, "bench infer: " + name + " needs model.dim divisible by " + std::to_string(n));
            ModelOptions o = dense;
            o.attention = o.ffn = "mohd";
            MohdOptions m;
            m.sub_dims = n;
            m.active = active;
            m.shared = shared;
            m.fusion_groups = n;
            o.mohd_attn = o.mohd_ffn = m;
            return o;
          }};
}
}  // namespace

ModelKind mohd_kind() {
  ModelKind k;
  k.name = "mohd";
  k.attention_help = k.ffn_help = "MoHD sub-dimension routing";
  k.attention_routes = k.ffn_routes = "sub-dimensions";
  k.routing_modules = {".mixer.router."};
  k.fan_in_init_modules = {".monarch."};  // group fusion blocks [blocks, out, in], as a linear layer of the block's fan-in
  k.sparse_form = true;
  k.bench_variants = {variant("mohd_50", 8, 4, 3), variant("mohd_75", 12, 9, 3)};
  return k;
}

}  // namespace moxlab
