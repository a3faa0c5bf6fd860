#include "core/common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/common/process_probe.h"

namespace moxlab {

namespace {
void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}
}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
  std::filesystem::path target(path);
  if (target.has_parent_path()) make_dirs(target.parent_path().string());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    write(tmp);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  fsync_path(tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error("cannot write " + path + ": " + why);
  }
  fsync_path(target.has_parent_path() ? target.parent_path().string() : ".");
}

std::vector<std::string> remove_orphaned_temp_files(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + ".tmp.";
  std::vector<std::string> removed;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    if (process_alive(static_cast<pid_t>(std::stol(pid_text)))) continue;
    std::error_code rm;
    if (fs::remove(it->path(), rm)) removed.push_back(it->path().string());
  }
  return removed;
}

void write_text_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw Error("cannot open " + tmp + " for writing");
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) throw Error("cannot write " + tmp);
  });
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void make_dirs(const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw Error("cannot create directory " + path + ": " + ec.message());
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace moxlab
