// End-to-end sweeps: `moxlab sweep plan/run/status/slurm` on the micro config with two worker
// processes, interrupted by SIGTERM and then by SIGKILL of the whole process group, and finished by a
// plain re-run: finished members are never repeated, interrupted ones resume their own runs, and the
// metric curves hold each step once. Failed members are recorded with their error and not retried
// unless asked.
#include "tests/torch_catch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "core/store/run_store.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

// Starts `moxlab args` in dir as the leader of a new process group (so the test can kill the
// scheduler together with its workers); output goes to dir/log.
pid_t spawn_cli(const std::vector<std::string>& args, const std::string& dir, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(MOXLAB_CLI)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(MOXLAB_CLI, argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent: no race with the kill below
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Polls the store until pred(members) holds (or fails the test after the timeout).
template <class Pred>
std::vector<SweepMember> wait_for(RunStore& store, std::int64_t sweep, Pred pred, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  for (;;) {
    auto members = store.sweep_members(sweep);
    if (pred(members)) return members;
    if (std::chrono::steady_clock::now() > deadline) FAIL("timed out waiting for " << what);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int count(const std::vector<SweepMember>& ms, const std::string& status) {
  int n = 0;
  for (const auto& m : ms) n += m.status == status;
  return n;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("A sweep with two workers survives SIGTERM and SIGKILL and finishes without repeating members",
          "[e2e][sweep]") {
  const std::string dir = scratch_dir("sweep");
  write_micro_config(dir, 60);
  std::ofstream(dir + "/sweep.toml") << "name = \"micro_lr\"\nbase = \"micro.toml\"\nseeds = [1, 2]\n"
                                        "[[axis]]\nkey = \"train.lr\"\nvalues = [5e-3, 2e-3]\n"
                                        "[[axis]]\nkeys = [\"model.dim\", \"model.n_heads\"]\nvalues = [[64, 4]]\n"
                                        "[eval]\ntasks = [\"none\"]\nmax_val_tokens = 2048\n";
  auto plan = run_cli("sweep plan sweep.toml", dir);
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  const std::int64_t id = std::stoll(plan.out);
  auto again = run_cli("sweep plan sweep.toml", dir);  // the same plan is reused, not duplicated
  CHECK(std::stoll(again.out) == id);
  RunStore store(dir + "/runs/runs.db");
  REQUIRE(store.sweep_members(id).size() == 4);

  // 1. SIGTERM once a member has finished: workers checkpoint and their members are marked killed.
  const std::vector<std::string> run_args{"sweep", "run", std::to_string(id), "--workers", "2", "--threads", "1"};
  pid_t pid = spawn_cli(run_args, dir, dir + "/run1.log");
  wait_for(store, id, [](const auto& ms) { return count(ms, "finished") >= 1; }, "a finished member");
  ::kill(pid, SIGTERM);
  INFO(slurp(dir + "/run1.log"));
  const int rc1 = wait_exit(pid);
  auto after_term = store.sweep_members(id);
  CHECK(count(after_term, "running") == 0);
  if (count(after_term, "finished") < 4) CHECK(rc1 == 2);
  std::map<int, SweepMember> finished_first;
  for (const auto& m : after_term)
    if (m.status == "finished") finished_first[m.idx] = m;

  // 2. SIGKILL of scheduler and workers once a running member has a checkpoint: nothing gets recorded.
  std::optional<SweepMember> victim;
  if (finished_first.size() < 4) {
    pid = spawn_cli(run_args, dir, dir + "/run2.log");
    auto ms = wait_for(store, id, [&](const auto& members) {
      for (const auto& m : members)
        if (m.status == "running" && m.run_id && !store.artifacts(*m.run_id, "checkpoint").empty() &&
            store.get_run(*m.run_id).status == RunStatus::running)
          return true;
      return count(members, "finished") == 4;
    }, "a running member with a checkpoint");
    for (const auto& m : ms)
      if (m.status == "running" && m.run_id && !store.artifacts(*m.run_id, "checkpoint").empty()) victim = m;
    ::kill(-pid, SIGKILL);
    wait_exit(pid);
  }

  // 3. A plain re-run finishes the rest, its workers and threads chosen by --workers auto.
  auto rerun = run_cli("sweep run " + std::to_string(id) + " --workers auto", dir);
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  CHECK(rerun.err.find("x auto thread(s)") != std::string::npos);
  const auto done = store.sweep_members(id);
  REQUIRE(count(done, "finished") == 4);
  for (const auto& [idx, before] : finished_first) {  // never repeated
    CHECK(done[idx].run_id == before.run_id);
    CHECK(done[idx].attempts == before.attempts);
    CHECK(done[idx].finished_at == before.finished_at);
  }
  if (victim && victim->status == "running") {  // resumed its own run from the checkpoint
    CHECK(done[victim->idx].run_id == victim->run_id);
    CHECK(done[victim->idx].attempts > victim->attempts);
  }
  for (const auto& m : done) {
    REQUIRE(m.run_id);
    const RunRecord r = store.get_run(*m.run_id);
    CHECK(r.status == RunStatus::finished);
    CHECK(r.sweep_id == id);
    CHECK(store.result(r.id, "ppl/val/all"));  // the sweep's [eval] ran
    const auto loss = store.metrics(r.id, "train/loss");
    REQUIRE(!loss.empty());
    CHECK(loss.back().step == 60);
    for (std::size_t i = 1; i < loss.size(); ++i) CHECK(loss[i].step > loss[i - 1].step);  // each step once
  }
  // Runs not owned by a member can only be ones abandoned before their first checkpoint.
  for (const auto& r : store.list_runs())
    if (r.kind == "train") {
      bool owned = false;
      for (const auto& m : done) owned = owned || m.run_id == r.id;
      if (!owned) CHECK(r.error.find("abandoned before its first checkpoint") != std::string::npos);
    }

  // The sweep's table: seeds pooled per learning rate, in all three formats, traceable to the runs.
  std::ofstream(dir + "/table.toml") << "title = \"micro lr\"\n[select]\nsweep = \"micro_lr\"\n"
                                        "[layout]\nrows = [\"train.lr\"]\n"
                                        "[[column]]\nmetric = \"ppl/val/all\"\nlabel = \"val ppl\"\n";
  // One build trained them all; a development tree's build is dirty, which a table refuses to pin.
  const bool dirty = store.get_run(*done[0].run_id).git_rev.find("+dirty") != std::string::npos;
  if (dirty) {
    auto refused = run_cli("table table.toml", dir);
    CHECK(refused.exit_code != 0);
    CHECK(refused.err.find("cannot be pinned") != std::string::npos);
  }
  const std::string allow = dirty ? " --allow-mixed-builds" : "";
  for (const char* format : {"md", "csv", "latex"}) {
    auto table = run_cli(std::string("table table.toml --format ") + format + " --out table." + format + allow, dir);
    INFO(table.err);
    REQUIRE(table.exit_code == 0);
    const std::string text = slurp(dir + "/table." + format);
    for (const auto& m : done) CHECK(text.find(std::to_string(*m.run_id)) != std::string::npos);  // provenance
    CHECK(text.find(store.get_run(*done[0].run_id).config_hash.substr(0, 12)) != std::string::npos);
    if (std::string(format) != "csv") CHECK(text.find("n=2") != std::string::npos);
    if (std::string(format) != "csv") CHECK(text.find(dirty ? "MIXED BUILDS" : "builds: one build: ") != std::string::npos);
  }

  // Observations of a member's model: results on its run, curves in the HDF5 artifact.
  auto observe = run_cli("observe --run " + std::to_string(*done[0].run_id) + " --tokens 256 --threads 1", dir);
  INFO(observe.err);
  REQUIRE(observe.exit_code == 0);
  CHECK(store.result(*done[0].run_id, "observe/sparsity/blocks.1.ffn.out"));
  CHECK(store.result(*done[0].run_id, "observe/flow_median/blocks.0.ffn.act"));
  REQUIRE(store.artifacts(*done[0].run_id, "observations").size() == 1);
  CHECK(std::filesystem::exists(store.artifacts(*done[0].run_id, "observations")[0].path));

  auto idx0 = run_cli("sweep run " + std::to_string(id) + " --index 0", dir);
  CHECK(idx0.exit_code == 0);
  CHECK(idx0.err.find("already finished") != std::string::npos);
  auto status = run_cli("sweep status " + std::to_string(id), dir);
  CHECK(status.out.find("4 members: 4 finished") != std::string::npos);
  CHECK(one_line_error(run_cli("sweep status 99", dir), "no sweep with id 99"));
}

TEST_CASE("A failing sweep member is recorded with its error and retried only when asked", "[e2e][sweep]") {
  const std::string dir = scratch_dir("sweep_fail");
  write_micro_config(dir, 20);
  // vocab_size 100 is smaller than the micro BPE's 512: valid config, fails once the tokenizer exists.
  std::ofstream(dir + "/sweep.toml") << "name = \"fails\"\nbase = \"micro.toml\"\nmode = \"list\"\n"
                                        "[[member]]\nset = [\"model.vocab_size=100\"]\n";
  auto plan = run_cli("sweep plan sweep.toml", dir);
  REQUIRE(plan.exit_code == 0);
  const std::string id = std::to_string(std::stoll(plan.out));
  auto run = run_cli("sweep run " + id, dir);
  CHECK(run.exit_code == 1);
  RunStore store(dir + "/runs/runs.db");
  SweepMember m = store.sweep_member(std::stoll(id), 0);
  CHECK(m.status == "failed");
  CHECK(m.error.find("vocab_size") != std::string::npos);
  CHECK(m.attempts == 1);
  CHECK(run_cli("sweep run " + id, dir).exit_code == 1);  // not retried
  CHECK(store.sweep_member(std::stoll(id), 0).attempts == 1);
  CHECK(run_cli("sweep run " + id + " --index 0", dir).exit_code == 3);
  CHECK(run_cli("sweep run " + id + " --retry-failed", dir).exit_code == 1);
  CHECK(store.sweep_member(std::stoll(id), 0).attempts == 2);
  auto slurm = run_cli("sweep slurm " + id + " --cpus 4", dir);
  REQUIRE(slurm.exit_code == 0);
  const std::string script = slurp(slurm.out.substr(0, slurm.out.size() - 1));
  CHECK(script.find("#SBATCH --array=0\n") != std::string::npos);
  CHECK(script.find("--index \"$SLURM_ARRAY_TASK_ID\"") != std::string::npos);
  CHECK(one_line_error(run_cli("sweep plan nothing.toml", dir), "cannot open sweep spec nothing.toml"));
}

TEST_CASE("A sweep member whose checkpoint file is gone starts again instead of failing its resume", "[e2e][sweep]") {
  // What a study store carried to another machine holds: a member left running, with a checkpoint
  // recorded on the machine that is gone.
  const std::string dir = scratch_dir("sweep_lost_checkpoint");
  write_micro_config(dir, 40);
  std::ofstream(dir + "/sweep.toml") << "name = \"lost\"\nbase = \"micro.toml\"\nmode = \"list\"\n[[member]]\nset = []\n";
  auto plan = run_cli("sweep plan sweep.toml", dir);
  REQUIRE(plan.exit_code == 0);
  const std::string id = std::to_string(std::stoll(plan.out));
  // The checkpoint is gone with the killed member's machine.
  interrupt_at_first_checkpoint("sweep run " + id + " --index 0", dir, "kill -KILL $pid; wait $pid; rm -f runs/*/checkpoint.pt");
  auto again = run_cli("sweep run " + id + " --index 0", dir);
  INFO(file_text(dir + "/a.err") << again.out << again.err);
  REQUIRE(again.exit_code == 0);
  RunStore store(dir + "/runs/runs.db");
  const SweepMember m = store.sweep_member(std::stoll(id), 0);
  CHECK(m.status == "finished");
  REQUIRE(m.run_id.has_value());
  CHECK(*m.run_id == 2);  // a new run
  const RunRecord first = store.get_run(1);
  CHECK(first.status == RunStatus::failed);
  CHECK(first.error.find("is gone; the sweep member restarts") != std::string::npos);
}
