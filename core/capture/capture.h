// Activation capture: runs a model over held-out text and streams the selected taps into an
// HDF5 tensor log. Layout (layout_version 2; readable by h5py; checked by core/observe/layout_check.h):
//   /probes/<tap name>   float32 [N, features]   one row per captured token
//   /tokens              int32   [N]             token ids
//   /domain              int32   [N]             index into /domain_names
//   /domain_names        strings [D]
//   /window, /position   int32   [N]             window index and position inside it (context length)
//   /text/bytes          uint8   [B]             decoded text of all windows, concatenated
//   /text/offsets        int64   [N, 2]          [begin, end) byte range of each token in /text/bytes
//   attributes on "/": run_id, config (JSON), tokenizer, taps, seq_len, layout_version
// Version 2 (TensorLogWriter's format): fixed-width strings, every dataset checksummed; version 1 files
// (variable-length strings, no checksums) are still read, after a probe in a child process.
// The token budget is split evenly over the domains (or given per domain); each domain contributes contiguous windows of
// seq_len tokens from the start of its validation split (deterministic: same model, same rows).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/shards/token_source.h"
#include "core/data/tokenizers/tokenizer.h"
#include "core/model/transformer.h"
#include "core/store/tensor_log_writer.h"

namespace moxlab {

struct CaptureOptions {
  std::string taps = "blocks.*.resid.out";  // comma-separated globs over tap names
  std::int64_t tokens = 4096;               // total budget over all domains
  std::int64_t tokens_per_domain = 0;       // > 0: this many per domain instead (tokens is ignored)
  int seq_len = 256;
  int batch_size = 8;
  std::vector<std::string> domains;         // empty: every domain of the source
};

struct CaptureSummary {
  std::int64_t tokens = 0;
  std::vector<std::string> taps;  // tap names written
  std::vector<std::string> domains;
};

CaptureSummary capture_activations(Transformer& model, const Tokenizer& tok, const TokenSource& src,
                                   const CaptureOptions& opt, TensorLogWriter& out);

}  // namespace moxlab
