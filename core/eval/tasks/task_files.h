// Reading the zero-shot task files: JSONL, one item a line, in the three shapes of
// ../shared/data/README.md (eval/). Field meanings follow lm-evaluation-harness:
//   MultipleChoice  {"query": str, "choices": [str], "gold": int}
//   PartialContext  {"context_options": [str], "continuation": str, "gold": int}   (WinoGrande)
//   LastWord        {"context": str, "continuation": str}                           (LAMBADA)
// Other keys are ignored. A malformed line throws Error naming the file and its 1-based line
// number, so a broken data file is found before any model time is spent on it. Blank lines are
// skipped (they hold no item).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/eval/tasks/task_registry.h"

namespace moxlab {

struct MultipleChoiceItem {
  std::string query;
  std::vector<std::string> choices;
  int gold = 0;
};

struct PartialContextItem {
  std::vector<std::string> context_options;
  std::string continuation;
  int gold = 0;
};

struct LastWordItem {
  std::string context;
  std::string continuation;  // the word, without the leading space the request adds
};

// The items of one file; only the vector matching `kind` is filled.
struct TaskData {
  TaskKind kind = TaskKind::MultipleChoice;
  std::string path;
  std::vector<MultipleChoiceItem> multiple_choice;
  std::vector<PartialContextItem> partial_context;
  std::vector<LastWordItem> last_word;
  std::size_t size() const;
};

// Reads `path` as a file of `kind` items. limit > 0 reads only the first `limit` items (lines
// after them are not read, so they are not validated either).
TaskData load_task_file(const std::string& path, TaskKind kind, int limit = 0);

// The folder holding the task files: `data_dir` when non-empty, else <shared data>/eval.
// Throws Error when neither exists.
std::string eval_data_dir(const std::string& data_dir = "");

// load_task_file(eval_data_dir(data_dir) + "/" + spec.file, spec.kind, limit).
TaskData load_task(const TaskSpec& spec, int limit = 0, const std::string& data_dir = "");

}  // namespace moxlab
