// Options of the data pipeline (plain struct, torch-free; bound to TOML keys "data.*").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace moxlab {

struct DataOptions {
  // "default": the package-shipped multi-domain corpus; "none": only `extra` sources.
  std::string corpus = "default";
  // Extra user corpora, each "DOMAIN=PATH" (PATH: .txt, .jsonl, .gz of either, or a directory).
  std::vector<std::string> extra;
  std::string jsonl_field = "text";
  // "bpe" trains moxlab's byte-level BPE on the train split; or a spec such as
  // "gpt2:DIR", "sentencepiece:FILE.model", "llama2c:FILE.bin", "bpe:FILE.json".
  std::string tokenizer = "bpe";
  int bpe_vocab_size = 4096;
  std::int64_t bpe_train_bytes = 8000000;   // train text sampled for BPE training
  std::int64_t domain_cap_bytes = 3000000;  // per-domain cap of the default corpus
  double val_fraction = 0.05;
  std::int64_t split_seed = 1234;
  std::string cache_dir = "data/cache";
  // Image classification (MoH Table 1 analog) instead of language modelling: "" (text) or "fashion_mnist".
  // The last image_val train images are the validation split; the test split gives the final top-1.
  std::string images;
  int image_val = 5000;
};

}  // namespace moxlab
