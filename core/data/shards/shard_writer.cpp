#include "core/data/shards/shard_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/shards/shard_meta.h"
#include "core/data/shards/token_shards.h"

namespace moxlab {

namespace {

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::vector<std::vector<std::int32_t>> encode_all(const std::vector<Document>& docs, const Tokenizer& tok,
                                                  int threads) {
  std::vector<std::vector<std::int32_t>> out(docs.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::string> errors(static_cast<std::size_t>(threads));
  auto worker = [&](int t) {
    try {
      for (std::size_t i; (i = next.fetch_add(1)) < docs.size();) out[i] = tok.encode(docs[i].text);
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(t)] = e.what();
      next.store(docs.size());  // stop the others early
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (!e.empty()) throw Error("tokenizing the corpus failed: " + e);
  return out;
}

struct ShardResult {
  std::int64_t tokens = 0;
  std::string sha256;
};

// Writes the documents' tokens (each followed by the separator) as little-endian ints of `width`.
ShardResult write_shard(const std::string& path, const std::vector<Document>& docs, const Tokenizer& tok, int width,
                        int threads) {
  const auto encoded = encode_all(docs, tok, threads);
  const std::int32_t vocab = tok.vocab_size();
  const std::int32_t sep = tok.document_separator();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error("cannot create " + path + ": " + std::strerror(errno));
  Sha256 hash;
  ShardResult r;
  std::vector<unsigned char> buf;
  auto put = [&](std::int32_t id, std::size_t doc) {
    if (id < 0 || id >= vocab) {
      std::fclose(f);
      throw Error("tokenizer produced id " + std::to_string(id) + " outside its vocabulary of " +
                  std::to_string(vocab) + " (document " + docs[doc].source + ")");
    }
    auto u = static_cast<std::uint32_t>(id);
    for (int b = 0; b < width; ++b) buf.push_back(static_cast<unsigned char>(u >> (8 * b)));
  };
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    buf.clear();
    for (auto id : encoded[i]) put(id, i);
    if (sep >= 0) put(sep, i);
    r.tokens += static_cast<std::int64_t>(buf.size() / static_cast<std::size_t>(width));
    hash.update(buf.data(), buf.size());
    if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) {
      std::fclose(f);
      throw Error("cannot write " + path + ": " + std::strerror(errno));
    }
  }
  if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0) {
    std::fclose(f);
    throw Error("cannot write " + path + ": " + std::strerror(errno));
  }
  std::fclose(f);
  r.sha256 = hash.hex_digest();
  return r;
}

std::string temp_dir_for(const std::string& dir) {
  std::random_device rd;  // only names the temporary folder; never affects content
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "%08x", rd());
  return dir + ".tmp-" + std::to_string(::getpid()) + "-" + suffix;
}

}  // namespace

std::string write_token_shards(const CorpusSplit& split, const Tokenizer& tok, const std::string& dir,
                               const ShardWriteOptions& options) {
  namespace fs = std::filesystem;
  require(!file_exists(dir), "token shards: " + dir + " already exists");
  require(!split.domains.empty(), "token shards: the corpus has no domains");
  const std::int32_t vocab = tok.vocab_size();
  require(vocab > 0, "token shards: tokenizer has an empty vocabulary");
  const int width = vocab <= 65535 ? 2 : 4;
  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, threads);

  const std::string tmp = temp_dir_for(dir);
  make_dirs(tmp);
  try {
    nlohmann::json meta;
    meta["format"] = "moxlab-token-shards";
    meta["version"] = kTokenShardsVersion;
    meta["tokenizer"] = {{"kind", tok.kind()}, {"identity", tok.identity()}};
    meta["dtype"] = width == 2 ? "uint16" : "uint32";
    meta["vocab_size"] = vocab;
    meta["separator"] = tok.document_separator();
    meta["seed"] = split.options.seed;
    meta["val_fraction"] = split.options.val_fraction;
    meta["min_val_bytes"] = split.options.min_val_bytes;
    nlohmann::json domains = nlohmann::json::array();
    for (const auto& d : split.domains) {
      require_domain_label(d.domain);
      auto train = write_shard(tmp + "/" + shard_file_name(d.domain, Split::Train), d.train, tok, width, threads);
      auto val = write_shard(tmp + "/" + shard_file_name(d.domain, Split::Val), d.val, tok, width, threads);
      domains.push_back({{"name", d.domain},
                         {"train_tokens", train.tokens},
                         {"val_tokens", val.tokens},
                         {"train_bytes", d.train_bytes()},
                         {"val_bytes", d.val_bytes()},
                         {"documents", d.train.size() + d.val.size()},
                         {"train_documents", d.train.size()},
                         {"val_documents", d.val.size()},
                         {"train_sha256", train.sha256},
                         {"val_sha256", val.sha256}});
    }
    meta["domains"] = domains;
    meta["digest"] = shard_meta_digest(meta);
    write_text_atomically(tmp + "/meta.json", meta.dump(2) + "\n");
    fsync_path(tmp);
    if (std::rename(tmp.c_str(), dir.c_str()) != 0) {
      int err = errno;
      // Lost a race to another writer of the same folder: theirs is complete, keep it.
      if ((err == ENOTEMPTY || err == EEXIST) && file_exists(dir + "/meta.json")) {
        fs::remove_all(tmp);
        return TokenShards::open(dir).digest();
      }
      throw Error("cannot publish token shards " + dir + ": " + std::strerror(err));
    }
    fs::path parent = fs::path(dir).parent_path();
    fsync_path(parent.empty() ? "." : parent.string());
    return meta["digest"].get<std::string>();
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace moxlab
