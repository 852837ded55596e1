#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "engine/core/errors.hpp"
#include "engine/core/run_lock.hpp"
#include "tests/test_support.hpp"

namespace fs = std::filesystem;
using namespace engine;

TEST_CASE("a run's lock is held by one owner at a time, who is named to the others") {
  const std::string run = test::scratch_dir("run_lock") + "/20261126-100000.h5";
  CHECK_FALSE(core::RunLock::holder(run).has_value());
  auto lock = std::make_unique<core::RunLock>(run, "--resume " + run);
  CHECK(fs::exists(run + ".lock"));
  const auto owner = core::RunLock::holder(run);
  REQUIRE(owner.has_value());
  CHECK(owner->pid == static_cast<long>(getpid()));
  CHECK(!owner->host.empty());
  // the lock belongs to the open file description: a second open in this process is another
  // owner
  try {
    core::RunLock second(run, "--resume " + run);
    FAIL("a held lock was taken twice");
  } catch (const core::UsageError& e) {
    const std::string message = e.what();
    CHECK(message.find("--resume " + run + ": the run is in use by process " +
                       std::to_string(getpid()) + " on " + owner->host) == 0);
  }
  lock.reset();  // released and removed
  CHECK_FALSE(fs::exists(run + ".lock"));
  CHECK_FALSE(core::RunLock::holder(run).has_value());
}

TEST_CASE("a lock file left by a process that died is taken over") {
  const std::string run = test::scratch_dir("run_lock_stale") + "/20261126-100001.h5";
  std::ofstream(run + ".lock") << "pid 999999\nhost gone\n";  // nobody holds it
  CHECK_FALSE(core::RunLock::holder(run).has_value());
  core::RunLock lock(run, "--resume " + run);
  const auto owner = core::RunLock::holder(run);
  REQUIRE(owner.has_value());
  CHECK(owner->pid == static_cast<long>(getpid()));
}

TEST_CASE("a lock file that cannot be made is an IoError naming it") {
  CHECK_THROWS_AS(core::RunLock("/proc/no-such-run.h5", "--resume x"), core::IoError);
}

TEST_CASE("the lock is an fcntl lock of the open file description, which NFS forwards") {
  const std::string sweep = test::scratch_dir("run_lock_ofd") + "/points.h5";
  core::RunLock lock(sweep, "the benchmark file " + sweep, "sweep");
  // /proc/locks lists it as an OFD lock on the lock file's inode ("OFDLCK ADVISORY WRITE")
  struct stat info {};
  REQUIRE(stat((sweep + ".lock").c_str(), &info) == 0);
  std::ifstream locks("/proc/locks");
  bool listed = false;
  for (std::string line; std::getline(locks, line);) {
    const bool ofd =
        line.find("OFDLCK") != std::string::npos && line.find("WRITE") != std::string::npos;
    if (ofd && line.find(":" + std::to_string(info.st_ino) + " ") != std::string::npos) {
      listed = true;
    }
  }
  CHECK(listed);
  try {
    core::RunLock second(sweep, "the benchmark file " + sweep, "sweep");
    FAIL("a held lock was taken twice");
  } catch (const core::UsageError& e) {
    CHECK(std::string(e.what()).find(": the sweep is in use by process " +
                                     std::to_string(getpid())) != std::string::npos);
  }
}
