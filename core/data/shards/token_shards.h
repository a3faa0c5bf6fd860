// Token shards: a tokenized, split corpus on disk, and the reader the trainer samples from.
//
// Layout of a shard folder:
//   <domain>.train.bin, <domain>.val.bin   token ids, little-endian uint16 when vocab_size <= 65535
//                                          else uint32; each document is followed by the
//                                          tokenizer's document_separator() (none when it is -1)
//   meta.json   {format, version, tokenizer{kind, identity}, dtype, vocab_size, separator, seed,
//                val_fraction, min_val_bytes, domains:[{name, train_tokens, val_tokens, train_bytes,
//                val_bytes, documents, train_documents, val_documents, train_sha256, val_sha256}],
//                digest}
// digest (the run's "data digest") = SHA-256 of meta.json's canonical dump without "digest"; as that
// includes every shard's SHA-256, it changes with any token of any shard or any recorded field.
// *_bytes count UTF-8 text bytes (for bits per byte), not file sizes.
// Folders are published whole by renaming a finished temporary folder (shard_writer.h), so a
// half-written folder never carries the final name.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace moxlab {

inline constexpr int kTokenShardsVersion = 1;

enum class Split { Train, Val };
const char* split_name(Split split);  // "train" / "val"

// Shard file name of a domain and split: "<domain>.<split>.bin".
std::string shard_file_name(const std::string& domain, Split split);

// Random access to one shard as int32 ids, reading the memory-mapped file (nothing is copied).
class TokenView {
 public:
  TokenView() = default;
  TokenView(const unsigned char* data, std::int64_t size, int width) : data_(data), size_(size), width_(width) {}
  std::int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int width() const { return width_; }  // bytes per token: 2 or 4
  // Unchecked access (the trainer's hot path).
  std::int32_t operator[](std::int64_t i) const {
    const unsigned char* p = data_ + i * width_;
    if (width_ == 2) return static_cast<std::int32_t>(p[0] | (p[1] << 8));
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                                     (static_cast<std::uint32_t>(p[2]) << 16) |
                                     (static_cast<std::uint32_t>(p[3]) << 24));
  }
  std::int32_t at(std::int64_t i) const;  // throws Error when out of range
  // Tokens [start, start+len); throws Error when the window leaves the shard.
  std::vector<std::int32_t> window(std::int64_t start, std::int64_t len) const;
  void window_into(std::int64_t start, std::int64_t len, std::int32_t* out) const;

 private:
  const unsigned char* data_ = nullptr;
  std::int64_t size_ = 0;
  int width_ = 2;
};

struct ShardDomainInfo {
  std::string name;
  std::int64_t train_tokens = 0, val_tokens = 0;
  std::int64_t train_bytes = 0, val_bytes = 0;
  std::int64_t documents = 0, train_documents = 0, val_documents = 0;
  std::string train_sha256, val_sha256;
};

class TokenShards {
 public:
  // Opens a shard folder. Throws Error naming the file for a missing or corrupt meta.json, a
  // missing shard, or a shard whose size does not match meta.json ("truncated shard ...").
  static TokenShards open(const std::string& dir);

  TokenShards(TokenShards&&) noexcept;
  TokenShards& operator=(TokenShards&&) noexcept;
  ~TokenShards();

  const std::string& dir() const { return dir_; }
  const std::vector<ShardDomainInfo>& domains() const { return domains_; }
  bool has_domain(const std::string& domain) const;
  // The shard of a domain and split; throws Error naming an unknown domain.
  const TokenView& tokens(const std::string& domain, Split split) const;
  std::int64_t total_tokens(Split split) const;
  std::int64_t total_bytes(Split split) const;

  const std::string& digest() const { return digest_; }
  const std::string& tokenizer_kind() const { return tokenizer_kind_; }
  const std::string& tokenizer_identity() const { return tokenizer_identity_; }
  const std::string& dtype() const { return dtype_; }
  std::int32_t vocab_size() const { return vocab_size_; }
  std::int32_t separator() const { return separator_; }
  std::uint64_t seed() const { return seed_; }
  double val_fraction() const { return val_fraction_; }

  // Re-hashes every shard and meta.json and compares with the recorded digests (reads all data).
  // Throws Error naming the first mismatching file.
  void verify() const;

 private:
  struct Mapping;
  TokenShards() = default;
  std::string dir_, digest_, tokenizer_kind_, tokenizer_identity_, dtype_;
  std::int32_t vocab_size_ = 0, separator_ = -1;
  std::uint64_t seed_ = 0;
  double val_fraction_ = 0;
  std::vector<ShardDomainInfo> domains_;
  std::vector<std::unique_ptr<Mapping>> mappings_;  // heap-held so views survive moves
  std::vector<TokenView> views_;                    // 2 per domain: train, val
};

}  // namespace moxlab
