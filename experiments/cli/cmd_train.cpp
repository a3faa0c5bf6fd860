// `moxlab train --config FILE.toml [--set key=value ...] [--resume [RUN_ID]]`
// SIGINT/SIGTERM stop training after the current step with a checkpoint (status "killed");
// `--resume` continues the newest unfinished run with the same config hash from its checkpoint.
#include <csignal>
#include <iostream>
#include <memory>

#include "core/config/config.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/progress_bar.h"
#include "experiments/runner/train_run.h"

namespace moxlab::cli {

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct TrainArgs {
  std::string config;
  std::vector<std::string> sets;
  std::int64_t resume_run = -1;
  bool resume = false;
};
}  // namespace

void register_train(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "Train a model from a TOML config");
  cmd->add_option("--config", a->config, "TOML config file")->required();
  cmd->add_option("--set", a->sets, "key=value override (repeatable)");
  auto* resume = cmd->add_option("--resume", a->resume_run, "resume the newest unfinished run with this config, or RUN_ID")
                     ->expected(0, 1)
                     ->default_str("-1");
  cmd->callback([a, resume]() { train_in_foreground(load_config(a->config, a->sets), resume->count() > 0, a->resume_run); });
}

void train_in_foreground(const Config& cfg, bool resume, std::int64_t resume_run) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  ProgressBar bar("train");
  TrainRunOptions o;
  o.resume = resume;
  o.resume_run = resume_run;
  o.stop = &g_stop;
  o.log = [](const std::string& s) { std::cerr << s << "\n"; };
  o.on_step = [&bar](const StepReport& r) {
    char extra[128];
    std::snprintf(extra, sizeof(extra), "loss %.4f  lr %.2e  %.0f %s/s", r.loss, r.lr, r.tokens_per_s, r.unit);
    bar.update(r.step, r.max_steps, extra, r.eta_s);
  };
  TrainRunResult res = run_training(cfg, o);
  bar.finish();
  std::cout << "run " << res.run_id << (res.train.interrupted ? " stopped" : " finished") << " at step "
            << res.train.steps << " (" << res.train.tokens_seen << " " << res.train.unit << ", " << format_duration(res.train.seconds)
            << "); checkpoint " << res.checkpoint << "\n";
  for (const auto& [k, v] : res.train.final_val) std::cout << "  " << k << " = " << v << "\n";
}

}  // namespace moxlab::cli
