// `moxlab route --run ID | --sweep NAME|ID | --capture FILE.h5 [--tokens-per-domain N] [--store P]`
// MoHD Fig. 11: per-domain selection fraction and mean router score of every sub-dimension of every
// attention and FFN router (core/observe/router_domains.h). With --run/--sweep the router taps are
// captured first (N tokens from the start of each domain's validation split), then observed; results go
// to the run (routing/selected|score/<router>/<domain>/<i>, routing/spread|least_used/<router>) with a "routing"
// artifact. --sweep covers every finished MoHD member of the sweep that has no routing results yet
// (all of them with --redo).
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/common/error.h"
#include "kernels/runtime/torch_threads.h"
#include "core/observe/router_domains.h"
#include "core/store/run_store.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"
#include "experiments/report/table_build.h"
#include "experiments/runner/route_run.h"

namespace moxlab::cli {

namespace {
struct RouteArgs {
  std::string capture, sweep, store = "runs/runs.db";
  std::int64_t run = -1;
  std::int64_t tokens_per_domain = 4096;
  int threads = 0;
  bool redo = false;
};

void print(const RoutingReport& rep) {
  std::cout << "routing of " << rep.capture << " -> " << rep.out << "\n";
  for (const auto& r : rep.routers) {
    std::printf("%-16s selection fraction per sub-dim (spread %.3f, least used %.3f)\n", r.router.c_str(), r.spread(),
                r.least_used());
    if (r.null.permutations > 0)
      std::printf("  spread under domain labels permuted across %lld windows: 95th percentile %.3f, p = %.4f (%d permutations)\n",
                  static_cast<long long>(r.null.windows), r.null.q95, r.null.p, r.null.permutations);
    for (std::size_t d = 0; d < r.domains.size(); ++d) {
      std::printf("  %-14s %6lld tok ", r.domains[d].c_str(), static_cast<long long>(r.tokens[d]));
      for (int i = 0; i < r.sub_dims; ++i) std::printf(" %5.3f", r.selected[d * r.sub_dims + i]);
      std::printf("\n");
    }
  }
}

void log_line(const std::string& s) { std::cerr << s << "\n"; }
}  // namespace

void register_route(CLI::App& app) {
  auto a = std::make_shared<RouteArgs>();
  auto* cmd = app.add_subcommand("route", "Per-domain router selection: MoHD sub-dimensions (Fig. 11), MoH heads, ToMoE experts");
  auto* cap = cmd->add_option("--capture", a->capture, "capture HDF5 holding blocks.*.router.probs/topk taps");
  auto* run = cmd->add_option("--run", a->run, "run id: capture its router taps, then observe")->excludes(cap)->check(run_id());
  cmd->add_option("--sweep", a->sweep, "sweep name or id: every finished member with routers (MoHD, MoH, ToMoE)")->excludes(cap)->excludes(run);
  cmd->add_option("--store", a->store, "run store")->capture_default_str();
  cmd->add_option("--tokens-per-domain", a->tokens_per_domain, "validation tokens captured per domain")
      ->check(token_count())->capture_default_str();
  cmd->add_option("--threads", a->threads, "LibTorch threads when capturing (0: all cores)")->check(thread_count());
  cmd->add_flag("--redo", a->redo, "with --sweep: also members that already have routing results");
  cmd->callback([a]() {
    require(!a->capture.empty() || a->run >= 0 || !a->sweep.empty(), "give --capture FILE.h5, --run ID or --sweep NAME|ID");
    set_torch_threads(a->threads);
    if (!a->capture.empty()) return print(route_capture(a->capture, a->store, log_line));
    require(std::filesystem::exists(a->store), "no run store at " + a->store);
    std::vector<std::int64_t> runs;
    if (a->run >= 0) {
      runs.push_back(a->run);
    } else {
      const RunStore store(a->store);
      const std::int64_t sweep = resolve_sweep(parse_sweep_ref(a->sweep), store);
      int members = 0;
      for (const auto& m : store.sweep_members(sweep))
        if (m.status == "finished" && m.run_id && is_routed_config(store.get_run(*m.run_id).config_json)) {
          ++members;
          if (!a->redo && !store.artifacts(*m.run_id, "routing").empty()) {
            std::cout << "run " << *m.run_id << ": has routing results (--redo to recompute)\n";
            continue;
          }
          runs.push_back(*m.run_id);
        }
      require(members > 0, "sweep " + a->sweep + " has no finished MoHD member");
    }
    for (auto id : runs) print(route_stored_run(a->store, id, a->tokens_per_domain, log_line));
  });
}

}  // namespace moxlab::cli
