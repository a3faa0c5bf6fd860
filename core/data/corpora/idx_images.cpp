#include "core/data/corpora/idx_images.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/data/corpora/gzip_reader.h"

namespace moxlab {

namespace {

std::uint32_t big_endian_u32(const std::string& bytes, std::size_t at) {
  auto b = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

}  // namespace

int ImageSet::classes() const { return labels.empty() ? 0 : 1 + *std::max_element(labels.begin(), labels.end()); }

ImageSet read_idx(const std::string& images_path, const std::string& labels_path) {
  const std::string img = read_maybe_gzip(images_path), lab = read_maybe_gzip(labels_path);
  require(img.size() >= 16 && big_endian_u32(img, 0) == 0x803,
          images_path + " is not an IDX images file (magic 0x00000803 expected)");
  require(lab.size() >= 8 && big_endian_u32(lab, 0) == 0x801,
          labels_path + " is not an IDX labels file (magic 0x00000801 expected)");
  ImageSet s;
  s.count = big_endian_u32(img, 4);
  s.rows = static_cast<int>(big_endian_u32(img, 8));
  s.cols = static_cast<int>(big_endian_u32(img, 12));
  const std::int64_t labels = big_endian_u32(lab, 4);
  require(labels == s.count, labels_path + " holds " + std::to_string(labels) + " labels but " + images_path + " " +
                                 std::to_string(s.count) + " images");
  const std::uint64_t pixels = static_cast<std::uint64_t>(s.count) * s.rows * s.cols;
  require(img.size() - 16 == pixels, images_path + " is truncated or padded: " + std::to_string(img.size() - 16) +
                                         " pixel bytes for " + std::to_string(pixels) + " expected");
  require(lab.size() - 8 == static_cast<std::uint64_t>(labels), labels_path + " is truncated or padded");
  s.pixels.assign(img.begin() + 16, img.end());
  s.labels.assign(lab.begin() + 8, lab.end());
  return s;
}

std::string fashion_mnist_dir() { return "/usr/share/datasets/fashion-mnist"; }

ImageSet read_fashion_mnist(const std::string& split, const std::string& dir) {
  require(split == "train" || split == "test", "Fashion-MNIST split must be train or test, got '" + split + "'");
  const std::string stem = split == "train" ? "train" : "t10k";
  return read_idx(dir + "/" + stem + "-images-idx3-ubyte.gz", dir + "/" + stem + "-labels-idx1-ubyte.gz");
}

const std::vector<std::string>& fashion_mnist_classes() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

}  // namespace moxlab
