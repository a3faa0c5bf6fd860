// TensorLogReader over the HDF5 C API. Each call opens the objects it needs and closes them again
// (cheap next to the I/O), so the reader holds only the file handle between calls. HDF5 callbacks
// (link and attribute iteration) never let a C++ exception cross the C frames.
#include "core/store/tensor_log_reader.h"

#include <algorithm>
#include <filesystem>

#include "core/common/error.h"
#include "core/store/hdf5_util.h"
#include "core/store/tensor_log_probe.h"

namespace moxlab {

namespace {

using h5::Hid;

struct VisitState {
  std::string prefix;  // group path with a trailing "/"
  std::vector<std::string> names;
  bool failed = false;
};

herr_t collect_dataset(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto* state = static_cast<VisitState*>(data);
  try {
    if (info->type != H5L_TYPE_HARD) return 0;  // soft/external links may dangle; tensor logs have none
    Hid obj(H5Oopen(group, name, H5P_DEFAULT), H5Oclose);
    if (obj.valid() && H5Iget_type(obj.get()) == H5I_DATASET) state->names.push_back(state->prefix + name);
    return 0;
  } catch (...) {
    state->failed = true;
    return -1;
  }
}

herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* data) {
  try {
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
  } catch (...) {
    return -1;
  }
}

// Strips fixed-width padding: everything from the first NUL, and trailing blanks of space-padded strings.
std::string unpad(const char* p, std::size_t width, H5T_str_t pad) {
  std::size_t n = 0;
  while (n < width && p[n] != '\0') ++n;
  if (pad == H5T_STR_SPACEPAD) {
    while (n > 0 && p[n - 1] == ' ') --n;
  }
  return std::string(p, n);
}

// Longest fixed-width string accepted (a config JSON is a few KiB).
constexpr std::size_t kMaxStringWidth = 1u << 20;

// Deflate expands at most ~1032x; anything beyond that (plus small-dataset slack) is a corrupted shape
// asking for memory the file cannot fill.
bool fits_storage(std::uint64_t logical_bytes, std::uint64_t stored_bytes) {
  const std::uint64_t slack = 1u << 16;
  return logical_bytes <= slack || (logical_bytes - slack) / 1100 <= stored_bytes;
}

std::size_t element_bytes(DType t) {
  switch (t) {
    case DType::f64: case DType::i64: return 8;
    case DType::f32: case DType::i32: return 4;
    default: return 1;
  }
}

template <class P>
auto& live(const P& impl) {
  require(impl != nullptr, "tensor log reader was moved from");
  return *impl;
}

}  // namespace

struct TensorLogReader::Impl {
  std::string path;
  Hid file;
  bool probed = false;  // opened through open_checked: variable-length strings may be read

  // Refuses a read of logical_bytes from dataset ds when the file cannot hold that much.
  void require_stored(hid_t ds, std::uint64_t logical_bytes, const std::string& what) const {
    h5::require_plausible_chunks(ds, what);
    require(fits_storage(logical_bytes, H5Dget_storage_size(ds)),
            "cannot read " + what + ": its shape needs " + std::to_string(logical_bytes) +
                " bytes, far more than the file stores for it (corrupt file?)");
  }

  void require_probed(const std::string& what) const {
    require(probed, "cannot read " + what + ": variable-length strings (an older tensor-log layout) are read "
                    "only through TensorLogReader::open_checked");
  }

  std::string in_file() const { return " in " + path; }

  Hid open_dataset(const std::string& name_in, std::string* normalized = nullptr) const {
    const std::string name = h5::normalize_path(name_in);
    if (normalized) *normalized = name;
    Hid obj = h5::open_object(file.get(), name);
    require(obj.valid() && H5Iget_type(obj.get()) == H5I_DATASET, "no dataset " + name + in_file());
    return obj;
  }

  Hid open_any(const std::string& object_in, std::string* normalized) const {
    const std::string object = h5::normalize_path(object_in, /*allow_root=*/true);
    *normalized = object;
    Hid obj = h5::open_object(file.get(), object);
    require(obj.valid(), "no object " + object + in_file());
    return obj;
  }

