#include "core/data/corpora/file_listing.h"

#include <algorithm>
#include <filesystem>

#include "core/common/error.h"

namespace moxlab {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<ListedFile> list_files_sorted(const std::string& root,
                                          const std::function<bool(const std::string&)>& keep) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw Error("not a folder: " + root);
  std::vector<ListedFile> out;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  if (ec) throw Error("cannot list " + root + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw Error("cannot list " + root + ": " + ec.message());
    const auto status = it->symlink_status(ec);
    if (ec || !fs::is_regular_file(status)) continue;
    std::string rel = fs::relative(it->path(), root, ec).generic_string();
    if (ec) continue;
    if (keep(rel)) out.push_back({it->path().string(), rel});
  }
  std::sort(out.begin(), out.end(),
            [](const ListedFile& a, const ListedFile& b) { return a.relative < b.relative; });
  return out;
}

}  // namespace moxlab
