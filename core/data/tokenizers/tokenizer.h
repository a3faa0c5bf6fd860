// The tokenizer interface every part of moxlab uses, and the loader that picks an implementation.
//
// Implementations (one file pair each):
//   ByteLevelBpe        moxlab's own byte-level BPE, trained by the toolkit (vocab size configurable)
//   Gpt2Bpe             GPT-2 encoder.json + vocab.bpe
//   SentencePieceTok    SentencePiece tokenizer.model (Debian's libsentencepiece)
//   Llama2cTokenizer    llama2.c tokenizer.bin (score-ordered merges, byte fallback)
// Contract: decode(encode(text)) == text exactly, for any UTF-8 text (byte-level or byte fallback).
// encode() never adds BOS/EOS; callers add bos_id()/eos_id() where the model expects them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace moxlab {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<std::int32_t> encode(std::string_view text) const = 0;
  virtual std::string decode(const std::vector<std::int32_t>& ids) const = 0;
  // The raw bytes one token stands for when it follows `prev` (-1: at text start). Concatenating
  // token_bytes over a sequence equals decode() of it, so per-token text offsets can be computed.
  virtual std::string token_bytes(std::int32_t id, std::int32_t prev) const = 0;
  virtual std::int32_t vocab_size() const = 0;
  virtual std::int32_t bos_id() const { return -1; }  // -1: the tokenizer has none
  virtual std::int32_t eos_id() const { return -1; }
  // Token that separates documents in token shards: eos if there is one, else bos.
  std::int32_t document_separator() const { return eos_id() >= 0 ? eos_id() : bos_id(); }
  // "bpe", "gpt2", "sentencepiece" or "llama2c": recorded with every run.
  virtual std::string kind() const = 0;
  // A string that identifies the exact vocabulary (e.g. a file's SHA-256), for data digests.
  virtual std::string identity() const = 0;
};

// Loads a tokenizer from a spec "KIND:PATH":
//   bpe:FILE.json, gpt2:DIR (with encoder.json and vocab.bpe), sentencepiece:FILE.model, llama2c:FILE.bin
// Throws Error naming the file on a missing or malformed file.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& spec);

// The spec with its PATH made absolute ("KIND:PATH"; a spec without ':' is returned unchanged), as
// checkpoints store it so they still load from another working directory.
std::string absolute_tokenizer_spec(const std::string& spec);

}  // namespace moxlab
