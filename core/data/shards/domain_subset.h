// A view of a TokenSource restricted to some of its domains, in the order given: training on (or
// calibrating with) one domain while evaluating on all of them, as ToMoE's Fig. 6 compares
// single-domain against mixed calibration data.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/data/shards/token_source.h"

namespace moxlab {

class DomainSubsetSource : public TokenSource {
 public:
  // An unknown or repeated name is an Error listing the source's domains.
  DomainSubsetSource(std::shared_ptr<const TokenSource> source, const std::vector<std::string>& names);
  int num_domains() const override { return static_cast<int>(index_.size()); }
  std::string domain_name(int d) const override { return source_->domain_name(index_[d]); }
  std::int64_t size(int d) const override { return source_->size(index_[d]); }
  void read(int d, std::int64_t start, std::int64_t len, std::int32_t* out) const override {
    source_->read(index_[d], start, len, out);
  }
  std::int64_t text_bytes(int d) const override { return source_->text_bytes(index_[d]); }

 private:
  std::shared_ptr<const TokenSource> source_;
  std::vector<int> index_;
};

// source itself when names is empty, else its DomainSubsetSource.
std::shared_ptr<const TokenSource> restrict_domains(std::shared_ptr<const TokenSource> source,
                                                    const std::vector<std::string>& names);

}  // namespace moxlab
