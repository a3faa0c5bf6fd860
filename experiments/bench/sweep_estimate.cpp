#include "experiments/bench/sweep_estimate.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>

#include <torch/torch.h>

#include "core/data/corpora/package_corpus.h"
#include "experiments/bench/train_bench.h"

namespace moxlab {

namespace {

// What a member's throughput depends on: its config without the seed, the schedule's length and rates
// and the logging cadence (members differing only in those share one timing).
std::string model_key(Config c) {
  auto& t = c.train;
  t.seed = 0;
  t.max_steps = 1;
  t.warmup_steps = 0;
  t.lr = t.min_lr_ratio = 0;
  t.eval_every = 0;
  t.eval_tokens = t.checkpoint_every = t.log_every = 1;
  return c.hash();
}

std::int64_t validation_domains(const Config& c) {
  const std::int64_t package = c.data.corpus == "default" ? static_cast<std::int64_t>(default_package_domains().size()) : 0;
  return package + static_cast<std::int64_t>(c.data.extra.size());
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::string hours(double seconds) {
  char buf[64];
  if (seconds < 3600) std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  return buf;
}

}  // namespace

SweepEstimate estimate_sweep(const std::vector<Config>& members, int threads) {
  SweepEstimate e;
  e.threads = threads;
  const int before = at::get_num_threads();
  at::set_num_threads(threads);
  std::map<std::string, MemberEstimate> timed;  // model key -> its throughput (or error)
  double wall = 0, cpu = 0;                     // over the timings
  for (const Config& member : members) {
    const std::string key = model_key(member);
    if (!member.prune.method.empty()) {  // a static pruning baseline: calibration passes only, no training
      MemberEstimate m;
      m.error = "a pruning run (prune.method), not timed";
      e.members.push_back(m);
      continue;
    }
    if (!timed.count(key)) {
      MemberEstimate m;
      try {
        Config c = member;
        if (c.model.vocab_size == 0) c.model.vocab_size = c.data.bpe_vocab_size;  // the trained tokenizer's size
        // A pruned start tuned with its zeros held trains at the dense model's speed (plus one mask
        // multiply), and that start may not exist before its parent member has run. Likewise a teacher
        // is timed as the model itself (distillation without train.teacher: one more forward of the
        // same shape), exact for a teacher of the student's architecture. A continue-tuned or converted
        // member is timed from a random draw of its model, since its start may not exist yet.
        c.train.keep_pruned = false;
        c.train.teacher.clear();
        c.train.init_from.clear();
        TrainBenchOptions o;
        o.steps = 3;
        o.repeats = 1;
        o.warmup = 1;
        const double cpu0 = process_cpu_seconds();
        const auto wall0 = std::chrono::steady_clock::now();
        m.tokens_per_s = run_train_bench({{"estimate", c}}, o).front().tokens_per_s.front();
        wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        cpu += process_cpu_seconds() - cpu0;
      } catch (const std::exception& ex) {
        m.error = ex.what();
      }
      timed[key] = m;
      ++e.models;
    }
    MemberEstimate m = timed[key];
    if (m.error.empty()) {
      const auto& t = member.train;
      const double tokens = static_cast<double>(t.max_steps) * t.grad_accum * t.batch_size * t.seq_len;
      const double evals = t.eval_every > 0 ? static_cast<double>(t.max_steps / t.eval_every) : 0.0;
      const double val_tokens = evals * static_cast<double>(t.eval_tokens) * static_cast<double>(validation_domains(member));
      m.seconds = (tokens + val_tokens / 3.0) / m.tokens_per_s;
      e.total_seconds += m.seconds;
    }
    e.members.push_back(m);
  }
  at::set_num_threads(before);
  if (wall > 0) e.cpu_share = cpu / (wall * threads);
  return e;
}

std::string format_sweep_estimate(const SweepEstimate& e, const std::string& cpu) {
  int missing = 0;
  for (const auto& m : e.members) missing += m.error.empty() ? 0 : 1;
  std::string out = "estimated CPU time: " + hours(e.total_seconds) + " for " + std::to_string(e.members.size() - missing) +
                    " members run one after another with " + std::to_string(e.threads) + " thread(s) each on " + cpu +
                    " (training throughput measured now on " + std::to_string(e.models) +
                    " distinct model(s); periodic validation included, [eval] and data preparation not)\n";
  if (e.cpu_share > 0 && e.cpu_share < 0.8) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "  busy machine: the timings got %.0f%% of %d thread(s)' CPU time (other processes held the cores), so "
                  "the times below are longer than an idle machine's; time again when it is idle, or with --threads at the "
                  "free cores\n",
                  100 * e.cpu_share, e.threads);
    out += buf;
  }
  for (std::size_t i = 0; i < e.members.size(); ++i) {
    const auto& m = e.members[i];
    char buf[160];
    if (m.error.empty()) std::snprintf(buf, sizeof buf, "  %zu  %s  (%.0f tokens/s)\n", i, hours(m.seconds).c_str(), m.tokens_per_s);
    else std::snprintf(buf, sizeof buf, "  %zu  no estimate: %.120s\n", i, m.error.c_str());
    out += buf;
  }
  return out;
}

}  // namespace moxlab
