// TensorLogWriter over the HDF5 C API. Appendable datasets stay open between appends (with a chunk
// cache large enough for the chunk being filled, so streaming small appends does not recompress the
// same chunk over and over); finish() closes everything, fsyncs and renames the file into place.
#include "core/store/tensor_log_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/store/hdf5_util.h"

namespace moxlab {

namespace {

using h5::Hid;

// Fixed datasets smaller than this are not compressed: deflate would cost more than it saves.
constexpr std::uint64_t kMinCompressedElements = 1024;

struct Appendable {
  Hid dataset;
  DType dtype;
  std::vector<hsize_t> row_shape;
  hsize_t rows = 0;
};

std::size_t element_size(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: return 4;
    case DType::f64: case DType::i64: return 8;
    case DType::u8: return 1;
    case DType::str: break;
  }
  return 1;
}

// Chunks span whole rows: readers fetch row ranges, and a streaming writer fills them in order.
std::vector<hsize_t> chunk_shape(const std::vector<hsize_t>& dims, std::size_t elem_bytes, std::uint64_t max_rows,
                                 std::uint64_t max_bytes) {
  std::uint64_t row_bytes = elem_bytes;
  for (size_t i = 1; i < dims.size(); ++i) row_bytes *= std::max<hsize_t>(dims[i], 1);
  std::uint64_t rows = std::max<std::uint64_t>(1, max_bytes / std::max<std::uint64_t>(row_bytes, 1));
  rows = std::max<std::uint64_t>(1, std::min(rows, max_rows));
  std::vector<hsize_t> chunk = dims;
  chunk[0] = rows;
  for (size_t i = 1; i < chunk.size(); ++i) chunk[i] = std::max<hsize_t>(chunk[i], 1);
  return chunk;
}

void fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string describe(DType t, const std::vector<hsize_t>& row_shape) {
  std::string s = dtype_name(t);
  if (row_shape.empty()) return s + " scalars";
  s += " rows of shape (";
  for (size_t i = 0; i < row_shape.size(); ++i) s += (i ? ", " : "") + std::to_string(row_shape[i]);
  return s + ")";
}

// The writer's state, refusing a moved-from writer with an Error instead of a null dereference.
template <class P>
auto& live(const P& impl) {
  require(impl != nullptr, "tensor log writer was moved from");
  return *impl;
}

}  // namespace

struct TensorLogWriter::Impl {
  std::string path;
  std::string temp;
  TensorLogOptions options;
  Hid file;
  Hid lcpl;  // link creation: intermediate groups on demand, UTF-8 names
  std::map<std::string, Appendable> appendables;
  bool finished = false;
  bool deflate_available = false;

  hid_t f(const std::string& action) const {
    require(!finished, "cannot " + action + ": tensor log " + path + " is already finished");
    require(file.valid(), "cannot " + action + ": tensor log " + path + " is closed after an earlier failure");
    return file.get();
  }

  std::string in_file() const { return " in tensor log " + path; }

