// Reads a whole file, decompressing it with zlib when its name ends in ".gz".
#pragma once
#include <string>

namespace moxlab {

// Throws Error naming the path when it cannot be opened or the gzip stream is corrupt or truncated.
std::string read_maybe_gzip(const std::string& path);

// True when the name ends with ".gz".
bool is_gzip_name(const std::string& path);

}  // namespace moxlab
