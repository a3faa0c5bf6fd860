// The tokenizer that travels with an exported HF-style directory: `moxlab export hf` copies the model's
// tokenizer files to DIR/moxlab_tokenizer/ and writes their spec (KIND:PATH, PATH relative to DIR) to
// DIR/moxlab_tokenizer.txt, so `moxlab import hf --dir DIR` needs no --tokenizer and the directory can
// be moved or shared as a whole.
#pragma once
#include <optional>
#include <string>

namespace moxlab::cli {

// Copies the tokenizer of `spec` (KIND:PATH) into dir and records it; returns the copy's absolute spec.
std::string write_tokenizer_bundle(const std::string& dir, const std::string& spec);

// The absolute spec recorded in dir, or nullopt when dir has no moxlab_tokenizer.txt.
std::optional<std::string> read_tokenizer_bundle(const std::string& dir);

}  // namespace moxlab::cli
