#include "core/data/shards/domain_subset.h"

#include <algorithm>

#include "core/common/error.h"

namespace moxlab {

DomainSubsetSource::DomainSubsetSource(std::shared_ptr<const TokenSource> source, const std::vector<std::string>& names)
    : source_(std::move(source)) {
  require(source_ != nullptr, "domain subset: no source");
  std::string known;
  for (int d = 0; d < source_->num_domains(); ++d) known += (d ? ", " : "") + source_->domain_name(d);
  for (const auto& name : names) {
    int found = -1;
    for (int d = 0; d < source_->num_domains(); ++d)
      if (source_->domain_name(d) == name) found = d;
    require(found >= 0, "train.domains: unknown domain '" + name + "' (the data has: " + known + ")");
    require(std::find(index_.begin(), index_.end(), found) == index_.end(), "train.domains: '" + name + "' is listed twice");
    index_.push_back(found);
  }
  require(!index_.empty(), "train.domains: no domain chosen");
}

std::shared_ptr<const TokenSource> restrict_domains(std::shared_ptr<const TokenSource> source,
                                                    const std::vector<std::string>& names) {
  if (names.empty()) return source;
  return std::make_shared<DomainSubsetSource>(std::move(source), names);
}

}  // namespace moxlab
