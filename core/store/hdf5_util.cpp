// See hdf5_util.h.
#include "core/store/hdf5_util.h"

#include <sstream>

#include "core/common/error.h"

namespace moxlab::h5 {

Hid& Hid::operator=(Hid&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

bool Hid::close() {
  if (id_ < 0) return true;
  const herr_t status = close_ ? close_(id_) : H5Idec_ref(id_);
  id_ = H5I_INVALID_HID;
  return status >= 0;
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

namespace {
herr_t innermost(unsigned n, const H5E_error2_t* err, void* out) {
  // Walking upward starts at the function that detected the problem: its text is the most specific.
  if (n == 0 && err && err->desc) *static_cast<std::string*>(out) = err->desc;
  return 0;
}
}  // namespace

std::string last_error() {
  std::string out;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &out);
  return out;
}

hid_t check(hid_t id, const std::string& message) {
  if (id < 0) {
    const std::string detail = last_error();
    throw Error(detail.empty() ? message : message + ": " + detail);
  }
  return id;
}

void check_status(herr_t status, const std::string& message) { check(status < 0 ? -1 : 0, message); }

hid_t memory_type(DType t) {
  switch (t) {
    case DType::f32: return H5T_NATIVE_FLOAT;
    case DType::f64: return H5T_NATIVE_DOUBLE;
    case DType::i32: return H5T_NATIVE_INT32;
    case DType::i64: return H5T_NATIVE_INT64;
    case DType::u8: return H5T_NATIVE_UINT8;
    case DType::str: break;
  }
  throw Error("internal: no numeric HDF5 type for dtype string");
}

hid_t file_type(DType t) {
  switch (t) {
    case DType::f32: return H5T_IEEE_F32LE;
    case DType::f64: return H5T_IEEE_F64LE;
    case DType::i32: return H5T_STD_I32LE;
    case DType::i64: return H5T_STD_I64LE;
    case DType::u8: return H5T_STD_U8LE;
    case DType::str: break;
  }
  throw Error("internal: no numeric HDF5 type for dtype string");
}

bool standard_numeric_type(hid_t type) {
  for (hid_t standard : {H5T_IEEE_F32LE, H5T_IEEE_F64LE, H5T_STD_I8LE, H5T_STD_I16LE, H5T_STD_I32LE, H5T_STD_I64LE,
                         H5T_STD_U8LE, H5T_STD_U16LE, H5T_STD_U32LE, H5T_STD_U64LE})
    if (H5Tequal(type, standard) > 0) return true;
  return false;
}

DType dtype_of(hid_t type, const std::string& what) {
  const H5T_class_t cls = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  if (cls == H5T_STRING) return DType::str;
  // Only the standard little-endian layouts: a type whose precision, offset or exponent fields were
  // corrupted takes libhdf5's conversion code off its buffers.
  const bool standard = standard_numeric_type(type);
  if (standard && cls == H5T_FLOAT && size == 4) return DType::f32;
  if (standard && cls == H5T_FLOAT && size == 8) return DType::f64;
  if (standard && cls == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
    if (is_signed && size == 4) return DType::i32;
    if (is_signed && size == 8) return DType::i64;
    if (!is_signed && size == 1) return DType::u8;
  }
  std::ostringstream why;
  why << what << " has an unsupported element type (HDF5 class " << static_cast<int>(cls) << ", " << size
      << " bytes); supported: float32, float64, int32, int64, uint8, string";
  throw Error(why.str());
}

Hid fixed_string_type(std::size_t width) {
  Hid t(check(H5Tcopy(H5T_C_S1), "cannot create HDF5 string type"), H5Tclose);
  check_status(H5Tset_size(t.get(), width), "cannot create HDF5 string type");
  check_status(H5Tset_strpad(t.get(), H5T_STR_NULLPAD), "cannot create HDF5 string type");
  check_status(H5Tset_cset(t.get(), H5T_CSET_UTF8), "cannot create HDF5 string type");
  return t;
}

void reclaim_vlen(hid_t type, hid_t space, void* buf) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(type, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
#endif
}

std::string normalize_path(const std::string& name, bool allow_root) {
  std::string out;
  std::string part;
  auto flush = [&] {
    if (!part.empty()) out += "/" + part;
    part.clear();
  };
  for (char c : name) {
    if (c == '/') flush(); else part += c;
  }
  flush();
  if (out.empty() && allow_root) return "/";
  require(!out.empty(), "invalid tensor-log object name '" + name + "'");
  return out;
}

bool path_exists(hid_t file, const std::string& path) {
  if (path == "/") return true;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, pos);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return true;
}

Hid open_object(hid_t file, const std::string& path) {
  if (!path_exists(file, path)) return Hid();
  return Hid(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
}

void require_plausible_chunks(hid_t ds, const std::string& what) {
  Hid dcpl(check(H5Dget_create_plist(ds), "cannot read " + what), H5Pclose);
  if (H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return;
  Hid space(check(H5Dget_space(ds), "cannot read " + what), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  require(rank >= 0 && rank <= H5S_MAX_RANK, "cannot read " + what + ": its shape is unreadable (corrupt file?)");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank)), maxdims(static_cast<std::size_t>(rank)), chunk(static_cast<std::size_t>(rank));
  require(H5Sget_simple_extent_dims(space.get(), dims.data(), maxdims.data()) == rank &&
              H5Pget_chunk(dcpl.get(), rank, chunk.data()) == rank,
          "cannot read " + what + ": its chunk shape does not match its rank (corrupt file?)");
  for (int i = 0; i < rank; ++i) {
    const auto c = chunk[static_cast<std::size_t>(i)], m = maxdims[static_cast<std::size_t>(i)];
    require(c >= 1 && (m == H5S_UNLIMITED || c <= m), "cannot read " + what + ": chunk dimension " + std::to_string(i) + " is " +
                                                          std::to_string(c) + " for a dimension of at most " + std::to_string(m) +
                                                          " (corrupt file?)");
  }
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

std::uint64_t element_count(const std::vector<hsize_t>& dims) {
  std::uint64_t n = 1;
  for (hsize_t d : dims) n = saturating_mul(n, d);
  return n;
}

std::vector<hsize_t> dims_of(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank <= 0) return {};
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

}  // namespace moxlab::h5
