// See tensor_log_probe.h. The child walks the file with the HDF5 C API in the same patterns the
// TensorLogReader uses (whole datasets, variable-length strings into char* arrays), so whatever the
// parent reads afterwards, libhdf5 has already read once without crashing.
#include "core/store/tensor_log_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "core/common/error.h"
#include "core/store/hdf5_util.h"

namespace moxlab {

namespace {

using h5::Hid;

// Values are read in pieces of at most this many bytes, so the child's memory stays small.
constexpr std::uint64_t kBlockBytes = 64u << 20;
// Attributes moxlab writes are single values; anything far larger is a corrupted header.
constexpr std::uint64_t kMaxAttrElements = 1u << 20;
constexpr std::size_t kMaxStringWidth = 1u << 20;

// Deflate expands at most ~1032x (the same bound as TensorLogReader's).
bool fits_storage(std::uint64_t logical_bytes, std::uint64_t stored_bytes) {
  const std::uint64_t slack = 1u << 16;
  return logical_bytes <= slack || (logical_bytes - slack) / 1100 <= stored_bytes;
}

class Walk {
 public:
  Walk(const std::string& path, const std::vector<std::string>& scope) : path_(path) {
    for (const auto& s : scope) scope_.insert(h5::normalize_path(s));
  }

  void run() {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    file_ = Hid(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    require(file_.valid(), "cannot open HDF5 file " + path_ + " (truncated or not HDF5)");
    Hid root(h5::check(H5Oopen(file_.get(), "/", H5P_DEFAULT), "cannot open the root group" + in_file()), H5Oclose);
    attributes(root.get(), "/");
    std::vector<std::string> names;
    require(H5Lvisit(file_.get(), H5_INDEX_NAME, H5_ITER_INC, collect, &names) >= 0,
            "cannot list the objects" + in_file() + ": " + h5::last_error());
    for (const auto& name : names) object("/" + name);
  }

 private:
  std::string path_;
  std::set<std::string> scope_;
  Hid file_;

  std::string in_file() const { return " in " + path_; }

  static herr_t collect(hid_t, const char* name, const H5L_info_t* info, void* data) {
    try {
      if (info->type == H5L_TYPE_HARD) static_cast<std::vector<std::string>*>(data)->push_back(name);
      return 0;
    } catch (...) {
      return -1;
    }
  }

  void object(const std::string& name) {
    Hid obj(h5::check(H5Oopen(file_.get(), name.c_str(), H5P_DEFAULT), "cannot open " + name + in_file()), H5Oclose);
    attributes(obj.get(), name);
    if (H5Iget_type(obj.get()) == H5I_DATASET) dataset(obj.get(), name);
  }

  struct AttrVisit {
    Walk* walk;
    std::string object;
    std::string error;
  };

  static herr_t visit_attr(hid_t loc, const char* key, const H5A_info_t*, void* data) {
    auto* v = static_cast<AttrVisit*>(data);
    try {
      v->walk->attribute(loc, key, "attribute " + std::string(key) + " of " + v->object + v->walk->in_file());
      return 0;
    } catch (const std::exception& e) {
      v->error = e.what();
      return -1;
    } catch (...) {
      v->error = "cannot read an attribute of " + v->object;
      return -1;
    }
  }

  void attributes(hid_t obj, const std::string& name) {
    AttrVisit v{this, name, ""};
    hsize_t idx = 0;
    const herr_t status = H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, visit_attr, &v);
    require(v.error.empty(), v.error);
    require(status >= 0, "cannot list attributes of " + name + in_file() + ": " + h5::last_error());
  }

