// moxlab: the command-line front end. Each subcommand lives in its own cmd_*.cpp and registers itself
// here; all of them are thin over core/. Errors print one line and exit non-zero.
#include <CLI/CLI.hpp>

#include <iostream>

#include <c10/util/Exception.h>

#include "core/common/error.h"
#include "core/common/malloc_tuning.h"
#include "experiments/cli/commands.h"
#include "kernels/runtime/denormals.h"

int main(int argc, char** argv) {
  moxlab::keep_freed_memory();
  moxlab::set_flush_denormals(true);  // every command's default; a run's execution.denormals may keep them
  CLI::App app{"moxlab: conditional sparsity in Transformers (MoHD, MoH, ToMoE)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help of every subcommand");
  moxlab::cli::register_all(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // Usage errors read like every other error: one line naming the flag.
    std::cerr << "moxlab: error: " << e.what() << "\n";
    return e.get_exit_code();
  } catch (const moxlab::cli::ExitRequest& e) {
    return e.code;
  } catch (const moxlab::Error& e) {
    std::cerr << "moxlab: error: " << e.what() << "\n";
    return 1;
  } catch (const c10::Error& e) {
    std::cerr << "moxlab: error: " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "moxlab: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
