#include "core/data/tokenizers/spm_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/common/error.h"

namespace moxlab {

namespace {

struct Api {
  void* (*load)(const char*, size_t, char*, size_t);
  void (*free_)(void*);
  int (*piece_size)(void*);
  int (*bos)(void*);
  int (*eos)(void*);
  int (*is_control)(void*, int);
  int (*is_byte)(void*, int);
  int (*is_unknown)(void*, int);
  size_t (*id_to_piece)(void*, int, char*, size_t);
  long (*encode)(void*, const char*, size_t, int*, size_t);
};

template <class F>
void bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  if (!f) throw Error(std::string("SentencePiece shim lacks ") + name);
}

const Api& api() {
  static Api a;
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    const char* env = std::getenv("MOXLAB_SPM_SHIM");
    const std::string path = env ? env : MOXLAB_SPM_SHIM;
    void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!lib) {
      failure = "cannot load the SentencePiece shim " + path + ": " + ::dlerror();
      return;
    }
    try {
      bind(lib, "moxlab_spm_load", a.load);
      bind(lib, "moxlab_spm_free", a.free_);
      bind(lib, "moxlab_spm_piece_size", a.piece_size);
      bind(lib, "moxlab_spm_bos", a.bos);
      bind(lib, "moxlab_spm_eos", a.eos);
      bind(lib, "moxlab_spm_is_control", a.is_control);
      bind(lib, "moxlab_spm_is_byte", a.is_byte);
      bind(lib, "moxlab_spm_is_unknown", a.is_unknown);
      bind(lib, "moxlab_spm_id_to_piece", a.id_to_piece);
      bind(lib, "moxlab_spm_encode", a.encode);
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw Error(failure);
  return a;
}

}  // namespace

SpmModel::SpmModel(const std::string& proto) {
  char err[512] = {0};
  handle_ = api().load(proto.data(), proto.size(), err, sizeof(err));
  if (!handle_) throw Error(std::string("SentencePiece: ") + err);
}

SpmModel::~SpmModel() {
  if (handle_) api().free_(handle_);
}

int SpmModel::piece_size() const { return api().piece_size(handle_); }
int SpmModel::bos_id() const { return api().bos(handle_); }
int SpmModel::eos_id() const { return api().eos(handle_); }
bool SpmModel::is_control(int id) const { return api().is_control(handle_, id) != 0; }
bool SpmModel::is_byte(int id) const { return api().is_byte(handle_, id) != 0; }
bool SpmModel::is_unknown(int id) const { return api().is_unknown(handle_, id) != 0; }

std::string SpmModel::id_to_piece(int id) const {
  char buf[256];
  const size_t n = api().id_to_piece(handle_, id, buf, sizeof(buf));
  if (n < sizeof(buf)) return std::string(buf, n);
  std::string big(n + 1, '\0');
  api().id_to_piece(handle_, id, big.data(), big.size());
  big.resize(n);
  return big;
}

std::vector<std::int32_t> SpmModel::encode(std::string_view text) const {
  std::vector<int> ids(text.size() + 16);
  long n = api().encode(handle_, text.data(), text.size(), ids.data(), ids.size());
  if (n < 0) throw Error("SentencePiece failed to encode the text");
  if (static_cast<size_t>(n) > ids.size()) {
    ids.resize(static_cast<size_t>(n));
    n = api().encode(handle_, text.data(), text.size(), ids.data(), ids.size());
  }
  return std::vector<std::int32_t>(ids.begin(), ids.begin() + n);
}

}  // namespace moxlab