  void attribute(hid_t loc, const char* key, const std::string& what) {
    Hid attr(h5::check(H5Aopen(loc, key, H5P_DEFAULT), "cannot open " + what), H5Aclose);
    Hid type(h5::check(H5Aget_type(attr.get()), "cannot read " + what), H5Tclose);
    Hid space(h5::check(H5Aget_space(attr.get()), "cannot read " + what), H5Sclose);
    const hssize_t points = H5Sget_simple_extent_npoints(space.get());
    require(points >= 0 && static_cast<std::uint64_t>(points) <= kMaxAttrElements,
            "cannot read " + what + ": " + std::to_string(points) + " values (corrupt file?)");
    const std::size_t n = static_cast<std::size_t>(points);
    if (n == 0) return;
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls == H5T_STRING && H5Tis_variable_str(type.get()) > 0) {
      Hid mem = variable_string_type(type.get(), what);
      std::vector<char*> ptrs(n, nullptr);
      h5::check_status(H5Aread(attr.get(), mem.get(), ptrs.data()), "cannot read " + what);
      h5::reclaim_vlen(mem.get(), space.get(), ptrs.data());
    } else if (cls == H5T_STRING) {
      const std::size_t width = H5Tget_size(type.get());
      require(width >= 1 && width <= kMaxStringWidth, "cannot read " + what + ": values of " + std::to_string(width) + " bytes");
      Hid mem(h5::check(H5Tcopy(type.get()), "cannot read " + what), H5Tclose);
      std::vector<char> buf(h5::saturating_mul(n, width));
      h5::check_status(H5Aread(attr.get(), mem.get(), buf.data()), "cannot read " + what);
    } else if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && h5::standard_numeric_type(type.get())) {
      // The conversions TensorLogReader::attr_int and attr_double make: the conversion code is where a
      // corrupted number type crashes, so the child must have run the same ones.
      std::vector<double> as_double(n);
      h5::check_status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, as_double.data()), "cannot read " + what);
      if (cls == H5T_INTEGER) {
        std::vector<std::int64_t> as_int(n);
        h5::check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, as_int.data()), "cannot read " + what);
      }
    }
    // Other types (compound, enum, references, unusual number layouts) are refused by every reader.
  }

  static Hid variable_string_type(hid_t file_type, const std::string& what) {
    Hid mem(h5::check(H5Tcopy(H5T_C_S1), "cannot read " + what), H5Tclose);
    h5::check_status(H5Tset_size(mem.get(), H5T_VARIABLE), "cannot read " + what);
    h5::check_status(H5Tset_cset(mem.get(), H5Tget_cset(file_type)), "cannot read " + what);
    return mem;
  }

  void dataset(hid_t ds, const std::string& name) {
    const std::string what = "dataset " + name + in_file();
    h5::require_plausible_chunks(ds, what);
    Hid type(h5::check(H5Dget_type(ds), "cannot read " + what), H5Tclose);
    Hid space(h5::check(H5Dget_space(ds), "cannot read " + what), H5Sclose);
    const std::vector<hsize_t> dims = h5::dims_of(space.get());
    const std::uint64_t n = h5::element_count(dims);
    const hssize_t points = H5Sget_simple_extent_npoints(space.get());
    require(points >= 0 && static_cast<std::uint64_t>(points) == n, "cannot read " + what + ": inconsistent shape");
    if (n == 0) return;
    const std::uint64_t stored = H5Dget_storage_size(ds);
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls == H5T_STRING && H5Tis_variable_str(type.get()) > 0) {
      require(fits_storage(h5::saturating_mul(n, 16), stored), "cannot read " + what + ": more strings than the file stores");
      Hid mem = variable_string_type(type.get(), what);
      std::vector<char*> ptrs(n, nullptr);
      h5::check_status(H5Dread(ds, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), "cannot read " + what);
      h5::reclaim_vlen(mem.get(), space.get(), ptrs.data());
      return;
    }
    // Numbers as TensorLogReader reads them: of a type it accepts (h5::dtype_of), into its memory type.
    const bool numeric = (cls == H5T_INTEGER || cls == H5T_FLOAT) && h5::standard_numeric_type(type.get());
    if (cls != H5T_STRING && !numeric) return;  // refused by every reader: never read
    if (numeric && !scope_.empty() && !scope_.count(name)) return;  // values the caller will not read
    const std::size_t width = H5Tget_size(type.get());
    require(width >= 1 && width <= kMaxStringWidth, "cannot read " + what + ": values of " + std::to_string(width) + " bytes");
    const std::uint64_t bytes = h5::saturating_mul(n, width);
    require(fits_storage(bytes, stored), "cannot read " + what + ": its shape needs " + std::to_string(bytes) +
                                             " bytes, far more than the file stores for it (corrupt file?)");
    Hid mem(h5::check(cls == H5T_STRING ? H5Tcopy(type.get()) : H5Tget_native_type(type.get(), H5T_DIR_ASCEND),
                      "cannot read " + what),
            H5Tclose);
    const std::size_t mem_width = H5Tget_size(mem.get());
    if (dims.empty() || bytes <= kBlockBytes) {  // whole, as TensorLogReader::read does
      std::vector<char> buf(h5::saturating_mul(n, mem_width));
      h5::check_status(H5Dread(ds, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "cannot read " + what);
      return;
    }
    // Large datasets in blocks of whole rows (as read_rows does).
    const std::uint64_t row_elems = std::max<std::uint64_t>(1, n / std::max<hsize_t>(dims[0], 1));
    const std::uint64_t block_rows = std::max<std::uint64_t>(1, kBlockBytes / h5::saturating_mul(row_elems, mem_width));
    std::vector<char> buf;
    for (hsize_t row = 0; row < dims[0]; row += block_rows) {
      std::vector<hsize_t> start(dims.size(), 0), count = dims;
      start[0] = row;
      count[0] = std::min<hsize_t>(block_rows, dims[0] - row);
      buf.resize(h5::saturating_mul(h5::element_count(count), mem_width));
      Hid fspace(h5::check(H5Dget_space(ds), "cannot read " + what), H5Sclose);
      h5::check_status(H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
                       "cannot select rows of " + what);
      Hid mspace(h5::check(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), "cannot read " + what),
                 H5Sclose);
      h5::check_status(H5Dread(ds, mem.get(), mspace.get(), fspace.get(), H5P_DEFAULT, buf.data()), "cannot read " + what);
    }
  }
};