  // Opens attribute `key` of `object` (Error naming both when absent) and checks it holds one value.
  Hid open_attr(const std::string& object_in, const std::string& key, std::string* what) const {
    std::string object;
    Hid obj = open_any(object_in, &object);
    *what = "attribute " + key + " of " + object + in_file();
    require(H5Aexists(obj.get(), key.c_str()) > 0, "no " + *what);
    Hid attr(h5::check(H5Aopen(obj.get(), key.c_str(), H5P_DEFAULT), "cannot open " + *what), H5Aclose);
    Hid space(h5::check(H5Aget_space(attr.get()), "cannot read " + *what), H5Sclose);
    require(H5Sget_simple_extent_npoints(space.get()) == 1, "cannot read " + *what + ": it is not a single value");
    return attr;
  }

  template <class T>
  T read_numeric_attr(const std::string& object, const std::string& key, hid_t mem_type, bool allow_float) const {
    h5::QuietErrors quiet;
    std::string what;
    Hid attr = open_attr(object, key, &what);
    Hid type(h5::check(H5Aget_type(attr.get()), "cannot read " + what), H5Tclose);
    const H5T_class_t cls = H5Tget_class(type.get());
    require(cls == H5T_INTEGER || (allow_float && cls == H5T_FLOAT),
            "cannot read " + what + ": it is not " + (allow_float ? "numeric" : "an integer"));
    require(h5::standard_numeric_type(type.get()), "cannot read " + what + ": an unusual number type (corrupt file?)");
    T value{};
    h5::check_status(H5Aread(attr.get(), mem_type, &value), "cannot read " + what);
    return value;
  }
};

TensorLogReader::TensorLogReader(const std::string& path) : TensorLogReader(path, false) {}

TensorLogReader TensorLogReader::open_checked(const std::string& path, const std::vector<std::string>& data_scope) {
  probe_tensor_log(path, data_scope);
  return TensorLogReader(path, true);
}

TensorLogReader::TensorLogReader(const std::string& path, bool probed) : impl_(std::make_unique<Impl>()) {
  h5::QuietErrors quiet;
  impl_->path = path;
  impl_->probed = probed;
  std::error_code ec;
  require(std::filesystem::exists(path, ec), "cannot open HDF5 file " + path + ": no such file");
  require(std::filesystem::is_regular_file(path, ec), "cannot open HDF5 file " + path + ": not a regular file");
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  require(id >= 0, "cannot open HDF5 file " + path + " (truncated or not HDF5)");
  impl_->file = Hid(id, H5Fclose);
}

TensorLogReader::~TensorLogReader() {
  if (!impl_) return;
  h5::QuietErrors quiet;
  impl_->file.reset();
}

TensorLogReader::TensorLogReader(TensorLogReader&&) noexcept = default;
TensorLogReader& TensorLogReader::operator=(TensorLogReader&&) noexcept = default;

const std::string& TensorLogReader::path() const { return live(impl_).path; }

std::vector<std::string> TensorLogReader::datasets(const std::string& group_in) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  std::string group;
  Hid g = m.open_any(group_in, &group);
  require(H5Iget_type(g.get()) == H5I_GROUP, group + m.in_file() + " is not a group");
  VisitState state;
  state.prefix = group == "/" ? "/" : group + "/";
  const herr_t status = H5Lvisit(g.get(), H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &state);
  require(status >= 0 && !state.failed, "cannot list datasets of " + group + m.in_file() + ": " + h5::last_error());
  std::sort(state.names.begin(), state.names.end());
  state.names.erase(std::unique(state.names.begin(), state.names.end()), state.names.end());
  return state.names;
}

bool TensorLogReader::has_dataset(const std::string& name) const {
  h5::QuietErrors quiet;
  Hid obj = h5::open_object(live(impl_).file.get(), h5::normalize_path(name));
  return obj.valid() && H5Iget_type(obj.get()) == H5I_DATASET;
}

bool TensorLogReader::has_group(const std::string& name) const {
  h5::QuietErrors quiet;
  Hid obj = h5::open_object(live(impl_).file.get(), h5::normalize_path(name, /*allow_root=*/true));
  return obj.valid() && H5Iget_type(obj.get()) == H5I_GROUP;
}

std::vector<std::uint64_t> TensorLogReader::shape(const std::string& name_in) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  std::string name;
  Hid ds = m.open_dataset(name_in, &name);
  Hid space(h5::check(H5Dget_space(ds.get()), "cannot read shape of dataset " + name + m.in_file()), H5Sclose);
  const std::vector<hsize_t> dims = h5::dims_of(space.get());
  return std::vector<std::uint64_t>(dims.begin(), dims.end());
}

DType TensorLogReader::dtype(const std::string& name_in) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  std::string name;
  Hid ds = m.open_dataset(name_in, &name);
  Hid type(h5::check(H5Dget_type(ds.get()), "cannot read type of dataset " + name + m.in_file()), H5Tclose);
  return h5::dtype_of(type.get(), "dataset " + name + m.in_file());
}

