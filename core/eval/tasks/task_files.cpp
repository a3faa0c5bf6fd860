#include "core/eval/tasks/task_files.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/paths.h"

namespace moxlab {

std::size_t TaskData::size() const {
  switch (kind) {
    case TaskKind::MultipleChoice: return multiple_choice.size();
    case TaskKind::PartialContext: return partial_context.size();
    case TaskKind::LastWord: return last_word.size();
  }
  return 0;
}

namespace {

using nlohmann::json;

// Everything below throws a bare message; read_items() prefixes "<file>:<line>: ".
struct LineError {
  std::string what;
};

const json& field(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) throw LineError{std::string("missing key '") + key + "'"};
  return *it;
}

std::string string_field(const json& obj, const char* key) {
  const json& v = field(obj, key);
  if (!v.is_string()) throw LineError{std::string("'") + key + "' must be a string"};
  return v.get<std::string>();
}

std::vector<std::string> string_list_field(const json& obj, const char* key) {
  const json& v = field(obj, key);
  if (!v.is_array() || v.empty()) throw LineError{std::string("'") + key + "' must be a non-empty list of strings"};
  std::vector<std::string> out;
  for (const json& e : v) {
    if (!e.is_string()) throw LineError{std::string("'") + key + "' must be a non-empty list of strings"};
    out.push_back(e.get<std::string>());
  }
  return out;
}

// gold must be an integer index into the options (JSON true/false and 1.0 are rejected: the
// harness indexes with it, and a float or bool there means the file was built wrongly).
int gold_field(const json& obj, std::size_t n_options) {
  const json& v = field(obj, "gold");
  if (!v.is_number_integer()) throw LineError{"'gold' must be an integer"};
  const auto g = v.get<long long>();
  if (g < 0 || static_cast<std::size_t>(g) >= n_options)
    throw LineError{"'gold' " + std::to_string(g) + " is out of range for " + std::to_string(n_options) + " options"};
  return static_cast<int>(g);
}

void parse_item(const json& obj, TaskData& data) {
  switch (data.kind) {
    case TaskKind::MultipleChoice: {
      MultipleChoiceItem item;
      item.query = string_field(obj, "query");
      item.choices = string_list_field(obj, "choices");
      item.gold = gold_field(obj, item.choices.size());
      data.multiple_choice.push_back(std::move(item));
      break;
    }
    case TaskKind::PartialContext: {
      PartialContextItem item;
      item.context_options = string_list_field(obj, "context_options");
      item.continuation = string_field(obj, "continuation");
      if (item.continuation.empty()) throw LineError{"'continuation' is empty"};
      item.gold = gold_field(obj, item.context_options.size());
      data.partial_context.push_back(std::move(item));
      break;
    }
    case TaskKind::LastWord: {
      LastWordItem item;
      item.context = string_field(obj, "context");
      item.continuation = string_field(obj, "continuation");
      if (item.continuation.empty()) throw LineError{"'continuation' is empty"};
      data.last_word.push_back(std::move(item));
      break;
    }
  }
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

TaskData load_task_file(const std::string& path, TaskKind kind, int limit) {
  std::ifstream in(path, std::ios::binary);
  require(static_cast<bool>(in), "cannot open task file " + path);
  TaskData data;
  data.kind = kind;
  data.path = path;
  std::string line;
  std::size_t line_no = 0;
  while ((limit <= 0 || data.size() < static_cast<std::size_t>(limit)) && std::getline(in, line)) {
    ++line_no;
    if (is_blank(line)) continue;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    json obj;
    try {
      obj = json::parse(line);
    } catch (const json::exception& e) {
      throw Error(where + "not valid JSON (" + e.what() + ")");
    }
    if (!obj.is_object()) throw Error(where + "expected a JSON object for a " + task_kind_name(kind) + " item");
    try {
      parse_item(obj, data);
    } catch (const LineError& e) {
      throw Error(where + e.what + " (" + task_kind_name(kind) + " item)");
    }
  }
  require(!in.bad(), "error reading task file " + path);
  return data;
}

std::string eval_data_dir(const std::string& data_dir) {
  if (!data_dir.empty()) {
    require(file_exists(data_dir), "eval data folder not found: " + data_dir);
    return data_dir;
  }
  const std::string shared = shared_data_dir();
  require(!shared.empty(), "shared data folder not found (../shared/data or $MOXLAB_SHARED_DATA); "
                           "give the folder of the task files explicitly");
  const std::string dir = shared + "/eval";
  require(file_exists(dir), "eval data folder not found: " + dir);
  return dir;
}

TaskData load_task(const TaskSpec& spec, int limit, const std::string& data_dir) {
  return load_task_file(eval_data_dir(data_dir) + "/" + spec.file, spec.kind, limit);
}

}  // namespace moxlab
