#include "core/model/model_kind.h"

namespace moxlab {

ModelKind dense_kind() {
  ModelKind k;
  k.name = "dense";
  k.attention_help = "LLaMA grouped-query attention";
  k.ffn_help = "SwiGLU";
  k.bench_variants = {{"dense", [](const ModelOptions& dense) { return dense; }}};
  return k;
}

}  // namespace moxlab
