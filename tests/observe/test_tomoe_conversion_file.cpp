// core/observe/tomoe_conversion_file: the ToMoE conversion record round-trips through HDF5 exactly, is
// written atomically, and bad input (inconsistent layers, a truncated or foreign file) is a one-line Error.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/common/error.h"
#include "core/observe/tomoe_conversion_file.h"
#include "core/store/tensor_log_writer.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {
TomoeConversionRecord two_layers() {
  TomoeConversionRecord r;
  r.run_id = 7;
  r.target_active = 0.5;
  r.active_ratio = 0.4875;
  r.conversion_rule = "code";
  r.head_dim = 8;
  r.d_mid = 48;
  r.experts = 2;
  r.qk_width = {8, 4};
  r.vo_top_k = {6, 3};
  r.mlp_width = {40, 20};
  r.mlp_min_width = {30, 18};
  r.mlp_union = {1.0, 0.75};
  r.vo_union = {1.0, 0.5};
  r.expert_similarity = {0.6, 0.25};
  r.expert_widths = {{40, 30}, {18, 20}};
  r.expert_jaccard = {{1, 0.6, 0.6, 1}, {1, 0.25, 0.25, 1}};
  return r;
}
}  // namespace

TEST_CASE("ToMoE conversion file round-trips every field", "[observe][tomoe]") {
  const testing::ScratchDir scratch("tomoe_conversion_file");
  const std::string path = scratch.file("conv.h5");
  const TomoeConversionRecord r = two_layers();
  write_tomoe_conversion(path, r);
  const TomoeConversionRecord b = read_tomoe_conversion(path);
  CHECK(b.run_id == 7);
  CHECK(b.target_active == 0.5);
  CHECK(b.active_ratio == 0.4875);
  CHECK(b.conversion_rule == "code");
  CHECK(b.head_dim == 8);
  CHECK(b.d_mid == 48);
  CHECK(b.experts == 2);
  CHECK(b.layers() == 2);
  CHECK(b.qk_width == r.qk_width);
  CHECK(b.vo_top_k == r.vo_top_k);
  CHECK(b.mlp_width == r.mlp_width);
  CHECK(b.mlp_min_width == r.mlp_min_width);
  CHECK(b.mlp_union == r.mlp_union);
  CHECK(b.vo_union == r.vo_union);
  CHECK(b.expert_similarity == r.expert_similarity);
  CHECK(b.expert_widths == r.expert_widths);
  CHECK(b.expert_jaccard == r.expert_jaccard);
}

TEST_CASE("ToMoE conversion file: bad input is a one-line error and nothing is half-written", "[observe][tomoe]") {
  const testing::ScratchDir scratch("tomoe_conversion_file_bad");
  const std::string dir = scratch.path.string();
  TomoeConversionRecord r = two_layers();
  r.expert_widths[1].push_back(3);  // 3 experts in layer 1, 2 elsewhere
  CHECK_THROWS_WITH(write_tomoe_conversion(dir + "/bad.h5", r), Contains("expert widths"));
  CHECK_FALSE(std::filesystem::exists(dir + "/bad.h5"));
  r = two_layers();
  r.vo_union.pop_back();
  CHECK_THROWS_WITH(write_tomoe_conversion(dir + "/bad.h5", r), Contains("2 layers"));
  CHECK_THROWS_WITH(read_tomoe_conversion(dir + "/missing.h5"), Contains("missing.h5"));
  {
    TensorLogWriter w(dir + "/foreign.h5");
    w.write("/x", std::vector<double>{1.0});
    w.finish();
  }
  CHECK_THROWS_WITH(read_tomoe_conversion(dir + "/foreign.h5"), Contains("not a moxlab ToMoE conversion file"));
  write_tomoe_conversion(dir + "/good.h5", two_layers());
  const auto size = std::filesystem::file_size(dir + "/good.h5");
  std::filesystem::copy_file(dir + "/good.h5", dir + "/trunc.h5");
  std::filesystem::resize_file(dir + "/trunc.h5", size / 2);
  CHECK_THROWS_WITH(read_tomoe_conversion(dir + "/trunc.h5"), Contains("trunc.h5"));
}