DatasetInfo TensorLogReader::info(const std::string& name_in) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  std::string name;
  Hid ds = m.open_dataset(name_in, &name);
  const std::string what = "dataset " + name + m.in_file();
  DatasetInfo info;
  Hid type(h5::check(H5Dget_type(ds.get()), "cannot read type of " + what), H5Tclose);
  info.dtype = h5::dtype_of(type.get(), what);
  if (info.dtype == DType::str) {
    info.variable_strings = H5Tis_variable_str(type.get()) > 0;
    if (!info.variable_strings) info.string_width = H5Tget_size(type.get());
  }
  Hid space(h5::check(H5Dget_space(ds.get()), "cannot read shape of " + what), H5Sclose);
  const std::vector<hsize_t> dims = h5::dims_of(space.get());
  info.shape.assign(dims.begin(), dims.end());
  Hid dcpl(h5::check(H5Dget_create_plist(ds.get()), "cannot read storage of " + what), H5Pclose);
  unsigned flags = 0, filter_config = 0;
  std::size_t nvalues = 0;
  const bool fletcher32 =
      H5Pget_filter_by_id2(dcpl.get(), H5Z_FILTER_FLETCHER32, &flags, &nvalues, nullptr, 0, nullptr, &filter_config) >= 0;
  info.checksummed = fletcher32 || H5Pget_layout(dcpl.get()) == H5D_COMPACT;
  return info;
}

void TensorLogReader::read_raw(const std::string& name_in, DType as, std::uint64_t row_begin, std::uint64_t row_count,
                               bool all_rows, const std::function<void*(std::uint64_t)>& alloc) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  std::string name;
  Hid ds = m.open_dataset(name_in, &name);
  const std::string what = "dataset " + name + m.in_file();
  Hid type(h5::check(H5Dget_type(ds.get()), "cannot read " + what), H5Tclose);
  require(h5::dtype_of(type.get(), what) != DType::str, "cannot read " + what + " as numbers: it holds strings");
  Hid fspace(h5::check(H5Dget_space(ds.get()), "cannot read " + what), H5Sclose);
  const std::vector<hsize_t> dims = h5::dims_of(fspace.get());

  if (all_rows) {
    m.require_stored(ds.get(), h5::saturating_mul(h5::element_count(dims), element_bytes(as)), what);
    void* buf = alloc(h5::element_count(dims));
    if (h5::element_count(dims) == 0) return;
    h5::check_status(H5Dread(ds.get(), h5::memory_type(as), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), "cannot read " + what);
    return;
  }
  require(!dims.empty(), "cannot read rows of " + what + ": it is a scalar");
  require(row_begin <= dims[0] && row_count <= dims[0] - row_begin,
          "cannot read rows [" + std::to_string(row_begin) + ", " + std::to_string(row_begin + row_count) + ") of " +
              what + ": it has " + std::to_string(dims[0]) + " rows");
  std::vector<hsize_t> start(dims.size(), 0);
  std::vector<hsize_t> count = dims;
  start[0] = row_begin;
  count[0] = row_count;
  const std::uint64_t n = h5::element_count(count);
  m.require_stored(ds.get(), h5::saturating_mul(n, element_bytes(as)), what);
  void* buf = alloc(n);
  if (n == 0) return;
  h5::check_status(H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
                   "cannot select rows of " + what);
  Hid mspace(h5::check(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), "cannot read " + what),
             H5Sclose);
  h5::check_status(H5Dread(ds.get(), h5::memory_type(as), mspace.get(), fspace.get(), H5P_DEFAULT, buf),
                   "cannot read " + what);
}

