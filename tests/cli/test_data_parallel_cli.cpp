// Data-parallel training through the moxlab binary (`train --nproc 2`: two Gloo ranks on this machine,
// one thread each): the same losses and final weights as one process with the doubled micro-batch for a
// dense, a MoHD and a ToMoE model (balance and ToMoE statistics taken over both ranks' rows; ToMoE with
// more experts than a rank has tokens, so some expert gets no token on a rank in every step); a rank
// killed mid-run fails the run, and `--resume` with two ranks finishes it on the uninterrupted curve (or
// one process with the doubled micro-batch, the same global batch, up to float rounding); a
// sweep member runs data-parallel from the script `sweep slurm --ranks 2` writes (srun faked).
#include "tests/torch_catch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/store/run_store.h"
#include "core/train/checkpoint.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

constexpr int kSteps = 6;

// The per-step training loss of run 1 of a store.
std::vector<double> loss_curve(const std::string& store) {
  RunStoreOptions ro;
  ro.read_only = true;
  std::vector<double> out;
  for (const auto& m : RunStore(store, ro).metrics(1, "train/loss")) out.push_back(m.value);
  return out;
}

std::string checkpoint_of(const std::string& store) {
  RunStoreOptions ro;
  ro.read_only = true;
  return RunStore(store, ro).artifacts(1, "checkpoint").at(0).path;
}

// Largest absolute difference over every parameter and buffer of two checkpoints' models.
double weight_difference(const std::string& a, const std::string& b) {
  const LoadedCheckpoint x = load_checkpoint(a), y = load_checkpoint(b);
  auto px = x.model->named_parameters(), py = y.model->named_parameters();
  double worst = 0;
  for (const auto& item : px) worst = std::max(worst, (item.value() - py[item.key()]).abs().max().item<double>());
  auto bx = x.model->named_buffers(), by = y.model->named_buffers();
  for (const auto& item : bx)
    if (item.value().is_floating_point()) worst = std::max(worst, (item.value() - by[item.key()]).abs().max().item<double>());
  return worst;
}

// Trains `sets` for kSteps as 2 ranks x micro-batch 8 and as 1 process x 16, into the stores
// runs/<name>_two.db and runs/<name>_one.db.
void train_both(const std::string& dir, const std::string& name, const std::string& sets) {
  const std::string common = "train --config micro.toml --set train.max_steps=" + std::to_string(kSteps) +
                             " --set train.log_every=1 --set train.eval_every=3 --set train.warmup_steps=2 " + sets;
  const CliResult two = run_cli(common + " --set train.batch_size=8 --set run.store=runs/" + name + "_two.db --set run.out_dir=runs/" + name + "_two --nproc 2", dir);
  INFO(two.err);
  REQUIRE(two.exit_code == 0);
  CHECK(two.out.find("finished at step " + std::to_string(kSteps) + " (" + std::to_string(kSteps * 16 * 64) + " tokens") !=
        std::string::npos);
  const CliResult one = run_cli(common + " --set train.batch_size=16 --set run.store=runs/" + name + "_one.db --set run.out_dir=runs/" + name + "_one", dir);
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
}

void check_same_steps(const std::string& dir, const std::string& name) {
  const std::string two_db = dir + "/runs/" + name + "_two.db", one_db = dir + "/runs/" + name + "_one.db";
  const auto two = loss_curve(two_db), one = loss_curve(one_db);
  REQUIRE(two.size() == static_cast<std::size_t>(kSteps));
  REQUIRE(one.size() == two.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    INFO("step " << i + 1);
    CHECK(two[i] == Approx(one[i]).epsilon(1e-5));
  }
  CHECK(weight_difference(checkpoint_of(two_db), checkpoint_of(one_db)) < 2e-5);
}

}  // namespace

TEST_CASE("Two data-parallel ranks take the steps of one process with the doubled micro-batch", "[e2e][distributed]") {
  const std::string dir = scratch_dir("dp_equal");
  write_micro_config(dir, kSteps);
  SECTION("dense") {
    train_both(dir, "dense", "");
    check_same_steps(dir, "dense");
  }
  SECTION("MoHD: 3 shared + top-1 of 5 sub-dimensions, balance loss over both ranks' tokens") {
    train_both(dir, "mohd", "--set model.attention=mohd --set mohd.attn.sub_dims=8 --set mohd.attn.active=4 --set mohd.attn.shared=3 "
                    "--set model.ffn=mohd --set mohd.ffn.sub_dims=8 --set mohd.ffn.active=4 --set mohd.ffn.shared=3");
    check_same_steps(dir, "mohd");
  }
  SECTION("ToMoE: routing trained by self-distillation, regularisers over both ranks' tokens") {
    // Without gate noise: the ranks cannot draw one process's noise for their rows (mask_noise = none
    // makes the gates deterministic; with noise each rank draws its own, trainer.h join()). 520 experts
    // for a rank's 512 tokens: in every step some experts get no token on a rank (most on both).
    train_both(dir, "tomoe", "--set model.attention=tomoe --set model.ffn=tomoe --set tomoe.mask_noise=none --set tomoe.experts=520 "
                    "--set train.loss=distill --set train.trainable=routing --set train.lr=1e-3");
    check_same_steps(dir, "tomoe");
  }
}

