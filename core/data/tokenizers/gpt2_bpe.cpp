#include "core/data/tokenizers/gpt2_bpe.h"

#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/sha256.h"

namespace moxlab {
namespace {

void append_utf8(std::string& s, std::uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// GPT-2's byte <-> character table: bytes that are printable Latin-1 ('!'..'~', U+00A1..U+00AC,
// U+00AE..U+00FF) stand for themselves; the other 68 bytes, in increasing order, take U+0100,
// U+0101, ... so that no token string contains whitespace or control characters.
std::array<std::string, 256> byte_to_char() {
  std::array<std::string, 256> table;
  std::uint32_t next_extra = 256;
  for (std::uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    append_utf8(table[b], printable ? b : next_extra++);
  }
  return table;
}

}  // namespace

Gpt2Bpe::Gpt2Bpe(const std::string& dir) : ByteBpeCodec("GPT-2 vocabulary") {
  const std::string enc_path = dir + "/encoder.json", bpe_path = dir + "/vocab.bpe";
  require(file_exists(enc_path), "GPT-2 tokenizer: missing file " + enc_path);
  require(file_exists(bpe_path), "GPT-2 tokenizer: missing file " + bpe_path);
  const std::string enc_text = read_file(enc_path), bpe_text = read_file(bpe_path);

  // Characters back to bytes, to turn token strings into the bytes they stand for.
  const auto table = byte_to_char();
  std::unordered_map<std::string, unsigned char> char_to_byte;
  for (int b = 0; b < 256; ++b) char_to_byte.emplace(table[b], static_cast<unsigned char>(b));
  auto to_bytes = [&](const std::string& token, std::string& out) {
    out.clear();
    for (std::size_t i = 0; i < token.size();) {
      // Every table character is 1 or 2 UTF-8 bytes long.
      const std::size_t len = (static_cast<unsigned char>(token[i]) & 0x80) ? 2 : 1;
      auto it = char_to_byte.find(token.substr(i, len));
      if (it == char_to_byte.end()) return false;
      out += static_cast<char>(it->second);
      i += len;
    }
    return true;
  };

  nlohmann::json enc;
  try {
    enc = nlohmann::json::parse(enc_text);
  } catch (const nlohmann::json::exception& e) {
    throw Error("GPT-2 tokenizer file " + enc_path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  require(enc.is_object() && !enc.empty(), "GPT-2 tokenizer file " + enc_path + ": not a non-empty JSON object");
  const std::size_t n = enc.size();
  bytes_.assign(n, std::string());
  std::vector<bool> filled(n, false);
  std::unordered_map<std::string, std::int32_t> id_of;  // token string -> id
  id_of.reserve(n);
  std::string raw;
  for (auto it = enc.begin(); it != enc.end(); ++it) {
    const std::string where = "GPT-2 tokenizer file " + enc_path + ": token " + nlohmann::json(it.key()).dump();
    require(it->is_number_integer(), where + " has a non-integer id");
    const auto id = it->get<std::int64_t>();
    require(id >= 0 && id < static_cast<std::int64_t>(n) && !filled[id],
            where + " has id " + std::to_string(id) + " (ids must be 0.." + std::to_string(n - 1) + ", each once)");
    require(to_bytes(it.key(), raw), where + " uses a character outside GPT-2's byte alphabet");
    filled[id] = true;
    bytes_[id] = raw;
    id_of.emplace(it.key(), static_cast<std::int32_t>(id));
  }
  for (int b = 0; b < 256; ++b) {
    auto it = id_of.find(table[b]);
    require(it != id_of.end(), "GPT-2 tokenizer file " + enc_path + ": no token for byte " + std::to_string(b));
    byte_ids_[b] = it->second;
  }
  if (auto it = id_of.find("<|endoftext|>"); it != id_of.end()) eos_ = it->second;

  // vocab.bpe: the first line is a "#version" comment; blank lines (the trailing one) are skipped.
  std::size_t pos = 0, line_no = 0;
  while (pos < bpe_text.size()) {
    std::size_t end = bpe_text.find('\n', pos);
    if (end == std::string::npos) end = bpe_text.size();
    std::string line = bpe_text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (line_no == 1 && line[0] == '#')) continue;
    const std::string where = "GPT-2 tokenizer file " + bpe_path + " line " + std::to_string(line_no);
    const std::size_t sp = line.find(' ');
    require(sp != std::string::npos && sp > 0 && line.find(' ', sp + 1) == std::string::npos && sp + 1 < line.size(),
            where + ": expected \"left right\"");
    const std::string left = line.substr(0, sp), right = line.substr(sp + 1);
    auto l = id_of.find(left), r = id_of.find(right), m = id_of.find(left + right);
    require(l != id_of.end() && r != id_of.end() && m != id_of.end(),
            where + ": merge \"" + line + "\" uses a token missing from encoder.json");
    require(table_.add(l->second, r->second, m->second), where + ": merge \"" + line + "\" is repeated");
  }

  Sha256 h;
  h.update(enc_text);
  h.update(bpe_text);
  identity_ = h.hex_digest();
}

}  // namespace moxlab
