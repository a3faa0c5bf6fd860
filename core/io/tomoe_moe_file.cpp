#include "core/io/tomoe_moe_file.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/config/config.h"
#include "core/io/safetensors.h"

namespace moxlab {

namespace {
constexpr const char* kConfigKey = "moxlab.tomoe_moe.config";
}  // namespace

void save_tomoe_moe(const TomoeMoeWeights& w, const std::string& path) {
  Config c;
  c.model = w.options;
  c.train.seq_len = std::min(c.train.seq_len, w.options.max_seq_len);  // only the model options matter here
  write_safetensors(path, w.tensors, {{kConfigKey, c.to_json()}});
}

TomoeMoeWeights load_tomoe_moe(const std::string& path) {
  SafeTensors st = read_safetensors(path);
  auto it = st.metadata.find(kConfigKey);
  require(it != st.metadata.end(), path + " is not a ToMoE MoE export (no " + kConfigKey + " metadata)");
  TomoeMoeWeights w{config_from_json(it->second).model, std::move(st.tensors)};
  w.check();
  return w;
}

}  // namespace moxlab
