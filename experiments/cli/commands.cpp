#include "experiments/cli/commands.h"

namespace moxlab::cli {

void register_all(CLI::App& app) {
  register_config(app);
  register_train(app);
  register_generate(app);
  register_import(app);
  register_export(app);
  register_eval(app);
  register_capture(app);
  register_observe(app);
  register_route(app);
  register_runs(app);
  register_bench(app);
  register_table(app);
  register_scorecard(app);
  register_sweep(app);
  register_convert(app);
  register_prune(app);
  register_store(app);
}

}  // namespace moxlab::cli
