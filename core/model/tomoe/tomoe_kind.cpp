#include "core/config/schema.h"
#include "core/model/model_kind.h"

namespace moxlab {

namespace {
void bind(Schema& s, ModelOptions& m) {
  auto& te = m.tomoe;
  s.add("tomoe.experts", te.experts, 1, 4096, "ToMoE: MLP experts N per layer");
  s.add("tomoe.tau", te.tau, 1e-3, 100.0, "ToMoE: Gumbel temperature of the straight-through gates (Eq. 14-15)");
  s.add("tomoe.offset", te.offset, -100.0, 100.0, "ToMoE: Gumbel-Sigmoid offset b (Eq. 15; 3 keeps every channel at the start)");
  s.add("tomoe.hypernet_input", te.hypernet_input, 1, 4096, "ToMoE: size of the hypernetwork's fixed random inputs (Eq. 1)");
  s.add("tomoe.hypernet_hidden", te.hypernet_hidden, 1, 4096, "ToMoE: GRU hidden size per direction (expert embedding = 2x)");
  s.add("tomoe.active", te.active, 1e-3, 1.0, "ToMoE: target ratio p of active to total parameters (Eq. 8)");
  s.add("tomoe.alpha", te.alpha, 0.0, 1e6, "ToMoE: weight alpha of the parameter regulariser (Eq. 10)");
  s.add("tomoe.beta", te.beta, 0.0, 1e6, "ToMoE: weight beta of the union-of-experts regulariser (Eq. 10)");
  s.add("tomoe.gamma", te.gamma, 0.0, 1e6, "ToMoE: weight gamma of the load-balance regulariser (Eq. 10)");
  s.add("tomoe.load_balance", te.load_balance, {"official", "paper"},
        "ToMoE: R_L form: official = sum F_i P_i, P from the straight-through routes (balanced: 1/N); paper = Eq. 9, N sum F_i P_i, P the router softmax");
  s.add("tomoe.mask_noise", te.mask_noise, {"token", "expert", "none"},
        "ToMoE: Gumbel noise of the gates in training: per token (Eq. 3, official), one draw per expert / per pass, or none (deterministic gates)");
  s.add("tomoe.min_qk_pairs", te.min_qk_pairs, 0, 4096,
        "ToMoE: q/k rotation pairs a layer keeps at least when its q/k mask freezes (official 1; 0 allows none)");
  s.add("tomoe.conversion", te.conversion, {"code", "paper"},
        "ToMoE: how trained gates become the MoE (code: masks frozen from one noisy draw, v/o K = widest noisy token "
        "per calibration batch - the official code, lands near p; paper: noise-free masks, K = mean kept count)");
  s.add("tomoe.expert_widths", te.expert_widths, {"widest", "own"},
        "ToMoE: converted experts' widths: widest = every expert of a layer grown to the widest one's width by its "
        "gate scores (App. B, official); own = each keeps its own frozen draw's channels");
}
}  // namespace

ModelKind tomoe_kind() {
  ModelKind k;
  k.name = "tomoe";
  k.attention_help = "ToMoE head-dim masks";
  k.ffn_help = "ToMoE top-1 MLP experts";
  k.ffn_routes = "experts";
  k.bind_options = bind;
  k.routing_modules = k.torch_default_init_modules = {".hypernet.", ".masker.", ".expert_router."};
  // The dense shape converted into the MoE (random weights: speed depends on the shapes only).
  const auto dense = [](const ModelOptions& o) { return o; };
  k.bench_variants = {{"tomoe_50", dense, 0.5}, {"tomoe_40", dense, 0.4}};
  return k;
}

}  // namespace moxlab
