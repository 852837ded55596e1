#include <doctest/doctest.h>
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
  // flock belongs to the open file: a second open in the same process is another owner
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
