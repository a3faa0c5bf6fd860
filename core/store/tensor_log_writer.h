// TensorLogWriter: writes one HDF5 tensor log (one file per capture; layout in tensor_log.h).
//
// The file is written under "<path>.tmp.<pid>" and renamed to <path> only by finish(), so a capture
// that is killed or throws never leaves a half-written file under the final name; destroying a
// writer without finish() deletes the temporary. Object names are HDF5 paths ("/probes/blocks.0.attn.out";
// a leading "/" is optional, dots are ordinary characters) and missing parent groups are created on
// demand. Every failure is a moxlab::Error one-liner naming the file and the object.
//
// What a corrupted file can do to a reader decides the format: the file is HDF5 1.10 format (checksums
// on the superblock, object headers and chunk indexes); every dataset with elements is chunked with a
// Fletcher32 checksum (fixed datasets of 1024 elements or more, and all appendable ones, also shuffled
// and deflated); scalars and empty datasets are compact (inside their checksummed object header); and
// strings, in datasets and attributes, are fixed-width NUL-padded UTF-8. Nothing is variable-length:
// reading those goes through HDF5's global heap, where a corrupted file crashes libhdf5 1.10.
// Not thread-safe: one writer per capturing thread.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/store/tensor_dtype.h"

namespace moxlab {

struct TensorLogOptions {
  int deflate_level = 4;                      // 0 disables compression
  std::uint64_t chunk_rows = 256;             // rows per chunk of appendable datasets...
  std::uint64_t max_chunk_bytes = 1u << 20;   // ...reduced so one chunk stays below this size.
  // Each open appendable dataset caches about one chunk, so a capture with many taps holds roughly
  // (number of appendable datasets) x max_chunk_bytes in memory until finish().
};

class TensorLogWriter {
 public:
  // Creates the temporary file (and missing parent directories of path).
  explicit TensorLogWriter(const std::string& path, TensorLogOptions options = {});
  static TensorLogWriter create(const std::string& path, TensorLogOptions options = {}) {
    return TensorLogWriter(path, options);
  }
  ~TensorLogWriter();  // without finish(): closes and deletes the temporary file
  TensorLogWriter(TensorLogWriter&&) noexcept;
  TensorLogWriter& operator=(TensorLogWriter&&) noexcept;
  TensorLogWriter(const TensorLogWriter&) = delete;
  TensorLogWriter& operator=(const TensorLogWriter&) = delete;

  const std::string& path() const;       // final path
  const std::string& temp_path() const;  // where the data is until finish()
  bool finished() const;

  void create_group(const std::string& group);

  // Attributes on "/" (the root), a group or a dataset; a missing object is created as a group.
  // Setting an existing key replaces it. Strings are fixed-width UTF-8 of their own length (h5py: bytes).
  void set_attr(const std::string& object, const std::string& key, const std::string& value);
  void set_attr_int(const std::string& object, const std::string& key, std::int64_t value);
  void set_attr_double(const std::string& object, const std::string& key, double value);

  // A complete dataset of the given shape (row-major). T: float, double, int32_t, int64_t, uint8_t.
  template <class T>
  void write(const std::string& name, const T* data, const std::vector<std::uint64_t>& shape) {
    write_raw(name, TensorDType<T>::value, data, shape);
  }
  template <class T>
  void write(const std::string& name, const std::vector<T>& values) {
    write(name, values.data(), {values.size()});
  }
  // Strings, fixed-width as the longest value (h5py: bytes, or str via .asstr()).
  void write_strings(const std::string& name, const std::vector<std::string>& values);
  // Fixed-width, NUL-padded strings; width 0 = the longest value. Longer values are an Error.
  void write_fixed_strings(const std::string& name, const std::vector<std::string>& values, std::size_t width = 0);

  // Streaming captures: appends `rows` rows of `cols` values to a 2-D dataset with an unlimited first
  // dimension, creating it on the first call. Later calls must use the same T and cols.
  template <class T>
  void append_rows(const std::string& name, const T* data, std::uint64_t rows, std::uint64_t cols) {
    append_raw(name, TensorDType<T>::value, data, rows, {cols});
  }
  // The 1-D form (token ids, offsets, labels).
  template <class T>
  void append(const std::string& name, const T* data, std::uint64_t n) {
    append_raw(name, TensorDType<T>::value, data, n, {});
  }
  template <class T>
  void append(const std::string& name, const std::vector<T>& values) {
    append(name, values.data(), values.size());
  }
  // Rows appended so far to an appendable dataset (0 if it does not exist yet): the next row's index,
  // e.g. the offset at which a document's tokens start.
  std::uint64_t rows(const std::string& name) const;

  // Flushes, closes and renames the file into place. Further calls throw.
  void finish();

 private:
  void write_raw(const std::string& name, DType dtype, const void* data, const std::vector<std::uint64_t>& shape);
  void append_raw(const std::string& name, DType dtype, const void* data, std::uint64_t rows,
                  const std::vector<std::uint64_t>& row_shape);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moxlab
