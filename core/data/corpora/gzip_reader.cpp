#include "core/data/corpora/gzip_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "core/common/atomic_file.h"
#include "core/common/error.h"

namespace moxlab {

bool is_gzip_name(const std::string& path) {
  return path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

std::string read_maybe_gzip(const std::string& path) {
  if (!is_gzip_name(path)) return read_file(path);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw Error("cannot open " + path + ": " + std::strerror(errno));
  gzbuffer(f, 1 << 17);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    int n = gzread(f, buf, sizeof(buf));
    if (n < 0) {
      int code = 0;
      std::string why = gzerror(f, &code);
      gzclose(f);
      throw Error("corrupt gzip file " + path + ": " + why);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  // gzread reports a stream cut short only as end-of-file; gzclose_r then returns Z_BUF_ERROR.
  int rc = gzclose_r(f);
  if (rc == Z_BUF_ERROR) throw Error("truncated gzip file " + path);
  if (rc != Z_OK) throw Error("corrupt gzip file " + path);
  return out;
}

}  // namespace moxlab
