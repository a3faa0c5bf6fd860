// core/data/idx_images: the IDX reader on the real Fashion-MNIST files of the Debian package (counts,
// shape, balanced classes, the first training item) and on synthetic files with known bytes, including
// truncated and foreign ones.
#include <catch2/catch.hpp>

#include <filesystem>
#include <numeric>

#include "core/common/error.h"
#include "core/data/corpora/idx_images.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {
std::string be32(std::uint32_t v) {
  return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}
}  // namespace

TEST_CASE("IDX reader: synthetic images and labels with known bytes", "[data][idx]") {
  moxlab::testing::ScratchDir dir("idx");
  // 2 images of 2x3: pixels 0..11; labels 4, 1.
  std::string img = be32(0x803) + be32(2) + be32(2) + be32(3);
  for (int i = 0; i < 12; ++i) img += static_cast<char>(i);
  const std::string lab = be32(0x801) + be32(2) + std::string{4, 1};
  const auto ip = dir.write("img", img), lp = dir.write("lab", lab);
  const ImageSet s = read_idx(ip, lp);
  CHECK(s.count == 2);
  CHECK(s.rows == 2);
  CHECK(s.cols == 3);
  CHECK(s.pixels[7] == 7);
  CHECK(s.labels == std::vector<std::uint8_t>{4, 1});
  CHECK(s.classes() == 5);

  CHECK_THROWS_WITH(read_idx(dir.write("short", img.substr(0, img.size() - 1)), lp), Contains("is truncated or padded"));
  CHECK_THROWS_WITH(read_idx(lp, lp), Contains("is not an IDX images file"));
  CHECK_THROWS_WITH(read_idx(ip, dir.write("lab3", be32(0x801) + be32(3) + std::string{1, 2, 3})),
                    Contains("holds 3 labels but"));
  CHECK_THROWS_WITH(read_idx(dir.file("none"), lp), Contains("none"));
  CHECK_THROWS_WITH(read_fashion_mnist("val"), Contains("split must be train or test"));
}

TEST_CASE("Fashion-MNIST from the Debian package: 60000/10000 28x28 images, 10 balanced classes", "[data][idx]") {
  if (!std::filesystem::exists(fashion_mnist_dir() + "/t10k-images-idx3-ubyte.gz")) {
    WARN("SKIPPED: dataset-fashion-mnist is not installed (apt install dataset-fashion-mnist)");
    return;
  }
  for (const auto& [split, n] : {std::pair<std::string, int>{"train", 60000}, {"test", 10000}}) {
    const ImageSet s = read_fashion_mnist(split);
    CHECK(s.count == n);
    CHECK(s.rows == 28);
    CHECK(s.cols == 28);
    CHECK(s.classes() == 10);
    std::vector<int> per_class(10, 0);
    for (auto l : s.labels) ++per_class[l];
    CHECK(per_class == std::vector<int>(10, n / 10));  // the data set is balanced by construction
    if (split == "train") CHECK(fashion_mnist_classes()[s.labels[0]] == "Ankle boot");  // its first item
  }
}
