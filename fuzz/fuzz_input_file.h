// The loaders under fuzzing read paths, not buffers (as the CLI does), so each input is written to a
// per-process file in memory-backed /dev/shm (or the temp folder) before the loader opens it.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace moxlab::fuzz {

inline std::string write_input(const std::uint8_t* data, std::size_t size, const std::string& name) {
  static const std::filesystem::path dir = [] {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                                                : std::filesystem::temp_directory_path();
    auto d = base / ("moxlab_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  const std::string path = (dir / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace moxlab::fuzz
