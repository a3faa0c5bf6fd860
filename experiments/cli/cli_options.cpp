#include "experiments/cli/cli_options.h"

#include <iostream>

#include "core/common/error.h"
#include "experiments/cli/option_checks.h"

namespace moxlab::cli {

void add_checkpoint_options(CLI::App* cmd, CheckpointRef& ref, const std::string& what) {
  auto* run = cmd->add_option("--run", ref.run_id, "run id whose " + what + " checkpoint to read")->check(run_id());
  cmd->add_option("--checkpoint", ref.checkpoint, what + " checkpoint file")->excludes(run);
}

std::string checkpoint_file(const CheckpointRef& ref) {
  require(ref.run_id >= 0 || !ref.checkpoint.empty(), "give --run ID or --checkpoint PATH");
  return ref.run_id >= 0 ? run_checkpoint_path(ref.store, ref.run_id) : ref.checkpoint;
}

void add_print_id_flag(CLI::App* cmd, bool& print_id) {
  cmd->add_flag("--print-id", print_id, "print only the new run's id on stdout (the summary goes to stderr), "
                                        "for scripts: ID=$(moxlab ... --print-id)");
}

std::ostream& summary_stream(bool print_id) { return print_id ? std::cerr : std::cout; }

}  // namespace moxlab::cli