TEST_CASE("A data-parallel run whose rank dies is failed, and resumes with its ranks on the uninterrupted curve",
          "[e2e][distributed]") {
  const std::string dir = scratch_dir("dp_kill");
  write_micro_config(dir, 60);  // checkpoints every 20 steps, logs every 10
  const std::string dp = "train --config micro.toml --set train.batch_size=8 --nproc 2";
  // Rank 1 (the launcher's child with RANK=1) is killed once rank 0 has written the first checkpoint (step 20).
  interrupt_at_first_checkpoint(dp, dir,
                                "for c in $(awk -v p=$pid '$4 == p {print $1}' /proc/[0-9]*/stat 2>/dev/null); do "
                                "if tr '\\0' '\\n' < /proc/$c/environ | grep -qx RANK=1; then kill -KILL $c; fi; done");
  INFO(file_text(dir + "/a.err"));
  CHECK(file_text(dir + "/a.rc") != "0\n");
  {
    RunStoreOptions ro;
    ro.read_only = true;
    const RunRecord r = RunStore(dir + "/runs/runs.db", ro).get_run(1);
    CHECK(r.status == RunStatus::failed);
  }
  // One process with the same micro-batch cannot take over a two-rank run: its batch would halve (the
  // error after the data's log line).
  const CliResult alone = run_cli("train --config micro.toml --set train.batch_size=8 --resume", dir);
  CHECK(alone.exit_code == 1);
  CHECK(alone.err.find("moxlab: error: run 1 was trained with a global batch of 16 rows (2 data-parallel rank(s) x "
                       "train.batch_size 8); resume it with ranks x train.batch_size = 16 (this is 1 x 8)") != std::string::npos);

  const CliResult resumed = run_cli(dp + " --resume", dir);
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.out.find("finished at step 60") != std::string::npos);

  // The uninterrupted curve: the same two ranks, never stopped. (One process with the doubled micro-batch
  // takes the same steps up to float rounding, which 60 steps of training amplify to ~1e-3: the first
  // test case compares it over a few steps.)
  const CliResult whole = run_cli(dp + " --set run.store=runs/whole.db --set run.out_dir=runs/whole", dir);
  INFO(whole.err);
  REQUIRE(whole.exit_code == 0);
  const auto a = loss_curve(dir + "/runs/runs.db"), b = loss_curve(dir + "/runs/whole.db");
  REQUIRE(a.size() == 6);  // every 10 steps, none twice
  REQUIRE(b.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-6));
}

TEST_CASE("A data-parallel run resumes in one process that takes the whole global batch", "[e2e][distributed]") {
  const std::string dir = scratch_dir("dp_regroup");
  write_micro_config(dir, 40);  // checkpoints every 20 steps, logs every 10
  const std::string dp = "train --config micro.toml --set train.batch_size=8 --nproc 2";
  // Both ranks are told to stop once the first checkpoint is written: the run is killed after a step.
  interrupt_at_first_checkpoint(dp, dir, "kill -TERM $pid");
  INFO(file_text(dir + "/a.err"));
  RunStoreOptions ro;
  ro.read_only = true;
  REQUIRE(RunStore(dir + "/runs/runs.db", ro).get_run(1).status != RunStatus::finished);

  // One process, one rank's micro-batch twice over: the same global batch of 16 rows.
  const CliResult alone = run_cli("train --config micro.toml --set train.batch_size=16 --resume", dir);
  INFO(alone.err);
  REQUIRE(alone.exit_code == 0);
  CHECK(alone.out.find("finished at step 40 (" + std::to_string(40 * 16 * 64) + " tokens") != std::string::npos);
  {
    RunStore store(dir + "/runs/runs.db", ro);
    CHECK(store.result(1, "train/world_size")->value == 2);
    CHECK(store.result(1, "train/resumed_world_size")->value == 1);
  }
  // Against the uninterrupted two-rank run: the same steps up to float rounding (one process sums the
  // 16 rows' gradients in another order than two ranks' all-reduce).
  const CliResult whole = run_cli(dp + " --set run.store=runs/whole.db --set run.out_dir=runs/whole", dir);
  INFO(whole.err);
  REQUIRE(whole.exit_code == 0);
  const auto a = loss_curve(dir + "/runs/runs.db"), b = loss_curve(dir + "/runs/whole.db");
  REQUIRE(a.size() == 4);  // every 10 steps, none twice
  REQUIRE(b.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-3));
}

