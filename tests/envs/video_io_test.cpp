#include "dfmpc/envs/video_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dfmpc::envs {
namespace {

namespace fs = std::filesystem;

using Frames = std::vector<std::vector<std::uint8_t>>;

// A white square moving right over a blue background.
Frames MovingSquare(int width, int height, int count) {
  Frames frames;
  for (int t = 0; t < count; ++t) {
    std::vector<std::uint8_t> frame(static_cast<std::size_t>(width) * height * 3);
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const bool square = x >= 4 * t && x < 4 * t + 12 && y >= 10 && y < 22;
        std::uint8_t* pixel = &frame[(static_cast<std::size_t>(y) * width + x) * 3];
        pixel[0] = square ? 255 : 20;
        pixel[1] = square ? 255 : 40;
        pixel[2] = square ? 255 : 160;
      }
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

// "codec,width,height,frames" of the first video stream.
std::string Probe(const fs::path& file) {
  const std::string command =
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
      "stream=codec_name,width,height,nb_read_frames -of csv=p=0 '" +
      file.string() + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string output;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  pclose(pipe);
  while (!output.empty() && (output.back() == '\n' || output.back() == ',')) output.pop_back();
  return output;
}

// Sets PATH for the life of the object.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (old_) {
      setenv("PATH", old_->c_str(), 1);
    } else {
      unsetenv("PATH");
    }
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  std::optional<std::string> old_;
};

class VideoIoTest : public testing::Test {
 protected:
  void SetUp() override {
    // One directory per test: ctest -j runs the cases as concurrent processes.
    const std::string test = testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::path(testing::TempDir()) / ("dfmpc_video_io_" + test);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  long FilesInDir() const {
    return std::distance(fs::directory_iterator(dir_), fs::directory_iterator());
  }

  fs::path dir_;
};

TEST_F(VideoIoTest, WritesH264Mp4) {
  const fs::path path = dir_ / "clip.mp4";
  WriteMp4(path.string(), MovingSquare(64, 48, 10), 64, 48, 10);
  EXPECT_EQ(Probe(path), "h264,64,48,10");
  EXPECT_EQ(FilesInDir(), 1);
}

TEST_F(VideoIoTest, PadsOddSizesToEven) {
  const fs::path path = dir_ / "odd.mp4";
  WriteMp4(path.string(), MovingSquare(63, 47, 3), 63, 47, 25);
  EXPECT_EQ(Probe(path), "h264,64,48,3");
}

TEST_F(VideoIoTest, RejectsBadArguments) {
  const std::string path = (dir_ / "bad.mp4").string();
  EXPECT_THROW(WriteMp4(path, {}, 64, 48, 10), std::invalid_argument);
  EXPECT_THROW(WriteMp4(path, MovingSquare(64, 48, 2), 64, 47, 10), std::invalid_argument);
  EXPECT_THROW(WriteMp4(path, MovingSquare(64, 48, 2), 64, 48, 0), std::invalid_argument);
  EXPECT_THROW(WriteMp4(path, {{}}, 0, 0, 10), std::invalid_argument);
  EXPECT_EQ(FilesInDir(), 0);
}

TEST_F(VideoIoTest, MissingDirectoryLeavesNothing) {
  const fs::path path = dir_ / "missing_dir" / "clip.mp4";
  EXPECT_THROW(WriteMp4(path.string(), MovingSquare(64, 48, 2), 64, 48, 10), std::runtime_error);
  EXPECT_EQ(FilesInDir(), 0);
}

TEST_F(VideoIoTest, ReportsMissingFfmpeg) {
  const fs::path empty = dir_ / "empty_bin";
  fs::create_directory(empty);
  const fs::path path = dir_ / "clip.mp4";
  try {
    ScopedPath scoped_path(empty.string());
    WriteMp4(path.string(), MovingSquare(64, 48, 2), 64, 48, 10);
    FAIL() << "no error without ffmpeg";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(),
                 "ffmpeg not found in PATH: install Debian's ffmpeg (scripts/setup.sh)");
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(VideoIoTest, ReportsFfmpegDyingEarly) {
  // A stand-in that exits at once: our writes then fail with EPIPE, which
  // must become an exception, not a SIGPIPE that kills the test.
  const fs::path bin = dir_ / "bin";
  fs::create_directory(bin);
  {
    std::ofstream script(bin / "ffmpeg");
    script << "#!/bin/sh\necho 'first line' >&2\necho 'unknown encoder libx264' >&2\nexit 3\n";
  }
  fs::permissions(bin / "ffmpeg", fs::perms::owner_all);
  const fs::path path = dir_ / "clip.mp4";
  try {
    ScopedPath scoped_path(bin.string());
    WriteMp4(path.string(), MovingSquare(512, 512, 8), 512, 512, 10);
    FAIL() << "no error from a failing ffmpeg";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("exit status 3"), std::string::npos) << message;
    EXPECT_NE(message.find("first line\nunknown encoder libx264"), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(FilesInDir(), 1);  // bin/
}

}  // namespace
}  // namespace dfmpc::envs
