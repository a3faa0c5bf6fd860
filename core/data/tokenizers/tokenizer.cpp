// load_tokenizer(): maps a "KIND:PATH" spec to the implementation that reads it.
#include "core/data/tokenizers/tokenizer.h"

#include <filesystem>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/data/tokenizers/byte_level_bpe.h"
#include "core/data/tokenizers/gpt2_bpe.h"
#include "core/data/tokenizers/llama2c_tokenizer.h"
#include "core/data/tokenizers/sentencepiece_tokenizer.h"

namespace moxlab {

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& spec) {
  const std::size_t colon = spec.find(':');
  require(colon != std::string::npos && colon > 0 && colon + 1 < spec.size(),
          "tokenizer spec \"" + spec + "\" is not KIND:PATH (kinds: bpe, gpt2, sentencepiece, llama2c)");
  const std::string kind = spec.substr(0, colon), path = spec.substr(colon + 1);
  const bool known = kind == "bpe" || kind == "gpt2" || kind == "sentencepiece" || kind == "llama2c";
  require(known, "unknown tokenizer kind \"" + kind + "\" in spec \"" + spec +
                     "\" (kinds: bpe, gpt2, sentencepiece, llama2c)");
  // Checked here too so every kind reports a missing path the same way, naming the spec.
  require(file_exists(path), "tokenizer " + (kind == "gpt2" ? std::string("directory ") : std::string("file ")) +
                                 path + " not found (spec \"" + spec + "\")");
  if (kind == "bpe") return std::make_unique<ByteLevelBpe>(ByteLevelBpe::load(path));
  if (kind == "gpt2") return std::make_unique<Gpt2Bpe>(path);
  if (kind == "sentencepiece") return std::make_unique<SentencePieceTok>(path);
  return std::make_unique<Llama2cTokenizer>(path);
}

std::string absolute_tokenizer_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  // Canonical (no "..", no symlinks): the same file gives the same spec however it was named.
  return spec.substr(0, colon + 1) + std::filesystem::weakly_canonical(std::filesystem::absolute(spec.substr(colon + 1))).string();
}

}  // namespace moxlab
