// Running one sweep member (`moxlab sweep run ID --index K`, also what each local worker process and
// each Slurm array task does): take the member by compare-and-set, train its config (or resume its
// unfinished run from the checkpoint, or skip training when the run already finished), evaluate it if
// the sweep asks, and record the outcome. A heartbeat thread marks the member alive every 30 s.
// Data-parallel (started by srun or torchrun with WORLD_SIZE > 1): rank 0 does all of the above and the
// other ranks train the member's config with it (core/train/trainer.h join); they write nothing.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "experiments/sweep/member_claim.h"

namespace moxlab {

class DataParallelGroup;

struct SweepMemberOptions {
  std::string store;
  std::int64_t sweep = -1;
  int index = -1;
  int threads = 0;  // LibTorch threads for this member (0: all cores)
  ClaimPolicy policy;
  // Set by a signal handler (or by the heartbeat when another worker took the member over):
  // checkpoint, mark the member killed, return.
  std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string&)> log;
  DataParallelGroup* data_parallel = nullptr;  // this process is one rank of these
};

enum class MemberOutcome {
  finished,          // trained (and evaluated) now
  already_finished,  // nothing to do
  failed,            // recorded with its error
  killed,            // stopped by a signal; resumable
  unavailable,       // another live worker holds it, or it failed and retrying was not asked for
};

// Exit status of `moxlab sweep run --index K` for each outcome (the local scheduler reads them).
int member_exit_code(MemberOutcome outcome);

MemberOutcome run_sweep_member(const SweepMemberOptions& opts);

}  // namespace moxlab
