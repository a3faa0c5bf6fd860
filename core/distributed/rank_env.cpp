#include "core/distributed/rank_env.h"

#include <cerrno>
#include <cstdlib>

#include "core/common/error.h"

namespace moxlab {

namespace {
// The first of the names that is set, as an int in [lo, hi]; fallback when none is.
int int_var(const std::function<const char*(const char*)>& getenv, std::initializer_list<const char*> names, int fallback,
            long lo, long hi) {
  for (const char* name : names) {
    const char* v = getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v, &end, 10);
    require(errno == 0 && *end == '\0' && x >= lo && x <= hi,
            std::string(name) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'");
    return static_cast<int>(x);
  }
  return fallback;
}
}  // namespace

RankEnv rank_env_from(const std::function<const char*(const char*)>& getenv) {
  RankEnv e;
  e.world = int_var(getenv, {"WORLD_SIZE", "SLURM_NTASKS"}, 1, 1, 65536);
  e.rank = int_var(getenv, {"RANK", "SLURM_PROCID"}, 0, 0, 65535);
  e.local_rank = int_var(getenv, {"LOCAL_RANK", "SLURM_LOCALID"}, 0, 0, 65535);
  require(e.rank < e.world, "RANK " + std::to_string(e.rank) + " is not below WORLD_SIZE " + std::to_string(e.world));
  if (!e.distributed()) return e;
  const char* file = getenv("MOXLAB_RENDEZVOUS_FILE");
  if (file != nullptr && *file != '\0') {
    e.rendezvous = std::string("file://") + file;
    return e;
  }
  const char* addr = getenv("MASTER_ADDR");
  require(addr != nullptr && *addr != '\0', "WORLD_SIZE " + std::to_string(e.world) + " needs MASTER_ADDR (the host of rank 0)");
  const int port = int_var(getenv, {"MASTER_PORT"}, -1, 1, 65535);
  require(port > 0, "WORLD_SIZE " + std::to_string(e.world) + " needs MASTER_PORT (a free TCP port on MASTER_ADDR)");
  e.rendezvous = "tcp://" + std::string(addr) + ":" + std::to_string(port);
  return e;
}

RankEnv process_rank_env() {
  return rank_env_from([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

}  // namespace moxlab
