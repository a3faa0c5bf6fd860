// Where this process sits in a data-parallel job, read from the environment torchrun sets (RANK,
// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or, under `srun` without them, from Slurm's
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID; the address and port still come from MASTER_ADDR/PORT).
// No variable at all is a single process (world 1). Torch-free: the CLI reads it before building anything.
#pragma once
#include <functional>
#include <string>

namespace moxlab {

struct RankEnv {
  int rank = 0;
  int world = 1;
  int local_rank = 0;
  // How the ranks meet: "tcp://ADDR:PORT" (rank 0 serves a TCPStore) or "file:///PATH" (a FileStore on
  // a file all ranks see; tests and one-machine runs).
  std::string rendezvous;
  bool distributed() const { return world > 1; }
};

// getenv: the lookup to use (std::getenv in the program, a map in tests). Errors are one line naming
// the variable: a non-number, a rank outside [0, world), a multi-rank job with no MASTER_ADDR/PORT.
RankEnv rank_env_from(const std::function<const char*(const char*)>& getenv);
// This process's: rank_env_from(std::getenv).
RankEnv process_rank_env();

}  // namespace moxlab
