#include "core/data/shards/token_shards.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/shards/shard_meta.h"

namespace moxlab {

const char* split_name(Split split) { return split == Split::Train ? "train" : "val"; }

std::string shard_file_name(const std::string& domain, Split split) {
  return domain + "." + split_name(split) + ".bin";
}

std::int32_t TokenView::at(std::int64_t i) const {
  require(i >= 0 && i < size_, "token index " + std::to_string(i) + " outside shard of " + std::to_string(size_) +
                                   " tokens");
  return (*this)[i];
}

void TokenView::window_into(std::int64_t start, std::int64_t len, std::int32_t* out) const {
  require(start >= 0 && len >= 0 && start + len <= size_,
          "token window [" + std::to_string(start) + ", " + std::to_string(start + len) + ") outside shard of " +
              std::to_string(size_) + " tokens");
  for (std::int64_t i = 0; i < len; ++i) out[i] = (*this)[start + i];
}

std::vector<std::int32_t> TokenView::window(std::int64_t start, std::int64_t len) const {
  std::vector<std::int32_t> out(static_cast<std::size_t>(std::max<std::int64_t>(len, 0)));
  window_into(start, len, out.data());
  return out;
}

// A read-only memory mapping of one shard file (empty files are not mapped).
struct TokenShards::Mapping {
  void* addr = nullptr;
  std::size_t length = 0;
  ~Mapping() {
    if (addr) ::munmap(addr, length);
  }
};

TokenShards::TokenShards(TokenShards&&) noexcept = default;
TokenShards& TokenShards::operator=(TokenShards&&) noexcept = default;
TokenShards::~TokenShards() = default;

TokenShards TokenShards::open(const std::string& dir) {
  const std::string meta_path = dir + "/meta.json";
  require(file_exists(meta_path), "token shards: missing " + meta_path);
  nlohmann::json meta;
  TokenShards s;
  s.dir_ = dir;
  try {
    meta = nlohmann::json::parse(read_file(meta_path));
    require(meta.value("format", "") == "moxlab-token-shards", "not a token-shard meta file");
    int version = meta.at("version").get<int>();
    require(version == kTokenShardsVersion, "unsupported version " + std::to_string(version) + " (this build reads " +
                                                std::to_string(kTokenShardsVersion) + ")");
    s.tokenizer_kind_ = meta.at("tokenizer").at("kind").get<std::string>();
    s.tokenizer_identity_ = meta.at("tokenizer").at("identity").get<std::string>();
    s.dtype_ = meta.at("dtype").get<std::string>();
    require(s.dtype_ == "uint16" || s.dtype_ == "uint32", "unknown dtype " + s.dtype_);
    s.vocab_size_ = meta.at("vocab_size").get<std::int32_t>();
    s.separator_ = meta.at("separator").get<std::int32_t>();
    s.seed_ = meta.at("seed").get<std::uint64_t>();
    s.val_fraction_ = meta.at("val_fraction").get<double>();
    s.digest_ = meta.at("digest").get<std::string>();
    for (const auto& d : meta.at("domains")) {
      ShardDomainInfo info;
      info.name = d.at("name").get<std::string>();
      info.train_tokens = d.at("train_tokens").get<std::int64_t>();
      info.val_tokens = d.at("val_tokens").get<std::int64_t>();
      info.train_bytes = d.at("train_bytes").get<std::int64_t>();
      info.val_bytes = d.at("val_bytes").get<std::int64_t>();
      info.documents = d.at("documents").get<std::int64_t>();
      info.train_documents = d.at("train_documents").get<std::int64_t>();
      info.val_documents = d.at("val_documents").get<std::int64_t>();
      info.train_sha256 = d.at("train_sha256").get<std::string>();
      info.val_sha256 = d.at("val_sha256").get<std::string>();
      require(info.name.find('/') == std::string::npos && !info.name.empty(), "bad domain name '" + info.name + "'");
      require(info.train_tokens >= 0 && info.val_tokens >= 0, "negative token count for " + info.name);
      s.domains_.push_back(std::move(info));
    }
    require(s.digest_ == shard_meta_digest(meta), "digest does not match its contents");
  } catch (const nlohmann::json::exception& e) {
    throw Error("token shards: corrupt " + meta_path + ": " + e.what());
  } catch (const Error& e) {
    throw Error("token shards: corrupt " + meta_path + ": " + e.what());
  }

  const int width = s.dtype_ == "uint16" ? 2 : 4;
  for (const auto& info : s.domains_) {
    for (Split split : {Split::Train, Split::Val}) {
      const std::string path = dir + "/" + shard_file_name(info.name, split);
      const std::int64_t tokens = split == Split::Train ? info.train_tokens : info.val_tokens;
      const std::int64_t expected = tokens * width;
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw Error("token shards: missing shard " + path + ": " + std::strerror(errno));
      struct stat st {};
      if (::fstat(fd, &st) != 0) {
        ::close(fd);
        throw Error("token shards: cannot stat " + path);
      }
      if (st.st_size != expected) {
        ::close(fd);
        throw Error(std::string(st.st_size < expected ? "truncated shard " : "corrupt shard (too long) ") + path +
                    ": " + std::to_string(st.st_size) + " bytes, meta.json expects " + std::to_string(expected));
      }
      auto m = std::make_unique<Mapping>();
      if (expected > 0) {
        m->length = static_cast<std::size_t>(expected);
        m->addr = ::mmap(nullptr, m->length, PROT_READ, MAP_SHARED, fd, 0);
        if (m->addr == MAP_FAILED) {
          m->addr = nullptr;
          ::close(fd);
          throw Error("token shards: cannot map " + path + ": " + std::strerror(errno));
        }
      }
      ::close(fd);  // the mapping stays valid after close
      s.views_.emplace_back(static_cast<const unsigned char*>(m->addr), tokens, width);
      s.mappings_.push_back(std::move(m));
    }
  }
  return s;
}

bool TokenShards::has_domain(const std::string& domain) const {
  for (const auto& d : domains_)
    if (d.name == domain) return true;
  return false;
}

const TokenView& TokenShards::tokens(const std::string& domain, Split split) const {
  for (std::size_t i = 0; i < domains_.size(); ++i)
    if (domains_[i].name == domain) return views_[2 * i + (split == Split::Train ? 0 : 1)];
  std::string known;
  for (const auto& d : domains_) known += (known.empty() ? "" : ", ") + d.name;
  throw Error("token shards in " + dir_ + " have no domain '" + domain + "' (have: " + known + ")");
}

std::int64_t TokenShards::total_tokens(Split split) const {
  std::int64_t n = 0;
  for (const auto& d : domains_) n += split == Split::Train ? d.train_tokens : d.val_tokens;
  return n;
}

std::int64_t TokenShards::total_bytes(Split split) const {
  std::int64_t n = 0;
  for (const auto& d : domains_) n += split == Split::Train ? d.train_bytes : d.val_bytes;
  return n;
}

void TokenShards::verify() const {
  for (std::size_t i = 0; i < domains_.size(); ++i) {
    for (Split split : {Split::Train, Split::Val}) {
      const auto* m = mappings_[2 * i + (split == Split::Train ? 0 : 1)].get();
      Sha256 h;
      if (m->addr) h.update(m->addr, m->length);
      const std::string& want = split == Split::Train ? domains_[i].train_sha256 : domains_[i].val_sha256;
      require(h.hex_digest() == want,
              "token shards: " + dir_ + "/" + shard_file_name(domains_[i].name, split) + " does not match its SHA-256 in meta.json");
    }
  }
}

}  // namespace moxlab
