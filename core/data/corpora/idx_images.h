// Image classification data in the IDX format of MNIST and Fashion-MNIST (optionally gzipped): the
// images file (magic 0x00000803, count, rows, cols, then count*rows*cols uint8 pixels, big-endian
// header) and the labels file (magic 0x00000801, count, then count uint8 labels). Fashion-MNIST ships
// as the Debian package dataset-fashion-mnist (fashion_mnist_dir()). Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace moxlab {

struct ImageSet {
  std::int64_t count = 0;
  int rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;  // [count, rows, cols] row-major, 0..255
  std::vector<std::uint8_t> labels;  // [count]
  int classes() const;               // 1 + the largest label (0 when empty)
};

// Reads an images file and its labels file; a wrong magic number, a count mismatch or a truncated file
// is an Error naming the file and the problem.
ImageSet read_idx(const std::string& images_path, const std::string& labels_path);

// The Debian package's folder (/usr/share/datasets/fashion-mnist) and its split: "train" (60000) or "test" (10000).
std::string fashion_mnist_dir();
ImageSet read_fashion_mnist(const std::string& split, const std::string& dir = fashion_mnist_dir());

// The 10 Fashion-MNIST class names, label order.
const std::vector<std::string>& fashion_mnist_classes();

}  // namespace moxlab
