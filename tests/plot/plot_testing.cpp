#include "plot_testing.h"

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

namespace dfmpc::plot {

namespace fs = std::filesystem;

Image Decode(const fs::path& path) {
  Image image;
  int channels = 0;
  stbi_uc* data = stbi_load(path.c_str(), &image.width, &image.height, &channels, 3);
  if (data == nullptr) throw std::runtime_error("not a decodable image: " + path.string());
  const std::size_t count = static_cast<std::size_t>(image.width) * image.height;
  for (std::size_t i = 0; i < count; ++i) {
    image.pixels.push_back({data[3 * i], data[3 * i + 1], data[3 * i + 2]});
  }
  stbi_image_free(data);
  return image;
}

std::size_t DistinctColours(const Image& image) {
  std::set<std::tuple<int, int, int>> colours;
  for (const Rgb& p : image.pixels) colours.insert({p.r, p.g, p.b});
  return colours.size();
}

std::size_t PixelsNear(const Image& image, Rgb colour) {
  std::size_t count = 0;
  for (const Rgb& p : image.pixels) {
    if (std::abs(p.r - colour.r) + std::abs(p.g - colour.g) + std::abs(p.b - colour.b) <= 12) {
      ++count;
    }
  }
  return count;
}

void PlotTest::SetUp() {
  const testing::TestInfo* test = testing::UnitTest::GetInstance()->current_test_info();
  dir_ = fs::path(testing::TempDir()) /
         ("dfmpc_plot_" + std::string(test->test_suite_name()) + "_" + test->name());
  fs::remove_all(dir_);
  fs::create_directories(dir_);
}

void PlotTest::TearDown() { fs::remove_all(dir_); }

std::vector<fs::path> PlotTest::Entries() const {
  std::vector<fs::path> entries;
  for (const auto& entry : fs::recursive_directory_iterator(dir_)) entries.push_back(entry.path());
  return entries;
}

}  // namespace dfmpc::plot
