// `moxlab eval --run ID | --checkpoint PATH [--tasks a,b] [--limit N] [--no-perplexity] [--no-wikitext]
// [--kl-reference init|PATH] [--temperature T[,T...]]`
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>

#include "experiments/cli/cli_options.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"
#include "experiments/cli/progress_bar.h"
#include "experiments/runner/eval_run.h"

namespace moxlab::cli {

void register_eval(CLI::App& app) {
  auto o = std::make_shared<EvalRunOptions>();
  auto* cmd = app.add_subcommand("eval", "Evaluate a checkpoint: per-domain perplexity, WikiText-2, zero-shot tasks");
  add_checkpoint_options(cmd, o->ref, "model's");
  cmd->add_option("--store", o->ref.store, "run store")->capture_default_str();
  cmd->add_option("--tasks", o->tasks, "zero-shot tasks (comma-separated; 'none' to skip; default all)")->delimiter(',');
  cmd->add_option("--limit", o->limit, "first N items per task (0: all)")->check(non_negative_count());
  cmd->add_option("--max-val-tokens", o->max_val_tokens, "per-domain validation tokens (0: all)")
      ->check(integer_in(0, std::numeric_limits<std::int64_t>::max() / 2));
  cmd->add_option("--kl-reference", o->kl_reference,
                  "also KL(reference || model) per validation domain: init (the model's train.init_from), a checkpoint path or sweep:NAME/VARIANT[/SEED]");
  cmd->add_option("--temperature", o->temperatures,
                  "divide the model's logits by T in the perplexities, for each T given (comma-separated, one forward "
                  "pass; a calibration reading; keys end in @T; needs --tasks none)")
      ->delimiter(',')
      ->check(number_in(1e-3, 1e3));
  cmd->add_option("--batch-size", o->batch_size, "sequences per forward pass")->check(integer_in(1, 1 << 16));
  cmd->add_option("--threads", o->threads, "LibTorch threads (0: all cores)")->check(thread_count());
  auto* no_ppl = cmd->add_flag("--no-perplexity", "skip per-domain validation perplexity");
  auto* no_wiki = cmd->add_flag("--no-wikitext", "skip WikiText-2 perplexity");
  cmd->callback([o, no_ppl, no_wiki]() {
    EvalRunOptions opts = *o;
    opts.perplexity = no_ppl->count() == 0;
    opts.wikitext = no_wiki->count() == 0;
    // One bar per phase (perplexity, WikiText-2, each task), ended before any log line.
    std::unique_ptr<ProgressBar> bar;
    std::string phase;
    opts.log = [&bar](const std::string& s) {
      if (bar) bar->finish();
      std::cerr << s << "\n";
    };
    opts.progress = [&bar, &phase](const std::string& what, std::int64_t done, std::int64_t total) {
      if (!bar || what != phase) {
        if (bar) bar->finish();
        bar = std::make_unique<ProgressBar>(what);
        phase = what;
      }
      bar->update(done, total, "");
    };
    EvalRunResult r = run_evaluation(opts);
    if (bar) bar->finish();
    std::cout << "run " << r.run_id << " results:\n";
    for (const auto& l : r.lines) {
      char buf[160];
      if (std::isfinite(l.std_err)) std::snprintf(buf, sizeof(buf), "  %-36s %10.4f ± %.4f", l.key.c_str(), l.value, l.std_err);
      else std::snprintf(buf, sizeof(buf), "  %-36s %10.4f", l.key.c_str(), l.value);
      std::cout << buf << (l.note.empty() ? "" : "  (" + l.note + ")") << "\n";
    }
  });
}

}  // namespace moxlab::cli
