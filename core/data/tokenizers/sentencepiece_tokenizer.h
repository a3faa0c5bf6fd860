// SentencePieceTok: a SentencePiece tokenizer.model (kind "sentencepiece"), e.g. LLaMA-2's, run by
// Debian's libsentencepiece. bos/eos come from the model. encode() never adds them.
// token_bytes() turns a piece into text ("▁" -> space, "<0xNN>" byte pieces -> that byte, control
// pieces -> nothing) and drops the dummy-prefix space of the first piece at text start or after
// BOS, as SentencePiece's decoder does.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/data/tokenizers/spm_library.h"
#include "core/data/tokenizers/tokenizer.h"


namespace moxlab {

class SentencePieceTok : public Tokenizer {
 public:
  // Throws Error naming the file when it is missing or not a valid model.
  explicit SentencePieceTok(const std::string& model_path);
  ~SentencePieceTok() override;

  std::vector<std::int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<std::int32_t>& ids) const override;
  std::string token_bytes(std::int32_t id, std::int32_t prev) const override;
  std::int32_t vocab_size() const override { return vocab_size_; }
  std::int32_t bos_id() const override { return bos_; }
  std::int32_t eos_id() const override { return eos_; }
  std::string kind() const override { return "sentencepiece"; }
  std::string identity() const override { return identity_; }  // SHA-256 of the model file

 private:
  std::unique_ptr<SpmModel> sp_;
  std::vector<std::string> text_;  // id -> its text with "▁" as space; empty for control pieces
  std::int32_t vocab_size_ = 0, bos_ = -1, eos_ = -1;
  bool dummy_prefix_ = false;
  std::string identity_;
};

}  // namespace moxlab
