// The SentencePiece runtime, opened on first use from the moxlab_spm shim (spm_shim/spm_shim.cpp
// explains why it is not linked directly). Throws Error when the shim cannot be found or loaded.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moxlab {

class SpmModel {
 public:
  explicit SpmModel(const std::string& serialized_proto);  // throws Error with the library's message
  ~SpmModel();
  SpmModel(const SpmModel&) = delete;
  SpmModel& operator=(const SpmModel&) = delete;

  int piece_size() const;
  int bos_id() const;
  int eos_id() const;
  bool is_control(int id) const;
  bool is_byte(int id) const;
  bool is_unknown(int id) const;
  std::string id_to_piece(int id) const;
  std::vector<std::int32_t> encode(std::string_view text) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace moxlab
