// The tensor log: one HDF5 file per capture (DESIGN.md, "Tensor log"). This header pulls in the
// writer and reader and names the layout the capture code writes and the viewer and notebooks read:
//
//   /                      attributes: run_id (int64), config (JSON string), layout_version (int64)
//   /tokens                int32 [N]          token id of every captured position (appendable)
//   /text_offsets          int64 [D]          index in /tokens where each captured text starts
//   /domain                int32 [D]          domain label of each text; names in the attribute
//                                             "names" of /domain (JSON array of strings)
//   /probes/<probe name>   float32 [N, width] one group path per probe, e.g. /probes/blocks.0.attn.out;
//                                             row i belongs to /tokens[i]
//
// Everything streams: append to /tokens, /probes/... per batch, and to /text_offsets (writer.rows of
// /tokens before the batch) and /domain per text, then finish().
#pragma once
#include <string>

#include "core/store/tensor_dtype.h"
#include "core/store/tensor_log_reader.h"
#include "core/store/tensor_log_writer.h"

namespace moxlab::tensor_log {

constexpr int kLayoutVersion = 1;
constexpr const char* kTokens = "/tokens";
constexpr const char* kTextOffsets = "/text_offsets";
constexpr const char* kDomain = "/domain";
constexpr const char* kDomainNamesAttr = "names";
constexpr const char* kProbesGroup = "/probes";
constexpr const char* kRunIdAttr = "run_id";
constexpr const char* kConfigAttr = "config";
constexpr const char* kLayoutVersionAttr = "layout_version";

// "/probes/" + probe, e.g. probe_dataset("blocks.0.attn.out") == "/probes/blocks.0.attn.out".
std::string probe_dataset(const std::string& probe);

// Root attributes every capture carries: run id, config JSON and layout version.
void write_capture_header(TensorLogWriter& writer, std::int64_t run_id, const std::string& config_json);

}  // namespace moxlab::tensor_log
