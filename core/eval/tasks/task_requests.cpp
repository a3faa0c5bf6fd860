#include "core/eval/tasks/task_requests.h"

namespace moxlab {

std::vector<TextRequest> text_requests(const MultipleChoiceItem& item, const std::string& delimiter) {
  std::vector<TextRequest> out;
  out.reserve(item.choices.size());
  for (const std::string& choice : item.choices) out.push_back({item.query, delimiter + choice});
  return out;
}

std::vector<TextRequest> text_requests(const PartialContextItem& item, const std::string& delimiter) {
  std::vector<TextRequest> out;
  out.reserve(item.context_options.size());
  for (const std::string& context : item.context_options) out.push_back({context, delimiter + item.continuation});
  return out;
}

std::vector<TextRequest> text_requests(const LastWordItem& item) {
  return {{item.context, " " + item.continuation}};
}

}  // namespace moxlab
