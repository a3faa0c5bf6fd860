// experiments/sweep: spec parsing and expansion (grid order, linked axes, seeds, list mode, label and
// overrides), the errors a typo must produce, the member availability rules and the Slurm script.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "core/common/error.h"
#include "experiments/sweep/member_claim.h"
#include "experiments/sweep/slurm_script.h"
#include "experiments/sweep/sweep_spec.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {
const char* kBase = "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\n[train]\nlr = 1e-3\nseed = 7\n";
}

TEST_CASE("a grid sweep expands seeds outermost, then the axes, with linked keys moving together", "[sweep]") {
  testing::ScratchDir dir("sweep-spec");
  dir.write("base.toml", kBase);
  const std::string path = dir.write("s.toml", R"(
name = "grid"
base = "base.toml"
seeds = [1, 2]
set = ["train.max_steps=30", "train.warmup_steps=5"]
[[axis]]
key = "train.lr"
values = [3e-3, 0.001]
[[axis]]
keys = ["model.dim", "model.n_heads"]
values = [[64, 4], [32, 2]]
[eval]
tasks = ["none"]
max_val_tokens = 100
routing_tokens_per_domain = 512
)");
  const SweepSpec spec = load_sweep_spec(path);
  CHECK(spec.name == "grid");
  CHECK(spec.base == dir.file("base.toml"));
  REQUIRE(spec.axes.size() == 2);
  CHECK(spec.eval.enabled);
  CHECK(spec.eval.max_val_tokens == 100);
  const auto members = expand_sweep(spec, "/tmp/x/runs.db");
  REQUIRE(members.size() == 8);
  CHECK(members[0].label == "train.lr=0.003 model.dim=64 model.n_heads=4 train.seed=1");
  CHECK(members[1].label == "train.lr=0.003 model.dim=32 model.n_heads=2 train.seed=1");
  CHECK(members[2].label == "train.lr=0.001 model.dim=64 model.n_heads=4 train.seed=1");
  CHECK(members[4].label == "train.lr=0.003 model.dim=64 model.n_heads=4 train.seed=2");
  const Config& c = members[5].config;
  CHECK(c.train.lr == Approx(3e-3));
  CHECK(c.model.dim == 32);
  CHECK(c.model.n_heads == 2);
  CHECK(c.train.seed == 2);
  CHECK(c.train.max_steps == 30);       // from set
  CHECK(c.model.n_layers == 2);         // from the base
  CHECK(c.run.name == "grid.5");
  CHECK(c.run.store == "/tmp/x/runs.db");
  // The spec round-trips through the store's JSON.
  const SweepEval ev = sweep_eval_from_json(sweep_spec_json(spec, "/w"));
  CHECK(ev.enabled);
  CHECK(ev.tasks == std::vector<std::string>{"none"});
  CHECK(ev.max_val_tokens == 100);
  CHECK(ev.routing_tokens_per_domain == 512);
}

