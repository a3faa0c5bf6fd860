// The layouts of moxlab's HDF5 files, checked from their metadata before any value is read: a probe
// capture (core/capture/capture.h), an observations file (observe_capture.h), a routing file
// (router_domains.h) and a ToMoE conversion file (tomoe_conversion_file.h). A reader knows then that
// the datasets it needs are there, with the dtype and rank it expects and sizes that agree with each
// other, and that strings are short. Every failure is an Error naming the file and the dataset.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/store/tensor_log_reader.h"

namespace moxlab {

// The layout_version this moxlab writes in all four kinds: HDF5 1.10 format (checksummed metadata),
// every dataset checksummed (Fletcher32, or compact inside its object header), fixed-width strings.
// Version 1 files (variable-length strings, no checksums) stay readable.
constexpr std::int64_t kTensorLogLayoutVersion = 2;

// Checks of one file's layout; `what` names it in messages ("capture /x/c.h5").
class LayoutCheck {
 public:
  LayoutCheck(const TensorLogReader& r, std::string what);
  std::int64_t version() const { return version_; }
  const TensorLogReader& reader() const { return r_; }
  const std::string& what() const { return what_; }

  bool has(const std::string& dataset) const;
  // The shape of `name` after checking that it is a dataset of dtype and rank (and, from version 2,
  // checksummed).
  std::vector<std::uint64_t> dataset(const std::string& name, DType dtype, std::size_t rank) const;
  // The same for a dataset of exactly this shape.
  void dataset_of_shape(const std::string& name, DType dtype, const std::vector<std::uint64_t>& shape) const;
  // A 1-D string dataset of at most max_count values, fixed-width of at most max_width bytes
  // (variable-length only in version 1 files); returns the count.
  std::uint64_t strings(const std::string& name, std::uint64_t max_count, std::size_t max_width) const;
  // A numeric (integer or floating) attribute; Error naming it when absent.
  void numeric_attr(const std::string& object, const std::string& key) const;

  void require(bool ok, const std::string& why) const;

 private:
  const TensorLogReader& r_;
  std::string what_;
  std::int64_t version_ = 1;
};

struct CaptureLayout {
  std::uint64_t rows = 0;              // captured tokens (0 when no per-token dataset is present)
  std::vector<std::string> taps;       // /probes/<tap>, sorted by name
  std::vector<std::uint64_t> features; // parallel to taps
  std::uint64_t domains = 0;           // /domain_names entries (0: absent)
  bool text = false;                   // /text/bytes and /text/offsets present
};
// /window, /position, /domain, /tokens (those present): int32 [N]; /probes/<tap>: float32 [N, F];
// /domain_names: strings; /text/offsets: int64 [N, 2] with /text/bytes: uint8 [B].
CaptureLayout check_capture_layout(const TensorLogReader& r);

// Names read from a file (taps, domains) become result keys and JSON: they must be valid UTF-8 without
// control characters. Error naming `what` otherwise.
void require_clean_name(const std::string& name, const std::string& what);

// Each also checks the file is of its kind ("... is not an observations file").
void check_observations_layout(const TensorLogReader& r);
void check_routing_layout(const TensorLogReader& r);
void check_tomoe_conversion_layout(const TensorLogReader& r);

}  // namespace moxlab
