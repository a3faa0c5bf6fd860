// `moxlab capture --run ID|--checkpoint P --taps 'blocks.*.attn.out,...' --tokens N --out FILE.h5`
// Captures activations on held-out text into an HDF5 tensor log (layout: core/capture/capture.h) and
// records it as an artifact of the run.
#include <algorithm>
#include <iostream>
#include <memory>

#include "core/common/error.h"
#include "core/model/tap_recorder.h"
#include "kernels/runtime/torch_threads.h"
#include "core/store/run_store.h"
#include "experiments/cli/cli_options.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"
#include "experiments/runner/capture_run.h"

namespace moxlab::cli {

namespace {
struct CaptureArgs {
  CheckpointRef ref;
  CaptureOptions capture;
  std::string out;
  int threads = 0;
  bool list = false;
};
}  // namespace

void register_capture(CLI::App& app) {
  auto a = std::make_shared<CaptureArgs>();
  auto* cmd = app.add_subcommand("capture", "Capture activations of named taps to HDF5 (also: probe)");
  cmd->alias("probe");  // the command's name before taps, captures and observations were named as one pipeline
  add_checkpoint_options(cmd, a->ref, "model's");
  cmd->add_option("--store", a->ref.store, "run store")->capture_default_str();
  cmd->add_option("--taps", a->capture.taps, "comma-separated globs over tap names")->capture_default_str();
  cmd->add_option("--tokens", a->capture.tokens, "token budget over all domains")->check(token_count())->capture_default_str();
  auto* seq_len = cmd->add_option("--seq-len", a->capture.seq_len, "window length (default: 256, or the model's context if shorter)")
                      ->check(integer_in(2, 1 << 20))->capture_default_str();
  cmd->add_option("--domains", a->capture.domains, "only these domains")->delimiter(',');
  cmd->add_option("--out", a->out, "HDF5 file to write");
  cmd->add_option("--threads", a->threads, "LibTorch threads (0: all cores)")->check(thread_count());
  cmd->add_flag("--list-taps", a->list, "print the tap names of the model and exit");
  cmd->callback([a, seq_len]() {
    set_torch_threads(a->threads);
    ResolvedCheckpoint ck = resolve_checkpoint(a->ref, "capture");
    auto& model = *ck.loaded.model;
    if (seq_len->count() == 0) a->capture.seq_len = std::min(a->capture.seq_len, model.options().max_seq_len);
    if (a->list) {
      for (const auto& n : dense_tap_names(model.options().n_layers)) std::cout << n << "\n";
      return;
    }
    require(!a->out.empty(), "--out FILE.h5 is required");
    const CaptureRunResult r =
        capture_run(ck, a->capture, a->out, a->ref.store, [](const std::string& s) { std::cerr << s << "\n"; });
    if (ck.new_run) RunStore(a->ref.store).update_status(ck.run_id, RunStatus::finished);
    std::cout << "run " << ck.run_id << ": captured " << r.summary.tokens << " tokens x " << r.summary.taps.size()
              << " taps -> " << r.path << "\n";
  });
}

}  // namespace moxlab::cli
