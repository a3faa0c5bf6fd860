// The engine's ViT plan (image evaluation and image captures) equals the VisionTransformer's forward,
// for dense and MoH attention, with the same taps.
#include "tests/torch_catch.h"

#include "core/engine/vit_plan.h"
#include "core/model/vision_transformer.h"

using namespace moxlab;

TEST_CASE("VitPlan equals the ViT's forward, taps included (dense and MoH attention)", "[engine][vit]") {
  for (const std::string attention : {"dense", "moh"}) {
    INFO(attention);
    ModelOptions o;
    o.dim = 64;  // head width 16: the fused attention kernel
    o.n_layers = 2;
    o.n_heads = 4;
    o.n_kv_heads = 2;
    o.patch_size = 4;
    o.attention = attention;
    o.moh.shared = 1;
    o.moh.active = 3;
    torch::manual_seed(3);
    VisionTransformer vit(o, ImageGeometry{});
    vit.init_weights(2);
    vit.eval();
    const auto pixels = torch::randint(0, 256, {3, 28, 28}, torch::kUInt8);
    torch::NoGradGuard ng;
    TapRecorder want_taps("blocks.1.attn.*,blocks.0.resid.out"), got_taps("blocks.1.attn.*,blocks.0.resid.out");
    Analysis want_an, got_an;
    want_an.tap_recorder = &want_taps;
    got_an.tap_recorder = &got_taps;
    const auto want = vit.forward(pixels, want_an);
    VitPlan plan(vit);
    const auto got = plan.forward(pixels, &got_an);
    CHECK(torch::allclose(got, want, 1e-4, 1e-5));
    auto w = want_taps.take(), g = got_taps.take();
    REQUIRE(w.size() == g.size());
    for (const auto& [name, t] : w) {
      INFO(name);
      REQUIRE(g.count(name));
      CHECK(torch::allclose(g.at(name), t, 1e-4, 1e-5));
    }
  }
}
