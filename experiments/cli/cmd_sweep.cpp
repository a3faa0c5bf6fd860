// `moxlab sweep plan|run|status|list|slurm`: studies over many runs.
//   plan FILE.toml [--store P] [--new]    expand the spec into members recorded in the store (prints the id);
//                                         an identical plan of the same name is reused unless --new
//   run ID [--workers N|auto]             run free members with N local worker processes (auto: one per core)
//   run ID --index K                      run exactly member K (what each worker and Slurm task runs)
//   status ID / list                      progress of one sweep / all sweeps
//   slurm ID [--out F] [--partition ...]  write an sbatch job-array script; each task writes its own shard
//                                         (--ranks N: each member data-parallel over N ranks)
//                                         store (merged after the array with `moxlab store merge`)
// Members take themselves in the store by compare-and-set: a killed sweep re-run finishes the missing
// members (killed ones resume from their checkpoints) and never repeats finished ones.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/distributed/data_parallel.h"
#include "core/distributed/rank_env.h"
#include "core/store/run_store.h"
#include "core/store/store_merge.h"
#include "experiments/cli/commands.h"
#include "experiments/bench/matmul_peak.h"
#include "experiments/bench/sweep_estimate.h"
#include "experiments/cli/option_checks.h"
#include "kernels/runtime/cpu_features.h"
#include "experiments/runner/sweep_member.h"
#include "experiments/sweep/slurm_script.h"
#include "experiments/sweep/sweep_scheduler.h"
#include "experiments/sweep/sweep_spec.h"

