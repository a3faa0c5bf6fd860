#include "core/data/tokenizers/sentencepiece_tokenizer.h"

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/tokenizers/spm_library.h"

namespace moxlab {
namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

std::string piece_text(const std::string& piece) {
  std::string s;
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.compare(i, kSpaceSymbol.size(), kSpaceSymbol) == 0) {
      s += ' ';
      i += kSpaceSymbol.size();
    } else {
      s += piece[i++];
    }
  }
  return s;
}

}  // namespace

SentencePieceTok::SentencePieceTok(const std::string& model_path) {
  require(file_exists(model_path), "SentencePiece model not found: " + model_path);
  const std::string bytes = read_file(model_path);
  try {
    sp_ = std::make_unique<SpmModel>(bytes);
  } catch (const Error& e) {
    throw Error("SentencePiece model " + model_path + " could not be loaded: " + e.what());
  }
  vocab_size_ = sp_->piece_size();
  require(vocab_size_ > 0, "SentencePiece model " + model_path + " has no pieces");
  bos_ = sp_->bos_id();
  eos_ = sp_->eos_id();
  text_.resize(vocab_size_);
  for (int id = 0; id < vocab_size_; ++id) {
    const std::string piece = sp_->id_to_piece(id);
    if (sp_->is_control(id)) continue;
    if (sp_->is_byte(id)) {
      // Byte pieces are spelled "<0xNN>".
      text_[id] = std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
    } else if (sp_->is_unknown(id)) {
      text_[id] = " \xE2\x81\x87 ";  // what SentencePiece's decoder prints for <unk> (" ⁇ ")
    } else {
      text_[id] = piece_text(piece);
    }
  }
  // Whether the model adds a dummy-prefix space (add_dummy_prefix in its normalizer spec), read off
  // its behaviour so that the protobuf headers are not needed.
  const auto probe = sp_->encode("x");
  dummy_prefix_ = !probe.empty() && sp_->id_to_piece(probe[0]).rfind(kSpaceSymbol, 0) == 0;
  identity_ = sha256_hex(bytes);
}

SentencePieceTok::~SentencePieceTok() = default;

std::vector<std::int32_t> SentencePieceTok::encode(std::string_view text) const {
  return sp_->encode(text);
}

std::string SentencePieceTok::token_bytes(std::int32_t id, std::int32_t prev) const {
  require(id >= 0 && id < vocab_size_, "token id " + std::to_string(id) +
                                           " out of range for SentencePiece vocabulary of " +
                                           std::to_string(vocab_size_));
  const std::string& t = text_[id];
  // The leading space of the first piece is the dummy prefix the encoder added.
  if (dummy_prefix_ && (prev < 0 || prev == bos_) && !t.empty() && t[0] == ' ' && !sp_->is_byte(id) && !sp_->is_unknown(id))
    return t.substr(1);
  return t;
}

std::string SentencePieceTok::decode(const std::vector<std::int32_t>& ids) const {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += token_bytes(ids[i], i == 0 ? -1 : ids[i - 1]);
  return s;
}

}  // namespace moxlab
