// `moxlab train --config FILE.toml [--set key=value ...] [--resume [RUN_ID]] [--print-id] [--nproc N]`
// SIGINT/SIGTERM stop training after the current step with a checkpoint (status "killed");
// `--resume` continues the newest unfinished run with the same config hash from its checkpoint.
// Data-parallel: started with torchrun's or Slurm's rank variables (core/distributed/rank_env.h), this
// process is one rank; `--nproc N` starts N ranks on this machine (rank_launcher.h).
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "core/common/error.h"
#include "core/config/config.h"
#include "core/distributed/data_parallel.h"
#include "core/distributed/rank_env.h"
#include "core/store/run_store.h"
#include "experiments/cli/cli_options.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"
#include "experiments/cli/progress_bar.h"
#include "experiments/cli/rank_launcher.h"
#include "experiments/runner/tomoe_finish.h"
#include "experiments/runner/train_run.h"

namespace moxlab::cli {

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct TrainArgs {
  std::string config;
  std::vector<std::string> sets;
  int nproc = 1;
  ForegroundTraining how;
};

// What each rank of `--nproc N` runs: this command without --nproc.
std::vector<std::string> rank_args(const TrainArgs& a) {
  std::vector<std::string> args{"train", "--config", a.config};
  for (const auto& s : a.sets) args.insert(args.end(), {"--set", s});
  if (a.how.resume) {
    args.push_back("--resume");
    if (a.how.resume_run >= 0) args.push_back(std::to_string(a.how.resume_run));
  }
  if (a.how.print_id) args.push_back("--print-id");
  return args;
}
}  // namespace

void register_train(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "Train a model from a TOML config");
  cmd->add_option("--config", a->config, "TOML config file")->required()->check(non_empty_path());
  cmd->add_option("--set", a->sets, "key=value override (repeatable)");
  auto* resume = cmd->add_option("--resume", a->how.resume_run, "resume the newest unfinished run with this config, or RUN_ID")
                     ->expected(0, 1)
                     ->default_str("-1")
                     ->check(run_id("-1"));
  add_print_id_flag(cmd, a->how.print_id);
  cmd->add_option("--nproc", a->nproc, "data-parallel ranks to start on this machine (Gloo; one rank per process)")
      ->check(CLI::Range(1, 256));
  cmd->callback([a, resume]() {
    a->how.resume = resume->count() > 0;
    const Config cfg = load_config(a->config, a->sets);  // a bad config fails here, before any rank starts
    if (a->nproc > 1) {
      throw ExitRequest{launch_local_ranks(a->nproc, rank_args(*a))};
    }
    train_in_foreground(cfg, a->how);
  });
}

void train_in_foreground(const Config& cfg, const ForegroundTraining& how) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const RankEnv env = process_rank_env();
  std::unique_ptr<DataParallelGroup> group;
  if (env.distributed())  // CUDA tensors are reduced by NCCL, CPU tensors by Gloo
    group = std::make_unique<DataParallelGroup>(env, cfg.train.device.rfind("cuda", 0) == 0 ? "nccl" : "gloo");
  TrainRunOptions o;
  o.resume = how.resume;
  o.resume_run = how.resume_run;
  o.stop = &g_stop;
  o.data_parallel = group.get();
  if (env.rank > 0) {  // rank 0 speaks for the run; the others' errors still reach main()
    run_training(cfg, o);
    return;
  }
  ProgressBar bar(how.label);
  o.log = [](const std::string& s) { std::cerr << s << "\n"; };
  o.on_step = [&bar](const StepReport& r) {
    char extra[128];
    std::snprintf(extra, sizeof(extra), "loss %.4f  lr %.2e  %.0f %s/s", r.loss, r.lr, r.tokens_per_s, r.unit);
    bar.update(r.step, r.max_steps, extra);
  };
  TrainRunResult res = run_training(cfg, o);
  bar.finish();
  std::ostream& out = summary_stream(how.print_id);
  out << "run " << res.run_id << (res.train.interrupted ? " stopped" : " finished") << " at step " << res.train.steps << " ("
      << res.train.tokens_seen << " " << res.train.unit << ", " << format_duration(res.train.seconds) << "); checkpoint "
      << res.checkpoint << "\n";
  for (const auto& [k, v] : res.train.final_val) out << "  " << k << " = " << v << "\n";
  if (cfg.model.is_tomoe() && !res.train.interrupted) {
    RunStoreOptions read_only;
    read_only.read_only = true;
    if (const auto ratio = RunStore(cfg.run.store, read_only).result(res.run_id, "tomoe/active_ratio"))
      out << tomoe_target_line(ratio->value, cfg.model.tomoe.active, cfg.train.max_steps) << "\n";
  }
  if (how.print_id) std::cout << res.run_id << std::endl;
}

}  // namespace moxlab::cli
