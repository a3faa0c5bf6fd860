// The kind registry's torch-free half (core/model/model_kind.h): the config's choices and errors, which
// kinds route, which parameters are routing parameters, and the benchmark's variants come from it.
#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/config.h"
#include "core/model/model_kind.h"

using namespace moxlab;

TEST_CASE("The registry lists each kind once, dense first, and where it plugs in", "[model][kinds]") {
  CHECK(attention_kind_names() == std::vector<std::string>{"dense", "mohd", "moh", "tomoe"});
  CHECK(ffn_kind_names() == std::vector<std::string>{"dense", "mohd", "tomoe"});  // MoH is attention only
  CHECK(attention_kind("moh").name == "moh");
  CHECK(attention_kinds_help().find("moh: MoH heads as experts") != std::string::npos);
  CHECK(ffn_kinds_help().find("tomoe: ToMoE top-1 MLP experts") != std::string::npos);
}

TEST_CASE("An unknown kind is an error naming the known ones, from the registry and the config", "[model][kinds]") {
  REQUIRE_THROWS_AS(ffn_kind("moh"), Error);
  try {
    ffn_kind("moh");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "unknown model.ffn kind 'moh' (known: dense, mohd, tomoe)");
  }
  try {
    load_config("", {"model.attention=mixture"});
    FAIL("an unknown attention kind was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'model.attention' = 'mixture' is not one of dense|mohd|moh|tomoe") != std::string::npos);
  }
}

TEST_CASE("Routers and routing parameters follow each kind's registration", "[model][kinds]") {
  // MoHD routes both parts, MoH its heads, ToMoE's FFN its experts; ToMoE's attention masks have no router taps.
  CHECK(has_routers("mohd", "dense"));
  CHECK(has_routers("dense", "mohd"));
  CHECK(has_routers("moh", "dense"));
  CHECK(has_routers("dense", "tomoe"));
  CHECK_FALSE(has_routers("tomoe", "dense"));
  CHECK_FALSE(has_routers("dense", "dense"));
  CHECK_FALSE(has_routers("unknown", "dense"));
  CHECK(is_routing_parameter("hypernet.gru.weight_ih_l0"));
  CHECK(is_routing_parameter("blocks.0.attn.masker.dec.bias"));
  CHECK(is_routing_parameter("blocks.1.ffn.expert_router.proj.weight"));
  CHECK(is_routing_parameter("blocks.2.attn.head_router.w_routed.weight"));
  CHECK(is_routing_parameter("blocks.0.ffn.mixer.router.centroids"));
  CHECK_FALSE(is_routing_parameter("blocks.0.ffn.mixer.monarch.b1"));  // fusion is part of the model
  CHECK_FALSE(is_routing_parameter("blocks.0.attn.wq.weight"));
  CHECK_FALSE(is_routing_parameter("tok_embeddings.weight"));
}

TEST_CASE("The benchmark's variants come from the kinds, in registration order", "[model][kinds]") {
  std::vector<std::string> names;
  for (const auto& k : model_kinds())
    for (const auto& v : k.bench_variants) names.push_back(v.name);
  CHECK(names == std::vector<std::string>{"dense", "mohd_50", "mohd_75", "moh_75", "moh_50", "tomoe_50", "tomoe_40"});
  ModelOptions dense;
  dense.dim = 384;
  dense.n_heads = 8;
  const auto& mohd = attention_kind("mohd").bench_variants;
  const ModelOptions m50 = mohd[0].options(dense);
  CHECK((m50.attention == "mohd" && m50.ffn == "mohd" && m50.mohd_attn.sub_dims == 8 && m50.mohd_attn.active == 4));
  const ModelOptions moh50 = attention_kind("moh").bench_variants[1].options(dense);
  CHECK((moh50.attention == "moh" && moh50.ffn == "dense" && moh50.moh.shared == 2 && moh50.moh.active == 4));
  CHECK(attention_kind("moh").active_heads(moh50, 0) == 4);
  CHECK(attention_kind("tomoe").bench_variants[0].convert_keep == 0.5);
  dense.dim = 100;  // not a multiple of 12 sub-dimensions
  CHECK_THROWS_WITH(mohd[1].options(dense), Catch::Contains("needs model.dim divisible by 12"));
}
