#include "atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dfmpc::internal {
namespace {

namespace fs = std::filesystem;

// A fresh, empty directory per test.
fs::path EmptyDirectory(const std::string& name) {
  const fs::path directory = fs::path(::testing::TempDir()) / ("dfmpc_atomic_" + name);
  fs::remove_all(directory);
  fs::create_directories(directory);
  return directory;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> Entries(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// Thread t writes 200 KB of the letter 'a' + t, many times over.
TEST(AtomicFileTest, ConcurrentWritersNeverCollideNorLeaveAPartialFile) {
  const fs::path directory = EmptyDirectory("concurrent");
  const std::string path = (directory / "out.bin").string();
  constexpr int kThreads = 6;
  constexpr int kWrites = 20;
  constexpr std::size_t kSize = 200000;
  std::atomic<int> writing{kThreads};
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      const std::string contents(kSize, static_cast<char>('a' + t));
      for (int i = 0; i < kWrites; ++i) {
        try {
          WriteFileAtomically(path, contents);
        } catch (const std::exception&) {
          ++failures;
        }
      }
      --writing;
    });
  }
  int partial = 0, reads = 0;
  while (writing > 0) {
    const std::string seen = Read(path);
    if (seen.empty()) continue;  // not written yet
    ++reads;
    if (seen.size() != kSize || seen.find_first_not_of(seen[0]) != std::string::npos) ++partial;
  }
  for (std::thread& writer : writers) writer.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(partial, 0) << "of " << reads << " reads";
  const std::string last = Read(path);
  ASSERT_EQ(last.size(), kSize);
  EXPECT_EQ(last.find_first_not_of(last[0]), std::string::npos);
  EXPECT_EQ(Entries(directory), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFileTest, PermissionsFollowTheUmask) {
  const fs::path directory = EmptyDirectory("umask");
  const mode_t saved = umask(0);
  for (const mode_t mask : {mode_t{022}, mode_t{077}, mode_t{002}}) {
    umask(mask);
    const std::string path = (directory / ("mask" + std::to_string(mask))).string();
    WriteFileAtomically(path, "x");
    struct stat info {};
    ASSERT_EQ(stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask) << "umask " << mask;
  }
  umask(saved);
}

TEST(AtomicFileTest, FailedWriteLeavesTheOldFileAndNoTemporary) {
  const fs::path directory = EmptyDirectory("failure");
  const std::string path = (directory / "out.txt").string();
  WriteFileAtomically(path, "old");
  {
    AtomicFile file(path);
    std::ofstream(file.temporary_path()) << "half of the new";
    // The writer fails here: no Commit.
  }
  EXPECT_EQ(Read(path), "old");
  EXPECT_EQ(Entries(directory), std::vector<std::string>{"out.txt"});

  // A failed rename (a directory stands at the destination) names the path.
  const fs::path blocked = directory / "blocked";
  fs::create_directories(blocked / "inside");
  try {
    WriteFileAtomically(blocked.string(), "new");
    ADD_FAILURE() << "renaming over a directory did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(blocked.string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(blocked / "inside"));
  EXPECT_EQ(Entries(directory).size(), 2u);  // out.txt and blocked only
}

TEST(AtomicFileTest, MissingDirectoryIsAnErrorNamingThePath) {
  const std::string path = (EmptyDirectory("missing") / "no_such_dir" / "out.txt").string();
  try {
    WriteFileAtomically(path, "x");
    ADD_FAILURE() << "writing into a missing directory did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(AtomicFile(""), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::internal
