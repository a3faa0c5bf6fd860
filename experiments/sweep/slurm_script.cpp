#include "experiments/sweep/slurm_script.h"

#include <sstream>

#include "core/common/error.h"

namespace moxlab {

namespace {
// Single-quoted for bash: the paths may contain spaces.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// "0-3,5,7-8": the compact --array list sbatch accepts.
std::string index_ranges(const std::vector<int>& idx) {
  std::string out;
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(idx[i]);
    if (j > i) out += "-" + std::to_string(idx[j]);
    i = j + 1;
  }
  return out;
}
}  // namespace

std::string shard_store_prefix(const std::string& shard_dir, std::int64_t sweep) {
  return shard_dir + "/" + std::to_string(sweep) + "-";
}

std::string slurm_array_script(const SweepRecord& sweep, const std::vector<SweepMember>& members, const SlurmOptions& o) {
  std::vector<int> todo;
  for (const auto& m : members)
    if (o.all || m.status != "finished") todo.push_back(m.idx);
  require(!todo.empty(), "sweep " + std::to_string(sweep.id) + " has no unfinished members (use --all to list every member)");
  require(o.cpus_per_task >= 1, "--cpus must be at least 1");
  require(o.ranks >= 1, "--ranks must be at least 1");
  const bool data_parallel = o.ranks > 1;

  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# moxlab sweep " << sweep.id << " (" << sweep.name << "): " << todo.size() << " of " << members.size()
    << " members. Submit with: sbatch <this file>\n"
    << "# Each task runs one member; members take themselves in the run store, so resubmitting is safe:\n"
    << "# finished members are skipped and killed ones resume from their checkpoints.\n";
  const std::string store = o.shard_dir.empty() ? quoted(o.store)
                                                : quoted(shard_store_prefix(o.shard_dir, sweep.id)) + "\"$SLURM_ARRAY_TASK_ID\".db";
  if (!o.shard_dir.empty())
    s << "# Each task writes its own store (a shard); after the array, fold them into the run store with\n"
      << "#   " << quoted(o.exe) << " store merge " << quoted(o.shard_dir) << "/" << sweep.id << "-*.db --into "
      << quoted(o.store) << "\n";
  s << "#SBATCH --job-name=moxlab-" << sweep.name << "\n"
    << "#SBATCH --array=" << index_ranges(todo) << (o.max_parallel > 0 ? "%" + std::to_string(o.max_parallel) : "") << "\n"
    << "#SBATCH --cpus-per-task=" << o.cpus_per_task << "\n";
  if (data_parallel) s << "#SBATCH --ntasks=" << o.ranks << "\n";
  // Two minutes' warning: the member checkpoints and is marked killed. One rank: to the batch shell,
  // which exec hands to moxlab; data-parallel: to every rank of the step (any rank's TERM stops all).
  s << "#SBATCH --time=" << o.time << "\n"
    << "#SBATCH --output=" << o.log_dir << "/slurm-%A_%a.log\n"
    << "#SBATCH --signal=" << (data_parallel ? "" : "B:") << "TERM@120\n";
  if (!o.partition.empty()) s << "#SBATCH --partition=" << o.partition << "\n";
  if (!o.account.empty()) s << "#SBATCH --account=" << o.account << "\n";
  if (!o.mem.empty()) s << "#SBATCH --mem=" << o.mem << "\n";
  if (o.gpus_per_task > 0) s << "#SBATCH --gpus-per-task=" << o.gpus_per_task << "\n";
  s << "set -euo pipefail\n"
    << "cd " << quoted(o.workdir) << "\n"
    << "export OMP_NUM_THREADS=\"${SLURM_CPUS_PER_TASK:-" << o.cpus_per_task << "}\"\n";
  if (data_parallel)
    s << "# The ranks meet on the task's first host, at a port of this array task's own (tasks share nodes).\n"
      << "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\"\n"
      << "export MASTER_PORT=$(( 20000 + SLURM_JOB_ID % 20000 ))\n"
      << "exec srun " << quoted(o.exe) << " sweep run ";
  else
    s << "# exec: the batch shell's TERM (from --signal) reaches moxlab itself.\n"
      << "exec " << quoted(o.exe) << " sweep run ";
  s << sweep.id << " --index \"$SLURM_ARRAY_TASK_ID\" --store "
    << store << " --threads \"$OMP_NUM_THREADS\"\n";
  return s.str();
}

}  // namespace moxlab