  // Chunking + Fletcher32 (+ shuffle + deflate when compress) for a dataset whose (initial) dims are `dims`.
  // The checksum makes a corrupted chunk a read error instead of wrong numbers; it goes last, so it
  // covers the bytes as stored.
  Hid chunked_dcpl(const std::vector<hsize_t>& dims, std::size_t elem_bytes, std::uint64_t max_rows, bool compress) const {
    Hid dcpl(h5::check(H5Pcreate(H5P_DATASET_CREATE), "cannot create HDF5 property list"), H5Pclose);
    const std::vector<hsize_t> chunk = chunk_shape(dims, elem_bytes, max_rows, options.max_chunk_bytes);
    h5::check_status(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), "cannot set HDF5 chunking");
    if (compress && deflate_available && options.deflate_level > 0) {
      // Shuffle groups the bytes of each element: float activations compress far better after it.
      h5::check_status(H5Pset_shuffle(dcpl.get()), "cannot set HDF5 shuffle filter");
      h5::check_status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(std::min(options.deflate_level, 9))),
                       "cannot set HDF5 deflate filter");
    }
    h5::check_status(H5Pset_fletcher32(dcpl.get()), "cannot set HDF5 Fletcher32 filter");
    return dcpl;
  }

  // A complete dataset: chunked and checksummed, compressed from kMinCompressedElements on. Scalars and
  // empty datasets cannot be chunked: they are compact, their bytes inside the object header, which the
  // file format (HDF5 1.10, see the constructor) checksums.
  Hid fixed_dcpl(const std::vector<hsize_t>& dims, std::size_t elem_bytes) const {
    const std::uint64_t n = h5::element_count(dims);
    if (dims.empty() || n == 0) {
      Hid dcpl(h5::check(H5Pcreate(H5P_DATASET_CREATE), "cannot create HDF5 property list"), H5Pclose);
      h5::check_status(H5Pset_layout(dcpl.get(), H5D_COMPACT), "cannot set HDF5 compact layout");
      return dcpl;
    }
    return chunked_dcpl(dims, elem_bytes, dims[0], n >= kMinCompressedElements);
  }

  void require_absent(const std::string& name) const {
    require(!h5::path_exists(file.get(), name), "cannot create dataset " + name + in_file() + ": it already exists");
  }

  Hid open_or_create_object(const std::string& object) {
    Hid obj = h5::open_object(f("write attribute"), object);
    if (obj.valid()) return obj;
    return Hid(h5::check(H5Gcreate2(file.get(), object.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                         "cannot create group " + object + in_file()),
               H5Gclose);
  }

  // Replaces attribute `key` on `object` with one of `type`, then lets write() fill it.
  template <class Write>
  void put_attr(const std::string& object_name, const std::string& key, hid_t type, Write write) {
    h5::QuietErrors quiet;
    const std::string object = h5::normalize_path(object_name, /*allow_root=*/true);
    const std::string what = "attribute " + key + " of " + object + in_file();
    Hid obj = open_or_create_object(object);
    const htri_t exists = H5Aexists(obj.get(), key.c_str());
    h5::check(exists, "cannot write " + what);
    if (exists > 0) h5::check_status(H5Adelete(obj.get(), key.c_str()), "cannot replace " + what);
    Hid space(h5::check(H5Screate(H5S_SCALAR), "cannot write " + what), H5Sclose);
    Hid attr(h5::check(H5Acreate2(obj.get(), key.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                       "cannot create " + what),
             H5Aclose);
    h5::check_status(write(attr.get()), "cannot write " + what);
  }

  void close_all() {
    appendables.clear();
    lcpl.reset();
    file.reset();
  }
};

TensorLogWriter::TensorLogWriter(const std::string& path, TensorLogOptions options) : impl_(std::make_unique<Impl>()) {
  h5::QuietErrors quiet;
  Impl& m = live(impl_);
  m.path = path;
  m.temp = path + ".tmp." + std::to_string(::getpid());
  m.options = options;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) make_dirs(parent.string());
  m.deflate_available = H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0;

  Hid fapl(h5::check(H5Pcreate(H5P_FILE_ACCESS), "cannot create HDF5 property list"), H5Pclose);
  // STRONG: closing the file closes any object still open in it, so finish() really flushes everything.
  h5::check_status(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "cannot set HDF5 close degree");
  // The HDF5 1.10 file format: superblock, object headers and chunk indexes carry checksums, so a
  // corrupted structure is an error when read (h5py and any HDF5 >= 1.10 read it).
  h5::check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST), "cannot set HDF5 format version");
  m.file = Hid(h5::check(H5Fcreate(m.temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                         "cannot create tensor log " + m.temp),
               H5Fclose);
  m.lcpl = Hid(h5::check(H5Pcreate(H5P_LINK_CREATE), "cannot create HDF5 property list"), H5Pclose);
  h5::check_status(H5Pset_create_intermediate_group(m.lcpl.get(), 1), "cannot set HDF5 link properties");
  h5::check_status(H5Pset_char_encoding(m.lcpl.get(), H5T_CSET_UTF8), "cannot set HDF5 link properties");
}

TensorLogWriter::~TensorLogWriter() {
  if (!impl_ || impl_->finished) return;
  h5::QuietErrors quiet;
  impl_->close_all();
  std::remove(impl_->temp.c_str());
}

TensorLogWriter::TensorLogWriter(TensorLogWriter&&) noexcept = default;

TensorLogWriter& TensorLogWriter::operator=(TensorLogWriter&& other) noexcept {
  if (this != &other) {
    TensorLogWriter discard(std::move(*this));  // an unfinished file being replaced is deleted
    impl_ = std::move(other.impl_);
  }
  return *this;
}

const std::string& TensorLogWriter::path() const { return live(impl_).path; }
const std::string& TensorLogWriter::temp_path() const { return live(impl_).temp; }
bool TensorLogWriter::finished() const { return live(impl_).finished; }

