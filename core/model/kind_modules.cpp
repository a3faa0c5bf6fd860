#include "core/model/kind_modules.h"

#include <map>

#include "core/model/model_kind.h"

namespace moxlab {

// Each kind's factories, in its own folder.
KindModules dense_kind_modules();
KindModules mohd_kind_modules();
KindModules moh_kind_modules();
KindModules tomoe_kind_modules();

namespace {
const std::map<std::string, KindModules>& registered() {
  static const std::map<std::string, KindModules> kinds = {
      {"dense", dense_kind_modules()},
      {"mohd", mohd_kind_modules()},
      {"moh", moh_kind_modules()},
      {"tomoe", tomoe_kind_modules()},
  };
  return kinds;
}
}  // namespace

std::shared_ptr<Attention> make_attention(const ModelOptions& o, int layer) {
  return registered().at(attention_kind(o.attention).name).attention(o, layer);
}

std::shared_ptr<FeedForward> make_ffn(const ModelOptions& o, int layer) {
  return registered().at(ffn_kind(o.ffn).name).ffn(o, layer);
}

std::vector<std::string> kinds_with_modules() {
  std::vector<std::string> names;
  for (const auto& [name, modules] : registered()) names.push_back(name);
  return names;
}

}  // namespace moxlab
