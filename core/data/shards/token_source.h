// Read access to tokenised text split by domain: what the trainer, the perplexity evaluator and the
// probe read. Implemented over memory-mapped token shards (core/data/shards/token_shards.h) and over
// in-memory token vectors (e.g. WikiText-2 tokenised on the fly).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace moxlab {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual int num_domains() const = 0;
  virtual std::string domain_name(int d) const = 0;
  virtual std::int64_t size(int d) const = 0;  // tokens
  // Copies tokens [start, start + len) of domain d into out (caller checks bounds against size()).
  virtual void read(int d, std::int64_t start, std::int64_t len, std::int32_t* out) const = 0;
  // Bytes of text the domain's tokens decode to (0: unknown); gives bits per byte.
  virtual std::int64_t text_bytes(int /*d*/) const { return 0; }
};

class VectorTokenSource : public TokenSource {
 public:
  void add(std::string name, std::vector<std::int32_t> tokens, std::int64_t bytes = 0) {
    domains_.push_back({std::move(name), std::move(tokens), bytes});
  }
  int num_domains() const override { return static_cast<int>(domains_.size()); }
  std::string domain_name(int d) const override { return domains_[d].name; }
  std::int64_t size(int d) const override { return static_cast<std::int64_t>(domains_[d].tokens.size()); }
  void read(int d, std::int64_t start, std::int64_t len, std::int32_t* out) const override {
    const auto& t = domains_[d].tokens;
    std::copy(t.begin() + start, t.begin() + start + len, out);
  }
  std::int64_t text_bytes(int d) const override { return domains_[d].bytes; }

 private:
  struct Domain {
    std::string name;
    std::vector<std::int32_t> tokens;
    std::int64_t bytes;
  };
  std::vector<Domain> domains_;
};

}  // namespace moxlab
