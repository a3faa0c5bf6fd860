// The kind registry's LibTorch half (core/model/kind_modules.h): every registered kind has its modules, and
// the factories build the module of each kind.
#include <algorithm>

#include "core/common/error.h"
#include "core/model/kind_modules.h"
#include "core/model/mohd/mohd_components.h"
#include "core/model/model_kind.h"
#include "core/model/moh/moh_attention.h"
#include "core/model/tomoe/tomoe_modules.h"
#include "tests/model/tiny_model.h"
#include "tests/torch_catch.h"

using namespace moxlab;

TEST_CASE("Every registered kind has its module factories and nothing else does", "[model][kinds]") {
  std::vector<std::string> described;
  for (const auto& k : model_kinds()) described.push_back(k.name);
  auto with_modules = kinds_with_modules();
  std::sort(described.begin(), described.end());
  std::sort(with_modules.begin(), with_modules.end());
  CHECK(with_modules == described);
}

TEST_CASE("The factories build each kind's modules and name the known kinds for another", "[model][kinds]") {
  ModelOptions o = test::tiny_model();
  o.mohd_attn.sub_dims = o.mohd_ffn.sub_dims = 4;
  o.mohd_attn.active = o.mohd_ffn.active = 2;
  o.mohd_attn.shared = o.mohd_ffn.shared = 1;
  o.mohd_attn.fusion_groups = o.mohd_ffn.fusion_groups = 4;
  o.moh.shared = 1;
  o.moh.active = 2;
  o.tomoe.experts = 2;
  o.attention = "dense";
  CHECK(std::dynamic_pointer_cast<DenseAttention>(make_attention(o, 0)));
  CHECK(std::dynamic_pointer_cast<SwiGLU>(make_ffn(o, 0)));
  o.attention = o.ffn = "mohd";
  CHECK(std::dynamic_pointer_cast<MohdAttention>(make_attention(o, 0)));
  CHECK(std::dynamic_pointer_cast<MohdFeedForward>(make_ffn(o, 0)));
  o.attention = "moh";
  CHECK(std::dynamic_pointer_cast<MohAttention>(make_attention(o, 1)));
  o.attention = o.ffn = "tomoe";
  CHECK(std::dynamic_pointer_cast<TomoeAttention>(make_attention(o, 0)));
  CHECK(std::dynamic_pointer_cast<TomoeFeedForward>(make_ffn(o, 0)));
  o.ffn = "moh";
  CHECK_THROWS_WITH(make_ffn(o, 0), "unknown model.ffn kind 'moh' (known: dense, mohd, tomoe)");
}
