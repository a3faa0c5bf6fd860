#include "tests/cli/cli_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/store/run_store.h"

namespace moxlab::testing {

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CliResult run_cli(const std::string& args, const std::string& dir) {
  const std::string out = dir + "/.cli_out", err = dir + "/.cli_err";
  const std::string cmd = "cd '" + dir + "' && '" MOXLAB_CLI "' " + args + " > '" + out + "' 2> '" + err + "'";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = file_text(out);
  r.err = file_text(err);
  return r;
}

void interrupt_at_first_checkpoint(const std::string& args, const std::string& dir, const std::string& action) {
  const std::string cmd = "cd '" + dir + "' && ( '" MOXLAB_CLI "' " + args + " > a.out 2> a.err & pid=$!; "
                          "recorded() { ls runs/*/checkpoint.pt >/dev/null 2>&1 && [ \"$(sqlite3 -readonly runs/runs.db "
                          "\"select count(*) from artifacts where kind = 'checkpoint'\" 2>/dev/null)\" -gt 0 ] 2>/dev/null; }; "
                          "while ! recorded && kill -0 $pid 2>/dev/null; do sleep 0.02; done; " +
                          action + "; wait $pid; echo $? > a.rc )";
  std::system(cmd.c_str());
}

bool one_line_error(const CliResult& r, const std::string& needle) {
  const bool one_line = r.err.find('\n') == r.err.size() - 1;
  return r.exit_code != 0 && one_line && r.err.rfind("moxlab: error: ", 0) == 0 && r.err.find(needle) != std::string::npos;
}

int shell(const std::string& cmd, const std::string& dir) {
  const std::string line = "cd '" + dir + "' && { " + cmd + " ; } > '" + dir + "/out' 2> '" + dir + "/err'";
  const int rc = std::system(line.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("moxlab_e2e_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string write_micro_config(const std::string& dir, int max_steps) {
  const std::string path = dir + "/micro.toml";
  std::ofstream(path) << "[run]\nname = \"micro\"\n"
                         "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nmax_seq_len = 64\n"
                         "[data]\ndomain_cap_bytes = 150000\nbpe_vocab_size = 512\nbpe_train_bytes = 400000\n"
                         "cache_dir = \"cache\"\n"
                         "[train]\nbatch_size = 16\nseq_len = 64\nlr = 5e-3\nwarmup_steps = 10\n"
                         "max_steps = " << max_steps << "\neval_every = " << max_steps / 3 << "\neval_tokens = 4096\n"
                         "checkpoint_every = 20\nlog_every = 10\nthreads = 1\n";
  return path;
}

std::string write_micro_config_for_scripts(const std::string& dir, int max_steps) {
  const std::string path = write_micro_config(dir, max_steps);
  std::string config = file_text(path);
  const auto put = [&](const std::string& from, const std::string& to) {
    const auto at = config.find(from);
    if (at == std::string::npos) throw std::logic_error("write_micro_config has no '" + from + "'");
    config.replace(at, from.size(), to);
  };
  put("cache_dir = \"cache\"", "cache_dir = \"" + dir + "/cache\"");
  put("name = \"micro\"\n", "name = \"micro\"\nout_dir = \"" + dir + "/runs\"\n");
  std::ofstream(path) << config;
  return path;
}

std::string train_micro_checkpoint(const std::string& dir, int max_steps) {
  write_micro_config(dir, max_steps);
  const CliResult dense = run_cli("train --config micro.toml", dir);
  if (dense.exit_code != 0) throw std::runtime_error("training micro.toml failed: " + dense.err);
  return RunStore(dir + "/runs/runs.db").artifacts(1, "checkpoint").at(0).path;
}

}  // namespace moxlab::testing
