// Small HDF5 C-API helpers shared by the tensor-log writer and reader (internal to core/store):
// an RAII handle, an error-stack guard that keeps HDF5 from printing its own diagnostics, type
// mapping between DType and HDF5 types, and object-path utilities.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <hdf5.h>

#include "core/store/tensor_dtype.h"

namespace moxlab::h5 {

// Owns one HDF5 identifier and closes it with the matching H5?close function.
class Hid {
 public:
  using Closer = herr_t (*)(hid_t);
  Hid() = default;
  Hid(hid_t id, Closer close) : id_(id), close_(close) {}
  ~Hid() { reset(); }
  Hid(Hid&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  Hid& operator=(Hid&& o) noexcept;
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports whether HDF5 accepted the close (file closes flush data).
  bool close();
  void reset() { (void)close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

// While alive, HDF5 errors are recorded on the error stack but not printed; the previous handler
// (whatever the process had) is restored afterwards. Every public tensor-log call holds one.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// The most specific message on HDF5's current error stack, "" when there is none.
std::string last_error();

// Throws Error(message + ": " + last_error()) when id/status is negative; returns id otherwise.
hid_t check(hid_t id, const std::string& message);
void check_status(herr_t status, const std::string& message);

// In-memory (native) and on-disk (little-endian, fixed) HDF5 types of a numeric DType.
hid_t memory_type(DType t);
hid_t file_type(DType t);
// True for the standard little-endian integer (8 to 64 bits) and IEEE float types, and nothing with
// unusual precision, offset or padding.
bool standard_numeric_type(hid_t type);
// Maps a dataset's or attribute's HDF5 type to a DType; throws Error (naming `what`) when unsupported
// (numbers: only the standard little-endian layouts).
DType dtype_of(hid_t type, const std::string& what);
// A fixed-width, NUL-padded UTF-8 string type of width bytes (caller owns it).
Hid fixed_string_type(std::size_t width);

// Frees the strings HDF5 allocated when reading variable-length strings into buf (all of `space`).
void reclaim_vlen(hid_t type, hid_t space, void* buf);

// "/a/b" from "a/b", "/a//b/" etc. "" and "/" mean the root: returned as "/" when allow_root,
// an Error otherwise (a dataset cannot be the root).
std::string normalize_path(const std::string& name, bool allow_root = false);
// True when every component of the absolute path exists as a link (H5Lexists fails on missing parents).
bool path_exists(hid_t file, const std::string& path);
// Opens any object (group/dataset) by absolute path; invalid Hid when absent.
Hid open_object(hid_t file, const std::string& path);

// a * b, or UINT64_MAX when that overflows (a corrupted shape must not wrap to a small size).
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);
// The product of dims, saturating.
std::uint64_t element_count(const std::vector<hsize_t>& dims);
// Dimensions of a dataspace.
std::vector<hsize_t> dims_of(hid_t space);

// Throws Error("cannot read <what>: ...") when a chunked dataset's chunk shape is impossible: a zero chunk
// dimension, or one larger than a fixed maximum dimension (libhdf5 refuses to create such a dataset). A
// corrupted chunk shape makes libhdf5 1.10 copy from a freed chunk buffer (found by the routing capture's
// mutants: valgrind's read of freed memory in H5Dread, a SIGSEGV only in some heap layouts, so a probe
// child reading the file could pass and the reader's own process then crash).
void require_plausible_chunks(hid_t ds, const std::string& what);

}  // namespace moxlab::h5
