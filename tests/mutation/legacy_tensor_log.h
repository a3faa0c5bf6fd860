// A copy of a tensor log in the layout moxlab wrote before layout_version 2, for the tests that old
// files stay readable and that their corruption cannot crash a reader: the HDF5 file format of the
// library's defaults (no metadata checksums), variable-length UTF-8 strings in datasets and attributes
// (kept in the global heap, "GCOL", where libhdf5 1.10 crashes on a corrupted size), datasets under
// 1024 elements contiguous and larger ones chunked with shuffle + deflate, no Fletcher32;
// layout_version, when present, set to 1.
#pragma once
#include <hdf5.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace moxlab::testing {

namespace legacy_detail {

inline hid_t ok(hid_t id, const char* what) {
  if (id < 0) throw std::runtime_error(std::string("legacy tensor log: ") + what);
  return id;
}

inline hid_t vlen_string_type() {
  const hid_t t = ok(H5Tcopy(H5T_C_S1), "H5Tcopy");
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

// Fixed-width strings read as std::string values (NUL padding stripped).
inline std::vector<std::string> fixed_strings(const std::vector<char>& buf, std::size_t width) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + width <= buf.size(); i += width) {
    std::size_t n = 0;
    while (n < width && buf[i + n] != '\0') ++n;
    out.emplace_back(buf.data() + i, n);
  }
  return out;
}

inline herr_t copy_attr(hid_t src_obj, const char* name, const H5A_info_t*, void* data) {
  const hid_t dst_obj = *static_cast<hid_t*>(data);
  const hid_t a = ok(H5Aopen(src_obj, name, H5P_DEFAULT), "H5Aopen");
  const hid_t type = H5Aget_type(a);
  const hid_t space = H5Scopy(ok(H5Aget_space(a), "H5Aget_space"));
  if (H5Tget_class(type) == H5T_STRING) {
    const std::size_t width = H5Tget_size(type);
    std::vector<char> buf(width);
    H5Aread(a, type, buf.data());
    std::string value = fixed_strings(buf, width).at(0);
    if (std::string(name) == "layout_version") value = "1";
    const hid_t vt = vlen_string_type();
    const hid_t na = ok(H5Acreate2(dst_obj, name, vt, space, H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2");
    const char* p = value.c_str();
    H5Awrite(na, vt, &p);
    H5Aclose(na);
    H5Tclose(vt);
  } else {
    const hid_t native = H5Tget_native_type(type, H5T_DIR_ASCEND);
    std::vector<char> buf(H5Tget_size(native) * static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    H5Aread(a, native, buf.data());
    const hid_t na = ok(H5Acreate2(dst_obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2");
    const long long one = 1;
    if (std::string(name) == "layout_version") H5Awrite(na, H5T_NATIVE_LLONG, &one);
    else H5Awrite(na, native, buf.data());
    H5Aclose(na);
    H5Tclose(native);
  }
  H5Sclose(space);
  H5Tclose(type);
  H5Aclose(a);
  return 0;
}

inline void copy_attrs(hid_t src, hid_t dst) {
  hsize_t idx = 0;
  H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_attr, &dst);
}

inline void copy_dataset(hid_t src_file, hid_t dst_file, const char* name) {
  const hid_t ds = ok(H5Dopen2(src_file, name, H5P_DEFAULT), "H5Dopen2");
  const hid_t type = H5Dget_type(ds);
  const hid_t space = H5Dget_space(ds);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  hsize_t n = 1;
  for (hsize_t d : dims) n *= d;
  // The old writer: appendable datasets (unlimited rows) chunked as they are, fixed ones chunked from
  // 1024 elements on, both shuffled and deflated; smaller fixed ones contiguous.
  std::vector<hsize_t> maxdims(dims.size());
  if (rank > 0) H5Sget_simple_extent_dims(space, nullptr, maxdims.data());
  const bool appendable = rank > 0 && maxdims[0] == H5S_UNLIMITED;
  const hid_t out_space =
      rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims.data(), appendable ? maxdims.data() : nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (appendable || (rank > 0 && n >= 1024)) {
    std::vector<hsize_t> chunk(dims.size());
    const hid_t src_dcpl = H5Dget_create_plist(ds);
    if (H5Pget_layout(src_dcpl) == H5D_CHUNKED) {
      H5Pget_chunk(src_dcpl, rank, chunk.data());
    } else {
      chunk = dims;
      chunk[0] = std::min<hsize_t>(std::max<hsize_t>(dims[0], 1), 256);
    }
    H5Pclose(src_dcpl);
    H5Pset_chunk(dcpl, rank, chunk.data());
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 4);
  }
  if (H5Tget_class(type) == H5T_STRING) {
    const std::size_t width = H5Tget_size(type);
    std::vector<char> buf(width * n);
    if (n > 0) H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
    const std::vector<std::string> values = fixed_strings(buf, width);
    std::vector<const char*> ptrs;
    for (const auto& v : values) ptrs.push_back(v.c_str());
    const hid_t vt = vlen_string_type();
    const hid_t out = ok(H5Dcreate2(dst_file, name, vt, out_space, H5P_DEFAULT, dcpl, H5P_DEFAULT), "H5Dcreate2");
    if (n > 0) H5Dwrite(out, vt, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data());
    copy_attrs(ds, out);
    H5Dclose(out);
    H5Tclose(vt);
  } else {
    const hid_t native = H5Tget_native_type(type, H5T_DIR_ASCEND);
    std::vector<char> buf(H5Tget_size(native) * n);
    if (n > 0) H5Dread(ds, native, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
    const hid_t out = ok(H5Dcreate2(dst_file, name, type, out_space, H5P_DEFAULT, dcpl, H5P_DEFAULT), "H5Dcreate2");
    if (n > 0) H5Dwrite(out, native, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
    copy_attrs(ds, out);
    H5Dclose(out);
    H5Tclose(native);
  }
  H5Pclose(dcpl);
  H5Sclose(out_space);
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(ds);
}

struct Visit {
  hid_t src, dst;
};

inline herr_t copy_link(hid_t, const char* name, const H5L_info_t*, void* data) {
  const auto* v = static_cast<Visit*>(data);
  H5O_info_t info;
  H5Oget_info_by_name(v->src, name, &info, H5P_DEFAULT);
  if (info.type == H5O_TYPE_GROUP) {
    const hid_t g = ok(H5Gcreate2(v->dst, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate2");
    const hid_t sg = H5Gopen2(v->src, name, H5P_DEFAULT);
    copy_attrs(sg, g);
    H5Gclose(sg);
    H5Gclose(g);
  } else if (info.type == H5O_TYPE_DATASET) {
    copy_dataset(v->src, v->dst, name);
  }
  return 0;
}

}  // namespace legacy_detail

// Writes dst, a layout_version-1 copy of the tensor log src (groups, datasets, attributes).
inline void write_legacy_copy(const std::string& src, const std::string& dst) {
  using namespace legacy_detail;
  const hid_t in = ok(H5Fopen(src.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
  const hid_t out = ok(H5Fcreate(dst.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "H5Fcreate");
  const hid_t in_root = H5Gopen2(in, "/", H5P_DEFAULT), out_root = H5Gopen2(out, "/", H5P_DEFAULT);
  copy_attrs(in_root, out_root);
  Visit v{in, out};
  H5Lvisit(in, H5_INDEX_NAME, H5_ITER_INC, copy_link, &v);
  H5Gclose(in_root);
  H5Gclose(out_root);
  H5Fclose(out);
  H5Fclose(in);
}

}  // namespace moxlab::testing