// A file as the probe saw it. The content fingerprint (its first and last MiB) tells apart files that
// share inode, size and a coarse modification time, as a file rewritten in place within one tick.
struct FileIdentity {
  dev_t dev;
  ino_t ino;
  off_t size;
  long long mtime_s, mtime_ns;
  std::uint64_t fingerprint;
  bool operator<(const FileIdentity& o) const {
    return std::tie(dev, ino, size, mtime_s, mtime_ns, fingerprint) <
           std::tie(o.dev, o.ino, o.size, o.mtime_s, o.mtime_ns, o.fingerprint);
  }
};

std::uint64_t fingerprint(const std::string& path, std::uint64_t size) {
  constexpr std::uint64_t kPart = 1u << 20;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 0;
  std::vector<unsigned char> buf(kPart);
  auto mix = [&](std::uint64_t offset) {
    if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0) return;
    const std::size_t n = std::fread(buf.data(), 1, buf.size(), f);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ buf[i]) * 1099511628211ull;
  };
  mix(0);
  if (size > kPart) mix(size > 2 * kPart ? size - kPart : kPart);
  std::fclose(f);
  return h;
}

// What the probes of this process found: file -> scope ("" = everything) -> "" when it passed, else the
// error. A file that failed fails again without a new child (the viewer draws every frame).
std::mutex probed_mutex;
std::map<FileIdentity, std::map<std::string, std::string>> probed;

std::string scope_key(std::vector<std::string> scope) {
  for (auto& s : scope) s = h5::normalize_path(s);
  std::sort(scope.begin(), scope.end());
  std::string key;
  for (const auto& s : scope) key += s + "\n";
  return key;
}

double base_seconds() {
  if (const char* env = std::getenv("MOXLAB_HDF5_PROBE_SECONDS")) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end != env && *end == '\0' && v > 0 && v < 1e6) return v;
  }
  return 30.0;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    default: return "signal " + std::to_string(sig);
  }
}

