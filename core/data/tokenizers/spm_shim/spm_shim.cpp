// A C interface over Debian's libsentencepiece, built as its own shared library and opened with
// dlopen(RTLD_LOCAL | RTLD_DEEPBIND) by core/data/tokenizers/spm_library.cpp. Why: libsentencepiece carries its
// own copy of protobuf with exported symbols; linked into the same process as LibTorch (which uses
// the system libprotobuf) the two collide during static initialisation and the process crashes before
// main(). Opened locally and deep-bound, sentencepiece keeps to its own protobuf.
#include <sentencepiece_processor.h>

#include <cstring>
#include <string>
#include <vector>

extern "C" {

void* moxlab_spm_load(const char* bytes, size_t n, char* err, size_t err_len) {
  auto* sp = new sentencepiece::SentencePieceProcessor();
  const auto status = sp->LoadFromSerializedProto(std::string(bytes, n));
  if (!status.ok()) {
    std::strncpy(err, status.ToString().c_str(), err_len - 1);
    err[err_len - 1] = 0;
    delete sp;
    return nullptr;
  }
  return sp;
}

void moxlab_spm_free(void* h) { delete static_cast<sentencepiece::SentencePieceProcessor*>(h); }

int moxlab_spm_piece_size(void* h) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->GetPieceSize(); }
int moxlab_spm_bos(void* h) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->bos_id(); }
int moxlab_spm_eos(void* h) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->eos_id(); }
int moxlab_spm_is_control(void* h, int id) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->IsControl(id); }
int moxlab_spm_is_byte(void* h, int id) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->IsByte(id); }
int moxlab_spm_is_unknown(void* h, int id) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->IsUnknown(id); }

// Copies the piece into out (NUL-terminated, truncated to out_len) and returns its full length.
size_t moxlab_spm_id_to_piece(void* h, int id, char* out, size_t out_len) {
  const std::string p = static_cast<sentencepiece::SentencePieceProcessor*>(h)->IdToPiece(id);
  if (out_len > 0) {
    std::strncpy(out, p.c_str(), out_len - 1);
    out[out_len - 1] = 0;
  }
  return p.size();
}

// Encodes text; writes up to cap ids and returns how many there are (-1 on error).
long moxlab_spm_encode(void* h, const char* text, size_t n, int* ids, size_t cap) {
  std::vector<int> out;
  if (!static_cast<sentencepiece::SentencePieceProcessor*>(h)->Encode(std::string(text, n), &out).ok()) return -1;
  for (size_t i = 0; i < out.size() && i < cap; ++i) ids[i] = out[i];
  return static_cast<long>(out.size());
}

}  // extern "C"
