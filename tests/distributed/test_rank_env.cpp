// Where a process sits in a data-parallel job (core/distributed/rank_env.h): torchrun's variables,
// Slurm's as the fallback, a single process without either, and one-line errors for bad values.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "core/common/error.h"
#include "core/distributed/rank_env.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {
RankEnv from(const std::map<std::string, std::string>& vars) {
  return rank_env_from([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}
}  // namespace

TEST_CASE("rank environment: torchrun, Slurm, a single process and the errors", "[distributed]") {
  const RankEnv single = from({});
  CHECK(single.world == 1);
  CHECK_FALSE(single.distributed());
  CHECK(single.rendezvous.empty());

  const RankEnv torchrun = from({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29500"}});
  CHECK(torchrun.rank == 3);
  CHECK(torchrun.world == 4);
  CHECK(torchrun.local_rank == 1);
  CHECK(torchrun.rendezvous == "tcp://node7:29500");

  // srun without torchrun's variables: Slurm's own; torchrun's win where both are set.
  const RankEnv slurm = from({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}, {"RANK", "0"},
                              {"MASTER_ADDR", "node1"}, {"MASTER_PORT", "6000"}});
  CHECK(slurm.rank == 0);
  CHECK(slurm.world == 2);
  CHECK(from({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MOXLAB_RENDEZVOUS_FILE", "/tmp/x"}}).rendezvous == "file:///tmp/x");

  CHECK_THROWS_WITH(from({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), Contains("RANK 2 is not below WORLD_SIZE 2"));
  CHECK_THROWS_WITH(from({{"WORLD_SIZE", "two"}}), Contains("WORLD_SIZE must be an integer"));
  CHECK_THROWS_WITH(from({{"WORLD_SIZE", "2"}}), Contains("needs MASTER_ADDR"));
  CHECK_THROWS_WITH(from({{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}), Contains("needs MASTER_PORT"));
  CHECK_THROWS_WITH(from({{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}), Contains("MASTER_PORT must be"));
}
