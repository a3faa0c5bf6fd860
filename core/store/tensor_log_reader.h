// TensorLogReader: reads a tensor log (or any HDF5 file of supported types) whole or by row ranges.
// The file stays open read-only for the reader's lifetime; nothing is loaded until asked for, so the
// viewer can page through large captures with read_rows. A missing, truncated or non-HDF5 file, a
// missing dataset and an out-of-range request are all moxlab::Error one-liners naming the file.
// Not thread-safe: one reader per thread.
//
// Files from elsewhere (a capture given on the command line, a run's artifacts) go through
// open_checked: libhdf5 itself can crash or hang on a corrupted file, so the file is first read
// completely in a child process (tensor_log_probe.h). Variable-length strings (files of layout_version
// 1) are read only by such a reader: their global-heap reads are where libhdf5 1.10 crashes. Every read
// is bounded by what the file stores, so a corrupted shape cannot ask for more memory than that.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/store/tensor_dtype.h"

namespace moxlab {

// What a dataset is, from its metadata alone.
struct DatasetInfo {
  DType dtype = DType::f32;
  std::vector<std::uint64_t> shape;  // {} for a scalar
  // The stored bytes cannot change unnoticed: a Fletcher32 filter, or compact storage (inside the
  // object header, which files of the HDF5 1.10 format checksum).
  bool checksummed = false;
  bool variable_strings = false;  // strings of variable length (global heap)
  std::size_t string_width = 0;   // fixed-width strings: bytes per value
};

class TensorLogReader {
 public:
  // Opens in this process. Variable-length strings are refused (an Error naming the dataset).
  explicit TensorLogReader(const std::string& path);
  static TensorLogReader open(const std::string& path) { return TensorLogReader(path); }
  // Probes the file in a child process first (probe_tensor_log): a crash or hang of libhdf5 on it is an
  // Error here. data_scope: the datasets whose values the caller will read (all when empty); the
  // probe reads only their values, and all metadata, attributes and strings.
  static TensorLogReader open_checked(const std::string& path, const std::vector<std::string>& data_scope = {});
  ~TensorLogReader();
  TensorLogReader(TensorLogReader&&) noexcept;
  TensorLogReader& operator=(TensorLogReader&&) noexcept;
  TensorLogReader(const TensorLogReader&) = delete;
  TensorLogReader& operator=(const TensorLogReader&) = delete;

  const std::string& path() const;

  // Absolute paths of all datasets under `group` (recursively), sorted.
  std::vector<std::string> datasets(const std::string& group = "/") const;
  bool has_dataset(const std::string& name) const;
  bool has_group(const std::string& name) const;
  std::vector<std::uint64_t> shape(const std::string& name) const;  // {} for a scalar
  DType dtype(const std::string& name) const;
  DatasetInfo info(const std::string& name) const;

  // The whole dataset, row-major. T: float, double, int32_t, int64_t, uint8_t. Numeric datasets of a
  // different type are converted by HDF5 (e.g. an int32 dataset read as int64 or float); reading
  // strings as numbers is an Error.
  template <class T>
  std::vector<T> read(const std::string& name) const;
  // Rows [row_begin, row_begin + row_count) along the first dimension: row_count * (elements per row)
  // values. Only the chunks holding those rows are read and decompressed.
  template <class T>
  std::vector<T> read_rows(const std::string& name, std::uint64_t row_begin, std::uint64_t row_count) const;
  // A string dataset (fixed width, padding stripped; variable length only after open_checked).
  std::vector<std::string> read_strings(const std::string& name) const;

  // Attributes of "/" (the root), a group or a dataset.
  bool has_attr(const std::string& object, const std::string& key) const;
  std::vector<std::string> attr_names(const std::string& object) const;  // sorted
  std::string attr(const std::string& object, const std::string& key) const;  // string attributes (as read_strings)
  std::int64_t attr_int(const std::string& object, const std::string& key) const;    // integer attributes
  double attr_double(const std::string& object, const std::string& key) const;       // any numeric attribute

 private:
  // Selects the rows (all of them when all_rows), asks alloc for a buffer of that many elements of
  // type `as`, and reads into it.
  void read_raw(const std::string& name, DType as, std::uint64_t row_begin, std::uint64_t row_count, bool all_rows,
                const std::function<void*(std::uint64_t)>& alloc) const;

  TensorLogReader(const std::string& path, bool probed);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class T>
std::vector<T> TensorLogReader::read(const std::string& name) const {
  std::vector<T> out;
  read_raw(name, TensorDType<T>::value, 0, 0, true, [&](std::uint64_t n) -> void* {
    out.resize(n);
    return out.data();
  });
  return out;
}

template <class T>
std::vector<T> TensorLogReader::read_rows(const std::string& name, std::uint64_t row_begin, std::uint64_t row_count) const {
  std::vector<T> out;
  read_raw(name, TensorDType<T>::value, row_begin, row_count, false, [&](std::uint64_t n) -> void* {
    out.resize(n);
    return out.data();
  });
  return out;
}

}  // namespace moxlab
