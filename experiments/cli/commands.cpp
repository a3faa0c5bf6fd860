#include "experiments/cli/commands.h"

namespace moxlab::cli {

void register_all(CLI::App& app) {
  register_config(app);
  register_train(app);
  register_generate(app);
  register_import(app);
}

}  // namespace moxlab::cli
