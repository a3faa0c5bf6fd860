// SHA-256 (FIPS 180-4) for config hashes, data digests and checkpoint identities.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace moxlab {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::string hex_digest();  // finalises; call once

 private:
  void block(const std::uint8_t* p);
  std::uint32_t h_[8];
  std::uint8_t buf_[64];
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view data);
std::string sha256_file(const std::string& path);  // throws Error if unreadable

}  // namespace moxlab
