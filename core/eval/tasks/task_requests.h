// The text requests each kind of item makes, as lm-evaluation-harness's
// ConfigurableTask.construct_requests builds them for a zero-shot run (lm_eval/api/task.py):
//   multiple_choice:                 [(query, delimiter + choice_i) for each choice]
//   multiple_choice, multiple_inputs: [(option_context_i, delimiter + continuation) for each option]
//                                     (WinoGrande; the few-shot prefix is "" at zero shots)
//   loglikelihood:                    [(context, doc_to_target)] where lambada_openai's
//                                     doc_to_target is ' ' + last word; no target_delimiter is
//                                     added for this output type.
// target_delimiter defaults to " " in the harness's TaskConfig.
#pragma once
#include <string>
#include <vector>

#include "core/eval/tasks/encode_pair.h"
#include "core/eval/tasks/task_files.h"

namespace moxlab {

inline constexpr const char* kHarnessTargetDelimiter = " ";

std::vector<TextRequest> text_requests(const MultipleChoiceItem& item, const std::string& delimiter = kHarnessTargetDelimiter);
std::vector<TextRequest> text_requests(const PartialContextItem& item, const std::string& delimiter = kHarnessTargetDelimiter);
// LAMBADA's ' ' is part of the target itself, so no delimiter parameter.
std::vector<TextRequest> text_requests(const LastWordItem& item);

}  // namespace moxlab
