// `moxlab bench train --nproc N`: training tokens/s of N data-parallel ranks (one thread each, micro-batch
// B each, gradients averaged over Gloo) against one process with N threads and micro-batch N x B: the
// same optimiser steps two ways, timed in one job. Repeats alternate: all ranks time their steps together,
// then rank 0 alone times the one-process steps while the others wait, so a phase of the machine weighs
// on both. The communication share is the ranks' time in collectives over their step time (rank 0's).
#pragma once
#include <vector>

#include "core/config/config.h"
#include "experiments/bench/train_bench.h"

namespace moxlab {

class DataParallelGroup;

struct DataParallelBenchResult {
  std::vector<double> ranks_tokens_per_s;  // the N ranks together (global batch), one per repeat
  std::vector<double> single_tokens_per_s; // one process, N threads, micro-batch N x B (rank 0's numbers)
  std::vector<double> communication_share; // of the ranks' step time, one per repeat
};

// Every rank calls it with the same cfg (train.batch_size = B per rank); cfg.train.threads is ignored.
DataParallelBenchResult run_data_parallel_bench(const Config& cfg, DataParallelGroup& group, const TrainBenchOptions& o);

}  // namespace moxlab
