#include "core/eval/tasks/encode_pair.h"

#include "core/common/error.h"
#include "core/eval/tasks/python_text.h"

namespace moxlab {

std::int32_t resolve_prefix_token(const Tokenizer& tok, std::int32_t configured) {
  if (configured >= 0) return configured;
  if (tok.bos_id() >= 0) return tok.bos_id();
  return tok.eos_id();
}

TextRequest move_trailing_whitespace(const TextRequest& text) {
  const std::size_t keep = python_rstrip_size(text.context);
  return {text.context.substr(0, keep), text.context.substr(keep) + text.continuation};
}

LoglikelihoodRequest encode_request(const Tokenizer& tok, const TextRequest& text, const PrefixPolicy& prefix) {
  LoglikelihoodRequest req;
  if (text.context.empty()) {
    require(prefix.token >= 0, "empty context needs a prefix token, but the tokenizer has no BOS/EOS "
                               "and none was configured");
    req.context = {prefix.token};
    req.continuation = tok.encode(text.continuation);
  } else {
    const TextRequest moved = move_trailing_whitespace(text);
    const std::vector<std::int32_t> whole = tok.encode(moved.context + moved.continuation);
    req.context = tok.encode(moved.context);
    // Python slicing past the end gives an empty list; so does this.
    if (req.context.size() < whole.size())
      req.continuation.assign(whole.begin() + static_cast<std::ptrdiff_t>(req.context.size()), whole.end());
    // A whitespace-only context encodes to nothing; the harness would then score the first
    // continuation token from no context at all, which a causal model cannot do, so it gets the
    // prefix token like an empty context.
    if (prefix.every_context || req.context.empty()) {
      require(prefix.token >= 0, "context needs a prefix token (empty context or prefix on every "
                                 "context), but the tokenizer has no BOS/EOS and none was configured");
      req.context.insert(req.context.begin(), prefix.token);
    }
  }
  require(!req.continuation.empty(), "continuation encodes to no tokens after the context split: "
                                     "context ends '" + text.context.substr(text.context.size() > 40 ? text.context.size() - 40 : 0) +
                                     "', continuation '" + text.continuation + "'");
  return req;
}

}  // namespace moxlab
