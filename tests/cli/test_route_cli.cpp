// End to end: a micro MoHD model trains, `moxlab route` captures its router taps per domain and stores
// the Fig. 11 statistics, the routing table spec renders them, and bad input is a one-line error.
#include "tests/torch_catch.h"

#include <filesystem>
#include <fstream>

#include "core/store/run_store.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

TEST_CASE("moxlab route stores per-domain router selection of a MoHD run", "[e2e][mohd][routing]") {
  const std::string dir = scratch_dir("route_cli");
  write_micro_config(dir, 12);
  const std::string mohd = " --set model.attention=mohd --set model.ffn=mohd --set mohd.attn.sub_dims=4 --set mohd.attn.active=2"
                           " --set mohd.attn.shared=1 --set mohd.attn.fusion_groups=4 --set mohd.ffn.sub_dims=4"
                           " --set mohd.ffn.active=2 --set mohd.ffn.shared=1 --set mohd.ffn.fusion_groups=4"
                           " --set run.variant=mohd_x2 --set train.threads=1";
  auto tr = run_cli("train --config micro.toml" + mohd, dir);
  INFO(tr.err);
  REQUIRE(tr.exit_code == 0);
  auto dense = run_cli("train --config micro.toml --set train.threads=1", dir);
  REQUIRE(dense.exit_code == 0);

  auto route = run_cli("route --run 1 --tokens-per-domain 64 --threads 1", dir);
  INFO(route.err);
  REQUIRE(route.exit_code == 0);
  CHECK(route.out.find("blocks.1.ffn") != std::string::npos);
  RunStore store(dir + "/runs/runs.db");
  const auto shared = store.result(1, "routing/selected/blocks.0.attn/code/0");
  REQUIRE(shared);
  CHECK(shared->value == 1.0);  // sub-dim 0 is shared: every token selects it
  // The routed sub-dims split the remaining active slot: their fractions sum to active - shared = 1.
  double routed = 0;
  for (int i = 1; i < 4; ++i) routed += store.result(1, "routing/selected/blocks.1.ffn/code/" + std::to_string(i))->value;
  CHECK(routed == Approx(1.0));
  const auto arts = store.artifacts(1, "routing");
  REQUIRE(arts.size() == 1);
  CHECK(std::filesystem::exists(arts[0].path));

  std::ofstream(dir + "/fig11.toml") << "title = \"t\"\n[select]\nwhere = { \"run.variant\" = \"mohd_x2\" }\n[layout]\n"
                                        "rows = [\"part\", \"sub\"]\ncolumns_by = \"domain\"\n[[column]]\n"
                                        "metric = \"routing/selected/blocks.0.{part}/{domain}/{sub}\"\n";
  auto table = run_cli("table fig11.toml --format csv --allow-mixed-builds", dir);  // a development tree's build is dirty
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("attn,0,1,") != std::string::npos);

  CHECK(one_line_error(run_cli("route --run 2", dir), "run 2 has no routers (not a MoHD, MoH or ToMoE model)"));
  CHECK(one_line_error(run_cli("route --capture nothing.h5", dir), "no capture file at nothing.h5"));
  CHECK(one_line_error(run_cli("route --sweep nosuch", dir), "no sweep named 'nosuch'"));
}
