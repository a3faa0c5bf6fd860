// The two pieces of Python `str` semantics that lm-evaluation-harness scoring depends on, for
// UTF-8 text:
//   - `context.rstrip()` in TemplateLM._encode_pair (lm_eval/api/model.py) decides which trailing
//     characters move from the context to the continuation; Python strips every code point for
//     which str.isspace() is true, not just ASCII blanks.
//   - `len(choice)` in ConfigurableTask.process_results (lm_eval/api/task.py) is the acc_norm
//     divisor; Python counts code points, not bytes.
// Matching both exactly keeps our numbers equal to the harness's on non-ASCII items (PIQA, ARC,
// BoolQ and LAMBADA all contain some).
#pragma once
#include <cstddef>
#include <string_view>

namespace moxlab {

// Python's str.isspace() for one code point.
bool python_isspace(char32_t cp);

// Byte length of `text` after Python's text.rstrip() (no arguments). Malformed UTF-8 at the end
// is treated as non-space, so it is never stripped.
std::size_t python_rstrip_size(std::string_view text);

// Python's len(text): the number of code points (UTF-8 lead bytes) in `text`.
std::size_t python_len(std::string_view text);

}  // namespace moxlab
