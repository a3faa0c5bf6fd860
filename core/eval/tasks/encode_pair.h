// Turning a (context, continuation) text pair into token ids exactly as lm-evaluation-harness
// does (TemplateLM.loglikelihood and TemplateLM._encode_pair in lm_eval/api/model.py):
//   1. Empty context: context tokens = [prefix token], continuation tokens = encode(continuation).
//      The harness's prefix_token_id is a custom one if given, else the tokenizer's BOS, else EOS.
//   2. Otherwise the context's trailing whitespace (Python str.rstrip()) moves to the front of the
//      continuation, then whole = encode(context + continuation), context_enc = encode(context),
//      continuation_enc = whole[len(context_enc):]. Tokenizers merge across the boundary (" " +
//      word is one token in GPT-2 BPE), so encoding the two halves separately would score
//      different tokens than the model sees in running text.
// The harness does not check that context_enc is a prefix of whole; neither do we, so the model
// is fed context_enc + continuation_enc as in the harness.
#pragma once
#include <cstdint>
#include <string>

#include "core/data/tokenizers/tokenizer.h"
#include "core/eval/tasks/loglikelihood.h"

namespace moxlab {

// One request as text, before tokenization (the harness's Instance.args).
struct TextRequest {
  std::string context;
  std::string continuation;
};

// Where the prefix (BOS) token goes. The scorer always needs at least one context token to
// predict the first continuation token from, so the token is placed in the request here, where
// the tokenizer is known, rather than left to the scorer.
struct PrefixPolicy {
  // Token that stands for an empty context (the harness's prefix_token_id). -1: none; an empty
  // context then throws Error.
  std::int32_t token = -1;
  // Also prepend `token` to every non-empty context, like HFLM with add_bos_token=True (models
  // trained with BOS at document start). The harness default, and ours, is false.
  bool every_context = false;
};

// The harness's prefix_token_id: `configured` when >= 0, else bos_id(), else eos_id() (-1 when the
// tokenizer has neither).
std::int32_t resolve_prefix_token(const Tokenizer& tok, std::int32_t configured);

// Step 2's text move alone: trailing Python-whitespace of the context goes to the continuation.
TextRequest move_trailing_whitespace(const TextRequest& text);

// Encodes one request. The returned context is never empty: an empty (or whitespace-only)
// context becomes {prefix.token}. Throws Error when a prefix is needed but prefix.token < 0, and
// when the continuation encodes to no tokens (nothing to score).
LoglikelihoodRequest encode_request(const Tokenizer& tok, const TextRequest& text, const PrefixPolicy& prefix);

}  // namespace moxlab
