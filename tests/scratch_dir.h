// A fresh, empty folder under the system temp folder for one test, removed at scope exit. The pid and
// a counter keep parallel ctest processes and repeated uses within one process apart.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace moxlab::testing {

struct ScratchDir {
  std::filesystem::path path;

  explicit ScratchDir(const std::string& tag = "tmp") {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() / "moxlab_tests" /
           (tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path / name).string(); }
  // Writes text to name and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

}  // namespace moxlab::testing