TEST_CASE("a list sweep runs the given members times the seeds — no seeds means the base seed", "[sweep]") {
  testing::ScratchDir dir("sweep-list");
  dir.write("base.toml", kBase);
  const auto members = expand_sweep(load_sweep_spec(dir.write("s.toml", R"(
name = "list"
base = "base.toml"
mode = "list"
[[member]]
set = ["train.lr=0.01"]
[[member]]
set = ["model.n_layers=1", "train.lr=0.02"]
)")),
                                    "runs.db");
  REQUIRE(members.size() == 2);
  CHECK(members[0].label == "train.lr=0.01 train.seed=7");
  CHECK(members[1].config.model.n_layers == 1);
  CHECK(members[1].config.train.seed == 7);
}

TEST_CASE("sweep spec mistakes are one-line errors naming the problem", "[sweep]") {
  testing::ScratchDir dir("sweep-bad");
  dir.write("base.toml", kBase);
  auto error_of = [&](const std::string& text) {
    try {
      expand_sweep(load_sweep_spec(dir.write("bad.toml", text)), "runs.db");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("name = \"a\"\nbase = \"base.toml\"\nseed = [1]\n"), Contains("unknown key 'seed'"));
  CHECK_THAT(error_of("base = \"base.toml\"\n"), Contains("needs name"));
  CHECK_THAT(error_of("name = \"a b\"\n"), Contains("may only use letters"));
  CHECK_THAT(error_of("name = \"a\"\nbase = \"missing.toml\"\n"), Contains("cannot open config file"));
  CHECK_THAT(error_of("name = \"a\"\n[[axis]]\nkey = \"train.nope\"\nvalues = [1]\n"), Contains("train.nope"));
  CHECK_THAT(error_of("name = \"a\"\n[[axis]]\nkey = \"train.lr\"\nvalues = []\n"), Contains("has no values"));
  CHECK_THAT(error_of("name = \"a\"\n[[axis]]\nkey = \"train.lr\"\nvalue = [1]\n"), Contains("unknown key 'value'"));
  CHECK_THAT(error_of("name = \"a\"\n[[axis]]\nkeys = [\"model.dim\", \"model.n_heads\"]\nvalues = [[64]]\n"),
             Contains("array of 2 values"));
  CHECK_THAT(error_of("name = \"a\"\n[[axis]]\nkey = \"train.lr\"\nvalues = [-1.0]\n"), Contains("member 0"));
  CHECK_THAT(error_of("name = \"a\"\nseeds = [1, 1]\n"), Contains("seeds repeat"));
  CHECK_THAT(error_of("name = \"a\"\n[[axis]]\nkey = \"train.lr\"\nvalues = [0.001, 1e-3]\n"),
             Contains("members 0 and 1 have the same config"));
  CHECK_THAT(error_of("name = \"a\"\nmode = \"list\"\n"), Contains("needs [[member]]"));
  // A member's own seed would be replaced by the seed loop: refused, pointing at seeds.
  CHECK_THAT(error_of("name = \"a\"\nmode = \"list\"\n[[member]]\nset = [\"train.seed=2\"]\n"),
             Contains("member 0 sets train.seed; list seeds in seeds = [...]"));
  CHECK_THAT(error_of("name = \"a\"\nseeds = [1, 2]\nset = [\"train.seed=3\"]\n"), Contains("keep only seeds"));
  CHECK_THAT(error_of("name = \"a\"\n[eval]\ntask = []\n"), Contains("unknown key 'task'"));
  CHECK_THAT(error_of("name = \"a\"\n[[axis]\n"), Contains("bad.toml:2"));
}

TEST_CASE("member availability: finished never, failed only on retry, running only when its worker is gone", "[sweep]") {
  const double now = 1e9;
  ClaimPolicy policy;
  SweepMember m;
  m.status = "pending";
  CHECK(member_availability(m, policy, now) == MemberAvailability::free);
  m.status = "killed";
  CHECK(member_availability(m, policy, now) == MemberAvailability::free);
  m.status = "finished";
  CHECK(member_availability(m, policy, now) == MemberAvailability::finished);
  m.status = "failed";
  CHECK(member_availability(m, policy, now) == MemberAvailability::failed);
  policy.retry_failed = true;
  CHECK(member_availability(m, policy, now) == MemberAvailability::free);

  m.status = "running";
  m.worker = this_worker_id();  // this process: alive
  m.heartbeat = now - 10;
  CHECK(member_availability(m, policy, now) == MemberAvailability::held);
  m.heartbeat = now - policy.stale_after_s - 1;  // alive pid but silent: pid reuse or a hung worker
  CHECK(member_availability(m, policy, now) == MemberAvailability::free);

  const pid_t child = ::fork();  // a pid that surely belongs to no process once reaped
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const std::string self = this_worker_id();
  m.worker = self.substr(0, self.rfind(':')) + ":" + std::to_string(child);
  m.heartbeat = now;
  CHECK(worker_process_gone(m.worker));
  CHECK(member_availability(m, policy, now) == MemberAvailability::free);

  const pid_t zombie = ::fork();  // exited but not reaped: exists for kill(), yet will never write
  if (zombie == 0) ::_exit(0);
  for (int i = 0; i < 200 && !worker_process_gone(self.substr(0, self.rfind(':')) + ":" + std::to_string(zombie)); ++i)
    ::usleep(10000);
  CHECK(worker_process_gone(self.substr(0, self.rfind(':')) + ":" + std::to_string(zombie)));
  ::waitpid(zombie, nullptr, 0);

  m.worker = "some-other-node:1";  // cannot probe: the heartbeat decides
  CHECK_FALSE(worker_process_gone(m.worker));
  CHECK(member_availability(m, policy, now) == MemberAvailability::held);
}

TEST_CASE("the Slurm script lists the unfinished members compactly and runs one member per task, in its own shard or not", "[sweep]") {
  SweepRecord s{4, "grid", "{}", 0};
  std::vector<SweepMember> members(6);
  for (int i = 0; i < 6; ++i) members[i].idx = i;
  members[2].status = "finished";
  members[5].status = "finished";
  SlurmOptions o;
  o.exe = "/opt/mox lab/moxlab";
  o.store = "/data/runs.db";
  o.workdir = "/home/me/exp";
  o.log_dir = "/data/sweeps/4";
  o.partition = "cpu";
  o.cpus_per_task = 8;
  o.max_parallel = 2;
  const std::string script = slurm_array_script(s, members, o);
  CHECK_THAT(script, Contains("#SBATCH --array=0-1,3-4%2\n"));
  CHECK_THAT(script, Contains("#SBATCH --cpus-per-task=8\n"));
  CHECK_THAT(script, Contains("#SBATCH --partition=cpu\n"));
  CHECK_THAT(script, Contains("#SBATCH --output=/data/sweeps/4/slurm-%A_%a.log\n"));
  CHECK_THAT(script, Contains("cd '/home/me/exp'\n"));
  CHECK_THAT(script, Contains("exec '/opt/mox lab/moxlab' sweep run 4 --index \"$SLURM_ARRAY_TASK_ID\" --store '/data/runs.db'"));
  CHECK_THAT(script, !Contains("store merge"));  // one store: nothing to merge
  CHECK_THAT(script, Contains("#SBATCH --signal=B:TERM@120\n"));
  CHECK_THAT(script, !Contains("--ntasks") && !Contains("srun") && !Contains("MASTER_ADDR"));
  o.ranks = 4;  // each member data-parallel: srun starts the ranks, each told to stop
  const std::string ranked = slurm_array_script(s, members, o);
  CHECK_THAT(ranked, Contains("#SBATCH --ntasks=4\n#SBATCH"));
  CHECK_THAT(ranked, Contains("#SBATCH --cpus-per-task=8\n"));
  CHECK_THAT(ranked, Contains("#SBATCH --signal=TERM@120\n"));
  CHECK_THAT(ranked, Contains("export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\"\n"));
  CHECK_THAT(ranked, Contains("export MASTER_PORT=$(( 20000 + SLURM_JOB_ID % 20000 ))\n"));
  CHECK_THAT(ranked, Contains("exec srun '/opt/mox lab/moxlab' sweep run 4 --index \"$SLURM_ARRAY_TASK_ID\""));
  o.ranks = 0;
  CHECK_THROWS_WITH(slurm_array_script(s, members, o), Contains("--ranks must be at least 1"));
  o.ranks = 1;
  o.shard_dir = "/scratch/shards";  // each task its own store, merged afterwards
  const std::string sharded = slurm_array_script(s, members, o);
  CHECK_THAT(sharded, Contains("--store '/scratch/shards/4-'\"$SLURM_ARRAY_TASK_ID\".db --threads"));
  CHECK_THAT(sharded, Contains("#   '/opt/mox lab/moxlab' store merge '/scratch/shards'/4-*.db --into '/data/runs.db'\n"));
  o.shard_dir.clear();
  o.all = true;
  CHECK_THAT(slurm_array_script(s, members, o), Contains("--array=0-5%2\n"));
  for (auto& m : members) m.status = "finished";
  o.all = false;
  CHECK_THROWS_WITH(slurm_array_script(s, members, o), Contains("no unfinished members"));
}

TEST_CASE("every shipped study and sweep spec expands into valid members", "[sweep][spec]") {
  int specs = 0;
  for (const char* folder : {"/experiments/studies", "/experiments/sweeps"}) {
    for (const auto& e : std::filesystem::directory_iterator(std::string(MOXLAB_SOURCE_DIR) + folder)) {
      if (e.path().extension() != ".toml") continue;
      INFO(e.path().string());
      const auto members = expand_sweep(load_sweep_spec(e.path().string()), "runs.db");
      CHECK_FALSE(members.empty());
      ++specs;
    }
  }
  CHECK(specs >= 3);
}