TEST_CASE("bench train --nproc 2 times two ranks against one process with two threads", "[e2e][distributed][bench]") {
  const std::string dir = scratch_dir("dp_bench");
  write_micro_config(dir, 10);
  const CliResult r = run_cli("bench train --config micro.toml --nproc 2 --steps 2 --repeats 1", dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("| one process, 2 threads, micro-batch 32 |") != std::string::npos);
  CHECK(r.out.find("| 2 ranks x 1 thread (Gloo), micro-batch 16 each |") != std::string::npos);
  CHECK(r.out.find("communication share") != std::string::npos);
  CHECK(one_line_error(run_cli("bench train --config micro.toml --nproc 2 --dense-baseline", dir), "are for one process"));
}

TEST_CASE("A sweep member of `sweep slurm --ranks 2` trains data-parallel into its shard, rank 0 recording it",
          "[e2e][distributed][sweep]") {
  const std::string dir = scratch_dir("dp_sweep");
  write_micro_config(dir, kSteps);
  std::ofstream(dir + "/sweep.toml") << "name = \"dp\"\nbase = \"micro.toml\"\nmode = \"list\"\n"
                                        "set = [\"train.batch_size=8\", \"train.warmup_steps=2\"]\n[[member]]\nset = []\n";
  const CliResult plan = run_cli("sweep plan sweep.toml", dir);
  REQUIRE(plan.exit_code == 0);
  const std::string id = std::to_string(std::stoll(plan.out));
  const CliResult slurm = run_cli("sweep slurm " + id + " --ranks 2 --cpus 1", dir);
  INFO(slurm.err);
  REQUIRE(slurm.exit_code == 0);
  // Slurm stand-ins: srun starts SLURM_NTASKS ranks as Slurm would (SLURM_PROCID, SLURM_LOCALID), each
  // rank's stderr kept apart; scontrol names this host as the job's first.
  const std::string bin = dir + "/fake-slurm";
  std::filesystem::create_directories(bin);
  std::ofstream(bin + "/srun") << "#!/bin/bash\npids=()\nfor ((r = 0; r < SLURM_NTASKS; r++)); do\n"
                                  "  SLURM_PROCID=$r SLURM_LOCALID=$r \"$@\" > srun-rank$r.out 2> srun-rank$r.err & pids+=($!)\ndone\n"
                                  "rc=0\nfor p in \"${pids[@]}\"; do wait $p || rc=$?; done\nexit $rc\n";
  std::ofstream(bin + "/scontrol") << "#!/bin/bash\necho 127.0.0.1\n";
  std::filesystem::permissions(bin + "/srun", std::filesystem::perms::owner_all);
  std::filesystem::permissions(bin + "/scontrol", std::filesystem::perms::owner_all);
  const std::string script = dir + "/runs/sweeps/" + id + "/array.sbatch";
  // What sbatch gives array task 0 of a job with --ntasks=2 (a job id of its own: the rendezvous port).
  const std::string job = std::to_string(::getpid() % 20000);
  const std::string cmd = "cd '" + dir + "' && PATH='" + bin + "':\"$PATH\" SLURM_ARRAY_TASK_ID=0 SLURM_NTASKS=2 SLURM_JOB_ID=" + job +
                          " SLURM_JOB_NODELIST=node1 SLURM_CPUS_PER_TASK=1 bash '" + script + "' > job.out 2> job.err; echo $? > job.rc";
  std::system(cmd.c_str());
  INFO(file_text(dir + "/job.err") << file_text(dir + "/srun-rank0.err") << file_text(dir + "/srun-rank1.err"));
  REQUIRE(file_text(dir + "/job.rc") == "0\n");
  CHECK(file_text(dir + "/srun-rank1.err").empty());  // rank 1 writes nothing
  const CliResult merge = run_cli("store merge runs/shards/" + id + "-0.db --into runs/runs.db", dir);
  INFO(merge.err);
  REQUIRE(merge.exit_code == 0);
  RunStoreOptions ro;
  ro.read_only = true;
  RunStore store(dir + "/runs/runs.db", ro);
  const SweepMember m = store.sweep_member(std::stoll(id), 0);
  CHECK(m.status == "finished");
  REQUIRE(m.run_id.has_value());
  CHECK(store.result(*m.run_id, "train/world_size")->value == 2);
  CHECK(store.result(*m.run_id, "train/tokens_seen")->value == kSteps * 16 * 64);  // the global batch
}
