// core/data/domain_subset: train.domains restricts the training split to chosen domains (ToMoE Fig. 6's
// single-domain calibration); unknown or repeated names are one-line errors naming the domains.
#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "core/config/config.h"
#include "core/data/shards/domain_subset.h"

using namespace moxlab;
using Catch::Matchers::Contains;

TEST_CASE("domain subset keeps the chosen domains in the given order", "[data]") {
  auto src = std::make_shared<VectorTokenSource>();
  src->add("books", {1, 2, 3}, 30);
  src->add("code", {4, 5}, 20);
  src->add("legal", {6, 7, 8, 9}, 40);
  CHECK(restrict_domains(src, {}) == src);
  auto sub = restrict_domains(src, {"legal", "books"});
  REQUIRE(sub->num_domains() == 2);
  CHECK(sub->domain_name(0) == "legal");
  CHECK(sub->size(0) == 4);
  CHECK(sub->text_bytes(0) == 40);
  CHECK(sub->domain_name(1) == "books");
  std::int32_t out[2];
  sub->read(0, 1, 2, out);
  CHECK(out[0] == 7);
  CHECK(out[1] == 8);
  CHECK_THROWS_WITH(restrict_domains(src, {"news"}), Contains("unknown domain 'news'") && Contains("books, code, legal"));
  CHECK_THROWS_WITH(restrict_domains(src, {"code", "code"}), Contains("'code' is listed twice"));
}

TEST_CASE("train.domains is a config list of strings", "[data][config]") {
  Config c;
  apply_override(c, "train.domains=[code, books]");
  REQUIRE(c.train.domains.size() == 2);
  CHECK(c.train.domains[0] == "code");
  CHECK(c.train.domains[1] == "books");
}
