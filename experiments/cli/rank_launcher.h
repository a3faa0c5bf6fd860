// `moxlab train --nproc N`: the ranks of one data-parallel job on this machine, started as torchrun starts
// them: N copies of this program with RANK, WORLD_SIZE and LOCAL_RANK set and a rendezvous file (a c10d
// FileStore, MOXLAB_RENDEZVOUS_FILE), sharing this terminal. SIGINT/SIGTERM reach every rank (they stop
// together after one step, rank 0 checkpoints). The job's status is rank 0's, or the first failure's.
#pragma once
#include <string>
#include <vector>

namespace moxlab::cli {

// args: the subcommand and its options for every rank (without --nproc).
int launch_local_ranks(int nproc, const std::vector<std::string>& args);

}  // namespace moxlab::cli
