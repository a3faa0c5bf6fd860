#include "experiments/bench/data_parallel_bench.h"

#include <chrono>

#include <torch/torch.h>

#include "core/distributed/data_parallel.h"
#include "core/train/lm_objective.h"
#include "core/train/trainer.h"
#include "kernels/runtime/torch_threads.h"

namespace moxlab {

namespace {
double timed_steps(TrainCase& c, int steps) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) c.step();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

DataParallelBenchResult run_data_parallel_bench(const Config& cfg, DataParallelGroup& group, const TrainBenchOptions& o) {
  const int world = group.world();
  Config rank_cfg = cfg;
  rank_cfg.train.threads = 1;
  Config single_cfg = cfg;
  single_cfg.train.threads = world;
  single_cfg.train.batch_size = cfg.train.batch_size * world;
  const double tokens_per_step = static_cast<double>(cfg.train.batch_size) * world * cfg.train.seq_len * cfg.train.grad_accum;

  set_torch_threads(1);
  TrainCase ranks(rank_cfg);
  ranks.trainer->join(group);
  for (int i = 0; i < o.warmup; ++i) ranks.step();
  std::unique_ptr<TrainCase> single;
  if (group.rank() == 0) {
    set_torch_threads(world);
    single = std::make_unique<TrainCase>(single_cfg);
    for (int i = 0; i < o.warmup; ++i) single->step();
  }
  DataParallelBenchResult r;
  std::vector<double> wait{0.0};
  for (int rep = 0; rep < o.repeats; ++rep) {
    set_torch_threads(1);
    group.sum(wait);  // start together
    const double comm_before = group.communication_seconds();
    const double seconds = timed_steps(ranks, o.steps);
    r.ranks_tokens_per_s.push_back(tokens_per_step * o.steps / seconds);
    r.communication_share.push_back((group.communication_seconds() - comm_before) / seconds);
    if (group.rank() == 0) {
      set_torch_threads(world);
      r.single_tokens_per_s.push_back(tokens_per_step * o.steps / timed_steps(*single, o.steps));
    }
    group.sum(wait);  // the other ranks wait here while rank 0 times one process
  }
  return r;
}

}  // namespace moxlab