std::vector<std::string> TensorLogReader::read_strings(const std::string& name_in) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  std::string name;
  Hid ds = m.open_dataset(name_in, &name);
  const std::string what = "dataset " + name + m.in_file();
  Hid type(h5::check(H5Dget_type(ds.get()), "cannot read " + what), H5Tclose);
  require(H5Tget_class(type.get()) == H5T_STRING, "cannot read " + what + " as strings: it holds numbers");
  Hid space(h5::check(H5Dget_space(ds.get()), "cannot read " + what), H5Sclose);
  const std::uint64_t n = h5::element_count(h5::dims_of(space.get()));
  std::vector<std::string> out;
  if (n == 0) return out;
  out.reserve(n);

  if (H5Tis_variable_str(type.get()) > 0) {
    m.require_probed(what);
    m.require_stored(ds.get(), h5::saturating_mul(n, 16), what);  // each value is a 16-byte heap reference in the file
    // Same character set as the file: HDF5 does not convert between ASCII and UTF-8 strings.
    Hid mem(h5::check(H5Tcopy(H5T_C_S1), "cannot read " + what), H5Tclose);
    h5::check_status(H5Tset_size(mem.get(), H5T_VARIABLE), "cannot read " + what);
    h5::check_status(H5Tset_cset(mem.get(), H5Tget_cset(type.get())), "cannot read " + what);
    std::vector<char*> ptrs(n, nullptr);
    h5::check_status(H5Dread(ds.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), "cannot read " + what);
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    h5::reclaim_vlen(mem.get(), space.get(), ptrs.data());
    return out;
  }
  const std::size_t width = H5Tget_size(type.get());
  require(width >= 1 && width <= kMaxStringWidth, "cannot read " + what + ": strings of " + std::to_string(width) +
                                                      " bytes each (corrupt file?)");
  m.require_stored(ds.get(), h5::saturating_mul(n, width), what);
  Hid mem(h5::check(H5Tcopy(type.get()), "cannot read " + what), H5Tclose);
  std::vector<char> buf(n * width);
  h5::check_status(H5Dread(ds.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "cannot read " + what);
  const H5T_str_t pad = H5Tget_strpad(type.get());
  for (std::uint64_t i = 0; i < n; ++i) out.push_back(unpad(buf.data() + i * width, width, pad));
  return out;
}

bool TensorLogReader::has_attr(const std::string& object_in, const std::string& key) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  Hid obj = h5::open_object(m.file.get(), h5::normalize_path(object_in, /*allow_root=*/true));
  return obj.valid() && H5Aexists(obj.get(), key.c_str()) > 0;
}

std::vector<std::string> TensorLogReader::attr_names(const std::string& object_in) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  std::string object;
  Hid obj = m.open_any(object_in, &object);
  std::vector<std::string> names;
  hsize_t idx = 0;
  h5::check_status(H5Aiterate2(obj.get(), H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &names),
                   "cannot list attributes of " + object + m.in_file());
  std::sort(names.begin(), names.end());
  return names;
}

std::string TensorLogReader::attr(const std::string& object, const std::string& key) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  std::string what;
  Hid attr = m.open_attr(object, key, &what);
  Hid type(h5::check(H5Aget_type(attr.get()), "cannot read " + what), H5Tclose);
  require(H5Tget_class(type.get()) == H5T_STRING, "cannot read " + what + " as a string: it is numeric");
  if (H5Tis_variable_str(type.get()) > 0) {
    m.require_probed(what);
    Hid mem(h5::check(H5Tcopy(H5T_C_S1), "cannot read " + what), H5Tclose);
    h5::check_status(H5Tset_size(mem.get(), H5T_VARIABLE), "cannot read " + what);
    h5::check_status(H5Tset_cset(mem.get(), H5Tget_cset(type.get())), "cannot read " + what);
    char* p = nullptr;
    h5::check_status(H5Aread(attr.get(), mem.get(), &p), "cannot read " + what);
    std::string value = p ? p : "";
    Hid space(h5::check(H5Aget_space(attr.get()), "cannot read " + what), H5Sclose);
    h5::reclaim_vlen(mem.get(), space.get(), &p);
    return value;
  }
  const std::size_t width = H5Tget_size(type.get());
  require(width >= 1 && width <= kMaxStringWidth, "cannot read " + what + ": a string of " + std::to_string(width) +
                                                      " bytes (corrupt file?)");
  Hid mem(h5::check(H5Tcopy(type.get()), "cannot read " + what), H5Tclose);
  std::vector<char> buf(width + 1, '\0');
  h5::check_status(H5Aread(attr.get(), mem.get(), buf.data()), "cannot read " + what);
  return unpad(buf.data(), width, H5Tget_strpad(type.get()));
}

std::int64_t TensorLogReader::attr_int(const std::string& object, const std::string& key) const {
  return live(impl_).read_numeric_attr<std::int64_t>(object, key, H5T_NATIVE_INT64, /*allow_float=*/false);
}

double TensorLogReader::attr_double(const std::string& object, const std::string& key) const {
  return live(impl_).read_numeric_attr<double>(object, key, H5T_NATIVE_DOUBLE, /*allow_float=*/true);
}

}  // namespace moxlab
