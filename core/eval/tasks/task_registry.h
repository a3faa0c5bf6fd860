// The zero-shot tasks moxlab knows, each scored the way lm-evaluation-harness scores it.
//
// Three kinds, after the harness's request shapes (lm_eval/api/task.py, construct_requests):
//   MultipleChoice  output_type multiple_choice: one context (the query), one request per choice
//                   with continuation target_delimiter + choice; metrics acc / acc_norm.
//   PartialContext  multiple_choice with multiple_inputs (WinoGrande): one request per context
//                   option, all with the same continuation target_delimiter + suffix; acc only.
//   LastWord        output_type loglikelihood (LAMBADA): one request per item; acc = is_greedy,
//                   perplexity = exp(-mean per-item loglikelihood).
// The files are the JSONL sets in <shared>/eval (see ../shared/data/README.md, eval/).
#pragma once
#include <string>
#include <vector>

namespace moxlab {

enum class TaskKind { MultipleChoice, PartialContext, LastWord };

// "multiple_choice", "partial_context" or "last_word".
std::string task_kind_name(TaskKind kind);

struct TaskSpec {
  std::string name;                  // e.g. "arc_easy"
  std::string file;                  // file name inside the eval data folder
  TaskKind kind = TaskKind::MultipleChoice;
  std::string split;                 // split label for reports ("unlabelled" where the README names none)
  std::vector<std::string> metrics;  // reported metrics, in order: the harness task's metric_list
  std::string data_note;             // what the file provides, compared with the harness's own prompt
};

// All registered tasks, in a fixed order.
const std::vector<TaskSpec>& task_registry();

// The spec of a registered task; throws Error listing the known names when `name` is unknown.
const TaskSpec& find_task(const std::string& name);

}  // namespace moxlab