// In the child: caps the address space a little above what the process maps now, so a corrupted size
// field makes libhdf5's allocation fail instead of taking the machine's memory.
void limit_child_memory(std::uint64_t file_size) {
  unsigned long long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  if (pages == 0) return;
  const std::uint64_t mapped = h5::saturating_mul(pages, static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
  const std::uint64_t budget = (4ull << 30) + h5::saturating_mul(file_size, 2);
  struct rlimit lim;
  lim.rlim_cur = lim.rlim_max = mapped > RLIM_INFINITY - budget ? RLIM_INFINITY : mapped + budget;
  ::setrlimit(RLIMIT_AS, &lim);
}

[[noreturn]] void child_main(int fd, const std::string& path, const std::function<void()>& read,
                             std::uint64_t file_size, unsigned alarm_s) {
  // The parent's crash handlers (a sanitizer's, a fuzzer's, an app's) must not run here: a signal ends
  // the child, and the parent reports it.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) ::signal(sig, SIG_DFL);
  // What a dying libhdf5 or glibc prints ("malloc(): unaligned tcache chunk detected") is not for the
  // user: the parent's one-line error says what happened.
  const int devnull = ::open("/dev/null", O_WRONLY);
  if (devnull >= 0) {
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(devnull, STDERR_FILENO);
    ::close(devnull);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::alarm(alarm_s);  // in case the parent cannot kill it
  limit_child_memory(file_size);
  std::string reply = "O";
  try {
    read();
  } catch (const Error& e) {
    reply = std::string("E") + e.what();
  } catch (const std::exception& e) {  // std::bad_alloc at the memory cap, for one
    reply = "EHDF5 file " + path + " is corrupt: reading it failed (" + e.what() + ")";
  } catch (...) {
    reply = "EHDF5 file " + path + " is corrupt: reading it failed";
  }
  const char* p = reply.data();
  std::size_t left = reply.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::_exit(0);  // never libhdf5's atexit: it would try to close what the walk left open
}

}  // namespace

void probe_tensor_log(const std::string& path, const std::vector<std::string>& data_scope) {
  struct stat st;
  require(::stat(path.c_str(), &st) == 0, "cannot open HDF5 file " + path + ": no such file");
  require(S_ISREG(st.st_mode), "cannot open HDF5 file " + path + ": not a regular file");
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  const FileIdentity id{st.st_dev, st.st_ino, st.st_size, static_cast<long long>(st.st_mtim.tv_sec),
                        static_cast<long long>(st.st_mtim.tv_nsec), fingerprint(path, size)};
  const std::string key = scope_key(data_scope);
  {
    std::lock_guard<std::mutex> lock(probed_mutex);
    auto it = probed.find(id);
    if (it != probed.end()) {
      for (const std::string& k : {std::string(), key}) {
        auto found = it->second.find(k);
        if (found == it->second.end()) continue;
        if (found->second.empty()) return;
        throw Error(found->second);
      }
    }
  }
  const double limit_s = base_seconds() + static_cast<double>(size) / (16.0 * 1024 * 1024);
  std::string error;
  try {
    read_in_child(path, [&] { Walk(path, data_scope).run(); }, limit_s);
  } catch (const Error& e) {
    error = e.what();
  }
  {
    std::lock_guard<std::mutex> lock(probed_mutex);
    probed[id][key] = error;
  }
  if (!error.empty()) throw Error(error);
}

void read_in_child(const std::string& path, const std::function<void()>& read, double limit_s) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const std::uint64_t file_size = ec ? 0 : static_cast<std::uint64_t>(size);
  int fds[2];
  require(::pipe2(fds, O_CLOEXEC) == 0, std::string("cannot check HDF5 file ") + path + ": pipe: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error("cannot check HDF5 file " + path + ": fork: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], path, read, file_size, static_cast<unsigned>(limit_s) + 5);
  }
  ::close(fds[1]);

  std::string reply;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {fds[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child has exited (or died)
    reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  if (timed_out) ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  const std::string corrupt = "HDF5 file " + path + " is corrupt: reading it ";
  if (timed_out) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.3g", limit_s);
    throw Error(corrupt + "did not finish in " + secs + " s");
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGALRM) throw Error(corrupt + "did not finish in time");
    throw Error(corrupt + "crashed libhdf5 (" + signal_name(sig) + ")");
  }
  if (reply.empty() || (reply[0] != 'O' && reply[0] != 'E'))
    throw Error(corrupt + "ended the reading process abnormally (exit code " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  if (reply[0] == 'E') throw Error(reply.substr(1));
}

}  // namespace moxlab
