// Deterministic directory listings: regular files under a folder, sorted by their relative path in
// byte order, so corpora read from folders come out in the same order on every machine.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace moxlab {

struct ListedFile {
  std::string path;      // full path
  std::string relative;  // path relative to the listed root, '/'-separated
};

// Regular files (symlinks skipped: they would duplicate or leave the tree) for which keep(relative)
// is true, recursing into sub-folders; throws Error naming root when it is not a readable folder.
std::vector<ListedFile> list_files_sorted(const std::string& root,
                                          const std::function<bool(const std::string&)>& keep);

bool ends_with(const std::string& s, const std::string& suffix);

}  // namespace moxlab
