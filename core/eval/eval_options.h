// Options of evaluation (plain struct, torch-free; bound to TOML keys "eval.*").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace moxlab {

struct EvalOptions {
  // Zero-shot task names (see core/eval/tasks); empty list: all registered tasks.
  std::vector<std::string> tasks;
  int limit = 0;              // first N items per task (0: all)
  int batch_size = 16;        // sequences per forward pass
  bool wikitext = true;       // WikiText-2 test perplexity
  std::int64_t max_val_tokens = 0;  // per-domain val tokens for perplexity (0: all)
};

}  // namespace moxlab