namespace moxlab::cli {

namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

void log_line(const std::string& s) { std::cerr << s << std::endl; }

std::string self_exe() {
  std::error_code ec;
  std::string p = fs::read_symlink("/proc/self/exe", ec).string();
  require(!ec, "cannot find the moxlab executable (/proc/self/exe)");
  // Rebuilt while a sweep runs: the link names the replaced file; the new one is at the same path.
  const std::string deleted = " (deleted)";
  if (p.size() > deleted.size() && p.compare(p.size() - deleted.size(), deleted.size(), deleted) == 0)
    p.resize(p.size() - deleted.size());
  return p;
}

std::string absolute(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

// runs/sweeps/<id>/ next to the store: worker logs and scripts.
std::string sweep_dir(const std::string& store, std::int64_t id) {
  return (fs::path(absolute(store)).parent_path() / "sweeps" / std::to_string(id)).string();
}

std::string age(std::optional<double> t) {
  if (!t) return "-";
  const double s = unix_now() - *t;
  char buf[32];
  if (s < 120) std::snprintf(buf, sizeof(buf), "%.0fs", s);
  else if (s < 7200) std::snprintf(buf, sizeof(buf), "%.0fm", s / 60);
  else std::snprintf(buf, sizeof(buf), "%.1fh", s / 3600);
  return buf;
}

// Counts by status, e.g. "8 members: 5 finished, 1 running, 2 pending".
std::string status_counts(const std::vector<SweepMember>& members) {
  std::map<std::string, int> n;
  for (const auto& m : members) ++n[m.status];
  std::string out = std::to_string(members.size()) + " members";
  const char* order[] = {"finished", "running", "pending", "killed", "failed"};
  bool first = true;
  for (const char* s : order)
    if (n[s] > 0) {
      out += (first ? ": " : ", ") + std::to_string(n[s]) + " " + s;
      first = false;
    }
  return out;
}

void print_members(const std::vector<SweepMember>& members) {
  std::printf("%-4s %-9s %-6s %-4s %-8s %-8s %s\n", "idx", "status", "run", "try", "started", "beat", "member");
  for (const auto& m : members) {
    std::printf("%-4d %-9s %-6s %-4d %-8s %-8s %s\n", m.idx, m.status.c_str(),
                m.run_id ? std::to_string(*m.run_id).c_str() : "-", m.attempts, age(m.started_at).c_str(),
                m.status == "running" ? age(m.heartbeat).c_str() : "-", m.label.c_str());
    if (!m.error.empty()) std::printf("     error: %s\n", m.error.c_str());
  }
}

// An existing sweep with this name and exactly these member configs, if any.
std::optional<std::int64_t> same_plan(const RunStore& store, const std::string& name, const std::vector<PlannedMember>& planned) {
  for (const auto& s : store.list_sweeps()) {
    if (s.name != name) continue;
    const auto members = store.sweep_members(s.id);
    if (members.size() != planned.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < planned.size() && same; ++i) same = members[i].config_json == planned[i].config.to_json();
    if (same) return s.id;
  }
  return std::nullopt;
}

void register_plan(CLI::App& sweep) {
  struct Args {
    std::string spec, store;
    bool fresh = false, no_estimate = false;
    int threads = 0;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = sweep.add_subcommand("plan", "Expand a sweep spec into members recorded in the run store");
  cmd->add_option("spec", a->spec, "sweep spec (TOML)")->required();
  cmd->add_option("--store", a->store, "run store (default: the base config's run.store)");
  cmd->add_flag("--new", a->fresh, "plan a new sweep even if an identical one exists");
  cmd->add_flag("--no-estimate", a->no_estimate, "skip the CPU-time estimate (a few timed training steps per distinct model)");
  cmd->add_option("--threads", a->threads, "threads per run the estimate assumes (0: every core)")->check(CLI::Range(0, 4096));
  cmd->callback([a]() {
    const SweepSpec spec = load_sweep_spec(a->spec);
    const std::string store_path = absolute(a->store.empty() ? load_config(spec.base, spec.set).run.store : a->store);
    const auto planned = expand_sweep(spec, store_path);
    auto estimate = [&] {
      if (a->no_estimate) return;
      std::vector<Config> configs;
      for (const auto& p : planned) configs.push_back(p.config);
      const int threads = a->threads > 0 ? a->threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      std::cerr << format_sweep_estimate(estimate_sweep(configs, threads), cpu_model_name() + " (" + isa_name(active_isa()) + ")");
    };
    RunStore store(store_path);
    if (!a->fresh) {
      if (auto existing = same_plan(store, spec.name, planned)) {
        std::cerr << "sweep " << spec.name << " is already planned with these members as sweep " << *existing
                  << " (" << status_counts(store.sweep_members(*existing)) << "); pass --new for another\n";
        estimate();
        std::cout << *existing << "\n";
        return;
      }
    }
    std::vector<SweepMember> members(planned.size());
    for (std::size_t i = 0; i < planned.size(); ++i) {
      members[i].label = planned[i].label;
      members[i].config_json = planned[i].config.to_json();
    }
    const auto id = store.create_sweep(spec.name, sweep_spec_json(spec, fs::current_path().string()).dump(), members);
    std::cerr << "sweep " << id << " (" << spec.name << "): " << planned.size() << " members in " << store_path << "\n";
    for (std::size_t i = 0; i < planned.size(); ++i) std::cerr << "  " << i << "  " << planned[i].label << "\n";
    std::cerr << "run with: moxlab sweep run " << id << " --store " << store_path << " --workers N\n";
    estimate();
    std::cout << id << "\n";
  });
}

void register_run(CLI::App& sweep) {
  struct Args {
    std::int64_t id = -1;
    std::string store = "runs/runs.db";
    std::string workers = "1";
    int index = -1, threads = 0;
    ClaimPolicy policy;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = sweep.add_subcommand("run", "Run the free members of a sweep");
  cmd->add_option("id", a->id, "sweep id")->required()->check(sweep_id());
  cmd->add_option("--store", a->store, "run store")->capture_default_str();
  cmd->add_option("--workers", a->workers,
                  "local worker processes, or auto: one single-thread worker per core, the sweep's last members "
                  "taking the idle cores as threads")
      ->check(auto_or_integer_in(1, 256))
      ->capture_default_str();
  cmd->add_option("--index", a->index, "run exactly this member (e.g. $SLURM_ARRAY_TASK_ID)")->check(non_negative_count());
  cmd->add_option("--threads", a->threads, "LibTorch threads per worker (0: cores / workers)")->check(thread_count());
  cmd->add_flag("--retry-failed", a->policy.retry_failed, "run failed members again");
  cmd->add_option("--stale-after", a->policy.stale_after_s, "seconds without a heartbeat before a running member is "
                                                            "taken over")->check(number_in(0.001, 1e9))->capture_default_str();
  cmd->callback([a]() {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    const std::string store = absolute(a->store);
    if (a->index >= 0) {
      SweepMemberOptions o;
      o.store = store;
      o.sweep = a->id;
      o.index = a->index;
      o.threads = a->threads;
      o.policy = a->policy;
      o.stop = &g_stop;
      o.log = log_line;
      // Under srun / torchrun with WORLD_SIZE > 1 the member trains data-parallel (docs/data_parallel.md).
      const RankEnv env = process_rank_env();
      std::unique_ptr<DataParallelGroup> group;
      if (env.distributed()) group = std::make_unique<DataParallelGroup>(env);
      o.data_parallel = group.get();
      if (env.rank > 0) o.log = nullptr;  // rank 0 speaks for the member
      const int code = member_exit_code(run_sweep_member(o));
      if (code != 0) throw ExitRequest{code};
      return;
    }
    SchedulerOptions o;
    o.exe = self_exe();
    o.store = store;
    o.sweep = a->id;
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const bool automatic = a->workers == "auto";
    o.workers = automatic ? cores : std::stoi(a->workers);
    o.cores = cores;
    o.threads_per_worker = a->threads > 0 ? a->threads : automatic ? 0 : std::max(1, cores / o.workers);
    o.policy = a->policy;
    o.log_dir = sweep_dir(store, a->id);
    o.stop = &g_stop;
    o.log = log_line;
    RunStore(store).get_sweep(a->id);  // a missing sweep fails before any worker starts
    log_line("sweep " + std::to_string(a->id) + ": " + std::to_string(o.workers) + " worker(s) x " +
             (o.threads_per_worker > 0 ? std::to_string(o.threads_per_worker) : std::string("auto")) + " thread(s); logs in " + o.log_dir);
    const SchedulerSummary s = run_sweep_workers(o);
    const auto members = RunStore(store).sweep_members(a->id);
    log_line("sweep " + std::to_string(a->id) + ": " + status_counts(members));
    if (s.stopped) throw ExitRequest{2};
    for (const auto& m : members)
      if (m.status != "finished") throw ExitRequest{1};
  });
}

void register_status(CLI::App& sweep) {
  struct Args {
    std::int64_t id = -1;
    std::string store = "runs/runs.db";
  };
  auto a = std::make_shared<Args>();
  auto* status = sweep.add_subcommand("status", "Progress of a sweep's members");
  status->add_option("id", a->id, "sweep id")->required()->check(sweep_id());
  status->add_option("--store", a->store, "run store")->capture_default_str();
  status->callback([a]() {
    RunStoreOptions ro;
    ro.read_only = true;
    RunStore store(a->store, ro);
    const SweepRecord s = store.get_sweep(a->id);
    const auto members = store.sweep_members(a->id);
    std::printf("sweep %lld (%s): %s\n", static_cast<long long>(s.id), s.name.c_str(), status_counts(members).c_str());
    print_members(members);
  });
  auto* list = sweep.add_subcommand("list", "All sweeps in the store");
  list->add_option("--store", a->store, "run store")->capture_default_str();
  list->callback([a]() {
    RunStoreOptions ro;
    ro.read_only = true;
    RunStore store(a->store, ro);
    for (const auto& s : store.list_sweeps())
      std::printf("%-4lld %-24s %s\n", static_cast<long long>(s.id), s.name.c_str(), status_counts(store.sweep_members(s.id)).c_str());
  });
}

void register_slurm(CLI::App& sweep) {
  struct Args {
    std::int64_t id = -1;
    std::string store = "runs/runs.db", out;
    SlurmOptions slurm;
    bool single_store = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = sweep.add_subcommand("slurm", "Write an sbatch job-array script for a sweep");
  cmd->add_option("id", a->id, "sweep id")->required()->check(sweep_id());
  cmd->add_option("--store", a->store, "run store")->capture_default_str();
  cmd->add_option("--out", a->out, "script path (default: <store dir>/sweeps/ID/array.sbatch)");
  cmd->add_option("--partition", a->slurm.partition, "Slurm partition");
  cmd->add_option("--account", a->slurm.account, "Slurm account");
  cmd->add_option("--time", a->slurm.time, "time limit per member")->capture_default_str();
  cmd->add_option("--mem", a->slurm.mem, "memory per task (e.g. 16G)");
  cmd->add_option("--cpus", a->slurm.cpus_per_task, "CPUs per task")->check(integer_in(1, 4096))->capture_default_str();
  cmd->add_option("--gpus", a->slurm.gpus_per_task, "GPUs per task")->check(integer_in(0, 1024));
  cmd->add_option("--ranks", a->slurm.ranks, "data-parallel ranks per member (srun starts them; --cpus and --gpus are per rank)")
      ->check(integer_in(1, 65536))
      ->capture_default_str();
  cmd->add_option("--max-parallel", a->slurm.max_parallel, "at most this many tasks at once")->check(non_negative_count());
  cmd->add_flag("--all", a->slurm.all, "include finished members");
  auto* shards = cmd->add_option("--shards", a->slurm.shard_dir, "folder of the tasks' shard stores (default: <store dir>/shards)");
  cmd->add_flag("--single-store", a->single_store, "every task opens --store itself (only when all tasks run on its host)")
      ->excludes(shards);
  cmd->callback([a]() {
    RunStoreOptions ro;
    ro.read_only = true;
    RunStore store(a->store, ro);
    const SweepRecord s = store.get_sweep(a->id);
    const auto members = store.sweep_members(a->id);
    SlurmOptions o = a->slurm;
    o.exe = self_exe();
    o.store = absolute(a->store);
    o.workdir = nlohmann::json::parse(s.spec_json).value("workdir", fs::current_path().string());
    o.log_dir = sweep_dir(a->store, a->id);
    if (!a->single_store)
      o.shard_dir = absolute(o.shard_dir.empty() ? (fs::path(o.store).parent_path() / "shards").string() : o.shard_dir);
    const std::string script = slurm_array_script(s, members, o);  // refuses a sweep with nothing left first
    for (const auto& m : members)  // each task's shard holds the plan before the array starts
      if (!o.shard_dir.empty() && (o.all || m.status != "finished"))
        plan_shard(o.store, a->id, shard_store_prefix(o.shard_dir, a->id) + std::to_string(m.idx) + ".db");
    const std::string out = a->out.empty() ? o.log_dir + "/array.sbatch" : a->out;
    make_dirs(o.log_dir);
    write_text_atomically(out, script);
    fs::permissions(out, fs::perms::owner_exec, fs::perm_options::add);
    std::cerr << "wrote " << out << "; submit with: sbatch " << out << "\n";
    std::cout << out << "\n";
  });
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto* sweep = app.add_subcommand("sweep", "Plan, run and follow sweeps over config keys and seeds");
  sweep->require_subcommand(1);
  register_plan(*sweep);
  register_run(*sweep);
  register_status(*sweep);
  register_slurm(*sweep);
}

}  // namespace moxlab::cli
