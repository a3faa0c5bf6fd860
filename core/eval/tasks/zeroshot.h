// Running one zero-shot task: build the requests as lm-evaluation-harness does, have the
// LoglikelihoodFn (the model-side scorer) answer them in chunks, and aggregate the harness's
// metrics with standard errors and per-item audit rows. Torch-free: the model is behind the
// LoglikelihoodFn, the vocabulary behind the Tokenizer interface.
//
// Conventions (see the headers named for the source of each in the harness):
//   requests        task_requests.h (construct_requests), encode_pair.h (_encode_pair, prefix)
//   acc             argmax of summed loglikelihood == gold                      (process_results)
//   acc_norm        argmax of loglikelihood / len(choice text) == gold, len in code points
//   LAMBADA acc     is_greedy; perplexity = exp(-mean per-item loglikelihood)
//   stderr          sample stdev / sqrt(n) (harness_metrics.h)
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "core/data/tokenizers/tokenizer.h"
#include "core/eval/tasks/loglikelihood.h"
#include "core/eval/tasks/task_files.h"
#include "core/eval/tasks/task_registry.h"
#include "core/eval/tasks/task_requests.h"
#include "core/eval/tasks/task_result.h"

namespace moxlab {

struct TaskOptions {
  int limit = 0;                      // score only the first N items (0: all)
  std::size_t batch_requests = 64;    // requests per LoglikelihoodFn call
  // Token a request's context becomes when the context text is empty (the harness's
  // prefix_token_id). -1: the tokenizer's bos_id(), else its eos_id().
  std::int32_t prefix_token = -1;
  // Also put the prefix token before every non-empty context (HFLM add_bos_token=True). The
  // harness default is false; set it for models trained with BOS at every document start.
  bool prefix_every_context = false;
  std::string target_delimiter = kHarnessTargetDelimiter;  // between query and choice
  std::string data_dir;               // folder of the task files; "" = <shared data>/eval
  // Called after each chunk of requests is scored (requests done, requests in the task).
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Loads spec's file (first opts.limit items) and scores it.
TaskResult run_task(const TaskSpec& spec, const Tokenizer& tok, const LoglikelihoodFn& score,
                    const TaskOptions& opts = {});

// Scores already-loaded items (data.kind must equal spec.kind); opts.data_dir is unused.
TaskResult score_task(const TaskSpec& spec, const TaskData& data, const Tokenizer& tok,
                      const LoglikelihoodFn& score, const TaskOptions& opts = {});

}  // namespace moxlab
