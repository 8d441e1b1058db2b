#include "dfmpc/envs/image_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace dfmpc::envs {
namespace {

namespace fs = std::filesystem;

std::string Head(const fs::path& path, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string head(bytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(bytes));
  return head;
}

std::vector<std::uint8_t> Gradient(int width, int height, int shift) {
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width) * height * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(i * 7 + shift);
  return rgb;
}

class ImageIoTest : public testing::Test {
 protected:
  void SetUp() override {
    // One directory per test: ctest -j runs the cases of this suite as
    // concurrent processes, and a shared directory would be wiped under them.
    const std::string test = testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::path(testing::TempDir()) / ("dfmpc_image_io_" + test);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ImageIoTest, WritesPng) {
  const fs::path path = dir_ / "frame.png";
  WritePng(path.string(), Gradient(5, 4, 0), 5, 4);
  EXPECT_EQ(Head(path, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(ImageIoTest, WritesAnimatedGif) {
  const fs::path path = dir_ / "clip.gif";
  const mode_t old_mask = umask(022);
  WriteGif(path.string(), {Gradient(6, 5, 0), Gradient(6, 5, 40), Gradient(6, 5, 80)}, 6, 5);
  umask(old_mask);
  EXPECT_EQ(Head(path, 6), "GIF89a");
  EXPECT_GT(fs::file_size(path), 100u);
  // Like any other output, not private to the writer (giflib alone makes 0600).
  EXPECT_NE(fs::status(path).permissions() & fs::perms::others_read, fs::perms::none);
}

TEST_F(ImageIoTest, RejectsBadInput) {
  const std::string path = (dir_ / "bad.png").string();
  EXPECT_THROW(WritePng(path, Gradient(5, 4, 0), 4, 4), std::invalid_argument);
  EXPECT_THROW(WriteGif(path, {}, 4, 4), std::invalid_argument);
  EXPECT_THROW(WriteGif(path, {Gradient(4, 4, 0), Gradient(3, 4, 0)}, 4, 4), std::invalid_argument);
  EXPECT_THROW(WritePng((dir_ / "missing_dir" / "x.png").string(), Gradient(2, 2, 0), 2, 2),
               std::runtime_error);
  EXPECT_THROW(WriteGif((dir_ / "missing_dir" / "x.gif").string(), {Gradient(2, 2, 0)}, 2, 2),
               std::runtime_error);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

}  // namespace
}  // namespace dfmpc::envs
