#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/core/disk_room.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/staged_output.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

// Bytes of disk the file holds (st_blocks is in 512-byte units), past its size included.
long long allocated_bytes(const std::string& path) {
  struct stat s {};
  REQUIRE(::stat(path.c_str(), &s) == 0);
  return static_cast<long long>(s.st_blocks) * 512;
}

std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

long long file_size(const std::string& path) {
  struct stat s {};
  REQUIRE(::stat(path.c_str(), &s) == 0);
  return static_cast<long long>(s.st_size);
}

// Restores the file-size limit a test lowered.
struct SizeLimit {
  rlimit saved{};
  explicit SizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved);
    rlimit lower = saved;
    lower.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lower);
  }
  ~SizeLimit() { ::setrlimit(RLIMIT_FSIZE, &saved); }
};

}  // namespace

TEST_CASE("disk room is held past a file's end without changing its size, and given back") {
  const std::string path = test::scratch_dir("disk_room") + "/run.h5";
  std::ofstream(path) << "header";
  {
    core::DiskRoom room(path, 1 << 20);
    CHECK(file_size(path) == 6);
    CHECK(allocated_bytes(path) >= (1 << 20));
    std::ofstream(path, std::ios::app) << std::string(100000, 'x');
    room.renew();  // again past the new end
    CHECK(allocated_bytes(path) >= 100006 + (1 << 20));
    CHECK_FALSE(room.short_of_space());
  }
  CHECK(file_size(path) == 100006);
  CHECK(allocated_bytes(path) < 100006 + (1 << 20));  // the room past the end went back
}

TEST_CASE("a file-size limit the next flush could pass is said before the flush, once") {
  const std::string path = test::scratch_dir("disk_room_limit") + "/run.h5";
  std::ofstream(path) << std::string(200000, 'x');
  core::DiskRoom room(path, 1 << 20);
  SizeLimit limit(300000);  // 100 KB left: less than a flush may need
  try {
    room.renew();
    FAIL("renew passed a file-size limit");
  } catch (const core::IoError& e) {
    CHECK(std::string(e.what()) == "cannot go on writing " + path +
                                       ": File too large (the file-size limit is 300000 bytes)");
  }
  CHECK(room.short_of_space());
  room.renew();  // from then on the writer spends what is left: no second error
}

TEST_CASE("a staged output appears whole on publish and not at all when dropped") {
  const std::string folder = test::scratch_dir("staged_output");
  const std::string path = folder + "/predictions.csv";
  std::ofstream(path) << "earlier\n";
  {
    core::StagedOutput out(path);
    out.stream() << "row,prediction\n1,yes\n";
    out.check();
    std::ifstream still(path);
    std::string line;
    std::getline(still, line);
    CHECK(line == "earlier");  // not touched until published
  }                            // dropped: the earlier file stays, no hidden file is left
  std::ifstream kept(path);
  std::string line;
  std::getline(kept, line);
  CHECK(line == "earlier");
  CHECK(names_in(folder) == std::vector<std::string>{"predictions.csv"});
  {
    core::StagedOutput out(path);
    out.stream() << "row,prediction\n1,yes\n";
    out.publish();
  }
  std::ifstream published(path);
  std::getline(published, line);
  CHECK(line == "row,prediction");
  CHECK(names_in(folder) == std::vector<std::string>{"predictions.csv"});
  CHECK_THROWS_WITH_AS([&] { core::StagedOutput out(folder); }(),
                       (folder + ": is a folder, not a file").c_str(), core::IoError);
}

TEST_CASE("a staged output of a name as long as the folder takes is staged under a short name") {
  const std::string folder = test::scratch_dir("staged_long");
  // 255 bytes, the cut falling among two-byte characters ("é"), which it must not split
  std::string name = "q" + std::string(200, 'p');
  for (int i = 0; i < 25; ++i) name += "\xc3\xa9";
  name += ".csv";
  REQUIRE(name.size() == 255);
  auto staged_file = [&](const std::string& n) {
    return std::filesystem::path(core::staged_name(folder + "/" + n)).filename().string();
  };
  const std::string staged = staged_file(name);
  CHECK(staged.size() <= 255);
  CHECK(staged.rfind("." + name.substr(0, 200), 0) == 0);
  const auto cut = staged.rfind('~');
  REQUIRE(cut != std::string::npos);
  CHECK((static_cast<unsigned char>(staged[cut - 1]) & 0xC0) != 0xC0);  // no half character
  CHECK(staged != staged_file(name.substr(0, 251) + ".tsv"));           // one beginning, two names
  {
    core::StagedOutput out(folder + "/" + name);
    out.stream() << "row,prediction\n";
    out.publish();
  }
  CHECK(names_in(folder) == std::vector<std::string>{name});
}
