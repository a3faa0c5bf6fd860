#include "experiments/cli/tokenizer_bundle.h"

#include <filesystem>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/data/tokenizers/tokenizer.h"

namespace moxlab::cli {

namespace fs = std::filesystem;

namespace {
const char* kSpecFile = "moxlab_tokenizer.txt";
const char* kCopyDir = "moxlab_tokenizer";

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}
}  // namespace

std::string write_tokenizer_bundle(const std::string& dir, const std::string& spec) {
  const auto colon = spec.find(':');
  require(colon != std::string::npos && colon > 0, "tokenizer spec \"" + spec + "\" is not KIND:PATH");
  const std::string kind = spec.substr(0, colon);
  const fs::path source = spec.substr(colon + 1);
  const fs::path copy_dir = fs::path(dir) / kCopyDir;
  fs::remove_all(copy_dir);
  fs::create_directories(copy_dir);
  std::string relative;
  if (fs::is_directory(source)) {  // gpt2: a folder of encoder.json and vocab.bpe
    fs::copy(source, copy_dir, fs::copy_options::recursive);
    relative = kCopyDir;
  } else {
    fs::copy_file(source, copy_dir / source.filename());
    relative = (fs::path(kCopyDir) / source.filename()).string();
  }
  write_text_atomically((fs::path(dir) / kSpecFile).string(), kind + ":" + relative + "\n");
  return *read_tokenizer_bundle(dir);
}

std::optional<std::string> read_tokenizer_bundle(const std::string& dir) {
  const fs::path file = fs::path(dir) / kSpecFile;
  if (!fs::is_regular_file(file)) return std::nullopt;
  const std::string spec = trim(read_file(file.string()));
  const auto colon = spec.find(':');
  require(colon != std::string::npos && colon > 0 && colon + 1 < spec.size(),
          file.string() + " does not hold a tokenizer spec KIND:PATH");
  const fs::path path = spec.substr(colon + 1);
  return absolute_tokenizer_spec(spec.substr(0, colon + 1) + (path.is_absolute() ? path : fs::path(dir) / path).string());
}

}  // namespace moxlab::cli
