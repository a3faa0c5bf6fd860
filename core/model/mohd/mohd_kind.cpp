#include <tuple>
#include <utility>

#include "core/common/error.h"
#include "core/config/schema.h"
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
// Keys mohd.attn.* and mohd.ffn.*: each component has its own router and options (Sec. 4.5).
void bind(Schema& s, ModelOptions& m) {
  for (auto [part, mo] : {std::pair<const char*, MohdOptions*>{"attn", &m.mohd_attn}, {"ffn", &m.mohd_ffn}}) {
    const std::string k = std::string("mohd.") + part + ".";
    s.add(k + "sub_dims", mo->sub_dims, 1, 4096, "MoHD: sub-dimensions N the hidden dimension is sliced into");
    s.add(k + "active", mo->active, 1, 4096, "MoHD: sub-dimensions active per token (delta N, shared included)");
    s.add(k + "shared", mo->shared, 0, 4096, "MoHD: always-active shared sub-dimensions (phi N)");
    s.add(k + "fusion_groups", mo->fusion_groups, 0, 4096, "MoHD: Monarch group fusion blocks (0: no fusion)");
    s.add(k + "scaling", mo->scaling, "MoHD: activation scaling alpha of the active gates (Sec. 4.2)");
    s.add(k + "alpha", mo->alpha, {"n_sum", "k_over_sum"},
          "MoHD: the scaling's alpha: n_sum = N * sum of active gates (Sec. 4.2 as written), k_over_sum = active / sum (active weights average 1)");
    s.add(k + "fusion_init", mo->fusion_init, {"uniform", "identity"},
          "MoHD: Monarch fusion start: uniform (each factor as a linear layer of its fan-in) or identity (M = I)");
    s.add(k + "balance_beta", mo->balance_beta, 0, 1e3, "MoHD: weight beta of the sub-dimension balance loss (Eq. 13)");
  }
}

void validate(const ModelOptions& m) {
  for (auto [part, kind, mo] : {std::tuple<const char*, const std::string*, const MohdOptions*>{"attn", &m.attention, &m.mohd_attn},
                                {"ffn", &m.ffn, &m.mohd_ffn}}) {
    if (*kind != "mohd") continue;
    const std::string k = std::string("mohd.") + part + ".";
    require(m.dim % mo->sub_dims == 0, "model.dim (" + std::to_string(m.dim) + ") must be divisible by " + k + "sub_dims (" +
                                           std::to_string(mo->sub_dims) + ")");
    require(mo->active <= mo->sub_dims, k + "active must not exceed " + k + "sub_dims");
    require(mo->shared <= mo->active, k + "shared must not exceed " + k + "active");
    require(mo->fusion_groups == 0 || m.dim % mo->fusion_groups == 0,
            "model.dim must be divisible by " + k + "fusion_groups (" + std::to_string(mo->fusion_groups) + ")");
  }
}
}  // namespace

ModelKind mohd_kind() {
  ModelKind k;
  k.name = "mohd";
  k.attention_help = k.ffn_help = "MoHD sub-dimension routing";
  k.attention_routes = k.ffn_routes = "sub-dimensions";
  k.routing_modules = {".mixer.router."};
  k.fan_in_init_modules = {".monarch."};  // group fusion blocks [blocks, out, in], as a linear layer of the block's fan-in
  k.bind_options = bind;
  k.validate = validate;
  k.sparse_form = true;
  k.bench_variants = {variant("mohd_50", 8, 4, 3), variant("mohd_75", 12, 9, 3)};
  return k;
}

}  // namespace moxlab
