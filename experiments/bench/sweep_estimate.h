// `sweep plan`'s estimate of a sweep's CPU time from this machine's measured training throughput, so a
// study can be planned across interruptions and machines. Each distinct model of the sweep (member
// configs that differ only in seed, schedule length, learning rates, logging or run.* keys share one)
// trains a few steps on random tokens
// (`bench train`'s step: Trainer::update, the same forms, the distillation teacher where there is one)
// at the threads one run gets; a member's time is its training tokens (max_steps x grad_accum x batch x
// seq_len) at that rate, plus its periodic validation (every eval_every steps, eval_tokens per domain)
// at a third of a training token's cost (a forward pass). `[eval]` after training and data preparation
// are not included. The figure is this machine's: it names the CPU and the threads it assumed, and says
// when other processes held the cores while it timed (a busy machine's throughput is not an idle one's:
// two threads sharing their cores with two training processes ran MoHD 75% at a fifth of its speed).
#pragma once
#include <string>
#include <vector>

#include "core/config/config.h"

namespace moxlab {

struct MemberEstimate {
  double seconds = 0;       // training and periodic validation, at tokens_per_s
  double tokens_per_s = 0;  // measured training throughput of its model
  std::string error;        // why there is no estimate (e.g. an image model), else empty
};

struct SweepEstimate {
  std::vector<MemberEstimate> members;  // in member order
  double total_seconds = 0;             // sum over members with an estimate
  int threads = 0;                      // LibTorch threads per run assumed
  int models = 0;                       // distinct models timed
  // The CPU time the timings got over their wall time x threads: near 1 on an idle machine, lower where
  // other processes held the cores (0 when nothing was timed).
  double cpu_share = 0;
};

// threads: the LibTorch threads one run gets (the runs are assumed to run one after another).
SweepEstimate estimate_sweep(const std::vector<Config>& members, int threads);

// "estimated CPU time: 2.3 h (...)" and one line per distinct model; `cpu` names the machine.
std::string format_sweep_estimate(const SweepEstimate& e, const std::string& cpu);

}  // namespace moxlab
