// `moxlab observe --capture FILE.h5 | --run ID [--store runs/runs.db] [--tokens N] [--eps E] [--top-p P]
//  [--out FILE.h5]`
// The activation observations of MoHD section 3 (Fig. 3-5; core/observe/observe_capture.h) of a
// capture: an observations HDF5 file, headline results on the capture's run with their definitions,
// an "observations" artifact, and a per-layer summary on stdout. With --run, the newest capture of the
// run holding every tap of every layer is used; without one, all taps are captured first.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/model/tap_recorder.h"
#include "kernels/runtime/torch_threads.h"
#include "core/observe/observe_capture.h"
#include "core/observe/store_observations.h"
#include "core/store/run_store.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"
#include "experiments/runner/capture_run.h"

namespace moxlab::cli {

namespace {
struct ObserveArgs {
  std::string capture, out, store = "runs/runs.db";
  std::int64_t run = -1;
  std::int64_t tokens = CaptureOptions{}.tokens;
  int threads = 0;
  ObserveOptions options;
};

// The newest capture artifact of the run whose taps include all 13 tap kinds of every layer of the
// run's model; "" when there is none.
std::string find_full_capture(const RunStore& store, const ObserveArgs& a) {
  const auto cfg = nlohmann::json::parse(store.get_run(a.run).config_json);
  const auto wanted = dense_tap_names(cfg.value("model.n_layers", 0));
  const auto arts = store.artifacts(a.run, "capture");
  for (auto it = arts.rbegin(); it != arts.rend(); ++it) {
    const auto meta = nlohmann::json::parse(it->meta_json);
    const auto names = meta.value("tap_names", std::vector<std::string>{});
    const std::set<std::string> have(names.begin(), names.end());
    const bool all_taps = !wanted.empty() && std::all_of(wanted.begin(), wanted.end(),
                                                         [&](const std::string& t) { return have.count(t) > 0; });
    if (all_taps && file_exists(it->path)) return it->path;
  }
  return "";
}

// The capture to observe for --run: an existing one, or a new capture of every tap in the run's
// directory.
std::string capture_for_run(const ObserveArgs& a) {
  require(file_exists(a.store), "no run store at " + a.store);
  {
    const RunStore store(a.store);
    const std::string found = find_full_capture(store, a);
    if (!found.empty()) {
      std::cout << "run " << a.run << ": observing capture " << found << "\n";
      return found;
    }
  }
  CaptureOptions opt;
  opt.taps = "blocks.*";
  opt.tokens = a.tokens;
  const std::string name = "capture-observe-" + std::to_string(a.tokens) + ".h5";
  std::cout << "run " << a.run << ": no capture with every tap; capturing " << a.tokens << " tokens -> " << name << "\n";
  return capture_stored_run(a.store, a.run, opt, name, [](const std::string& s) { std::cerr << s << "\n"; }).path;
}

void record(const ObserveReport& rep, const std::string& store_path) {
  const std::string why = store_observations(
      store_path, rep.run_id, rep.results, "observations", rep.out,
      nlohmann::json{{"capture", rep.capture}, {"tokens", rep.tokens}, {"taps", rep.taps.size()}}.dump());
  if (!why.empty()) std::cerr << "note: results not stored (" << why << ")\n";
}

std::string num(double v, const char* fmt = "%.3g") {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

void print_summary(const ObserveReport& rep, const ObserveOptions& opt) {
  std::map<int, std::map<std::string, const TapObservation*>> layers;
  for (const auto& o : rep.taps)
    if (o.layer >= 0) layers[o.layer][o.kind] = &o;
  auto get = [&](int l, const std::string& kind) {
    auto it = layers[l].find(kind);
    return it == layers[l].end() ? nullptr : it->second;
  };
  auto field = [&](int l, const std::string& kind, double TapObservation::*f, const char* fmt = "%.3g") {
    const TapObservation* o = get(l, kind);
    return o ? num(o->*f, fmt) : std::string("-");
  };
  std::printf("\nattn.in: top-50%% share of x^2 (pooled / per token), median x^2; sparsity = share of dims with x^2 < %g "
              "(Eq. 2); shared5 = dims in the top %g%% of all 5 / of exactly one of 5 consecutive tokens "
              "(per token; chance in brackets)\n",
              opt.eps, opt.top_percent);
  std::printf("%-5s %6s %6s %8s | %8s %8s %8s %8s | %16s %16s\n", "layer", "share", "token", "median", "attn.in",
              "attn.out", "ffn.in", "ffn.out", "shared5 all", "shared5 one");
  for (const auto& [l, m] : layers) {
    const TapObservation* in = get(l, "attn.in");
    std::printf("%-5d %6s %6s %8s | %8s %8s %8s %8s | %16s %16s\n", l, field(l, "attn.in", &TapObservation::share_top50).c_str(),
                field(l, "attn.in", &TapObservation::token_share_top50).c_str(),
                field(l, "attn.in", &TapObservation::median).c_str(),
                field(l, "attn.in", &TapObservation::sparsity).c_str(), field(l, "attn.out", &TapObservation::sparsity).c_str(),
                field(l, "ffn.in", &TapObservation::sparsity).c_str(), field(l, "ffn.out", &TapObservation::sparsity).c_str(),
                in ? (num(in->shared5_all, "%.1f") + " (" + num(in->shared5_chance_all, "%.2g") + ")").c_str() : "-",
                in ? (num(in->shared5_one_per_token, "%.1f") + " (" + num(in->shared5_chance_one_per_token, "%.2g") + ")").c_str()
                   : "-");
  }
  std::printf("\nactivation flow (Fig. 4): median x^2 in %% of the layer's attn.in\n%-5s", "layer");
  for (const auto& k : flow_tap_kinds()) std::printf(" %9s", k.c_str());
  std::printf("\n");
  for (const auto& [l, m] : layers) {
    std::printf("%-5d", l);
    for (const auto& k : flow_tap_kinds()) std::printf(" %9s", field(l, k, &TapObservation::flow_median_pct, "%.4g").c_str());
    std::printf("\n");
  }
  if (rep.branches.empty()) return;
  std::printf("\nresidual branches: RMS of what attention / the FFN adds to the residual stream\n%-5s %9s %9s\n", "layer",
              "attention", "FFN");
  for (const BranchScale& b : rep.branches)
    std::printf("%-5d %9s %9s\n", b.layer, num(b.attn_rms, "%.4g").c_str(), num(b.ffn_rms, "%.4g").c_str());
}
}  // namespace

void register_observe(CLI::App& app) {
  auto a = std::make_shared<ObserveArgs>();
  auto* cmd = app.add_subcommand("observe", "MoHD section-3 activation observations (Fig. 3-5) of a capture");
  auto* cap = cmd->add_option("--capture", a->capture, "capture HDF5 file (moxlab capture)");
  cmd->add_option("--run", a->run, "run id: its newest capture of every tap, or a new one")->excludes(cap)->check(run_id());
  cmd->add_option("--store", a->store, "run store")->capture_default_str();
  cmd->add_option("--tokens", a->tokens, "token budget when --run has to capture")
      ->check(token_count())->capture_default_str();
  cmd->add_option("--eps", a->options.eps, "sparsity threshold on x^2 (Eq. 2)")->check(number_in(1e-30, 1e30))->capture_default_str();
  cmd->add_option("--top-p", a->options.top_percent, "percent of dims counted as high (Fig. 5)")
      ->check(number_in(0.0, 100.0))->capture_default_str();
  cmd->add_option("--out", a->out, "observations HDF5 (default: <capture stem>.observe.h5 next to the capture)");
  cmd->add_option("--threads", a->threads, "LibTorch threads when capturing (0: all cores)")->check(thread_count());
  cmd->callback([a]() {
    require(!a->capture.empty() || a->run >= 0, "give --capture FILE.h5 or --run ID");
    set_torch_threads(a->threads);
    const std::string capture = a->capture.empty() ? capture_for_run(*a) : a->capture;
    const std::string out =
        a->out.empty() ? std::filesystem::path(capture).replace_extension(".observe.h5").string() : a->out;
    a->options.log = [](const std::string& s) { std::cerr << s << "\n"; };
    const ObserveReport rep = observe_capture(capture, out, a->options);
    record(rep, a->store);
    std::cout << "observed " << rep.tokens << " tokens x " << rep.taps.size() << " taps of " << rep.capture << " -> "
              << std::filesystem::absolute(out).string();
    if (rep.run_id >= 0) std::cout << " (run " << rep.run_id << ", " << rep.results.size() << " results)";
    std::cout << "\n";
    print_summary(rep, a->options);
  });
}

}  // namespace moxlab::cli
