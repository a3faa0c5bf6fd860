// The registry of attention and FFN kinds, LibTorch part: each kind's module factories, listed once in
// kind_modules.cpp (its torch-free description is in model_kind.h).
#pragma once
#include <functional>
#include <memory>

#include "core/model/attention.h"
#include "core/model/ffn.h"

namespace moxlab {

struct KindModules {
  std::function<std::shared_ptr<Attention>(const ModelOptions&, int layer)> attention;  // null: not an attention kind
  std::function<std::shared_ptr<FeedForward>(const ModelOptions&, int layer)> ffn;      // null: not an FFN kind
};

// The modules of o.attention / o.ffn for `layer`; an unknown kind throws Error naming the known ones.
std::shared_ptr<Attention> make_attention(const ModelOptions& o, int layer);
std::shared_ptr<FeedForward> make_ffn(const ModelOptions& o, int layer);

// The kinds whose modules are registered (a test checks they are the kinds of model_kinds()).
std::vector<std::string> kinds_with_modules();

}  // namespace moxlab