void TensorLogWriter::create_group(const std::string& group_name) {
  h5::QuietErrors quiet;
  Impl& m = live(impl_);
  const std::string group = h5::normalize_path(group_name, /*allow_root=*/true);
  const hid_t file = m.f("create group " + group);
  if (Hid existing = h5::open_object(file, group); existing.valid()) {
    require(H5Iget_type(existing.get()) == H5I_GROUP,
            "cannot create group " + group + m.in_file() + ": a dataset has that name");
    return;
  }
  Hid g(h5::check(H5Gcreate2(file, group.c_str(), m.lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                  "cannot create group " + group + m.in_file()),
        H5Gclose);
}

void TensorLogWriter::set_attr(const std::string& object, const std::string& key, const std::string& value) {
  h5::QuietErrors quiet;
  Hid type = h5::fixed_string_type(std::max<std::size_t>(value.size(), 1));
  std::string padded = value;
  padded.resize(std::max<std::size_t>(value.size(), 1), '\0');
  live(impl_).put_attr(object, key, type.get(), [&](hid_t attr) { return H5Awrite(attr, type.get(), padded.data()); });
}

void TensorLogWriter::set_attr_int(const std::string& object, const std::string& key, std::int64_t value) {
  live(impl_).put_attr(object, key, H5T_STD_I64LE,
                  [&](hid_t attr) { return H5Awrite(attr, H5T_NATIVE_INT64, &value); });
}

void TensorLogWriter::set_attr_double(const std::string& object, const std::string& key, double value) {
  live(impl_).put_attr(object, key, H5T_IEEE_F64LE,
                  [&](hid_t attr) { return H5Awrite(attr, H5T_NATIVE_DOUBLE, &value); });
}

void TensorLogWriter::write_raw(const std::string& name_in, DType dtype, const void* data,
                                const std::vector<std::uint64_t>& shape) {
  h5::QuietErrors quiet;
  Impl& m = live(impl_);
  const std::string name = h5::normalize_path(name_in);
  const std::string what = "dataset " + name + m.in_file();
  const hid_t file = m.f("write " + what);
  m.require_absent(name);
  const std::vector<hsize_t> dims(shape.begin(), shape.end());
  const std::uint64_t n = h5::element_count(dims);
  require(n == 0 || data != nullptr, "cannot write " + what + ": no data");

  Hid space(h5::check(dims.empty() ? H5Screate(H5S_SCALAR)
                                   : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                      "cannot write " + what),
            H5Sclose);
  Hid dcpl = m.fixed_dcpl(dims, element_size(dtype));
  Hid ds(h5::check(H5Dcreate2(file, name.c_str(), h5::file_type(dtype), space.get(), m.lcpl.get(), dcpl.get(), H5P_DEFAULT),
                   "cannot create " + what),
         H5Dclose);
  if (n > 0) {
    h5::check_status(H5Dwrite(ds.get(), h5::memory_type(dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
                     "cannot write " + what);
  }
}

void TensorLogWriter::write_strings(const std::string& name, const std::vector<std::string>& values) {
  write_fixed_strings(name, values, 0);
}

void TensorLogWriter::write_fixed_strings(const std::string& name_in, const std::vector<std::string>& values,
                                          std::size_t width) {
  h5::QuietErrors quiet;
  Impl& m = live(impl_);
  const std::string name = h5::normalize_path(name_in);
  const std::string what = "dataset " + name + m.in_file();
  const hid_t file = m.f("write " + what);
  m.require_absent(name);
  std::size_t longest = 0;
  for (const std::string& v : values) longest = std::max(longest, v.size());
  if (width == 0) width = std::max<std::size_t>(longest, 1);  // HDF5 has no zero-width strings
  require(longest <= width, "cannot write " + what + ": a value of " + std::to_string(longest) +
                                " bytes does not fit the width " + std::to_string(width));
  std::vector<char> buf(values.size() * width, '\0');
  for (size_t i = 0; i < values.size(); ++i) std::memcpy(buf.data() + i * width, values[i].data(), values[i].size());

  Hid type = h5::fixed_string_type(width);
  const std::vector<hsize_t> dims = {values.size()};
  Hid space(h5::check(H5Screate_simple(1, dims.data(), nullptr), "cannot write " + what), H5Sclose);
  Hid dcpl = m.fixed_dcpl(dims, width);
  Hid ds(h5::check(H5Dcreate2(file, name.c_str(), type.get(), space.get(), m.lcpl.get(), dcpl.get(), H5P_DEFAULT),
                   "cannot create " + what),
         H5Dclose);
  if (!values.empty()) {
    h5::check_status(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "cannot write " + what);
  }
}

void TensorLogWriter::append_raw(const std::string& name_in, DType dtype, const void* data, std::uint64_t rows,
                                 const std::vector<std::uint64_t>& row_shape_in) {
  h5::QuietErrors quiet;
  Impl& m = live(impl_);
  const std::string name = h5::normalize_path(name_in);
  const std::string what = "dataset " + name + m.in_file();
  const hid_t file = m.f("append to " + what);
  const std::vector<hsize_t> row_shape(row_shape_in.begin(), row_shape_in.end());
  const int rank = static_cast<int>(row_shape.size()) + 1;

  auto it = m.appendables.find(name);
  if (it == m.appendables.end()) {
    require(!h5::path_exists(file, name), "cannot append to " + what + ": it exists and is not appendable");
    std::vector<hsize_t> dims = {0};
    std::vector<hsize_t> maxdims = {H5S_UNLIMITED};
    dims.insert(dims.end(), row_shape.begin(), row_shape.end());
    maxdims.insert(maxdims.end(), row_shape.begin(), row_shape.end());
    Hid space(h5::check(H5Screate_simple(rank, dims.data(), maxdims.data()), "cannot create " + what), H5Sclose);
    Hid dcpl = m.chunked_dcpl(dims, element_size(dtype), m.options.chunk_rows, /*compress=*/true);
    // Keep the partly filled chunk in cache (w0 = 1: evict fully written chunks first).
    Hid dapl(h5::check(H5Pcreate(H5P_DATASET_ACCESS), "cannot create HDF5 property list"), H5Pclose);
    const std::vector<hsize_t> chunk = chunk_shape(dims, element_size(dtype), m.options.chunk_rows, m.options.max_chunk_bytes);
    const std::size_t chunk_bytes = h5::element_count(chunk) * element_size(dtype);
    h5::check_status(H5Pset_chunk_cache(dapl.get(), 521, std::max<std::size_t>(1u << 20, chunk_bytes + chunk_bytes / 4), 1.0),
                     "cannot set HDF5 chunk cache");
    Appendable a;
    a.dataset = Hid(h5::check(H5Dcreate2(file, name.c_str(), h5::file_type(dtype), space.get(), m.lcpl.get(),
                                         dcpl.get(), dapl.get()),
                              "cannot create " + what),
                    H5Dclose);
    a.dtype = dtype;
    a.row_shape = row_shape;
    it = m.appendables.emplace(name, std::move(a)).first;
  }
  Appendable& a = it->second;
  require(a.dtype == dtype && a.row_shape == row_shape, "cannot append " + describe(dtype, row_shape) + " to " +
                                                            what + ": it holds " + describe(a.dtype, a.row_shape));
  if (rows == 0) return;
  require(data != nullptr, "cannot append to " + what + ": no data");

  std::vector<hsize_t> new_dims = {a.rows + rows};
  new_dims.insert(new_dims.end(), row_shape.begin(), row_shape.end());
  std::vector<hsize_t> start(static_cast<size_t>(rank), 0);
  start[0] = a.rows;
  std::vector<hsize_t> count = new_dims;
  count[0] = rows;
  h5::check_status(H5Dset_extent(a.dataset.get(), new_dims.data()), "cannot extend " + what);
  try {
    Hid fspace(h5::check(H5Dget_space(a.dataset.get()), "cannot append to " + what), H5Sclose);
    h5::check_status(H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
                     "cannot append to " + what);
    Hid mspace(h5::check(H5Screate_simple(rank, count.data(), nullptr), "cannot append to " + what), H5Sclose);
    h5::check_status(H5Dwrite(a.dataset.get(), h5::memory_type(dtype), mspace.get(), fspace.get(), H5P_DEFAULT, data),
                     "cannot append to " + what);
  } catch (...) {
    // Shrink back so a failed append does not leave rows of fill values behind.
    std::vector<hsize_t> old_dims = new_dims;
    old_dims[0] = a.rows;
    H5Dset_extent(a.dataset.get(), old_dims.data());
    throw;
  }
  a.rows += rows;
}

std::uint64_t TensorLogWriter::rows(const std::string& name_in) const {
  h5::QuietErrors quiet;
  const Impl& m = live(impl_);
  const std::string name = h5::normalize_path(name_in);
  if (auto it = m.appendables.find(name); it != m.appendables.end()) return it->second.rows;
  Hid obj = h5::open_object(m.f("read " + name), name);
  if (!obj.valid() || H5Iget_type(obj.get()) != H5I_DATASET) return 0;
  Hid space(h5::check(H5Dget_space(obj.get()), "cannot read shape of dataset " + name + m.in_file()), H5Sclose);
  const std::vector<hsize_t> dims = h5::dims_of(space.get());
  return dims.empty() ? 1 : dims[0];
}

void TensorLogWriter::finish() {
  h5::QuietErrors quiet;
  Impl& m = live(impl_);
  const hid_t file = m.f("finish");
  m.appendables.clear();
  h5::check_status(H5Fflush(file, H5F_SCOPE_GLOBAL), "cannot flush tensor log " + m.temp);
  m.lcpl.reset();
  require(m.file.close(), "cannot close tensor log " + m.temp + ": " + h5::last_error());
  fsync_path(m.temp);
  if (std::rename(m.temp.c_str(), m.path.c_str()) != 0) {
    throw Error("cannot move tensor log " + m.temp + " to " + m.path + ": " + std::strerror(errno));
  }
  const std::filesystem::path parent = std::filesystem::path(m.path).parent_path();
  fsync_path(parent.empty() ? "." : parent.string());
  m.finished = true;
}

}  // namespace moxlab
