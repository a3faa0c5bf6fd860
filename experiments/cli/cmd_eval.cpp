// `moxlab eval --run ID | --checkpoint PATH [--tasks a,b] [--limit N] [--no-perplexity] [--no-wikitext]`
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "experiments/cli/commands.h"
#include "experiments/runner/eval_run.h"

namespace moxlab::cli {

void register_eval(CLI::App& app) {
  auto o = std::make_shared<EvalRunOptions>();
  auto* cmd = app.add_subcommand("eval", "Evaluate a checkpoint: per-domain perplexity, WikiText-2, zero-shot tasks");
  cmd->add_option("--run", o->ref.run_id, "run id whose checkpoint to evaluate");
  cmd->add_option("--checkpoint", o->ref.checkpoint, "checkpoint file");
  cmd->add_option("--store", o->ref.store, "run store")->capture_default_str();
  cmd->add_option("--tasks", o->tasks, "zero-shot tasks (comma-separated; 'none' to skip; default all)")->delimiter(',');
  cmd->add_option("--limit", o->limit, "first N items per task (0: all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-val-tokens", o->max_val_tokens, "per-domain validation tokens (0: all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--batch-size", o->batch_size, "sequences per forward pass")->check(CLI::PositiveNumber);
  cmd->add_option("--threads", o->threads, "LibTorch threads (0: all cores)");
  auto* no_ppl = cmd->add_flag("--no-perplexity", "skip per-domain validation perplexity");
  auto* no_wiki = cmd->add_flag("--no-wikitext", "skip WikiText-2 perplexity");
  cmd->callback([o, no_ppl, no_wiki]() {
    o->perplexity = no_ppl->count() == 0;
    o->wikitext = no_wiki->count() == 0;
    o->log = [](const std::string& s) { std::cerr << s << "\n"; };
    EvalRunResult r = run_evaluation(*o);
    std::cout << "run " << r.run_id << " results:\n";
    for (const auto& l : r.lines) {
      char buf[160];
      if (std::isfinite(l.std_err)) std::snprintf(buf, sizeof(buf), "  %-36s %10.4f ± %.4f", l.key.c_str(), l.value, l.std_err);
      else std::snprintf(buf, sizeof(buf), "  %-36s %10.4f", l.key.c_str(), l.value);
      std::cout << buf << "\n";
    }
  });
}

}  // namespace moxlab::cli
