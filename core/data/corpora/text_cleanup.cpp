#include "core/data/corpora/text_cleanup.h"

#include "core/data/corpora/document.h"

namespace moxlab {

std::string clean_package_text(std::string text) {
  std::string out;
  out.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  std::size_t begin = 0;
  while (begin < out.size() && out[begin] == '\n') ++begin;  // leading blank lines only: code indents
  std::size_t end = out.size();
  while (end > begin && (out[end - 1] == '\n' || out[end - 1] == ' ' || out[end - 1] == '\t')) --end;
  if (begin == end) return "";
  return sanitize_utf8(out.substr(begin, end - begin) + "\n");
}

}  // namespace moxlab
