// Normalisation applied to every package-shipped text: CRLF/CR line ends become LF, malformed
// UTF-8 becomes U+FFFD, leading blank lines go and trailing blank space becomes one newline. Keeps
// the corpus byte-identical across packagings that differ only in line ends.
#pragma once
#include <string>

namespace moxlab {

std::string clean_package_text(std::string text);

}  // namespace moxlab
